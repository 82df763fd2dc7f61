"""Exact weight bytes from safetensors headers, never their tensor data.

A safetensors file is an 8-byte little-endian header length N, N bytes of JSON, then the tensor
bytes. The JSON maps each tensor name to ``{"dtype", "shape", "data_offsets": [begin, end]}`` with
offsets relative to the first byte after the header. This module reads only the header (capped at
``MAX_HEADER_BYTES``), checks it against the file size and against itself (``end - begin`` must equal
the dtype's width times the element count), classifies every tensor by name and sums exact bytes
into the adapter's audited byte form.
"""

from __future__ import annotations

import os
import struct
from dataclasses import replace
from pathlib import Path
from typing import Any

from servebound.core.kv import KVShape
from servebound.core.model import ModelAdapter, Weights
from servebound.errors import InputError
from servebound.importers.audit import ImportedModel
from servebound.importers.consistency import check, hf_declared, hf_observed
from servebound.importers.safetensors_classify import (
    CONFIG_PER_TOKEN,
    audit_steps,
    classify_checkpoint,
    config_importer_model,
    config_int,
    dominant_dtype,
    index_only,
    weight_format_of,
)
from servebound.importers.safetensors_records import (
    SafetensorsCheckpoint,
    SafetensorsHeader,
    SafetensorsIndex,
    SafetensorsTensor,
)
from servebound.importers.tensor_roles import ByteForm
from servebound.inputs import bounded

#: The safetensors format's own cap on a header.
MAX_HEADER_BYTES = 100_000_000
#: The largest header this reader parses, checked from the 8-byte length before anything else is read.
#: A tensor's entry is about 100 bytes of JSON, so 16 MB holds some 160,000 tensors, more than any
#: published file (the largest checkpoints spread fewer than 100,000 over many shards); a header near
#: the format's 100 MB cap cost 20 s and 900 MB to parse before it failed (issue 14).
MAX_READ_HEADER_BYTES = 16_000_000
#: JSON objects a header may hold (one per tensor, plus __metadata__ and the whole): counted in the raw
#: bytes before parsing, so a header of millions of tiny objects fails before they are built.
MAX_HEADER_OBJECTS = 250_000
#: The largest index.json or config.json read whole (an index lists every tensor of the checkpoint in
#: about 100 bytes each).
MAX_JSON_FILE_BYTES = 32_000_000
#: Element counts beyond this cannot be stored by any reader (signed 64-bit).
MAX_ELEMENTS = 2**63 - 1

#: Bits per element of every safetensors dtype (sub-byte types pack several elements per byte).
DTYPE_BITS: dict[str, int] = {
    "BOOL": 8,
    "U8": 8,
    "I8": 8,
    "F8_E4M3": 8,
    "F8_E5M2": 8,
    "F8_E8M0": 8,
    "F4": 4,
    "F6_E2M3": 6,
    "F6_E3M2": 6,
    "U16": 16,
    "I16": 16,
    "F16": 16,
    "BF16": 16,
    "U32": 32,
    "I32": 32,
    "F32": 32,
    "U64": 64,
    "I64": 64,
    "F64": 64,
    "C64": 64,
}


# Bounded JSON -------------------------------------------------------------------------------------


def _read_json_file(path: Path, field: str) -> Any:
    return bounded.read_json(path, f"{field} ({path.name})", max_bytes=MAX_JSON_FILE_BYTES)


# One file's header --------------------------------------------------------------------------------


def _shape(value: Any, where: str) -> tuple[tuple[int, ...], int]:
    if not isinstance(value, list):
        raise InputError(where, f"shape must be a list of integers, got {value!r:.80}")
    elements = 1
    for dim in value:
        if isinstance(dim, bool) or not isinstance(dim, int):
            raise InputError(where, f"shape holds a non-integer dimension {dim!r:.40}")
        if dim < 0:
            raise InputError(where, f"shape holds a negative dimension {dim}")
        elements *= dim
        if elements > MAX_ELEMENTS:
            raise InputError(where, f"shape {value!r:.80} has more than 2^63 elements")
    return tuple(value), elements


