"""What an importer returns: the adapter plus the derivation of every quantity it holds."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from servebound.core.model import ModelAdapter
from servebound.core.steps import Step


@dataclass(frozen=True)
class ImportedModel:
    """An adapter with its audit trail.

    ``total_params`` and ``active_params`` are the importer's own counts (embeddings included);
    ``checkpoint_bytes`` the exact tensor bytes where the importer read tensor headers.
    ``facts`` holds what else the source said (architecture, layer counts, dtype, revision ...).
    """

    adapter: ModelAdapter
    architecture: str
    source: str
    steps: tuple[Step, ...] = ()
    total_params: float | None = None
    active_params: float | None = None
    checkpoint_bytes: float | None = None
    facts: Mapping[str, object] = field(default_factory=dict)
