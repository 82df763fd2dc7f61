"""The command line: a thin layer over servebound's Python API.

`main` turns every InputError and usage error into one line on stderr and exit status 2.
"""

from __future__ import annotations

import sys

import typer

from servebound.cli import (  # noqa: F401  (each module registers its commands)
    catalog_cmd,
    check_cmd,
    cost_cmd,
    decode_cmd,
    economics_cmd,
    import_cmd,
    layout_cmd,
    measure_cmd,
    models_cmd,
    prefill_cmd,
    web_cmd,
)
from servebound.cli.app import app
from servebound.errors import InputError

__all__ = ["app", "main"]


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; return the exit status (the console script exits with it)."""
    command = typer.main.get_command(app)
    try:
        status = command.main(args=argv, prog_name="servebound", standalone_mode=False)
    except InputError as error:
        print(f"servebound: error: {error}", file=sys.stderr)
        return 2
    except typer.Abort:
        print("servebound: aborted", file=sys.stderr)
        return 130
    except typer.Exit as done:
        return int(getattr(done, "exit_code", 0))
    except typer.TyperException as error:  # usage errors: a bad flag value, a missing option
        message = error.format_message() if hasattr(error, "format_message") else str(error)
        print(f"servebound: error: {' '.join(message.split())}", file=sys.stderr)
        return int(getattr(error, "exit_code", 2))
    return status if isinstance(status, int) else 0


def console_main() -> None:  # pragma: no cover - the console script entry point
    sys.exit(main())
