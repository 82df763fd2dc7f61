"""Regenerate the manual's result-field tables (docs/api.md, docs/cli.md) from the fields' own
documentation.

Run: python scripts/docs_fields.py. Each table sits between ``<!-- fields: NAME -->`` and
``<!-- /fields -->`` in a file of docs/; tests/test_result_fields.py fails when a table differs from
what this writes.
"""

from __future__ import annotations

import re
from pathlib import Path

from servebound.core.decode import DecodeResult
from servebound.core.fields import markdown_table
from servebound.core.prefill import PrefillResult
from servebound.questions.rank import RankRow

DOCS = Path(__file__).resolve().parents[1] / "docs"

#: The records whose JSON fields the tables document, by the name in their markers.
TABLES = {"decode": DecodeResult, "prefill": PrefillResult, "rank": RankRow}

_BLOCK = re.compile(r"(<!-- fields: (\w+) -->\n)(.*?)(<!-- /fields -->)", re.S)


def render(text: str) -> str:
    """A document's text with every field table in it regenerated."""
    return _BLOCK.sub(lambda m: f"{m[1]}{markdown_table(TABLES[m[2]])}\n{m[4]}", text)


def documents() -> list[Path]:
    """The files of docs/ that hold a field table."""
    return [p for p in sorted(DOCS.glob("*.md")) if _BLOCK.search(p.read_text(encoding="utf-8"))]


def main() -> None:
    for path in documents():
        path.write_text(render(path.read_text(encoding="utf-8")), encoding="utf-8")


if __name__ == "__main__":
    main()
