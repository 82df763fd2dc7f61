"""The command line's table of commands and the help option every command shares: what the root group
(``servebound.cli``) lists without importing a command, and what ``cli.common`` registers against."""

from __future__ import annotations

import click

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
        "site_cmd",
        "Write every page, mirror, figure and asset as static files (`python -m http.server` serves them).",
    ),
    "hardware": ("catalog_cmd", "The hardware catalog: every number with its source."),
    "catalog": ("lint_cmd", "Checks of the catalog data."),
    "economics": (
        "economics_cmd",
        "The serving-economics quantities: balance, drain time, trains, price forensics, training.",
    ),
    "models": ("models_cmd", "The model catalog: audited profiles built from real configs."),
    "fit": (
        "fit_cmd",
        "What this machine serves: the models that fit and clear the floor, best first, with format and engine.",
    ),
    "search": (
        "search_cmd",
        "Find models and hardware by the words people use (names, sizes, formats, Ollama tags, Hub ids).",
    ),
    "export": (
        "export_cmd",
        "The catalog, reported runs and default-workload ceilings as a SQLite file or CSV files.",
    ),
}


#: Every command and group, by name, as its module registers it (root commands only): filled by
#: ``cli.common.command`` when a command's module is imported.
REGISTERED: dict[str, click.Command] = {}


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