def _offsets(value: Any, where: str) -> tuple[int, int]:
    if (
        not isinstance(value, list)
        or len(value) != 2
        or any(isinstance(v, bool) or not isinstance(v, int) for v in value)
    ):
        raise InputError(where, f"data_offsets must be [begin, end] integers, got {value!r:.80}")
    begin, end = value
    if begin < 0 or end < begin:
        raise InputError(where, f"data_offsets [{begin}, {end}] are not 0 <= begin <= end")
    return begin, end


def _tensor(name: str, info: Any, field: str, data_bytes: int) -> SafetensorsTensor:
    where = f"{field}: tensor {name!r:.120}"
    if not isinstance(info, dict):
        raise InputError(where, "entry must be an object with dtype, shape and data_offsets")
    missing = {"dtype", "shape", "data_offsets"} - info.keys()
    if missing:
        raise InputError(where, f"entry lacks {', '.join(sorted(missing))}")
    dtype = info["dtype"]
    if not isinstance(dtype, str) or dtype not in DTYPE_BITS:
        raise InputError(where, f"unknown dtype {dtype!r:.40}; known: {', '.join(DTYPE_BITS)}")
    shape, elements = _shape(info["shape"], where)
    begin, end = _offsets(info["data_offsets"], where)
    if end > data_bytes:
        raise InputError(where, f"data_offsets end {end} is past the file's {data_bytes} data bytes")
    bits = elements * DTYPE_BITS[dtype]
    if bits % 8 or end - begin != bits // 8:
        raise InputError(
            where,
            f"data_offsets span {end - begin} bytes but {dtype} x {elements} elements is {bits / 8:g} bytes",
        )
    return SafetensorsTensor(name, dtype, shape, elements, end - begin, begin, end)


def read_safetensors_header(path: str | os.PathLike[str]) -> SafetensorsHeader:
    """Read and validate one file's header without touching its tensor data.

    Raises InputError naming the file for: a file shorter than 8 bytes, a header length over
    ``MAX_HEADER_BYTES`` or past the end of the file, a header that is not a UTF-8 JSON object, duplicate
    keys, an unknown dtype, a negative, non-integer or overflowing shape, offsets past the data or
    overlapping, and offsets whose span disagrees with dtype x shape.
    """
    file = Path(path)
    field = f"safetensors file {file.name}"
    try:
        with bounded.open_regular(file, field) as handle:
            size = os.fstat(handle.fileno()).st_size
            if size < 8:
                raise InputError(field, f"truncated: {size} bytes, shorter than the 8-byte header length")
            (header_bytes,) = struct.unpack("<Q", handle.read(8))
            if header_bytes > MAX_HEADER_BYTES:
                raise InputError(
                    field, f"header length {header_bytes} is over the {MAX_HEADER_BYTES} byte cap"
                )
            if header_bytes > MAX_READ_HEADER_BYTES:
                raise InputError(
                    field,
                    f"header length {header_bytes} is over servebound's {MAX_READ_HEADER_BYTES} byte cap "
                    "(about 160,000 tensors, more than any published file holds)",
                )
            if 8 + header_bytes > size:
                raise InputError(
                    field, f"header length {header_bytes} is larger than the {size - 8} bytes after it"
                )
            raw = handle.read(header_bytes)
    except OSError as error:
        raise InputError(field, f"cannot read: {error.strerror}") from None
    if len(raw) != header_bytes:
        raise InputError(field, f"truncated: header length {header_bytes}, read {len(raw)}")
    objects = raw.count(b"{")
    if objects > MAX_HEADER_OBJECTS:
        raise InputError(
            field, f"header holds {objects} JSON objects, over the {MAX_HEADER_OBJECTS} cap (one per tensor)"
        )
    document = bounded.parse_json(raw, field)
    if not isinstance(document, dict):
        raise InputError(field, "header must be a JSON object")
    data_bytes = size - 8 - header_bytes
    metadata: dict[str, str] = {}
    tensors: list[SafetensorsTensor] = []
    for name, info in document.items():
        if name == "__metadata__":
            if not isinstance(info, dict) or not all(isinstance(v, str) for v in info.values()):
                raise InputError(field, "__metadata__ must map strings to strings")
            metadata = info
            continue
        tensors.append(_tensor(name, info, field, data_bytes))
    previous: SafetensorsTensor | None = None
    for tensor in sorted(tensors, key=lambda t: (t.begin, t.end)):
        if previous is not None and tensor.begin < previous.end and tensor.size_bytes > 0:
            raise InputError(
                field,
                f"tensors {previous.name!r:.80} and {tensor.name!r:.80} overlap "
                f"([{previous.begin}, {previous.end}) and [{tensor.begin}, {tensor.end}))",
            )
        if tensor.size_bytes > 0:
            previous = tensor
    return SafetensorsHeader(str(file), header_bytes, data_bytes, tuple(tensors), metadata)


