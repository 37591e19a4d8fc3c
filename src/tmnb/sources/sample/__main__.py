"""``python -m tmnb.sources.sample --out FILE``: write a generated sample fleet snapshot."""

import sys

from tmnb.sources.sample.fleet import main

sys.exit(main())
