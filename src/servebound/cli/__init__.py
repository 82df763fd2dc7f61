"""The command line: a thin layer over servebound's Python API, parsed by click.

Every command is declared once, in ``COMMANDS`` (its module and its help); its module builds it from
declared inputs (``cli.common``), so every value typed is parsed by ``Input.parse``. The root group
lists the commands from ``COMMANDS`` and imports only the module of the command it runs, so
`servebound --help` imports no command and `servebound decode` no web stack. ``main`` turns every
InputError and usage error into one line on stderr and exit status 2.
``servebound.cli.app`` holds every command, for tools that walk them all.
"""

from __future__ import annotations

import gc
import os
import sys
from importlib import import_module

import click

from servebound.cli.commands import COMMANDS, HELP, REGISTERED, help_option
from servebound.errors import InputError
from servebound.views.terminal import visible

__all__ = ["COMMANDS", "HELP", "console_main", "main", "root"]  # the console script's entry points

#: How each shell turns completion on (commands, flags, choices and catalog ids): the line to add to
#: its start-up file. The root help prints them.
COMPLETION = {
    "bash": ('eval "$(_SERVEBOUND_COMPLETE=bash_source servebound)"', "~/.bashrc"),
    "zsh": ('eval "$(_SERVEBOUND_COMPLETE=zsh_source servebound)"', "~/.zshrc"),
    "fish": (
        "_SERVEBOUND_COMPLETE=fish_source servebound | source",
        "~/.config/fish/completions/servebound.fish",
    ),
}


def terminal_columns() -> int:
    """The terminal's width as ``shutil.get_terminal_size`` reads it: $COLUMNS, else the terminal's
    (of standard output), else 80."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns or 80


class RootContext(click.Context):
    """The root's context: its help is as wide as click makes it, the width read without importing
    shutil (and the compression modules it imports), the largest part of what `servebound --help`
    added to click's own import."""

    def make_formatter(self) -> click.HelpFormatter:
        width = self.terminal_width or click.formatting.FORCED_WIDTH
        if width is None:
            width = max(min(terminal_columns(), self.max_content_width or 80) - 2, 50)
        return self.formatter_class(width=width, max_width=self.max_content_width)


class Root(click.Group):
    """The root command: lists ``COMMANDS`` and imports a command's module only when it runs."""

    context_class = RootContext
    #: Whether what a command's import made is frozen out of later collections: in the console
    #: script's process, which ends with the command (a caller's own garbage would be frozen with it).
    freeze_imports = False

    def get_help_option(self, ctx: click.Context) -> click.Option | None:
        return help_option(self, ctx)

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in COMMANDS:
            return None
        _import_without_collecting(f"servebound.cli.{COMMANDS[cmd_name][0]}", self.freeze_imports)
        return REGISTERED.get(cmd_name)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """Each command's help line, from ``COMMANDS``: no command module imported."""
        rows = [(name, help) for name, (_, help) in COMMANDS.items()]
        with formatter.section("Commands"):
            formatter.write_dl(rows)

    def format_epilog(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        with formatter.section("Examples"):
            for example in EXAMPLES:
                formatter.write(f"{'':>{formatter.current_indent}}$ {example}\n")
        with formatter.section("Shell completion (commands, flags, catalog ids): add to the shell's file"):
            for shell, (line, where) in COMPLETION.items():
                formatter.write(f"{'':>{formatter.current_indent}}{shell + ':':5} {line}   ({where})\n")


def _import_without_collecting(name: str, freeze: bool) -> None:
    """Import a command's module with the cyclic garbage collector paused. An import makes thousands
    of objects that live as long as the process (classes, functions, the web stack's schemas) and
    almost no garbage; the collector, run every few hundred of them, would walk every one made so far
    again and again (a tenth of a second of `serve`'s start, a noticeable share of a cold decode's).
    With ``freeze`` (the console script) they are then frozen out of later collections too
    (``gc.freeze``), as ``serve`` does with the records it builds at its start."""
    if name in sys.modules:
        return
    paused = gc.isenabled()
    gc.disable()
    try:
        import_module(name)
    finally:
        if paused:
            gc.enable()
        if freeze:
            gc.freeze()


#: The root help's examples.
EXAMPLES = (
    "servebound decode -H nvidia-rtx-4090 -m qwen3-8b",
    "servebound rank --hardware nvidia-dgx-spark --limit 5",
)


def _print_version(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    if not value or ctx.resilient_parsing:
        return
    from importlib.metadata import PackageNotFoundError, version

    try:
        number = version("servebound")
    except PackageNotFoundError:  # pragma: no cover - running from a source tree without install
        number = "unknown (not installed)"
    sys.stdout.write(f"servebound {number}\n")
    ctx.exit(0)


def root(*, freeze_imports: bool = False) -> Root:
    """The root group: ``-h``/``--help`` on every command, ``--version``, the commands of COMMANDS."""
    group = Root(
        "servebound",
        help=HELP,
        no_args_is_help=True,
        context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 110},
        params=[
            click.Option(
                ["--version"],
                is_flag=True,
                expose_value=False,
                is_eager=True,
                callback=_print_version,
                help="Print the version and exit.",
            )
        ],
    )
    group.freeze_imports = freeze_imports
    return group


def main(argv: list[str] | None = None, *, console: bool = False) -> int:
    """Run the CLI; return the exit status (the console script exits with it). ``console``: the
    process is the command's (the console script), so what its import made is frozen."""
    args = sys.argv[1:] if argv is None else list(argv)
    try:
        status = root(freeze_imports=console).main(args=args, prog_name="servebound", standalone_mode=False)
    except InputError as error:
        return _error(str(error), 2)
    except click.exceptions.NoArgsIsHelpError as error:  # no command: the help, as a usage error
        sys.stdout.write(error.ctx.get_help() + "\n" if error.ctx is not None else "")
        return 2
    except click.ClickException as error:  # usage errors: a bad flag, a missing option, no such command
        return _error(error.format_message(), error.exit_code)
    except click.Abort:
        print("servebound: aborted", file=sys.stderr)
        return 130
    except click.exceptions.Exit as done:
        return int(done.exit_code)
    return status if isinstance(status, int) else 0


def _error(message: str, status: int) -> int:
    print(f"servebound: error: {visible(' '.join(message.split()))}", file=sys.stderr)
    return status


def console_main() -> None:  # pragma: no cover - the console script entry point
    """The ``servebound`` script and ``python -m servebound``: the CLI."""
    sys.exit(main(console=True))
