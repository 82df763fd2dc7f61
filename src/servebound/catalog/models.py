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
from typing import Any

from servebound.catalog import snapshot
from servebound.catalog.architectures import architecture_name
from servebound.catalog.names import profile_id_for
from servebound.catalog.published import PublishedCheck, compare_published, published_table
from servebound.core.formats import FORMATS
from servebound.core.kv import KVShape
from servebound.core.model import Experts, LayerShape, ModelAdapter, PrefillShape, Weights
from servebound.core.steps import Step
from servebound.importers.audit import ImportedModel
from servebound.importers.hf.llama_cpp import LLAMA_CPP_MIXES
from servebound.inputs import package_data

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
class IndexEntry:
    """One ``[[model]]`` entry of models.toml as the snapshot keeps it: validated against
    ``catalog.model_index.ModelEntry`` (pydantic) when the snapshot was built, read here as a plain
    record so a command answered from the catalog never loads pydantic (the two field lists are held
    equal by a test)."""

    id: str
    config: str
    hf_id: str
    hf_revision: str = ""
    copied_from: str = ""
    copied_from_commit: str = ""
    verification: str = ""
    sha256: str = ""
    name: str | None = None
    native_format: str | None = None
    formats: tuple[str, ...] = ()


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
    def entry(self) -> IndexEntry:
        return _entries()[self.base_id]

    @property
    def name(self) -> str:
        return self.adapter.name

    @property
    def family(self) -> str:
        return str(self.imported.facts.get("model_type", self.imported.architecture))

    @property
    def family_name(self) -> str:
        """The family as people write it (``Qwen3 MoE`` for ``qwen3_moe``): ``catalog.architectures``."""
        return architecture_name(self.family)

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
def _entries() -> dict[str, IndexEntry]:
    """The index's entries by model id, as the snapshot keeps them (validated when it was built)."""
    rows = snapshot.header(snapshot.AUDITS)["entries"]
    return {str(row["id"]): IndexEntry(**{**row, "formats": tuple(row["formats"])}) for row in rows}


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
        if family is not None and not _in_family(family, model):
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


def _in_family(words: str, model: CatalogModel) -> bool:
    """``qwen3``, ``qwen3_moe`` and ``qwen3 moe`` all name Qwen3 MoE: the words, without case, are part
    of the config's ``model_type`` or of its name (``catalog.architectures``)."""
    wanted = words.lower().replace("_", " ")
    return any(wanted in text.lower().replace("_", " ") for text in (model.family, model.family_name))


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
        "family_name": m.family_name,
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
