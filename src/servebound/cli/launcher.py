"""The Typer side of the command line: the root group that imports a command's module only when that
command runs (``LazyGroup``), the root app's settings (``root_app``) and the launcher ``main`` runs.

Kept apart from ``servebound.cli`` so that a command the fast path answers (``cli.fast``) never
imports Typer's command building.
"""

from __future__ import annotations

import sys
from importlib import import_module
from typing import Annotated, Any

import typer
from typer.core import TyperCommand, TyperGroup

from servebound.cli import COMMANDS, HELP
from servebound.cli import fast as _fast


def _registered(app: typer.Typer, name: str) -> Any:
    """The click command or group ``name`` as registered on ``app`` (None when it is not)."""
    for info in app.registered_commands:
        if (info.name or (info.callback and info.callback.__name__)) == name:
            return typer.main.get_command_from_info(
                info,
                pretty_exceptions_short=app.pretty_exceptions_short,
                rich_markup_mode=app.rich_markup_mode,
            )
    for group in app.registered_groups:
        if group.name == name:
            return typer.main.get_group_from_info(
                group,
                pretty_exceptions_short=app.pretty_exceptions_short,
                suggest_commands=app.suggest_commands,
                rich_markup_mode=app.rich_markup_mode,
            )
    return None


class LazyGroup(TyperGroup):
    """The root command: lists COMMANDS, imports a command's module only when that command runs."""

    _listing = False

    def list_commands(self, ctx: Any) -> list[str]:
        return [*COMMANDS, *(name for name in self.commands if name not in COMMANDS)]

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        if cmd_name in self.commands:
            return self.commands[cmd_name]
        if self._listing and cmd_name in COMMANDS:  # the root help: name and help line only
            return TyperCommand(name=cmd_name, help=COMMANDS[cmd_name][1])
        module = COMMANDS[cmd_name][0] if cmd_name in COMMANDS else "app"  # app: every module
        import_module(f"servebound.cli.{module}")
        from servebound.cli.common import app

        command = _registered(app.typer(), cmd_name)
        if command is not None:
            self.commands[cmd_name] = command
            _fast.remember(cmd_name, command)
        return command

    def format_help(self, ctx: Any, formatter: Any) -> None:
        self._listing = True
        try:
            super().format_help(ctx, formatter)
        finally:
            self._listing = False


def root_app(cls: type[TyperGroup] | None = None) -> typer.Typer:
    """The root Typer app with the tool's settings: the launcher's (``LazyGroup``) and the full app's."""
    app = typer.Typer(
        cls=cls,
        name="servebound",
        help=HELP,
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_enable=False,
    )
    app.callback()(_root_options)
    return app


def _print_version(value: bool) -> None:
    if value:
        from importlib.metadata import PackageNotFoundError, version

        try:
            number = version("servebound")
        except PackageNotFoundError:  # pragma: no cover - running from a source tree without install
            number = "unknown (not installed)"
        sys.stdout.write(f"servebound {number}\n")
        raise typer.Exit(0)


def _root_options(
    show_version: Annotated[
        bool,
        typer.Option("--version", help="Print the version and exit.", is_eager=True, callback=_print_version),
    ] = False,
) -> None:
    """The root's one option: --version."""


_launcher = root_app(LazyGroup)
