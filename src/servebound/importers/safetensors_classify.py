"""A safetensors checkpoint's tensors classified into the adapter's byte form, and the audit steps of
its import: which tensors are experts, MTP or vision, the routed expert count, the weight format the
config importer prices, and the index-only fallback through config.json. The reader of the files is
``safetensors_headers``; ``import_safetensors`` there runs these steps."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from servebound.core.steps import Step
from servebound.errors import InputError
from servebound.importers.audit import ImportedModel
from servebound.importers.hf_config import import_hf_config
from servebound.importers.tensor_roles import ByteForm, TensorEntry, TensorRole, byte_form, classify_hf

if TYPE_CHECKING:
    from servebound.importers.safetensors_records import SafetensorsCheckpoint, SafetensorsTensor

CONFIG_LAYERS = ("num_hidden_layers", "n_layer", "num_layers")
CONFIG_EXPERTS = ("num_local_experts", "num_experts", "n_routed_experts", "moe_num_experts")
CONFIG_PER_TOKEN = ("num_experts_per_tok", "experts_per_token", "num_experts_per_token", "moe_k")


def config_int(config: Mapping[str, Any], keys: tuple[str, ...]) -> int | None:
    for scope in (config, config.get("text_config") or {}):
        if not isinstance(scope, Mapping):
            continue
        for key in keys:
            value = scope.get(key)
            if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
                return value
    return None


def _expert_count(entries: list[TensorEntry], shapes: Mapping[str, tuple[int, ...]]) -> int | None:
    """E from the tensor names alone: the most distinct expert indices in one layer, or the leading
    dimension of a fused expert tensor (gpt-oss stores [E, ...] per layer)."""
    per_layer: dict[int | None, set[int]] = {}
    fused: list[int] = []
    for entry in entries:
        if entry.role is not TensorRole.ROUTED_EXPERT:
            continue
        if entry.expert is not None:
            per_layer.setdefault(entry.layer, set()).add(entry.expert)
        elif shapes.get(entry.name):
            fused.append(shapes[entry.name][0])
    counts = [len(indices) for indices in per_layer.values()] + fused
    return max(counts) if counts else None


def classify_checkpoint(
    checkpoint: SafetensorsCheckpoint, config: Mapping[str, Any] | None = None
) -> tuple[ByteForm, list[TensorEntry]]:
    """The byte form of a checkpoint with headers. ``config`` (a parsed config.json) supplies
    ``num_hidden_layers`` (layers past it are MTP) and the routed expert count E; without it E is read
    off the tensor names or the fused tensors' leading dimension."""
    config = config or {}
    layers = config_int(config, CONFIG_LAYERS)
    entries: list[TensorEntry] = []
    shapes: dict[str, tuple[int, ...]] = {}
    for tensor in checkpoint.tensors:
        base = classify_hf(tensor.name, layers)
        entries.append(replace(base, size_bytes=tensor.size_bytes, elements=tensor.elements))
        shapes[tensor.name] = tensor.shape
    routed = config_int(config, CONFIG_EXPERTS) or _expert_count(entries, shapes)
    return byte_form(entries, routed), entries


def config_importer_model(config_path: Path, weight_format: str, kv_precision: str) -> ImportedModel:
    """The config.json importer's result for the checkpoint's config."""
    return import_hf_config(str(config_path), weight_format=weight_format, kv_precision=kv_precision)


def dominant_dtype(tensors: tuple[SafetensorsTensor, ...]) -> tuple[str, dict[str, int]]:
    by_dtype: Counter[str] = Counter()
    for tensor in tensors:
        by_dtype[tensor.dtype] += tensor.size_bytes
    dominant = by_dtype.most_common(1)[0][0] if by_dtype else "unknown"
    return dominant, dict(by_dtype.most_common())


#: The config importer's weight format for a checkpoint's dominant dtype (it prices the prefill
#: linear mode; the bytes themselves come from the headers).
_FORMAT_OF_DTYPE = {
    "F32": "fp32",
    "F16": "fp16",
    "BF16": "bf16",
    "F8_E4M3": "fp8",
    "F8_E5M2": "fp8",
    "F4": "nvfp4",
}
_FORMAT_OF_QUANT_METHOD = {"mxfp4": "mxfp4", "fp8": "fp8", "nvfp4": "nvfp4", "modelopt": "nvfp4"}


def weight_format_of(dominant: str, config: Mapping[str, Any]) -> str:
    """The weight format name: the config's quant_method where it names one, else the dominant dtype."""
    quant = config.get("quantization_config")
    if isinstance(quant, Mapping) and isinstance(quant.get("quant_method"), str):
        method = str(quant["quant_method"]).lower()
        if method in _FORMAT_OF_QUANT_METHOD:
            return _FORMAT_OF_QUANT_METHOD[method]
    return _FORMAT_OF_DTYPE.get(dominant, "bf16")


def audit_steps(form: ByteForm, per_token: int | None, checkpoint_bytes: int) -> list[Step]:
    steps = [
        Step(
            "embedding_bytes",
            float(form.untied_embedding_bytes),
            "0: the embedding is tied to the head and swept with it"
            if form.tied
            else f"untied input embedding tensors = {form.embedding_bytes} B",
        ),
        Step(
            "always_on_bytes",
            float(form.swept_bytes),
            f"always-on tensors {form.always_on_bytes} B + head {form.head_bytes} B"
            + (f" + tied embedding {form.tied_table_bytes} B" if form.tied else ""),
        ),
    ]
    if form.routed_experts:
        steps.append(
            Step(
                "expert_bytes",
                form.expert_bytes,
                f"routed-expert tensors {form.routed_expert_bytes} B / E = {form.routed_experts}",
            )
        )
    steps.append(
        Step(
            "resident_bytes",
            float(form.resident_bytes),
            f"every tensor byte, MTP {form.mtp_bytes} B and vision {form.vision_bytes} B included",
        )
    )
    steps.append(
        Step("checkpoint_bytes", float(checkpoint_bytes), "sum over tensors of data_offsets end - begin")
    )
    if per_token:
        steps.append(
            Step(
                "active_elements",
                form.active_elements(per_token),
                f"embedding + head + always-on elements + k = {per_token} x one expert's elements",
            )
        )
    return steps


def index_only(
    checkpoint: SafetensorsCheckpoint, config_model: ImportedModel | None, config: Mapping[str, Any]
) -> ImportedModel:
    index = checkpoint.index
    assert index is not None
    if config_model is None:
        raise InputError(
            "source",
            f"{Path(index.path).name} lists tensor names and total bytes only; per-tensor bytes need the "
            "shard files beside it, and the adapter needs a config.json beside it",
        )
    layers = config_int(config, CONFIG_LAYERS)
    roles = Counter(classify_hf(name, layers).role.value for name in index.weight_map)
    facts: dict[str, object] = dict(config_model.facts)
    facts.update(
        {
            "safetensors_index_only": True,
            "tensor_count": len(index.weight_map),
            "tensors_by_role": dict(roles),
            "shards": list(index.shards),
        }
    )
    adapter = config_model.adapter
    steps = list(config_model.steps)
    if index.total_size_bytes is not None:
        weights = replace(adapter.weights, resident_bytes=float(index.total_size_bytes))
        adapter = replace(adapter, weights=weights)
        steps.append(
            Step("resident_bytes", float(index.total_size_bytes), "metadata.total_size of the index")
        )
    return replace(
        config_model,
        adapter=adapter,
        source=str(checkpoint.source),
        steps=tuple(steps),
        checkpoint_bytes=float(index.total_size_bytes) if index.total_size_bytes is not None else None,
        facts=facts,
    )