# Index ------------------------------------------------------------------------------------------------


def read_safetensors_index(path: str | os.PathLike[str]) -> SafetensorsIndex:
    """Read a ``model.safetensors.index.json``: its ``weight_map`` and ``metadata.total_size``."""
    file = Path(path)
    field = f"safetensors index {file.name}"
    document = _read_json_file(file, "safetensors index")
    if not isinstance(document, dict) or not isinstance(document.get("weight_map"), dict):
        raise InputError(field, "must be an object with a weight_map of tensor name -> shard file")
    weight_map = document["weight_map"]
    for name, shard in weight_map.items():
        if not isinstance(shard, str) or not shard or "/" in shard or "\\" in shard or shard in {".", ".."}:
            raise InputError(field, f"tensor {name!r:.80} maps to {shard!r:.80}, not a shard file name")
    metadata = document.get("metadata") or {}
    if not isinstance(metadata, dict):
        raise InputError(field, "metadata must be an object")
    total = metadata.get("total_size")
    if total is not None and (isinstance(total, bool) or not isinstance(total, int | float) or total < 0):
        raise InputError(field, f"metadata.total_size must be a non-negative byte count, got {total!r:.40}")
    return SafetensorsIndex(str(file), weight_map, int(total) if total is not None else None)


# Checkpoint ------------------------------------------------------------------------------------------


def _locate(source: Path) -> tuple[Path, Path | None, list[Path]]:
    """(folder, index path or None, shard files) for a file, an index or a folder."""
    if source.is_dir():
        folder = source
        indexes = sorted(folder.glob("*.safetensors.index.json"))
        if len(indexes) > 1:
            names = ", ".join(p.name for p in indexes)
            raise InputError("source", f"{folder.name} holds several indexes ({names}); name one")
        index = indexes[0] if indexes else None
        shards = sorted(folder.glob("*.safetensors")) if index is None else []
        if index is None and not shards:
            raise InputError("source", f"{folder.name} holds no .safetensors file and no index")
        return folder, index, shards
    if not source.exists():
        raise InputError("source", f"{source} does not exist")
    if source.name.endswith(".json"):
        return source.parent, source, []
    return source.parent, None, [source]


def read_safetensors_checkpoint(source: str | os.PathLike[str]) -> SafetensorsCheckpoint:
    """Read every shard header of ``source`` (a .safetensors file, a folder of shards, or an index).

    With an index, every listed shard must be present (or none, which leaves an index-only checkpoint
    with no headers), every listed tensor must be in the shard it names, and every tensor in the
    shards must be listed.
    """
    folder, index_path, shards = _locate(Path(source))
    index = read_safetensors_index(index_path) if index_path else None
    if index is not None:
        present = [name for name in index.shards if (folder / name).is_file()]
        if not present:
            return SafetensorsCheckpoint(str(source), (), index)
        missing = [name for name in index.shards if name not in present]
        if missing:
            raise InputError("source", f"the index names shards that are not beside it: {', '.join(missing)}")
        shards = [folder / name for name in index.shards]
    headers = tuple(read_safetensors_header(shard) for shard in shards)
    seen: dict[str, str] = {}
    for header in headers:
        shard_name = Path(header.path).name
        for tensor in header.tensors:
            if tensor.name in seen:
                raise InputError(
                    "source", f"tensor {tensor.name!r:.80} is in both {seen[tensor.name]} and {shard_name}"
                )
            seen[tensor.name] = shard_name
    if index is not None:
        for name, shard in index.weight_map.items():
            if seen.get(name) != shard:
                found = f"found in {seen[name]}" if name in seen else "in no shard"
                raise InputError("source", f"index puts {name!r:.80} in {shard} but it is {found}")
        unlisted = sorted(set(seen) - set(index.weight_map))
        if unlisted:
            raise InputError(
                "source", f"{len(unlisted)} tensors are missing from the index, e.g. {unlisted[0]!r}"
            )
    return SafetensorsCheckpoint(str(source), headers, index)


