"""The command line: a thin layer over servebound's Python API.

`main` turns every InputError and usage error into one line on stderr and exit status 2. It starts
fast: the root group (``cli.launcher.LazyGroup``) lists the commands from ``COMMANDS``, where each is
declared once (its module registers it by name and takes its help from there), and imports only the
module of the command it runs, so `servebound --help` imports no command and `servebound decode` no
web stack.
``servebound.cli.app`` is the same app with every command registered, for tools that walk them all.
Where the record cache is on (the console script), ``cli.fast`` answers plain help and parses the hot
commands from what Typer declared and printed before, so those never build Typer's command; the
Typer side (``LazyGroup``, ``root_app``) lives in ``cli.launcher`` and is imported only when needed.
"""

from __future__ import annotations

import errno
import sys
from typing import Any

from servebound.errors import InputError
from servebound.views.terminal import visible

#: The tool's one-line description (the root of `servebound --help`).
HELP = "How fast can this machine serve this LLM? Ceilings from first principles."

#: Every command, declared once, in the order `servebound --help` lists them: the module under
#: servebound/cli/ that registers it (``@app.command("name")`` or ``app.add_typer(sub, name="name")``,
#: with no help of its own) and its help, which the registration takes from here and the root help
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


__all__ = ["COMMANDS", "HELP", "console_main", "main"]  # the console script's entry points


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; return the exit status (the console script exits with it).

    Where the record cache is on, plain help and the hot commands are answered by ``cli.fast`` from
    what Typer declared and printed before (the same values, text and errors); everything else, and
    any argument the fast path does not take, goes to Typer."""
    from servebound.cli import fast

    args = sys.argv[1:] if argv is None else list(argv)
    kept = fast.help_text(args)
    if kept is not None:
        sys.stdout.write(kept)
        return 0
    try:
        ran, status = _fast_run(args)
        if not ran:
            status = _typer_main(args)
    except InputError as error:
        print(f"servebound: error: {visible(str(error))}", file=sys.stderr)
        return 2
    except Exception as error:
        return _typer_error(error)
    return status if isinstance(status, int) else 0


def _fast_run(args: list[str]) -> tuple[bool, Any]:
    """``cli.fast.run``, with an interrupt and a closed pipe ending as Typer's own main ends them."""
    from servebound.cli import fast

    try:
        return fast.run(args, COMMANDS)
    except KeyboardInterrupt:
        return True, 130
    except OSError as error:
        if error.errno != errno.EPIPE:
            raise
        from typer._click.utils import PacifyFlushWrapper

        sys.stdout = PacifyFlushWrapper(sys.stdout)
        sys.stderr = PacifyFlushWrapper(sys.stderr)
        sys.exit(1)


def _typer_main(args: list[str]) -> Any:
    """Typer parses and runs the command (help it prints is kept for ``cli.fast``)."""
    import typer

    from servebound.cli import fast
    from servebound.cli.launcher import _launcher

    command = typer.main.get_command(_launcher)
    asks_help = fast.help_text(args) is None and "--help" in args
    recorder = fast.Recorder(sys.stdout) if asks_help else None
    if recorder is not None:
        sys.stdout = recorder
    try:
        status = command.main(args=args, prog_name="servebound", standalone_mode=False)
    except typer.Exit as done:
        if recorder is not None and int(getattr(done, "exit_code", 0)) == 0:
            fast.remember_help(args, recorder.text())
        raise
    finally:
        if recorder is not None:
            sys.stdout = recorder._stream
    if recorder is not None and status in (0, None):  # help printed: the exit status is 0
        fast.remember_help(args, recorder.text())
    return status


def _typer_error(error: Exception) -> int:
    """Typer's and click's own outcomes as main has always worded them; anything else is raised."""
    import typer

    if isinstance(error, typer.Abort):
        print("servebound: aborted", file=sys.stderr)
        return 130
    if isinstance(error, typer.Exit):
        return int(getattr(error, "exit_code", 0))
    if isinstance(error, typer.TyperException):  # usage errors: a bad flag value, a missing option
        message = error.format_message() if hasattr(error, "format_message") else str(error)
        print(f"servebound: error: {visible(' '.join(message.split()))}", file=sys.stderr)
        return int(getattr(error, "exit_code", 2))
    raise error


def console_main() -> None:  # pragma: no cover - the console script entry point
    """The ``servebound`` script and ``python -m servebound``: the record cache on, then the CLI."""
    from servebound.inputs import record_cache

    record_cache.enable()
    sys.exit(main())
