"""The whole command line as one click group: every ``*_cmd`` module imported, so every command
registered.

Documentation tests and tools that walk the commands use this module (``app``). The ``servebound``
script does not: its root group imports only the command it runs (see ``servebound.cli``).
"""

from __future__ import annotations

import pkgutil
from importlib import import_module

import click

import servebound.cli
from servebound.cli import COMMANDS, root
from servebound.cli.commands import REGISTERED


def command_modules() -> list[str]:
    """The modules that register commands (``servebound/cli/*_cmd.py``), in import order."""
    return sorted(
        info.name for info in pkgutil.iter_modules(servebound.cli.__path__) if info.name.endswith("_cmd")
    )


for _module in command_modules():
    import_module(f"servebound.cli.{_module}")


def _everything() -> click.Group:
    whole = root()
    for name in COMMANDS:
        whole.add_command(REGISTERED[name], name)
    return whole


#: The root group with every command in ``commands`` (the console script's own root looks each up by
#: name when it runs).
app: click.Group = _everything()
