"""The command line: a thin layer over servebound's Python API.

`main` turns every InputError and usage error into one line on stderr and exit status 2. It starts
fast: the root group (``LazyGroup``) lists the commands from ``COMMANDS`` and imports only the module of
the command it runs, so `servebound --help` imports no command and `servebound decode` no web stack.
``servebound.cli.app`` is the same app with every command registered, for tools that walk them all.
"""

from __future__ import annotations

import inspect
import sys
from importlib import import_module
from typing import Annotated, Any

import typer
from typer.core import TyperCommand, TyperGroup

from servebound.errors import InputError
from servebound.terminal import visible

#: The tool's one-line description (the root of `servebound --help`).
HELP = "How fast can this machine serve this LLM? Ceilings from first principles."

#: Every command: the module under servebound/cli/ that registers it, and the first paragraph of its
#: help, which `servebound --help` lists without importing the module (tests/test_cli_startup.py checks
#: both against the registered commands). A new command: add its module and a line here.
COMMANDS: dict[str, tuple[str, str]] = {
    "check": (
        "check_cmd",
        "How close a measured run came to its ceiling: measured / ceiling, flagged loudly above 100%.",
    ),
    "validate": (
        "check_cmd",
        "The reported runs against their ceilings: the at-or-below rate and the efficiency distribution.",
    ),
    "cost": (
        "cost_cmd",
        "Cost per million tokens over batch: what a step costs, divided by the tokens it emits.",
    ),
    "layout": (
        "layout_cmd",
        "Every valid parallel layout (tp, ep, pp, dp) of a system for a model, best first.",
    ),
    "plan": (
        "layout_cmd",
        "How many systems (and devices) a stated traffic needs, prefill and decode shared or separate.",
    ),
    "decode": (
        "decode_cmd",
        "Decode ceilings: does it fit, one session's speed, useful aggregate across sessions.",
    ),
    "import": (
        "import_cmd",
        "Import a real model file into the contract's model form (reads headers and configs, never weights).",
    ),
    "measure": (
        "measure_cmd",
        "Measure sustained memory bandwidth (STREAM copy and triad) and dense matmul rates; "
        "write a hardware file.",
    ),
    "rank": (
        "models_cmd",
        "Which models a machine serves (largest first), or which machines serve a model best.",
    ),
    "prefill": (
        "prefill_cmd",
        "Prefill ceilings: memory and compute rooflines, the modeled prefill time, which side binds.",
    ),
    "serve": (
        "web_cmd",
        "Serve the site and the JSON API (pages, markdown mirrors, /api/, /llms.txt) with the embedded catalog.",
    ),
    "build-site": (
        "web_cmd",
        "Write every page, mirror, figure and asset as static files (`python -m http.server` serves them).",
    ),
    "hardware": ("catalog_cmd", "The hardware catalog: every number with its source."),
    "catalog": ("catalog_cmd", "Checks of the catalog data."),
    "economics": (
        "economics_cmd",
        "The serving-economics quantities: balance, drain time, trains, price forensics, training.",
    ),
    "models": ("models_cmd", "The model catalog: audited profiles built from real configs."),
    "fit": (
        "fit_cmd",
        "What this machine serves: the models that fit and clear the floor, best first, with format and engine.",
    ),
}


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

        command = _registered(app, cmd_name)
        if command is not None:
            self.commands[cmd_name] = command
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


def first_paragraph(text: str | None) -> str:
    """The part of a help text the root listing shows."""
    return " ".join(inspect.cleandoc(text or "").split("\n\n")[0].split())


__all__ = ["COMMANDS", "HELP", "LazyGroup", "main"]


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; return the exit status (the console script exits with it)."""
    command = typer.main.get_command(_launcher)
    try:
        status = command.main(args=argv, prog_name="servebound", standalone_mode=False)
    except InputError as error:
        print(f"servebound: error: {visible(str(error))}", file=sys.stderr)
        return 2
    except typer.Abort:
        print("servebound: aborted", file=sys.stderr)
        return 130
    except typer.Exit as done:
        return int(getattr(done, "exit_code", 0))
    except typer.TyperException as error:  # usage errors: a bad flag value, a missing option
        message = error.format_message() if hasattr(error, "format_message") else str(error)
        print(f"servebound: error: {visible(' '.join(message.split()))}", file=sys.stderr)
        return int(getattr(error, "exit_code", 2))
    return status if isinstance(status, int) else 0


def console_main() -> None:  # pragma: no cover - the console script entry point
    """The ``servebound`` script and ``python -m servebound``: the record cache on, then the CLI."""
    from servebound import _record_cache

    _record_cache.enable()
    sys.exit(main())
