"""The whole command line as one Typer app: every ``*_cmd`` module imported, so every command registered.

Documentation tests and tools that walk the commands use this module. The ``servebound`` script does
not: it imports only the command it runs (see ``servebound.cli``).
"""

from __future__ import annotations

import pkgutil
from importlib import import_module

import servebound.cli
from servebound.cli import common


def command_modules() -> list[str]:
    """The modules that register commands (``servebound/cli/*_cmd.py``), in import order."""
    return sorted(
        info.name for info in pkgutil.iter_modules(servebound.cli.__path__) if info.name.endswith("_cmd")
    )


for _module in command_modules():
    import_module(f"servebound.cli.{_module}")

app = common.app.typer()  # the Typer app itself, every command registered
