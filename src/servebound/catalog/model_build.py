"""The model catalog's sources: ``data/models.toml`` validated against its schema (pydantic,
:mod:`servebound.catalog.model_index`), each profile imported from its shipped config.json, and the
catalog's checks. This is what ``scripts/build_snapshot.py`` builds the snapshot from and what
``servebound catalog lint`` checks; a command that looks a profile up reads the snapshot through
:mod:`servebound.catalog.models` and never loads this module."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from functools import cache
from importlib import resources

from pydantic import ValidationError

from servebound.catalog.model_index import ModelEntry, ModelIndex
from servebound.catalog.models import (
    CATALOG_FORMATS,
    CatalogModel,
    Place,
    _data_text,
    _profile_ids,
)
from servebound.catalog.names import ollama_tags, profile_name
from servebound.catalog.published import published_table
from servebound.errors import InputError
from servebound.importers.hf.release import quantization_config
from servebound.importers.hf_config import import_hf_config
from servebound.inputs import bounded, package_data
from servebound.inputs.files import validation_to_input_error


@cache
def model_index() -> tuple[ModelEntry, ...]:
    """The validated models.toml, read once."""
    try:
        index = ModelIndex.model_validate(bounded.parse_toml(_data_text("models.toml"), "models.toml"))
    except ValidationError as exc:
        raise validation_to_input_error(exc, "models.toml: ") from None
    return tuple(index.model)


@cache
def _quant_method(config: str) -> str:
    """The quant_method of a catalog config's quantization_config, lower case ("" without one); read
    once per config."""
    raw = bounded.parse_json(_data_text("models", config, "config.json"), f"{config}/config.json")
    quant = quantization_config(raw) if isinstance(raw, Mapping) else None
    return "" if quant is None else str(quant.get("quant_method", "")).lower()


def native_format(entry: ModelEntry) -> str:
    """The checkpoint's own storage as a profile label: the entry's word, else the config's quantization
    method (fp8, mxfp4, compressed-tensors: the profile then stores each group as the release's
    quantization_config says), else bf16."""
    if entry.native_format:
        return entry.native_format
    method = _quant_method(entry.config)
    return method if method in ("fp8", "mxfp4", "compressed-tensors") else "bf16"


#: Synthetic profiles stored as a quantizer writes them (embedding and head BF16), not uniformly.
_QUANTIZER_PROFILES = {"fp8": "fp8_linear", "nvfp4": "nvfp4_linear"}


#: The cache a quantizer's checkpoint states, for the synthetic profiles that stand for one (the
#: others take the release's stated cache, else BF16).
_QUANTIZER_CACHE = {
    "nvfp4": (
        "fp8: an FP8 cache, as NVIDIA's NVFP4 checkpoints (ModelOpt exports, e.g. Qwen3-30B-A3B NVFP4) "
        "state in their quantization config (hf_quant_config.json kv_cache_quant_algo FP8), which an "
        "engine's default cache (auto) follows"
    )
}


def _import_format(entry: ModelEntry, fmt: str, native: bool) -> str | None:
    """What the importer is asked for: None (the release's own storage, read from its
    quantization_config) for a native profile of a quantized release without a curated word; for a
    synthetic fp8 or nvfp4 profile, the quantizer's layout (linear layers only, embedding and head
    BF16, as the released FP8 and NVFP4 checkpoints keep them)."""
    if native and not entry.native_format and _quant_method(entry.config):
        return None
    return fmt if native else _QUANTIZER_PROFILES.get(fmt, fmt)


@cache
def _index_entries() -> dict[str, ModelEntry]:
    """The same from the validated models.toml (the snapshot's source)."""
    return {entry.id: entry for entry in model_index()}


def index_profile_ids() -> dict[str, Place]:
    """The same places from the validated index (the snapshot's source)."""
    ids: dict[str, Place] = {}
    for entry in model_index():
        native = native_format(entry)
        formats = [native, *[f for f in entry.formats if f != native]]
        for fmt in formats:
            profile = entry.id if fmt == native else f"{entry.id}-{fmt}"
            ids[profile] = (entry.id, fmt, fmt == native)
    return ids


def import_profile(profile_id: str) -> CatalogModel:
    """A profile imported from its catalog config (the snapshot's source)."""
    base, fmt, native = index_profile_ids()[profile_id]
    entry = _index_entries()[base]
    path = resources.files("servebound.catalog").joinpath("data", "models", entry.config)
    with resources.as_file(path) as folder:
        imported = import_hf_config(
            folder,
            weight_format=_import_format(entry, fmt, native),
            release_cache=native or _QUANTIZER_CACHE.get(fmt, False),
        )
    adapter = replace(
        imported.adapter,
        id=profile_id,
        name=profile_name(entry.name, entry.hf_id, fmt),
        sources={
            "repository": entry.hf_id,
            "revision": entry.hf_revision,
            "path": f"config.json (copied from {entry.copied_from or 'the Hugging Face repository'})",
            "kind": "hf config.json",
            "kv_precision": imported.adapter.sources["kv_precision"],
        },
    )
    whole = replace(imported, adapter=adapter)
    return CatalogModel(profile_id, entry.id, fmt, native, adapter, lambda: whole)


def _config_sha256(folder: str) -> str:
    import hashlib

    data = package_data.read_bytes("servebound.catalog", "data", "models", folder, "config.json")
    return hashlib.sha256(data).hexdigest()


def lint_model_catalog() -> list[str]:
    """One line per problem: an entry without provenance or published figures, a config whose bytes
    are not the recorded sha256, an unknown format, a config that does not import, or counts more than
    0.5% off the model card."""
    problems: list[str] = []
    try:
        entries = model_index()
    except InputError as exc:
        return [str(exc)]
    seen: set[str] = set()
    for entry in entries:
        where = f"models.toml: {entry.id}"
        if entry.id in seen:
            problems.append(f"{where}: duplicate id")
        seen.add(entry.id)
        if not entry.copied_from and not entry.hf_revision:
            problems.append(f"{where}: no source for config.json (copied_from or hf_revision)")
        if entry.sha256 and entry.sha256 != _config_sha256(entry.config):
            problems.append(f"{where}: sha256 differs from models/{entry.config}/config.json's bytes")
        if entry.config not in published_table():
            problems.append(
                f"{where}: no published parameter counts with a source (data/published_params.toml)"
            )
        for fmt in entry.formats:
            if fmt not in CATALOG_FORMATS:
                problems.append(f"{where}: unknown format {fmt!r}")
        try:
            model = import_profile(entry.id)  # from the config itself, never the snapshot
        except InputError as exc:
            problems.append(f"{where}: config does not import: {exc}")
            continue
        for check in model.published_checks():
            if not check.ok:
                problems.append(
                    f"{where}: {check.what} parameters {check.difference:+.2%} from the model card, "
                    f"beyond the {check.allowed / check.published:.2%} allowed"
                )

    for tag, row in ollama_tags().items():
        if row.profile not in _profile_ids():
            problems.append(f"model_names.toml: {tag}: no profile {row.profile!r}")
        if not row.source.startswith("https://ollama.com/library/"):
            problems.append(f"model_names.toml: {tag}: its source is not the tag's library page")
    return problems
