"""Exact weight bytes, KV shape and prefill fields from a GGUF file's header, never its tensor data.

``gguf_reader`` reads the header (every count and length checked); this module turns its metadata and
tensor table into an adapter: the attention layout, the KV shape, the prefill fields, exact bytes per
tensor role, and the audit steps that show each number's derivation.
"""

from __future__ import annotations

import math
import os
import re
from collections import Counter
from dataclasses import dataclass, replace
from pathlib import Path

from servebound.core.formats import KV_FORMATS, kv_bytes_per_element
from servebound.core.kv import KVShape
from servebound.core.model import ModelAdapter, PrefillShape
from servebound.core.steps import Step
from servebound.errors import InputError
from servebound.importers.audit import ImportedModel
from servebound.importers.consistency import Declared, Keys, Observed, check
from servebound.importers.gguf_meta import (
    RECURRENT_STATE_BYTES_PER_ELEMENT,
    Attention,
    Layers,
    Meta,
    architecture,
    attention_layout,
    layer_counts,
    recurrent_state_elements,
    sliding_layers,
    slug,
)
from servebound.importers.gguf_reader import (
    GGUFHeader,
    merged_header,
    read_gguf_split,
)
from servebound.importers.modes import LLAMA_CPP_IF_PUBLISHED, if_published_note, linear_mode
from servebound.importers.tensor_roles import ByteForm, TensorEntry, TensorRole, byte_form, classify_gguf
from servebound.views.terminal import one_line


def _entries(header: GGUFHeader, mtp_first: int | None) -> list[TensorEntry]:
    """One entry per tensor, in ``header.tensors`` order (the helpers below zip the two)."""
    return [
        replace(classify_gguf(t.name, mtp_first), size_bytes=t.size_bytes, elements=t.elements)
        for t in header.tensors
    ]


def _check_expert_shapes(
    header: GGUFHeader, entries: list[TensorEntry], experts: int | None, field: str
) -> None:
    for tensor, entry in zip(header.tensors, entries, strict=True):
        if entry.role is not TensorRole.ROUTED_EXPERT:
            continue
        shape = tensor.shape
        if experts is None:
            raise InputError(
                field, f"tensor {entry.name!r} holds routed experts but there is no expert_count"
            )
        if not shape or shape[-1] != experts:
            raise InputError(
                field, f"tensor {entry.name!r} shape {list(shape)} does not end in expert_count {experts}"
            )


def _linear_active_elements(
    header: GGUFHeader, entries: list[TensorEntry], form: ByteForm, k: int | None, type_mode: str = ""
) -> dict[str, float]:
    """P_lin,active: matrix (2-D and up) elements of the swept blocks, routed experts scaled by k / E;
    no embedding, head, norms or biases. By arithmetic mode (each tensor's ggml type's, ``linear_mode``;
    a type with none counts in ``type_mode``, the dominant type's), in order of first appearance; all
    under ``""`` when ``type_mode`` is empty."""
    counts: dict[str, list[int]] = {}  # mode -> [always-on elements, routed-expert elements]
    for tensor, entry in zip(header.tensors, entries, strict=True):
        if len(tensor.shape) < 2 or entry.layer is None or entry.role not in _SWEPT:
            continue
        mode = ""
        if type_mode:
            try:
                mode = linear_mode(tensor.ggml_type)
            except KeyError:
                mode = type_mode
        count = counts.setdefault(mode, [0, 0])
        count[entry.role is TensorRole.ROUTED_EXPERT] += entry.elements
    if not counts:
        return {"": 0.0}
    if form.routed_experts and k:
        return {mode: always + routed * k / form.routed_experts for mode, (always, routed) in counts.items()}
    return {mode: float(always + routed) for mode, (always, routed) in counts.items()}


_SWEPT = (TensorRole.ALWAYS_ON, TensorRole.ROUTED_EXPERT)


