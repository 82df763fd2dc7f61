"""Hugging Face config.json to a model adapter, with the arithmetic of every quantity.

The importer reads only config.json (bounded, at most ``MAX_CONFIG_BYTES``), counts every parameter
from the shapes it names, and returns an :class:`ImportedModel`: the adapter in the audited byte form
(embedding, always-on, one routed expert, resident) at the chosen weight format, the KV cache split into
full-attention, sliding-window and recurrent-state parts at the chosen KV precision, the prefill fields,
and one audit Step per derived quantity.

Storage: 2-D weight matrices (attention and MLP projections, experts, embedding, output head) are
stored in ``weight_format``; small tensors (norms, biases, routers, convolution taps, SSM constants) are
kept at 16 bits when the format is narrower, as quantized checkpoints keep them. Block-format scales are
included through the format's bytes per element; per-tensor scales and padding are not.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Mapping
from pathlib import Path

from servebound.core.formats import KV_FORMATS, BlockLayout
from servebound.core.kv import KVShape
from servebound.core.model import Experts, ModelAdapter, PrefillShape, Weights
from servebound.errors import InputError
from servebound.importers.audit import ImportedModel, Step
from servebound.importers.hf.blocks import Block, Count
from servebound.importers.hf.families import FAMILIES, SUPPORTED_MODEL_TYPES, WRAPPERS, Arch, Cfg
from servebound.importers.modes import linear_mode

__all__ = ["MAX_CONFIG_BYTES", "SUPPORTED_MODEL_TYPES", "WEIGHT_FORMATS", "import_hf_config"]

#: A config.json is a few kilobytes; anything past this cap is refused unread.
MAX_CONFIG_BYTES = 4 * 1024 * 1024

#: Weight storage formats: ``block`` elements in ``scale_bytes + value_bytes`` bytes.
WEIGHT_FORMATS: dict[str, BlockLayout] = {
    layout.name: layout
    for layout in (
        BlockLayout("fp32", 1, 0, 4, "IEEE binary32"),
        BlockLayout("bf16", 1, 0, 2, "bfloat16"),
        BlockLayout("fp16", 1, 0, 2, "IEEE binary16"),
        BlockLayout("fp8", 1, 0, 1, "E4M3, per-tensor or per-128x128-block scales ignored"),
        BlockLayout(
            "nvfp4", 16, 1, 8, "one E4M3 scale + 16 FP4 (E2M1) values; per-tensor FP32 scale ignored"
        ),
        BlockLayout("mxfp4", 32, 1, 16, "one E8M0 scale + 32 FP4 (E2M1) values"),
        BlockLayout("q8_0", 32, 2, 32, "fp16 scale + 32 int8"),
        BlockLayout("q4_0", 32, 2, 16, "fp16 scale + 32 nibbles"),
        BlockLayout("q4_k", 256, 2 + 2 + 12, 128, "fp16 d + fp16 dmin + 12 B of 6-bit sub-block scales/mins"),
        BlockLayout(
            "q6_k", 256, 2 + 16, 128 + 64, "fp16 d + 16 int8 sub-block scales; 128 B low + 64 B high bits"
        ),
    )
}

_SMALL_TENSOR_BYTES = 2.0
_HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")


def import_hf_config(
    source: str | Path,
    *,
    weight_format: str = "bf16",
    kv_precision: str = "bf16",
    offline: bool = False,
) -> ImportedModel:
    """Import a Hugging Face ``config.json`` as a model adapter with its audit trail.

    ``source``: a config.json path, a folder holding one, or a hub id ``org/name`` (fetched with
    huggingface_hub, config.json only; ``offline`` looks in the local cache only). ``weight_format``
    names the storage of the weight matrices (a :data:`WEIGHT_FORMATS` key); ``kv_precision`` the cache
    element format (a KV format key such as bf16 or fp8). Multimodal configs import their language model
    (text_config); vision and audio towers are left out and the audit says so.

    Raises InputError for an unreadable, oversized or malformed file, an unknown model_type (the
    message lists the supported ones), or a missing or mistyped field (named in the message).
    """
    if weight_format not in WEIGHT_FORMATS:
        raise InputError(
            "weight_format", f"unknown format {weight_format!r}; known: {', '.join(WEIGHT_FORMATS)}"
        )
    if kv_precision not in KV_FORMATS:
        raise InputError(
            "kv_precision", f"unknown precision {kv_precision!r}; known: {', '.join(KV_FORMATS)}"
        )
    raw, label = _load(source, offline=offline)
    cfg, text_type, multimodal = _language_model(raw)
    arch = FAMILIES[text_type](cfg, text_type)
    arch.notes = cfg.notes
    return _assemble(arch, raw, label, multimodal, WEIGHT_FORMATS[weight_format], kv_precision)


# ---------------------------------------------------------------------------------------------------
# Reading


def _load(source: str | Path, *, offline: bool) -> tuple[dict[str, object], str]:
    path = Path(source)
    if path.is_dir():
        path = path / "config.json"
        if not path.is_file():
            raise InputError("source", f"{source} holds no config.json")
        return _parse(path), _label(path)
    if path.is_file():
        return _parse(path), _label(path)
    text = str(source)
    if _HUB_ID.match(text) and not text.endswith(".json"):
        return _parse(_fetch(text, offline=offline)), text
    raise InputError("source", f"{source}: no such file or folder, and not a hub id of the form org/name")


def _label(path: Path) -> str:
    return path.parent.name.replace("__", "/") if path.name == "config.json" else path.stem


def _fetch(repo_id: str, *, offline: bool) -> Path:
    """Download config.json only; no network gives an InputError that says what to do instead."""
    try:
        from huggingface_hub import hf_hub_download

        return Path(hf_hub_download(repo_id=repo_id, filename="config.json", local_files_only=offline))
    except (OSError, ValueError) as exc:
        raise InputError(
            "source",
            f"could not fetch config.json of {repo_id!r} from the Hugging Face Hub ({type(exc).__name__}); "
            "without network access, download config.json elsewhere and pass its path",
        ) from exc


def _reject_duplicates(pairs: list[tuple[str, object]]) -> dict[str, object]:
    seen: dict[str, object] = {}
    for key, value in pairs:
        if key in seen:
            raise InputError(f"config.json {key}", "the key appears twice; keep one")
        seen[key] = value
    return seen


def _parse(path: Path) -> dict[str, object]:
    """Read at most MAX_CONFIG_BYTES + 1 bytes; refuse bigger files, non-UTF-8, bad JSON, non-objects."""
    try:
        with path.open("rb") as handle:
            data = handle.read(MAX_CONFIG_BYTES + 1)
    except OSError as exc:
        raise InputError("source", f"cannot read {path.name}: {exc.strerror}") from exc
    if len(data) > MAX_CONFIG_BYTES:
        raise InputError("source", f"{path.name} is larger than {MAX_CONFIG_BYTES} bytes; not a config.json")
    try:
        parsed = json.loads(data.decode("utf-8"), object_pairs_hook=_reject_duplicates)
    except UnicodeDecodeError as exc:
        raise InputError("source", f"{path.name} is not UTF-8 text") from exc
    except json.JSONDecodeError as exc:
        raise InputError("source", f"{path.name} is not valid JSON: {exc.msg} at line {exc.lineno}") from exc
    except RecursionError as exc:
        raise InputError("source", f"{path.name} nests too deeply") from exc
    if not isinstance(parsed, dict):
        raise InputError("source", f"{path.name} must hold a JSON object, got {type(parsed).__name__}")
    return parsed


def _language_model(raw: Mapping[str, object]) -> tuple[Cfg, str, bool]:
    """The config of the language model and its model_type; multimodal wrappers yield text_config."""
    model_type = raw.get("model_type")
    if not isinstance(model_type, str):
        raise InputError(
            "model_type", "missing or not a string; a Hugging Face config.json names its model_type"
        )
    if model_type in FAMILIES:
        return Cfg(raw), model_type, False
    if model_type not in WRAPPERS:
        raise InputError(
            "model_type", f"{model_type!r} is not supported; supported: {', '.join(SUPPORTED_MODEL_TYPES)}"
        )
    text = raw.get("text_config")
    if not isinstance(text, dict):
        raise InputError(
            "text_config", f"missing or not an object; {model_type} keeps its language model there"
        )
    merged = dict(text)
    for key in ("tie_word_embeddings", "torch_dtype", "dtype"):
        if merged.get(key) is None and raw.get(key) is not None:
            merged[key] = raw[key]
    text_type = merged.get("model_type", WRAPPERS[model_type])
    if not isinstance(text_type, str) or text_type not in FAMILIES:
        raise InputError(
            "text_config.model_type", f"{text_type!r} is not supported; supported: {', '.join(FAMILIES)}"
        )
    return Cfg(merged, "text_config."), text_type, True


# ---------------------------------------------------------------------------------------------------
# Assembly


def _bytes(count: Count, layout: BlockLayout) -> float:
    matrix = layout.bytes_per_element
    small = max(matrix, _SMALL_TENSOR_BYTES)
    return count.matrix * matrix + count.small * small


def _sum(blocks: list[Block], part: str) -> Count:
    total = Count()
    for block in blocks:
        total = total + getattr(block, part)
    return total


def _assemble(
    arch: Arch,
    raw: Mapping[str, object],
    label: str,
    multimodal: bool,
    layout: BlockLayout,
    kv_precision: str,
) -> ImportedModel:
    steps: list[Step] = []
    blocks = [block for layer in arch.layers for block in layer]
    layer_count = len(arch.layers)
    e_kv = KV_FORMATS[kv_precision].bytes_per_element

    # --- parameters -------------------------------------------------------------------------------
    table = arch.table
    embedding = Count() if arch.tied else table
    head = table
    final_norm = Count(0, arch.final_norms * arch.hidden)
    layer_always = _sum(blocks, "always")
    always = head + final_norm + layer_always
    moe = [b for b in blocks if b.routed]
    routed = per_token = 0
    if moe:
        pairs = {(b.routed, b.per_token) for b in moe}
        if len(pairs) > 1:
            raise InputError("num_experts", f"MoE layers disagree on experts and top-k: {sorted(pairs)}")
        ((routed, per_token),) = pairs
        if per_token > routed:
            raise InputError("num_experts_per_tok", f"{per_token} exceeds the {routed} routed experts")
    expert = _sum(moe, "expert")
    mtp = _sum(arch.mtp, "always")
    total = embedding + always + expert.times(routed) + mtp
    active = embedding + always + expert.times(per_token)

    for note in arch.notes:
        steps.append(Step("assumption", 0.0, note))
    if multimodal:
        steps.append(
            Step(
                "assumption",
                0.0,
                "multimodal config: the language model (text_config) only; "
                "vision/audio towers are not counted",
            )
        )
    steps.append(
        Step(
            "bytes_per_param",
            layout.bytes_per_element,
            f"{layout.name}: ({layout.scale_bytes} scale + {layout.value_bytes} value bytes)"
            f" / {layout.block} elements = {layout.bytes_per_element:g} B ({layout.bits_per_element:g} bits);"
            " small tensors at "
            f"{max(layout.bytes_per_element, _SMALL_TENSOR_BYTES):g} B",
        )
    )
    tie = "tied to the output head" if arch.tied else "untied: resident, not swept"
    steps.append(
        Step("params.embedding", embedding.total, f"{arch.vocab} vocab x {arch.hidden} hidden ({tie})")
    )
    steps.append(Step("params.output_head", head.total, f"{arch.vocab} vocab x {arch.hidden} hidden, swept"))
    for (block_label, formula), n in Counter((b.label, b.formula) for b in blocks).items():
        per = next(b for b in blocks if b.label == block_label and b.formula == formula)
        size = per.always + per.expert.times(per.routed)
        steps.append(Step(f"params.{block_label}", n * size.total, f"{n} x ({formula}) = {n} x {size.total}"))
    if arch.mtp:
        steps.append(Step("params.mtp", mtp.total, f"{arch.mtp[0].formula}; resident, not swept in decode"))
    steps.append(
        Step(
            "total_params",
            total.total,
            f"embedding {embedding.total} + always-on {always.total} + {routed} x expert {expert.total}"
            f" + MTP {mtp.total}",
        )
    )
    steps.append(
        Step(
            "active_params",
            active.total,
            f"embedding {embedding.total} + always-on {always.total} + {per_token} x expert {expert.total}",
        )
    )

    # --- weights (byte form) ----------------------------------------------------------------------
    embedding_bytes = _bytes(embedding, layout)
    always_bytes = _bytes(always, layout)
    expert_bytes = _bytes(expert, layout)
    mtp_bytes = _bytes(mtp, layout)
    resident = embedding_bytes + always_bytes + routed * expert_bytes + mtp_bytes
    weights = Weights(
        embedding_bytes=embedding_bytes,
        always_on_bytes=always_bytes,
        expert_bytes=expert_bytes if routed else 0.0,
        experts=Experts(routed, per_token) if routed else None,
        resident_bytes=resident,
    )
    steps.append(Step("embedding_bytes", embedding_bytes, f"{embedding.total} params x {layout.name}"))
    steps.append(
        Step(
            "always_on_bytes",
            always_bytes,
            f"{always.matrix} matrix params x {layout.bytes_per_element:g} B + {always.small} small params x "
            f"{max(layout.bytes_per_element, _SMALL_TENSOR_BYTES):g} B (attention, norms, routers, dense and "
            "shared MLPs, output head)",
        )
    )
    if routed:
        steps.append(
            Step(
                "expert_bytes",
                expert_bytes,
                f"one routed expert across {len(moe)} MoE layers: {expert.matrix} matrix"
                f" + {expert.small} small params",
            )
        )
    steps.append(
        Step(
            "resident_bytes",
            resident,
            f"embedding {embedding_bytes:.0f} + always-on {always_bytes:.0f} + {routed} x expert "
            f"{expert_bytes:.0f} + MTP {mtp_bytes:.0f}",
        )
    )

    # --- KV cache ---------------------------------------------------------------------------------
    kv_alloc, kv_read, kv_steps = _kv(blocks, e_kv, kv_precision)
    steps += kv_steps

    # --- prefill ----------------------------------------------------------------------------------
    prefill, prefill_steps = _prefill(blocks, kv_alloc, layout, kv_precision)
    steps += prefill_steps

    context = arch.context_limit_tokens
    adapter = ModelAdapter(
        id=_slug(label),
        name=label,
        weights=weights,
        kv_alloc=kv_alloc,
        kv_read=kv_read,
        prefill=prefill,
        context_limit_tokens=context,
        weight_precision=layout.name,
        kv_precision=kv_precision,
        kv_bytes_per_element=e_kv,
        sources={"config": label},
    )
    kinds = Counter(b.label for b in blocks)
    quant = raw.get("quantization_config")
    facts: dict[str, object] = {
        "model_type": raw.get("model_type"),
        "language_model_type": arch.model_type,
        "multimodal": multimodal,
        "layers": layer_count,
        "blocks": dict(kinds),
        "hidden_size": arch.hidden,
        "vocab_size": arch.vocab,
        "tie_word_embeddings": arch.tied,
        "dtype": arch.dtype,
        "routed_experts": routed,
        "experts_per_token": per_token,
        "moe_layers": len(moe),
        "mtp_params": mtp.total,
        "embedding_params": embedding.total,
        "output_head_params": head.total,
        "context_limit_tokens": context,
        "notes": tuple(arch.notes),
    }
    if isinstance(quant, dict) and isinstance(quant.get("quant_method"), str):
        facts["checkpoint_quantization"] = quant["quant_method"]
    return ImportedModel(
        adapter=adapter,
        architecture=arch.model_type,
        source=label,
        steps=tuple(steps),
        total_params=float(total.total),
        active_params=float(active.total),
        facts=facts,
    )


def _kv(blocks: list[Block], e_kv: float, precision: str) -> tuple[KVShape, KVShape, list[Step]]:
    """Sum per-layer cache terms; one window per cache (the largest, with a note when they differ)."""
    steps: list[Step] = []

    def window(pairs: list[tuple[int, int]], what: str) -> int:
        windows = {w for elements, w in pairs if elements}
        if len(windows) > 1:
            steps.append(
                Step("assumption", 0.0, f"{what} windows differ {sorted(windows)}: using the largest")
            )
        return max(windows, default=0)

    alloc_global = sum(b.kv_global_elements for b in blocks)
    alloc_local = sum(b.kv_local_elements for b in blocks)
    read_global = sum(
        b.kv_global_elements if b.read_global_elements is None else b.read_global_elements for b in blocks
    )
    read_local = sum(
        b.kv_local_elements if b.read_local_elements is None else b.read_local_elements for b in blocks
    )
    alloc_window = window([(b.kv_local_elements, b.window_tokens) for b in blocks], "cache")
    read_window = window(
        [
            (
                b.kv_local_elements if b.read_local_elements is None else b.read_local_elements,
                b.window_tokens if b.read_window_tokens is None else b.read_window_tokens,
            )
            for b in blocks
        ],
        "read",
    )
    state = sum(b.state_bytes for b in blocks)
    for kv_formula, n in Counter(b.kv_formula for b in blocks if b.kv_formula).items():
        per = next(b for b in blocks if b.kv_formula == kv_formula)
        elements = per.kv_global_elements + per.kv_local_elements
        value = n * (per.state_bytes if per.state_bytes else elements * e_kv)
        unit = "bytes per session" if per.state_bytes else "bytes per token"
        arithmetic = (
            f"{n} layers x {per.state_bytes:g}"
            if per.state_bytes
            else (f"{n} layers x {kv_formula} x {e_kv:g} B ({precision})")
        )
        steps.append(Step(f"kv.{per.label}", value, f"{arithmetic} = {value:g} {unit}; {kv_formula}"))
    alloc = KVShape(alloc_global * e_kv, alloc_local * e_kv, alloc_window, state)
    read = KVShape(read_global * e_kv, read_local * e_kv, read_window, state)
    steps.append(
        Step(
            "kv.alloc.global_bytes_per_token",
            alloc.global_bytes_per_token,
            f"{alloc_global} elements x {e_kv:g} B",
        )
    )
    steps.append(
        Step(
            "kv.alloc.local_bytes_per_token",
            alloc.local_bytes_per_token,
            f"{alloc_local} elements x {e_kv:g} B, window {alloc_window}",
        )
    )
    steps.append(Step("kv.alloc.state_bytes", state, "recurrent and convolution state at the state dtype"))
    if read != alloc:
        steps.append(
            Step(
                "kv.read.global_bytes_per_token",
                read.global_bytes_per_token,
                f"{read_global} elements x {e_kv:g} B",
            )
        )
        steps.append(
            Step(
                "kv.read.local_bytes_per_token",
                read.local_bytes_per_token,
                f"{read_local} elements x {e_kv:g} B, window {read_window}",
            )
        )
    return alloc, read, steps


def _prefill(
    blocks: list[Block], kv_alloc: KVShape, layout: BlockLayout, kv_precision: str
) -> tuple[PrefillShape, list[Step]]:
    linear = sum(b.linear_active_params for b in blocks)
    global_flops = sum(b.global_flops_per_pair for b in blocks)
    local_flops = sum(b.local_flops_per_pair for b in blocks)
    windows = {
        b.window_tokens if b.read_window_tokens is None else b.read_window_tokens
        for b in blocks
        if b.local_flops_per_pair
    }
    window = max(windows, default=0)
    state_flops = sum(b.state_flops_per_token for b in blocks)
    write = kv_alloc.global_bytes_per_token + kv_alloc.local_bytes_per_token
    attention_mode = kv_precision if kv_precision in {"fp32", "bf16", "fp16", "fp8"} else "bf16"
    prefill = PrefillShape(
        linear_active_params=float(linear),
        attention_global_flops_per_pair=float(global_flops),
        attention_local_flops_per_pair=float(local_flops),
        attention_window_tokens=window,
        attention_state_flops_per_token=float(state_flops),
        kv_write_bytes_per_token=write,
        linear_mode=linear_mode(layout.name),
        attention_mode=attention_mode,
    )

    def grouped(part: str) -> str:
        counts = Counter(b.flops_formula for b in blocks if getattr(b, part))
        return "; ".join(f"{n} layers x {formula}" for formula, n in counts.items()) or "none"

    steps = [
        Step(
            "prefill.linear_active_params",
            float(linear),
            "attention/mixer projections + dense and shared MLPs + routers + k routed experts per layer; "
            "no embedding lookup, no output head",
        ),
        Step(
            "prefill.attention_global_flops_per_pair", float(global_flops), grouped("global_flops_per_pair")
        ),
        Step(
            "prefill.attention_local_flops_per_pair",
            float(local_flops),
            f"{grouped('local_flops_per_pair')}; window {window}",
        ),
        Step("prefill.attention_state_flops_per_token", float(state_flops), grouped("state_flops_per_token")),
        Step("prefill.kv_write_bytes_per_token", write, "global + local allocation bytes per token"),
    ]
    return prefill, steps


def _slug(label: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", label.lower()).strip("-") or "model"
