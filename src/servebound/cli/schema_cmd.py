"""`servebound schema COMMAND`: the JSON Schema of a command's --json output."""

from __future__ import annotations

from servebound.cli.common import argument, command
from servebound.cli.output import print_json
from servebound.views.schemas import json_schema


@command(
    "schema",
    argument("command", "decode, prefill, cost, layout or plan."),
    examples=("servebound schema decode", "servebound schema prefill"),
)
def schema_command(command: str) -> None:
    print_json(json_schema(command))