def _linear_type_and_mode(header: GGUFHeader, entries: list[TensorEntry], field: str) -> tuple[str, str]:
    """The ggml type holding the most bytes of the block matrices (2-D and up, embedding and head
    excluded; the whole file when it has none) and the arithmetic mode prefill runs them in."""
    by_type: Counter[str] = Counter()
    for tensor, entry in zip(header.tensors, entries, strict=True):
        swept = entry.role in (TensorRole.ALWAYS_ON, TensorRole.ROUTED_EXPERT)
        if swept and entry.layer is not None and len(tensor.shape) >= 2:
            by_type[tensor.ggml_type] += tensor.size_bytes
    if not by_type:
        by_type = header.bytes_by_type
    if not by_type:
        return "none", "bf16"
    dominant = by_type.most_common(1)[0][0]
    try:
        return dominant, linear_mode(dominant)
    except KeyError:
        raise InputError(
            field, f"its matrices are mostly {dominant}, a type with no known arithmetic mode"
        ) from None


_ATTENTION_TENSOR = re.compile(r"^blk\.(\d+)\.attn_(?:q|k|v|qkv|q_a|q_b|kv_a_mqa|kv_b|k_b|v_b)\.weight$")
_PROJECTION = re.compile(r"^blk\.(\d+)\.attn_(q|k|v|kv_a_mqa)\.weight$")


def _check_header_against_tensors(header: GGUFHeader, meta: Meta, layers: Layers) -> None:
    """The header's shape keys against each other and the tensors it lists (``consistency.check``):
    blk.N indices against block_count (MTP blocks a converter dropped allowed), embedding_length
    against ``token_embd.weight``'s rows, head_count 0 or head_count_kv 0 on a layer holding those
    projections, KV heads that exceed or do not divide the query heads, a head count that does not
    divide the width with no key_length, and q / k projection sizes against heads x key_length."""
    key = f"{meta.field}: {meta.arch}"
    keys = Keys(
        layers=f"{key}.block_count",
        hidden=f"{key}.embedding_length",
        heads=f"{key}.attention.head_count",
        kv_heads=f"{key}.attention.head_count_kv",
        head_dim=f"{key}.attention.key_length",
        layer_tensors="blk.N",
    )
    embedding = meta.count("embedding_length", required=True)
    heads = meta.per_layer("attention.head_count", layers.decoder, None)
    if heads is None:
        raise InputError(keys.heads, "missing from the metadata")
    kv_heads = meta.per_layer("attention.head_count_kv", layers.decoder, None) or heads
    slides, _, _ = sliding_layers(meta, layers.decoder)
    key_length = meta.count("attention.key_length")
    key_swa = meta.count("attention.key_length_swa") or key_length
    layer_indices: set[int] = set()
    q_rows: dict[int, int] = {}
    k_rows: dict[int, int] = {}
    attention: dict[int, str] = {}
    key_value: dict[int, str] = {}
    latent: set[int] = set()
    table = None
    for tensor in header.tensors:
        if tensor.name == "token_embd.weight" and tensor.shape:
            table = ("token_embd.weight", tensor.shape[0])
        if (block := re.match(r"^blk\.(\d+)\.", tensor.name)) is not None:
            layer_indices.add(int(block.group(1)))
        if (match := _ATTENTION_TENSOR.match(tensor.name)) is not None:
            attention.setdefault(int(match.group(1)), tensor.name)
        if (match := _PROJECTION.match(tensor.name)) is None:
            continue
        layer, part = int(match.group(1)), match.group(2)
        if part == "kv_a_mqa":
            latent.add(layer)
        elif part in ("k", "v"):
            key_value.setdefault(layer, tensor.name)
        if len(tensor.shape) == 2 and part in ("q", "k"):
            (q_rows if part == "q" else k_rows)[layer] = tensor.shape[1]
    # The head size the importer computes the cache with (attention_layout): key_length, else width / heads.
    derived = key_length or (embedding or 0) // (max(heads) or 1)
    sizes = [
        None if layer in latent else (key_swa or derived) if slides[layer] else derived
        for layer in range(layers.decoder)
    ]
    query_units = tuple(size and heads[layer] * size for layer, size in enumerate(sizes))
    key_rows = tuple(
        frozenset({kv_heads[layer] * size}) if size and kv_heads[layer] else None
        for layer, size in enumerate(sizes)
    )
    check(
        Declared(
            keys,
            layers.decoder,
            embedding,
            tuple(heads),
            tuple(kv_heads),
            query_units,
            key_rows,
            states_head_size=key_length is not None,
            stated_layers=layers.block_count,
            extra_layers=layers.block_count - layers.decoder,
        ),
        Observed(frozenset(layer_indices), table, q_rows, k_rows, attention, key_value),
    )


