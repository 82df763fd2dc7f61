"""The catalog counts docs/catalog.md states are the catalog's: devices, systems, model configs,
profiles and the model_types the importer reads. Adding a row without updating docs/catalog.md fails
here."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

from servebound.catalog.hardware import load_hardware_catalog
from servebound.catalog.model_build import model_index
from servebound.catalog.models import profile_ids
from servebound.importers.hf.families import SUPPORTED_MODEL_TYPES

ROOT = Path(__file__).resolve().parents[1]
CATALOG_MD = (ROOT / "docs" / "catalog.md").read_text("utf-8")


def count(pattern: str) -> int:
    found = re.findall(pattern, " ".join(CATALOG_MD.split()))
    assert len(found) == 1, f"docs/catalog.md should state {pattern!r} once, found {found}"
    return int(found[0].replace(",", ""))


def test_docs_counts_are_the_catalogs() -> None:
    catalog = load_hardware_catalog()
    devices = sum(not entry.is_system for entry in catalog)
    systems = sum(entry.is_system for entry in catalog)
    assert count(r"\): ([\d,]+) devices \(datacenter") == devices
    assert count(r"and ([\d,]+) systems \(`") == systems
    assert count(r": ([\d,]+) real configs") == len(model_index())
    assert count(r"real configs and ([\d,]+) profiles") == len(profile_ids())
    assert count(r"The importer reads ([\d,]+) model_types") == len(SUPPORTED_MODEL_TYPES)


def test_docs_counts_are_generated() -> None:
    """docs/catalog.md's counts are scripts/docs_counts.py's output (rerun it after adding a row); a
    text whose numbers were typed differently fails, and a stale count is rewritten by the script."""
    spec = importlib.util.spec_from_file_location("docs_counts", ROOT / "scripts" / "docs_counts.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    stale_message = "run `python scripts/docs_counts.py` and commit docs/catalog.md"
    assert module.render(CATALOG_MD) == CATALOG_MD, stale_message
    stale = CATALOG_MD.replace(f"reads {len(SUPPORTED_MODEL_TYPES)} model_types", "reads 1 model_types", 1)
    assert stale != CATALOG_MD
    assert module.render(stale) == CATALOG_MD
