"""``python -m strata run script.py`` == ``strata run script.py``."""

import sys

from .cli import main

sys.exit(main())
