"""The site's model list kept beside the catalog snapshot, so that a server starts without decoding
every profile's audit.

A site model (``servebound.web.site.SiteModel``) is a profile's adapter plus what its pages show of
the import: counts, the published figures and their differences, sources, derivation steps and facts
in words. Building them reads each of the 552 profiles' whole audit and its models.toml entry; the
fields besides the adapter are plain text and numbers, so where the record cache is on they are kept
in ``site-models-<package key>.json`` (the key of ``servebound.inputs.record_cache``: a file is
always what the current catalog and code build) and a later start joins them with the adapters of
the profile snapshot. The file is written only when every model survives the round trip unchanged
(else every start builds, as before), and it is used only when it lists the same profiles in the same
order; a missing, unreadable or malformed file is rebuilt.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Sequence
from dataclasses import fields
from pathlib import Path
from typing import Any

from servebound.catalog import snapshot
from servebound.inputs import record_cache
from servebound.web.pages.site import SiteModel, site_model

STEM = "site-models"
#: The fields kept (every field but the adapter, which the profile snapshot holds), in this order.
KEPT = tuple(f.name for f in fields(SiteModel) if f.name != "adapter")


def _row(model: SiteModel) -> list[Any]:
    return [getattr(model, name) for name in KEPT]


def _model(adapter: Any, row: Sequence[Any]) -> SiteModel:
    values = dict(zip(KEPT, row, strict=True))
    values["steps"] = tuple((str(q), float(v), str(f)) for q, v, f in values["steps"])
    return SiteModel(adapter=adapter, **values)


def site_models(entries: Sequence[Any]) -> list[SiteModel]:
    """The site models of the packaged catalog's ``entries`` (``catalog.models.list_models()``): from
    the kept file where it lists exactly these profiles, else built (and kept where the cache is on)."""
    kept = record_cache.kept_path(STEM)
    if kept is None:
        return [site_model(entry) for entry in entries]
    path = Path(kept)
    ids = [entry.id for entry in entries]
    content = snapshot.read_kept(path)
    if isinstance(content, dict) and content.get("fields") == list(KEPT) and content.get("ids") == ids:
        with contextlib.suppress(TypeError, ValueError, KeyError):
            return [_model(entry.adapter, row) for entry, row in zip(entries, content["rows"], strict=True)]
    built = [site_model(entry) for entry in entries]
    try:
        text = json.dumps({"fields": list(KEPT), "ids": ids, "rows": [_row(m) for m in built]})
        back = json.loads(text)["rows"]
        same = all(_model(m.adapter, row) == m for m, row in zip(built, back, strict=True))
    except (TypeError, ValueError):
        same = False
    if same:
        with contextlib.suppress(OSError):
            record_cache.write_file(path.parent, STEM, text)
        snapshot.forget_reads()
    return built
