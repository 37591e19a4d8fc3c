"""``python -m tmnb.cli``: the ``tmnb`` command."""

import sys

from tmnb.cli.main import main

sys.exit(main())