def _kv_shape(meta: Meta, attention: Attention, element_bytes: float) -> tuple[KVShape, str]:
    """The cache per token at the chosen precision, and the recurrent state's formula."""
    state_elements, state_formula = recurrent_state_elements(meta, attention.recurrent_layers)
    kv = KVShape(
        global_bytes_per_token=attention.kv_global_elements * element_bytes,
        local_bytes_per_token=attention.kv_local_elements * element_bytes,
        window_tokens=attention.window if attention.kv_local_elements else 0,
        state_bytes=float(state_elements * RECURRENT_STATE_BYTES_PER_ELEMENT),
    )
    return kv, state_formula


def _prefill_shape(
    header: GGUFHeader,
    entries: list[TensorEntry],
    form: ByteForm,
    layers: Layers,
    attention: Attention,
    kv: KVShape,
    field: str,
) -> tuple[PrefillShape, str]:
    """Prefill's inputs, and the ggml type that set its linear mode. Where the block matrices' types
    multiply in more than one mode (MXFP4 experts beside Q8_0 attention, an F32 router), P_lin,active is
    split by mode (``linear_params_by_mode``), each part charged at its own mode's rate."""
    linear = _linear_active_elements(header, entries, form, layers.per_token)[""]
    linear_type, mode = _linear_type_and_mode(header, entries, field)
    split = _linear_active_elements(header, entries, form, layers.per_token, mode)
    prefill = PrefillShape(
        linear_active_params=linear,
        linear_params_by_mode=tuple(split.items()) if len(split) > 1 else (),
        attention_global_flops_per_pair=attention.flops_global,
        attention_local_flops_per_pair=attention.flops_local,
        attention_window_tokens=kv.window_tokens,
        kv_write_bytes_per_token=kv.global_bytes_per_token + kv.local_bytes_per_token,
        linear_mode=mode,
        linear_mode_if_published=LLAMA_CPP_IF_PUBLISHED.get(linear_type.lower()),
    )
    return prefill, linear_type


@dataclass(frozen=True)
class _Derived:
    """What the steps derived from one header, gathered for the adapter, the audit and the facts."""

    header: GGUFHeader
    layers: Layers
    form: ByteForm
    attention: Attention
    kv: KVShape
    state_formula: str
    kv_precision: str
    element_bytes: float
    prefill: PrefillShape
    linear_type: str

    @property
    def bits_per_weight(self) -> float:
        elements = self.form.total_elements
        return 8.0 * self.header.tensor_bytes / elements if elements else math.nan


