"""Regenerate the counts in docs/catalog.md from the catalog itself.

Run: python scripts/docs_counts.py. Each count sits in a fixed phrase ("112 devices (datacenter",
"96 real configs and 534 profiles", "reads 48 model_types", "43 configs are pinned to a Hub revision,
42 of them hash-verified"); the number in front of (or inside) the phrase is replaced with the
catalog's. tests/test_catalog_counts.py fails when docs/catalog.md and this output differ.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from servebound.catalog.hardware import load_hardware_catalog
from servebound.catalog.model_build import model_index
from servebound.catalog.models import profile_ids
from servebound.importers.hf.families import SUPPORTED_MODEL_TYPES

CATALOG = Path(__file__).resolve().parents[1] / "docs" / "catalog.md"


def counts() -> dict[str, int]:
    """Every count docs/catalog.md states, by name."""
    hardware = load_hardware_catalog()
    models = model_index()
    pinned = [m for m in models if m.hf_revision]
    return {
        "devices": sum(not entry.is_system for entry in hardware),
        "systems": sum(entry.is_system for entry in hardware),
        "configs": len(models),
        "profiles": len(profile_ids()),
        "model_types": len(SUPPORTED_MODEL_TYPES),
        "pinned": len(pinned),
        "verified": sum(m.verification.upper().startswith("VERIFIED") for m in pinned),
    }


#: name -> the phrase whose number group is replaced (whitespace in the text may be a line break).
PHRASES: dict[str, str] = {
    "devices": r"\): ([\d,]+)(\s+devices\s+\(datacenter)",
    "systems": r"and ([\d,]+)(\s+systems\s+\(`)",
    "configs": r": ([\d,]+)(\s+real\s+configs)",
    "profiles": r"real configs and ([\d,]+)(\s+profiles)",
    "model_types": r"The importer reads ([\d,]+)(\s+model_types)",
    "pinned": r"\. ([\d,]+)(\s+configs\s+are\s+pinned\s+to\s+a\s+Hub\s+revision)",
    "verified": r"pinned\s+to\s+a\s+Hub\s+revision,\s+([\d,]+)(\s+of\s+them\s+hash-verified)",
}


def _replacer(value: int) -> Callable[[re.Match[str]], str]:
    def put(match: re.Match[str]) -> str:
        start, end = match.span(1)
        whole = match.group(0)
        offset = match.start(0)
        return whole[: start - offset] + f"{value:,}" + whole[end - offset :]

    return put


def render(text: str) -> str:
    """docs/catalog.md's text with every count set to the catalog's."""
    for name, value in counts().items():
        text, found = re.subn(PHRASES[name], _replacer(value), text, count=1)
        if found != 1:
            raise SystemExit(f"docs/catalog.md has no {name!r} phrase ({PHRASES[name]})")
    return text


if __name__ == "__main__":
    CATALOG.write_text(render(CATALOG.read_text(encoding="utf-8")), encoding="utf-8")
