"""Build the catalog snapshot (``catalog.snapshot``) from the catalog's own files: hardware.toml
validated and built, every profile imported from its config.json, engines.toml parsed.

Run at development time by ``scripts/build_snapshot.py``, which writes the files; the tests build
them again and compare (a catalog edit without a rebuild fails with the command to run). Never
imported by a command.
"""

from __future__ import annotations

from servebound.catalog import snapshot
from servebound.catalog.engines import table_from
from servebound.catalog.hardware import SNAPSHOT_KINDS
from servebound.catalog.hardware_file import build_catalog, parse_catalog_data, read_catalog_document
from servebound.catalog.model_build import import_profile, index_profile_ids, model_index
from servebound.catalog.models import PROFILE_KINDS
from servebound.inputs import package_data

#: The command that writes the snapshot, named by the test that finds it stale.
REBUILD = "python scripts/build_snapshot.py"


def hardware_text() -> str:
    data, origin = read_catalog_document(None)
    table = table_from(package_data.read_toml("servebound.catalog", "data", "engines.toml"))
    catalog = build_catalog(
        parse_catalog_data(data, origin), table
    )  # families from the file, not the snapshot
    header = {"index": [[k, v] for k, v in catalog.index.items()]}
    rows = ((entry.id, snapshot.encode(entry, SNAPSHOT_KINDS)) for entry in catalog.entries)
    return snapshot.jsonl(header, rows)


def profile_texts() -> tuple[str, str]:
    """``profiles.jsonl`` (every place, then each adapter) and ``audits.jsonl`` (models.toml's entries,
    validated, then each import's rest)."""
    places = index_profile_ids()
    adapters = []
    audits = []
    for profile_id in places:
        imported = import_profile(profile_id).imported
        fields = snapshot.encode(imported, PROFILE_KINDS)["fields"]
        adapters.append((profile_id, fields.pop("adapter")))
        # the derivation's steps, most of an audit, as bare (quantity, value, formula) rows
        fields["steps"] = [[s.quantity, s.value, s.formula] for s in imported.steps]
        audits.append((profile_id, fields))
    header = {"places": [[pid, *place] for pid, place in places.items()]}
    return snapshot.jsonl(header, iter(adapters)), snapshot.jsonl(
        {"entries": [entry.model_dump() for entry in model_index()]}, iter(audits)
    )


def engines_text() -> str:
    return (
        snapshot.dumps(
            snapshot.encode(package_data.read_toml("servebound.catalog", "data", "engines.toml"), {})
        )
        + "\n"
    )


def build() -> dict[str, str]:
    """Every snapshot file's text, by name (``snapshot.FILES``)."""
    profiles, audits = profile_texts()
    texts = {
        "hardware.jsonl": hardware_text(),
        "profiles.jsonl": profiles,
        "audits.jsonl": audits,
        "engines.json": engines_text(),
    }
    assert tuple(texts) == snapshot.FILES
    return texts