def _audit_steps(d: _Derived) -> tuple[Step, ...]:
    """Each derived quantity with the arithmetic that gave it."""
    form, kv, attention, experts = d.form, d.kv, d.attention, d.layers.experts
    return (
        Step(
            "embedding_bytes",
            float(form.untied_embedding_bytes),
            "0: no output.weight, so token_embd is the head and is swept"
            if form.tied
            else f"token_embd = {form.embedding_bytes} B",
        ),
        Step(
            "always_on_bytes",
            float(form.swept_bytes),
            f"block tensors but routed experts {form.always_on_bytes} B + output {form.head_bytes} B"
            + (f" + tied token_embd {form.tied_table_bytes} B" if form.tied else ""),
        ),
        Step(
            "expert_bytes",
            form.expert_bytes,
            f"ffn_*_exps {form.routed_expert_bytes} B / expert_count {experts}" if experts else "dense: 0",
        ),
        Step(
            "resident_bytes",
            float(form.resident_bytes),
            f"every tensor byte; MTP {form.mtp_bytes} B included",
        ),
        Step(
            "kv.global_bytes_per_token",
            kv.global_bytes_per_token,
            f"{attention.kv_global_elements} elements x {d.element_bytes} B ({d.kv_precision}): "
            + attention.formula,
        ),
        Step(
            "kv.local_bytes_per_token",
            kv.local_bytes_per_token,
            f"{attention.kv_local_elements} elements x {d.element_bytes} B",
        ),
        Step("kv.state_bytes", kv.state_bytes, f"{d.state_formula}, f32"),
        Step(
            "bits_per_weight",
            d.bits_per_weight,
            f"8 x {d.header.tensor_bytes} B / {form.total_elements} elements",
        ),
        Step(
            "linear_active_params",
            d.prefill.linear_active_params,
            "matrix elements of the blocks, routed experts x k / E",
        ),
        Step(
            "prefill.linear_mode",
            0.0,
            f"{d.prefill.linear_mode}: {d.linear_type} holds the most bytes of the block matrices"
            + (
                "; llama.cpp multiplies int8-quantized activations against block-quantized weights"
                if d.prefill.linear_mode == "int8"
                else ""
            )
            + (
                "; "
                + if_published_note(d.prefill.linear_mode_if_published, d.linear_type, d.prefill.linear_mode)
                if d.prefill.linear_mode_if_published
                else ""
            ),
        ),
        *_split_steps(d.prefill),
        Step(
            "attention_global_flops_per_pair",
            attention.flops_global,
            "sum over full-attention layers of 2 x heads x (key_length + value_length)",
        ),
    )


def _split_steps(prefill: PrefillShape) -> tuple[Step, ...]:
    """The audit step of a split linear mode (none where every block matrix multiplies in one)."""
    split = prefill.linear_params_by_mode
    if not split:
        return ()
    shares = ", ".join(f"{mode} {params:,.0f}" for mode, params in split)
    return (
        Step(
            "prefill.linear_params_by_mode",
            float(sum(params for _, params in split)),
            f"P_lin,active by the mode each tensor's ggml type multiplies in ({shares}): each part "
            "charged at its own rate",
        ),
    )


def _facts(
    d: _Derived, headers: tuple[GGUFHeader, ...], meta: Meta, known: bool, dominant: str
) -> dict[str, object]:
    """What else the header said, for the audit trail."""
    header, layers, attention = d.header, d.layers, d.attention
    data_bytes = sum(h.data_section_bytes for h in headers)
    return {
        "gguf_version": header.version,
        "architecture_known_to_gguf": known,
        "block_count": layers.block_count,
        "nextn_predict_layers": layers.nextn,
        "context_length": meta.count("context_length"),
        "embedding_length": meta.count("embedding_length"),
        "head_count": meta.get("attention.head_count"),
        "head_count_kv": meta.get("attention.head_count_kv"),
        "key_length": attention.key_length,
        "value_length": attention.value_length,
        "sliding_window": attention.window,
        "expert_count": layers.experts,
        "expert_used_count": layers.per_token,
        "tied_embedding": d.form.tied,
        "tensor_count": len(header.tensors),
        "bytes_by_type": dict(d.header.bytes_by_type.most_common()),
        "dominant_type": dominant,
        "linear_dominant_type": d.linear_type,
        "bits_per_weight": d.bits_per_weight,
        "files": len(headers),
        "tensor_data_bytes": data_bytes,
        "alignment_padding_bytes": data_bytes - header.tensor_bytes,
        "mtp_bytes": d.form.mtp_bytes,
        "recurrent_layers": attention.recurrent_layers,
        "file_type": header.metadata.get("general.file_type"),
    }