# Classification -------------------------------------------------------------------------------------


def _config_file(
    source: str | os.PathLike[str], config: str | os.PathLike[str] | ImportedModel | None
) -> tuple[Path | None, dict[str, Any]]:
    """The config.json to use (the one given, else the one beside the shards) and its parsed object."""
    folder = Path(source) if Path(source).is_dir() else Path(source).parent
    config_path: Path | None = None
    if isinstance(config, str | os.PathLike):
        config_path = Path(config)
    elif config is None and (folder / "config.json").is_file():
        config_path = folder / "config.json"
    if config_path is None:
        return None, {}
    loaded = _read_json_file(config_path, "config")
    if not isinstance(loaded, dict):
        raise InputError("config", f"{config_path.name} must be a JSON object")
    return config_path, loaded


def _checkpoint_facts(
    checkpoint: SafetensorsCheckpoint,
    form: ByteForm,
    tensor_count: int,
    by_dtype: dict[str, int],
    config_model: ImportedModel | None,
) -> dict[str, object]:
    """The import's facts: the files, tensors and bytes by dtype, and the cross-checks against the
    index's declared total and the config's parameter count."""
    checkpoint_bytes = checkpoint.checkpoint_bytes
    total_elements = form.total_elements
    facts: dict[str, object] = dict(config_model.facts) if config_model else {}
    facts.update(
        {
            "files": len(checkpoint.headers),
            "tensor_count": tensor_count,
            "bytes_by_dtype": by_dtype,
            "tied_embedding": form.tied,
            "routed_experts": form.routed_experts,
            "mtp_bytes": form.mtp_bytes,
            "vision_bytes": form.vision_bytes,
            "tensor_elements": total_elements,
        }
    )
    trailing = sum(h.data_bytes for h in checkpoint.headers) - checkpoint_bytes
    if trailing:
        facts["unreferenced_data_bytes"] = trailing
    if checkpoint.index is not None and checkpoint.index.total_size_bytes is not None:
        facts["index_total_size_bytes"] = checkpoint.index.total_size_bytes
        facts["index_total_size_difference_bytes"] = checkpoint.index.total_size_bytes - checkpoint_bytes
    if config_model is not None and config_model.total_params is not None:
        facts["config_total_params"] = config_model.total_params
        facts["tensor_minus_config_params"] = total_elements - config_model.total_params
        if any(t.dtype in {"U8", "I8", "F4"} and "blocks" in t.name for t in checkpoint.tensors):
            facts["param_check_note"] = "packed blocks (MXFP4) count storage elements, not parameters"
    return facts


