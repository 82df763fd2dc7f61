"""Regenerate the README's result-field tables from the fields' own documentation.

Run: python scripts/readme_fields.py. Each table sits between ``<!-- fields: NAME -->`` and
``<!-- /fields -->``; tests/test_result_fields.py fails when a table differs from what this writes.
"""

from __future__ import annotations

import re
from pathlib import Path

from servebound.core.decode import DecodeResult
from servebound.core.fields import markdown_table
from servebound.core.prefill import PrefillResult
from servebound.views.rank import RankRow

README = Path(__file__).resolve().parents[1] / "README.md"

#: The records whose JSON fields the README tables document, by the name in their markers.
TABLES = {"decode": DecodeResult, "prefill": PrefillResult, "rank": RankRow}

_BLOCK = re.compile(r"(<!-- fields: (\w+) -->\n)(.*?)(<!-- /fields -->)", re.S)


def render(text: str) -> str:
    """The README text with every field table regenerated."""
    return _BLOCK.sub(lambda m: f"{m[1]}{markdown_table(TABLES[m[2]])}\n{m[4]}", text)


def main() -> None:
    text = README.read_text(encoding="utf-8")
    README.write_text(render(text), encoding="utf-8")


if __name__ == "__main__":
    main()
