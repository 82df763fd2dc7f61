"""The command line: a thin layer over servebound's Python API, parsed by click.

Every command is declared once, in ``COMMANDS`` (its module and its help); its module builds it from
declared inputs (``cli.common``), so every value typed is parsed by ``Input.parse``. The root group
lists the commands from ``COMMANDS`` and imports only the module of the command it runs, so
`servebound --help` imports no command and `servebound decode` no web stack. ``main`` turns every
InputError and usage error into one line on stderr and exit status 2.
``servebound.cli.app`` holds every command, for tools that walk them all.
"""

from __future__ import annotations

import sys
from importlib import import_module

import click

from servebound.errors import InputError

#: The tool's one-line description (the root of `servebound --help`).
HELP = "How fast can this machine serve this LLM? Ceilings from first principles."

#: Every command, declared once, in the order `servebound --help` lists them: the module under
#: servebound/cli/ that registers it (``@command("name", ...)`` or ``group("name", ...)`` of
#: ``cli.common``, with no help of its own) and its help, which the registration takes from here and the root help
#: lists without importing the module. A name registered but not declared here is an error at import
#: (tests/test_cli_startup.py checks each module registers what it is declared with). A new command:
#: a line here and its module.
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
    "schema": (
        "schema_cmd",
        "The JSON Schema of a command's --json output (its fields typed and described).",
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


def help_option(command: click.Command, ctx: click.Context) -> click.Option | None:
    """``command``'s -h/--help, its text given: click's own default looks the text's translation up
    (a search for message catalogs, file by file) in every run, help asked or not."""
    names = command.get_help_option_names(ctx)
    if names and command.add_help_option and command._help_option is None:
        command._help_option = click.Option(
            names,
            is_flag=True,
            expose_value=False,
            is_eager=True,
            help="Show this message and exit.",
            callback=_show_help,
        )
    return click.Command.get_help_option(command, ctx)


def _show_help(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    if value and not ctx.resilient_parsing:
        click.echo(ctx.get_help(), color=ctx.color)
        ctx.exit()


class Root(click.Group):
    """The root command: lists ``COMMANDS`` and imports a command's module only when it runs."""

    def get_help_option(self, ctx: click.Context) -> click.Option | None:
        return help_option(self, ctx)

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in COMMANDS:
            return None
        import_module(f"servebound.cli.{COMMANDS[cmd_name][0]}")
        from servebound.cli.common import REGISTERED

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


def root() -> Root:
    """The root group: ``-h``/``--help`` on every command, ``--version``, the commands of COMMANDS."""
    return Root(
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


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; return the exit status (the console script exits with it)."""
    args = sys.argv[1:] if argv is None else list(argv)
    try:
        status = root().main(args=args, prog_name="servebound", standalone_mode=False)
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
    from servebound.views.terminal import visible

    print(f"servebound: error: {visible(' '.join(message.split()))}", file=sys.stderr)
    return status


def console_main() -> None:  # pragma: no cover - the console script entry point
    """The ``servebound`` script and ``python -m servebound``: the record cache on, then the CLI."""
    from servebound.inputs import record_cache

    record_cache.enable()
    sys.exit(main())
