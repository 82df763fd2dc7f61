"""`servebound schema COMMAND`: the JSON Schema of a command's --json output."""

from __future__ import annotations

from typing import Annotated

import typer

from servebound.cli.common import app
from servebound.cli.output import print_json


@app.command("schema")
def schema_command(
    command: Annotated[str, typer.Argument(help="decode, prefill, cost, layout or plan.")],
) -> None:
    from servebound.views.schemas import json_schema

    print_json(json_schema(command))