def _imported(
    path: str | os.PathLike[str],
    d: _Derived,
    headers: tuple[GGUFHeader, ...],
    arch: str,
    meta: Meta,
    known: bool,
) -> ImportedModel:
    """The adapter with its audit trail."""
    file = Path(path)
    by_type = d.header.bytes_by_type
    dominant = by_type.most_common(1)[0][0] if by_type else "none"
    name = d.header.metadata.get("general.name")
    adapter = ModelAdapter(
        id=slug(file.stem),
        name=one_line(name) if isinstance(name, str) and name else one_line(file.stem),
        weights=d.form.weights(d.layers.per_token),
        kv_alloc=d.kv,
        kv_read=d.kv,
        prefill=d.prefill,
        context_limit_tokens=meta.count("context_length"),
        weight_precision=dominant.lower(),
        kv_precision=d.kv_precision,
        kv_bytes_per_element=d.element_bytes,
        sources={"weights": "GGUF tensor infos", "kv": "GGUF metadata"},
    )
    return ImportedModel(
        adapter=adapter,
        architecture=arch,
        source=str(path),
        steps=_audit_steps(d),
        total_params=float(d.form.total_elements),
        active_params=float(d.form.active_elements(d.layers.per_token)),
        checkpoint_bytes=float(d.header.tensor_bytes),
        facts=_facts(d, headers, meta, known, dominant),
    )


def import_gguf(path: str | os.PathLike[str], *, kv_precision: str = "fp16") -> ImportedModel:
    """Import a GGUF file (or a split GGUF, given any of its files): exact bytes per role, KV shape and
    prefill fields from its header.

    Bytes: every tensor's ggml type and shape give exact bytes (any quantization mix). ``token_embd``
    is the untied embedding unless ``output.weight`` is absent (tied: the table is swept as the head
    and counts as always-on); ``blk.N.ffn_*_exps`` are the routed experts, one expert being their total
    / expert_count; everything else in the blocks, shared experts included, is always-on; MTP blocks
    (past block_count - nextn_predict_layers) are resident only. ``resident_bytes`` is every tensor
    byte.

    KV: per token, the sum over attention layers of head_count_kv x (key_length + value_length)
    elements at ``kv_precision`` (a cache format name; fp16 = 2 bytes), full-attention layers in the
    global term and sliding-window layers in the local one. Recurrent layers add llama.cpp's f32 state.
    Weight precision: the type holding the most bytes, and 8 x bytes / elements bits per weight.

    The steps: read the (split) header; name its architecture; count its layers and experts; check
    the header's shape keys against the tensors it lists; classify tensors into byte roles; derive
    attention, KV and prefill shapes; assemble the adapter with its audit steps and facts.
    """
    if kv_precision not in KV_FORMATS:
        raise InputError(
            "kv_precision", f"unknown cache format {kv_precision!r}; known: {', '.join(KV_FORMATS)}"
        )
    field = f"GGUF file {Path(path).name}"
    headers = read_gguf_split(path)
    header = merged_header(headers, field)
    arch, known, meta = architecture(header, field)
    layers = layer_counts(meta)
    _check_header_against_tensors(header, meta, layers)

    entries = _entries(header, layers.decoder if layers.nextn else None)
    _check_expert_shapes(header, entries, layers.experts, field)
    form = byte_form(entries, layers.experts)
    if form.routed_experts and not layers.per_token:
        raise InputError(f"{field}: {arch}.expert_used_count", "missing, but the file has routed experts")

    attention = attention_layout(meta, layers.decoder)
    element_bytes = kv_bytes_per_element(kv_precision)
    kv, state_formula = _kv_shape(meta, attention, element_bytes)
    prefill, linear_type = _prefill_shape(header, entries, form, layers, attention, kv, field)
    derived = _Derived(
        header, layers, form, attention, kv, state_formula, kv_precision, element_bytes, prefill, linear_type
    )
    return _imported(path, derived, headers, arch, meta, known)


__all__ = ["GGUFHeader", "import_gguf", "read_gguf_split"]
