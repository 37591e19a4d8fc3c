"""``python -m tmnb.twin.sample --out FILE``: write a generated sample fleet snapshot."""

import sys

from tmnb.twin.sample.fleet import main

sys.exit(main())
