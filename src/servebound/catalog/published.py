"""Model cards' published parameter counts, and the like-with-like comparison with our own counts.

``data/published_params.toml`` holds one table per config folder: the card's figures, the resolution
they are printed at (``unit``), where they were read (``source``) and what they count (embeddings,
MTP layers, a vision tower). :func:`compare_published` applies those keys to an import and returns
each check with its allowed difference: the larger of 0.5% (or a documented ``tolerance``) and half
the printed figure's last digit.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any

from servebound.importers.audit import ImportedModel
from servebound.inputs import bounded, package_data


@dataclass(frozen=True)
class PublishedCheck:
    """One comparison: ``what`` (total, active, non_embedding), our count, the card's, the allowance."""

    what: str
    ours: float
    published: float
    allowed: float

    @property
    def difference(self) -> float:
        return self.ours / self.published - 1.0

    @property
    def ok(self) -> bool:
        return abs(self.ours - self.published) <= self.allowed


@cache
def published_table() -> dict[str, dict[str, Any]]:
    """Every published entry, keyed by the config folder name."""
    text = package_data.read_text("servebound.catalog", "data", "published_params.toml")
    return bounded.parse_toml(text, "published_params.toml")


def _fact(imported: ImportedModel, key: str) -> float:
    value = imported.facts.get(key, 0.0)
    return float(value) if isinstance(value, int | float) else 0.0


def compare_published(entry: dict[str, Any], imported: ImportedModel) -> list[PublishedCheck]:
    """Our counts made like the card's (per the entry's keys) against the card's figures."""
    if imported.total_params is None:
        return []
    mtp = _fact(imported, "mtp_params")
    embedding = _fact(imported, "embedding_params")
    head = _fact(imported, "output_head_params")
    mtp_mode = entry.get("total_mtp", "excluded")
    total = imported.total_params - (mtp if mtp_mode == "excluded" else 0.0)
    if mtp_mode == "included_with_copies":
        total += 2 * head
    total += float(entry.get("total_adjust", 0.0))
    unit = float(entry["unit"])
    tolerance = float(entry.get("tolerance", 0.005))
    checks = [
        PublishedCheck("total", total, float(entry["total"]), max(tolerance * entry["total"], unit / 2))
    ]
    if "active" in entry and imported.active_params is not None:
        active = imported.active_params
        counts = entry["active_counts"]
        if counts in {"no_input_embedding", "no_embeddings"}:
            active -= embedding
        if counts == "no_embeddings":
            active -= head if embedding else 0.0
        checks.append(
            PublishedCheck(
                "active", active, float(entry["active"]), max(tolerance * entry["active"], unit / 2)
            )
        )
    if "non_embedding" in entry:
        non_embedding = imported.total_params - mtp - embedding - head
        published = float(entry["non_embedding"])
        checks.append(
            PublishedCheck("non_embedding", non_embedding, published, max(0.005 * published, unit / 2))
        )
    return checks
