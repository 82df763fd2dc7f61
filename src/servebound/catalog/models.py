"""The model catalog: audited profiles built by the importer from real config.json files.

Each entry of ``data/models.toml`` names a config shipped under ``data/models/<folder>/config.json``
(copied verbatim from its public source, provenance recorded) and the weight formats people run it in.
A profile is one (model, weight format): its id is the model id for the native format and
``<model id>-<format>`` for the others. Every profile is imported at development time into the
catalog snapshot (``catalog.snapshot``), read here on first use; every number in a profile can be shown
from its config (``servebound models show ID --explain``).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache, cached_property
from typing import TYPE_CHECKING, Any

from servebound.catalog import snapshot
from servebound.catalog.names import find_profile
from servebound.catalog.published import PublishedCheck, compare_published, published_table
from servebound.core.formats import FORMATS, format_words
from servebound.core.kv import KVShape
from servebound.core.model import Experts, LayerShape, ModelAdapter, PrefillShape, Weights
from servebound.core.steps import Step
from servebound.errors import check_id_length
from servebound.importers.audit import ImportedModel
from servebound.importers.hf.llama_cpp import LLAMA_CPP_MIXES
from servebound.inputs import package_data

if TYPE_CHECKING:
    from servebound.catalog.model_index import ModelEntry

#: One profile's place in the catalog: its model id, weight format and whether that format is native.
Place = tuple[str, str, bool]

#: The record types of a profile's adapter and the rest of its import in the snapshot.
PROFILE_KINDS: dict[str, type] = {
    cls.__name__: cls
    for cls in (ImportedModel, ModelAdapter, Weights, Experts, KVShape, PrefillShape, LayerShape, Step)
}

#: Weight formats a catalog profile may use: the importer's layouts (core.formats), llama.cpp's file
#: types (q4_k_m, q4_0, q8_0, f16, mxfp4_moe ...: each tensor typed by llama.cpp's quantizer rules) and
#: the splits of releases that store routed experts apart.
CATALOG_FORMATS = (
    *FORMATS,
    *LLAMA_CPP_MIXES,
    "fp8_mxfp4_experts",
    "bf16_mxfp4_experts",
    "bf16_fp8_experts",
    "bf16_int4_g32_experts",
)


@dataclass(frozen=True)
class CatalogModel:
    """One catalog profile: a model at one weight format, with its audit (its models.toml entry is
    looked up when asked for: a ranking never validates the index)."""

    id: str
    base_id: str
    weight_format: str
    native: bool
    adapter: ModelAdapter
    #: The rest of the import (derivation steps, counts, facts), read when first asked for: a ranking
    #: needs the adapter alone.
    audit: Callable[[], ImportedModel] = field(repr=False, compare=False)

    @cached_property
    def imported(self) -> ImportedModel:
        return self.audit()

    @property
    def entry(self) -> ModelEntry:
        return _entries()[self.base_id]

    @property
    def name(self) -> str:
        return self.adapter.name

    @property
    def family(self) -> str:
        return str(self.imported.facts.get("model_type", self.imported.architecture))

    @property
    def total_params(self) -> float | None:
        return self.imported.total_params

    @property
    def active_params(self) -> float | None:
        return self.imported.active_params

    @property
    def is_moe(self) -> bool:
        return self.adapter.weights.experts is not None

    @property
    def published(self) -> dict[str, Any] | None:
        """The model card's figures with their source (data/published_params.toml), or None."""
        return published_table().get(self.entry.config)

    def published_checks(self) -> list[PublishedCheck]:
        """Our counts, made like the card's, against the card's figures."""
        pub = self.published
        return [] if pub is None else compare_published(pub, self.imported)

    def published_difference(self) -> tuple[float | None, float | None]:
        """(total, active) relative differences from the model card, like with like, or None."""
        checks = {c.what: c.difference for c in self.published_checks()}
        return checks.get("total"), checks.get("active")


def _data_text(*parts: str) -> str:
    return package_data.read_text("servebound.catalog", "data", *parts)


@cache
def _entries() -> dict[str, ModelEntry]:
    """The index's entries by model id, as the snapshot keeps them (validated when it was built)."""
    from servebound.catalog.model_index import ModelEntry

    rows = snapshot.header(snapshot.AUDITS)["entries"]
    return {str(row["id"]): ModelEntry.model_construct(**row) for row in rows}


def profile_name(entry: ModelEntry, weight_format: str) -> str:
    """A profile's display name: the model's name (its Hub repository's where the index gives none)
    and its weight format as people write it: ``Llama-3.3-70B-Instruct (Q4_K_M)``, ``Qwen3-8B (MLX
    4-bit)``, ``gpt-oss-20b (BF16, experts in MXFP4)``."""
    return f"{entry.name or entry.hf_id.split('/')[-1]} ({format_words(weight_format)})"


