"""`python -m servebound` runs the CLI, as the console script does."""

from servebound.cli import console_main

console_main()
