"""`python -m servebound` runs the CLI."""

import sys

from servebound.cli import main

sys.exit(main())