@cache
def _display_names() -> dict[str, str]:
    """Each profile's display name (lower case) and its id: the name its pages show is a name it
    answers to."""
    entries = _entries()
    return {profile_name(entries[base], fmt).lower(): pid for pid, (base, fmt, _) in _profile_ids().items()}


@cache
def _profile_ids() -> dict[str, Place]:
    """Every profile's place (model id, weight format, native), in catalog order (the snapshot's)."""
    return snapshot.places()


@cache
def _build(profile_id: str) -> CatalogModel:
    """A profile from the snapshot: its adapter now, the rest of its import when first asked for."""
    base, fmt, native = _profile_ids()[profile_id]
    adapter = snapshot.adapter(profile_id)
    return CatalogModel(
        profile_id, base, fmt, native, adapter, functools.partial(_audit, profile_id, adapter)
    )


def _audit(profile_id: str, adapter: ModelAdapter) -> ImportedModel:
    fields = dict(snapshot.row(snapshot.AUDITS, profile_id))
    steps = tuple(Step(quantity, value, formula) for quantity, value, formula in fields.pop("steps"))
    rest = {key: snapshot.decode(value, PROFILE_KINDS) for key, value in fields.items()}
    return ImportedModel(adapter=adapter, steps=steps, **rest)


def all_profiles() -> list[CatalogModel]:
    """Every catalog profile, in catalog order."""
    snapshot.load(snapshot.PROFILES)
    return [_build(profile_id) for profile_id in _profile_ids()]


def profile_ids() -> list[str]:
    """Every catalog profile id, in catalog order (native format first for each model)."""
    return list(_profile_ids())


def profile_id_for(ref: str, missing_ok: bool = False) -> str | None:
    """The profile id of a model as a person typed it: a profile id, an Ollama tag, a Hub id (with a
    quantization), a GGUF file name or loose words (``servebound.catalog.names``). Every surface's model
    lookup passes here. Unknown names raise InputError with the closest ids (None with ``missing_ok``);
    ambiguous ones raise listing the candidates."""
    check_id_length(ref, "model")
    key = ref.strip().lower()
    if key in _profile_ids():
        return key
    named = _display_names().get(key)
    if named is not None:
        return named

    return find_profile(ref, _profile_ids(), missing_ok)


def get_model(ref: str) -> CatalogModel:
    """A catalog profile by id or by any name ``profile_id_for`` reads; unknown names raise InputError
    with the closest ids."""
    found = profile_id_for(ref)
    assert found is not None
    return _build(found)


def list_models(
    *,
    family: str | None = None,
    min_params: float | None = None,
    max_params: float | None = None,
    native_only: bool = False,
    moe: bool | None = None,
) -> list[CatalogModel]:
    """Catalog profiles matching every filter given (sizes in parameters), in catalog order."""
    out = []
    for model in all_profiles():
        if native_only and not model.native:
            continue
        if family is not None and family.lower() not in model.family.lower():
            continue
        # The count is read only where a size filter asks for it: it decodes the profile's whole audit.
        total = model.total_params or 0.0 if min_params is not None or max_params is not None else 0.0
        if min_params is not None and total < min_params:
            continue
        if max_params is not None and total > max_params:
            continue
        if moe is not None and model.is_moe != moe:
            continue
        out.append(model)
    return out


def catalog_profile(ref: str) -> dict[str, Any]:
    """A profile's audit as plain data (for views)."""
    m = get_model(ref)
    total, active = m.published_difference()
    pub = m.published or {}
    return {
        "id": m.id,
        "base_id": m.base_id,
        "name": m.name,
        "family": m.family,
        "weight_format": m.weight_format,
        "native_format": m.native,
        "total_params": m.total_params,
        "active_params": m.active_params,
        "published_total_params": pub.get("total"),
        "published_active_params": pub.get("active"),
        "published_source": pub.get("source"),
        "published_counts": {k: v for k, v in pub.items() if k not in ("total", "active", "source")} or None,
        "total_params_difference": total,
        "active_params_difference": active,
        "checkpoint_bytes": m.imported.checkpoint_bytes,
        "source": {
            "repository": m.entry.hf_id,
            "revision": m.entry.hf_revision or None,
            "file": "config.json",
            "copied_from": m.entry.copied_from or None,
            "copied_from_commit": m.entry.copied_from_commit or None,
            "verification": m.entry.verification or None,
            "sha256": m.entry.sha256 or None,
        },
    }