def import_safetensors(
    source: str | os.PathLike[str],
    *,
    config: str | os.PathLike[str] | ImportedModel | None = None,
    kv: KVShape | None = None,
    experts_per_token: int | None = None,
    kv_precision: str = "bf16",
) -> ImportedModel:
    """Import a safetensors checkpoint: exact bytes per role from its headers, KV from its config.

    ``source`` is a .safetensors file, a folder of shards, or a ``*.safetensors.index.json``. Only
    headers are read. The byte form: ``embedding_bytes`` is the untied input embedding (0 when tied),
    ``always_on_bytes`` everything swept whatever the routing (the head included), ``expert_bytes`` the
    routed-expert total / E, and ``resident_bytes`` every tensor byte (MTP layers and vision towers,
    which are resident but not swept, included).

    ``config`` is a config.json path or an already imported config; by default the config.json beside
    the shards is used. The config.json importer (``hf_config.import_hf_config``) supplies the KV shape,
    prefill fields and parameter counts for the cross-check; ``kv`` overrides its KV shape (both alloc
    and read), ``experts_per_token`` its k. An index alone (no shards beside it) gives names and the
    declared total bytes: the adapter then comes from the config with ``resident_bytes`` set to that
    total.
    """
    checkpoint = read_safetensors_checkpoint(source)
    config_path, raw_config = _config_file(source, config)

    dominant, by_dtype = dominant_dtype(checkpoint.tensors)
    weight_format = weight_format_of(dominant, raw_config)
    config_model: ImportedModel | None = config if isinstance(config, ImportedModel) else None
    config_problem: str | None = None
    if config_model is None and config_path is not None:
        try:
            config_model = config_importer_model(config_path, weight_format, kv_precision)
        except InputError as error:
            if kv is None:
                raise
            config_problem = str(error)  # the KV shape was given; the names still classify

    if not checkpoint.headers:
        return index_only(checkpoint, config_model, raw_config)

    # The config against the tensors (and itself), where the config importer read it (its family's
    # tensor names are the ones the check knows): one shared check.
    declared = (
        hf_declared(raw_config) if raw_config and config_model is not None and not config_problem else None
    )
    if declared is not None:
        check(declared, hf_observed((t.name, t.dtype, t.shape) for t in checkpoint.tensors))
    form, entries = classify_checkpoint(checkpoint, raw_config)
    config_experts = config_model.adapter.weights.experts if config_model else None
    if config_experts is not None and form.routed_experts is not None:
        form = replace(form, routed_experts=config_experts.routed)
    per_token = experts_per_token
    if per_token is None and config_experts is not None:
        per_token = config_experts.per_token
    if per_token is None:
        per_token = config_int(raw_config, CONFIG_PER_TOKEN)
    if form.routed_experts and not per_token:
        raise InputError(
            "experts_per_token",
            f"the checkpoint has {form.routed_experts} routed experts but no config gives k; "
            "put the model's config.json beside the shards (from Python: "
            "import_safetensors(..., experts_per_token=K))",
        )
    if form.routed_experts and per_token and per_token > form.routed_experts:
        raise InputError("experts_per_token", f"k = {per_token} exceeds E = {form.routed_experts}")

    if kv is not None:
        kv_alloc = kv_read = kv
    elif config_model is not None:
        kv_alloc, kv_read = config_model.adapter.kv_alloc, config_model.adapter.kv_read
    else:
        raise InputError(
            "kv",
            "the KV-cache shape comes from config.json, and none was found beside the shards; put the "
            "model's config.json there, or import the config with `servebound import hf CONFIG` "
            "(from Python: import_safetensors(..., kv=KVShape(...)))",
        )

    checkpoint_bytes = checkpoint.checkpoint_bytes
    if checkpoint_bytes <= 0:
        raise InputError(
            "source", f"{Path(source).name}'s tensors hold 0 bytes: there are no weights to serve"
        )
    steps = audit_steps(form, per_token, checkpoint_bytes)
    name = Path(source).name if Path(source).is_dir() else Path(source).parent.name or Path(source).stem
    base = config_model.adapter if config_model is not None else None
    weights: Weights = form.weights(per_token)
    adapter = ModelAdapter(
        id=base.id if base else name,
        name=base.name if base else name,
        weights=weights,
        kv_alloc=kv_alloc,
        kv_read=kv_read,
        prefill=base.prefill if base else None,
        context_limit_tokens=base.context_limit_tokens if base else None,
        weight_precision=weight_format,
        kv_precision=(base.kv_precision if base and kv is None else kv_precision),
        kv_bytes_per_element=base.kv_bytes_per_element if base and kv is None else None,
        sources={"weights": "safetensors headers"},
    )
    total_elements = form.total_elements
    active_elements = form.active_elements(per_token)
    facts = _checkpoint_facts(checkpoint, form, len(entries), by_dtype, config_model)
    if config_problem is not None:
        facts["config_import_problem"] = config_problem
    return ImportedModel(
        adapter=adapter,
        architecture=str(
            (config_model.architecture if config_model else None)
            or raw_config.get("model_type")
            or checkpoint.headers[0].metadata.get("format", "unknown")
        ),
        source=str(source),
        steps=tuple(steps),
        total_params=float(total_elements),
        active_params=float(active_elements),
        checkpoint_bytes=float(checkpoint_bytes),
        facts=facts,
    )


__all__ = [
    "DTYPE_BITS",
    "MAX_HEADER_BYTES",
    "MAX_HEADER_OBJECTS",
    "MAX_READ_HEADER_BYTES",
    "SafetensorsCheckpoint",
    "SafetensorsHeader",
    "SafetensorsIndex",
    "SafetensorsTensor",
    "classify_checkpoint",
    "import_safetensors",
    "read_safetensors_checkpoint",
    "read_safetensors_header",
    "read_safetensors_index",
]
