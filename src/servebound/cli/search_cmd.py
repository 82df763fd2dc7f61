"""`servebound search WORDS`: models and hardware by the words people use."""

from __future__ import annotations

from servebound.catalog.search import DEFAULT_LIMIT, KINDS, search
from servebound.cli.common import JSON, command, option, words_argument
from servebound.cli.output import console, new_table, print_json


@command(
    "search",
    words_argument("words", "Words of a model or machine: 'qwen3 30b q4', 'llama3.3:70b', 'rtx 4090'."),
    option("kind", str, None, "Only models or only hardware.", "--kind", choices=KINDS),
    option("limit", int, DEFAULT_LIMIT, "Show at most this many hits.", "--limit", minimum=1, maximum=500),
    JSON,
    examples=("servebound search qwen3 30b q4", "servebound search dgx spark --kind hardware --json"),
)
def search_command(words: str, kind: str | None, limit: int, json_out: bool) -> None:
    hits = search(words, kind=kind, limit=limit)
    if json_out:
        print_json({"query": words, "count": len(hits), "hits": [hit.as_dict() for hit in hits]})
        return
    table = new_table("kind", "id", "name", "detail", left=("kind", "id", "name", "detail"), no_wrap=("id",))
    for hit in hits:
        table.add_row(hit.kind, hit.id, hit.name, hit.detail)
    console.print(table)
    console.print(f"{len(hits)} found" + ("" if hits else ": fewer words, or `servebound models list`"))
