"""``python -m cudajit ...``: see cudajit.cli."""

import sys

from .cli import main

sys.exit(main())
