"""Hugging Face config.json to a model adapter, with the arithmetic of every quantity.

The importer reads only config.json (bounded, at most ``MAX_CONFIG_BYTES``), counts every parameter
from the shapes it names, and returns an :class:`ImportedModel`: the adapter in the audited byte form
(embedding, always-on, one routed expert, resident) at the chosen weight format, the KV cache split into
full-attention, sliding-window and recurrent-state parts at the chosen KV precision, the prefill fields,
and one audit Step per derived quantity.

Storage: 2-D weight matrices (attention and MLP projections, experts, embedding, output head) are
stored in ``weight_format``; small tensors (norms, biases, routers, convolution taps, SSM constants) are
kept at 16 bits when the format is narrower, as quantized checkpoints keep them. Block-format scales are
included through the format's bytes per element; per-tensor scales and padding are not. ``q4_k_m`` is
not one format but llama.cpp's per-tensor mix (see :func:`q4_k_m_layout`); under it small tensors are
f32, as llama.cpp's converter writes them and its quantizer leaves them. ``fp8_mxfp4_experts`` is the
split of DeepSeek V4's release (:data:`SPLIT_WEIGHT_FORMATS`): routed experts in MXFP4, other matrices
in FP8.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from servebound.core.formats import KV_FORMATS, BlockLayout
from servebound.core.kv import KVShape
from servebound.core.model import Experts, ModelAdapter, PrefillShape, Weights
from servebound.errors import InputError
from servebound.importers.audit import ImportedModel, Step
from servebound.importers.hf.blocks import Block, Count, Matrix
from servebound.importers.hf.families import FAMILIES, SUPPORTED_MODEL_TYPES, WRAPPERS, Arch, Cfg
from servebound.importers.modes import linear_mode

__all__ = [
    "MAX_CONFIG_BYTES",
    "MIXED_WEIGHT_FORMATS",
    "SPLIT_WEIGHT_FORMATS",
    "SUPPORTED_MODEL_TYPES",
    "WEIGHT_FORMATS",
    "import_hf_config",
    "q4_k_m_layout",
    "use_more_bits",
]

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
        BlockLayout("q5_0", 32, 2 + 4, 16, "fp16 scale + 32 high bits; 32 low nibbles"),
        BlockLayout("q5_1", 32, 2 + 2 + 4, 16, "fp16 scale + fp16 min + 32 high bits; 32 low nibbles"),
        BlockLayout("q4_k", 256, 2 + 2 + 12, 128, "fp16 d + fp16 dmin + 12 B of 6-bit sub-block scales/mins"),
        BlockLayout(
            "q5_k",
            256,
            2 + 2 + 12,
            128 + 32,
            "fp16 d + fp16 dmin + 12 B of 6-bit sub-block scales/mins; 128 B low nibbles + 32 B high bits",
        ),
        BlockLayout(
            "q6_k", 256, 2 + 16, 128 + 64, "fp16 d + 16 int8 sub-block scales; 128 B low + 64 B high bits"
        ),
    )
}

#: Per-tensor mixes, accepted as ``weight_format`` beside :data:`WEIGHT_FORMATS`.
MIXED_WEIGHT_FORMATS: tuple[str, ...] = (
    "q4_k_m",
    "fp8_mxfp4_experts",
    "bf16_mxfp4_experts",
    "bf16_fp8_experts",
)

#: Checkpoints that store routed experts in one format and every other matrix in another:
#: name -> (other matrices, routed experts). DeepSeek V4's release: FP8 (E4M3) with FP4 (E2M1) routed
#: experts under one power-of-two (UE8M0) scale per 32 values, the MXFP4 layout (config expert_dtype fp4).
#: gpt-oss: MXFP4 routed experts, attention, router, embedding and head in BF16 (its quantization_config's
#: modules_to_not_convert). Laguna's FP8 release: FP8 routed experts; attention, the dense first layer,
#: router, shared expert and head in BF16 (its compressed-tensors ``ignore`` list).
SPLIT_WEIGHT_FORMATS: dict[str, tuple[str, str]] = {
    "fp8_mxfp4_experts": ("fp8", "mxfp4"),
    "bf16_mxfp4_experts": ("bf16", "mxfp4"),
    "bf16_fp8_experts": ("bf16", "fp8"),
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
    names the storage of the weight matrices (a :data:`WEIGHT_FORMATS` key, ``q4_k_m`` for llama.cpp's
    Q4_K_M mix, :func:`q4_k_m_layout`, or a :data:`SPLIT_WEIGHT_FORMATS` key); ``kv_precision`` the cache
    element format (a KV format key such as bf16 or fp8). Multimodal configs import their language model
    (text_config); vision and audio towers are left out and the audit says so.

    Raises InputError for an unreadable, oversized or malformed file, an unknown model_type (the
    message lists the supported ones), or a missing or mistyped field (named in the message).
    """
    if weight_format not in WEIGHT_FORMATS and weight_format not in MIXED_WEIGHT_FORMATS:
        known = ", ".join([*WEIGHT_FORMATS, *MIXED_WEIGHT_FORMATS])
        raise InputError("weight_format", f"unknown format {weight_format!r}; known: {known}")
    if kv_precision not in KV_FORMATS:
        raise InputError(
            "kv_precision", f"unknown precision {kv_precision!r}; known: {', '.join(KV_FORMATS)}"
        )
    raw, label = _load(source, offline=offline)
    cfg, text_type, multimodal = _language_model(raw)
    arch = FAMILIES[text_type](cfg, text_type)
    arch.notes = cfg.notes
    return _assemble(arch, raw, label, multimodal, weight_format, kv_precision)


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


@dataclass
class _Stored:
    """Bytes of each weight group at a storage choice, and the audit lines that derive them."""

    embedding: float
    always: float
    expert: float
    mtp: float
    embedding_formula: str
    matrix_formula: str
    small_bytes: float
    steps: list[Step] = field(default_factory=list)


def _layout_step(layout: BlockLayout, small: float, what: str = "") -> Step:
    return Step(
        "bytes_per_param",
        layout.bytes_per_element,
        f"{what}{layout.name}: ({layout.scale_bytes} scale + {layout.value_bytes} value bytes)"
        f" / {layout.block} elements = {layout.bytes_per_element:g} B ({layout.bits_per_element:g} bits);"
        f" small tensors at {small:g} B",
    )


def _uniform_bytes(
    layout: BlockLayout,
    embedding: Count,
    always: Count,
    expert: Count,
    mtp: Count,
    *,
    expert_layout: BlockLayout | None = None,
    mtp_expert: Count | None = None,
) -> _Stored:
    """Every matrix in ``layout`` (routed experts, the MTP module's included, in ``expert_layout`` when
    given); small tensors at 16 bits when the format is narrower."""
    matrix = layout.bytes_per_element
    small = max(matrix, _SMALL_TENSOR_BYTES)
    routed = expert_layout or layout

    def stored(count: Count, per_matrix: float = matrix) -> float:
        return count.matrix * per_matrix + count.small * small

    steps = [_layout_step(layout, small, "" if expert_layout is None else "non-expert matrices ")]
    if expert_layout is not None:
        steps.append(_layout_step(expert_layout, small, "routed experts "))
    return _Stored(
        stored(embedding),
        stored(always),
        stored(expert, routed.bytes_per_element),
        stored(mtp) + stored(mtp_expert or Count(), routed.bytes_per_element),
        layout.name,
        f"{matrix:g} B",
        small,
        steps,
    )


# ---------------------------------------------------------------------------------------------------
# Q4_K_M: llama.cpp's per-tensor mix

#: Families llama.cpp types as 70B when they have 80 layers (its attn_v rule then lifts Q4_K to Q5_K).
_LLAMA_CPP_70B_FAMILIES = frozenset({"llama", "qwen2", "olmo"})
#: llama.cpp's fallback when a row is not a whole number of 256-element super-blocks.
_ROW_FALLBACK = {"q4_k": "q5_0", "q5_k": "q5_1", "q6_k": "q8_0"}
#: llama.cpp's converter writes 1-D tensors, routers and convolution taps as f32; its quantizer keeps them.
_MIX_SMALL_BYTES = 4.0
#: Tensors that count as attention-value tensors for the attn_v layer index (llama.cpp's n_attention_wv).
_VALUE_ROLES = frozenset({"attn_v", "attn_qkv", "attn_kv_b"})


def use_more_bits(layer: int, layers: int) -> bool:
    """llama.cpp's layers that get more bits in its _M mixes, with C integer division:
    ``i < n/8 or i >= 7n/8 or (i - n/8) % 3 == 2`` -- the first eighth, the last eighth and every third
    layer in between. For 8 layers: 0, 3, 6, 7; for 32: 0-3, 6, 9, ..., 27, 28-31 (16 of 32)."""
    eighth = layers // 8
    return layer < eighth or layer >= 7 * layers // 8 or (layer - eighth) % 3 == 2


def q4_k_m_layout(
    role: str,
    row_length: int,
    *,
    more_bits: bool = False,
    routed_experts: int = 0,
    type_70b: bool = False,
) -> BlockLayout:
    """The storage llama.cpp's quantizer gives one 2-D weight under Q4_K_M.

    ``role`` is the tensor's llama.cpp name (``output``, ``token_embd``, ``attn_v``, ``attn_k``,
    ``attn_output``, ``attn_qkv``, ``ffn_down``, ``ffn_down_exps``, ``ffn_down_shexp``, anything else),
    ``row_length`` its input width (ggml's ne[0]), ``more_bits`` whether :func:`use_more_bits` holds for
    it (attn_v: over the index among attention-value tensors; ffn_down: over the layer index),
    ``routed_experts`` the model's expert count, ``type_70b`` llama.cpp's 70B model type.

    The rule (llama.cpp's ``llama_tensor_get_type`` for ``LLAMA_FTYPE_MOSTLY_Q4_K_M``):

    - ``output`` (the head; a tied token embedding is the head): Q6_K, Q8_0 when the row is not a
      multiple of 256.
    - ``attn_v``: Q6_K where ``more_bits``, else Q4_K; Q4_K becomes Q5_K in 70B-type models; every
      attn_v is Q8_0 in models with exactly 8 routed experts.
    - ``attn_k``: Q8_0 with exactly 8 routed experts, else Q4_K.
    - ``attn_output``: Q5_K with exactly 8 routed experts, else Q4_K.
    - ``attn_qkv`` (fused q, k, v): Q5_K.
    - ``ffn_down*`` (dense, shared-expert and routed-expert down projections): Q6_K where ``more_bits``,
      else Q4_K.
    - everything else, the untied ``token_embd`` included: Q4_K.

    Then rows that are not a whole number of blocks fall back: Q4_K to Q5_0, Q5_K to Q5_1, Q6_K to
    Q8_0 (32-element blocks), and to F16 when the row is not a multiple of 32 either (llama.cpp refuses
    a Q8_0 tensor with such rows; F16 here).
    """
    eight = routed_experts == 8
    if role == "output":
        chosen = "q8_0" if row_length % 256 else "q6_k"
    elif role == "attn_v":
        chosen = "q6_k" if more_bits else "q4_k"
        if type_70b and chosen == "q4_k":
            chosen = "q5_k"
        if eight:
            chosen = "q8_0"
    elif role == "attn_k":
        chosen = "q8_0" if eight else "q4_k"
    elif role == "attn_output":
        chosen = "q5_k" if eight else "q4_k"
    elif role == "attn_qkv":
        chosen = "q5_k"
    elif role.startswith("ffn_down"):
        chosen = "q6_k" if more_bits else "q4_k"
    else:
        chosen = "q4_k"
    layout = WEIGHT_FORMATS[chosen]
    if row_length % layout.block == 0:
        return layout
    fallback = WEIGHT_FORMATS.get(_ROW_FALLBACK.get(chosen, ""))
    if fallback is not None and row_length % fallback.block == 0:
        return fallback
    return WEIGHT_FORMATS["fp16"]


@dataclass
class _Tally:
    params: Counter[str] = field(default_factory=Counter)
    bytes: dict[str, float] = field(default_factory=dict)
    tensors: dict[str, Counter[str]] = field(default_factory=dict)

    def put(self, elements: int, layout: BlockLayout | None, what: str, copies: int = 1) -> float:
        """Book ``copies`` tensors of ``elements`` at ``layout`` (None: small, f32); bytes of one copy."""
        name = layout.name if layout else "f32"
        one = elements * (layout.bytes_per_element if layout else _MIX_SMALL_BYTES)
        if elements and copies:
            self.params[name] += elements * copies
            self.bytes[name] = self.bytes.get(name, 0.0) + one * copies
            self.tensors.setdefault(name, Counter())[what] += 1
        return one


def _q4_k_m_bytes(arch: Arch, head: Count, final_norm: Count, routed: int) -> _Stored:
    """Walk every listed matrix in file order, give each its Q4_K_M type (:func:`q4_k_m_layout`),
    and sum bytes per weight group. Matrices a block does not list (MTP modules) take Q4_K."""
    tally = _Tally()
    layers = len(arch.layers)
    values = sum(m.role in _VALUE_ROLES for layer in arch.layers for b in layer for m in b.matrices)
    type_70b = arch.model_type in _LLAMA_CPP_70B_FAMILIES and layers == 80
    q4_k = WEIGHT_FORMATS["q4_k"]
    more_v: list[int] = []
    more_down: set[int] = set()
    value_index = down_index = 0

    def place(m: Matrix, layer: int, copies: int) -> float:
        nonlocal value_index, down_index
        more = False
        if m.role == "attn_v":
            more = use_more_bits(value_index, values)
            value_index += 1
            if more:
                more_v.append(layer)
        elif m.role.startswith("ffn_down"):
            more = use_more_bits(layer if routed > 1 else down_index, layers)
            down_index += 1
            if more:
                more_down.add(layer)
        layout = q4_k_m_layout(m.role, m.inputs, more_bits=more, routed_experts=routed, type_70b=type_70b)
        return tally.put(m.elements, layout, m.role or "other", copies)

    embedding = 0.0
    if not arch.tied:
        embedding = tally.put(arch.table.matrix, q4_k_m_layout("token_embd", arch.hidden), "token_embd")
    always = tally.put(head.matrix, q4_k_m_layout("output", arch.hidden), "output")
    always += tally.put(final_norm.small, None, "norms, biases, routers")
    expert = 0.0
    for i, layer in enumerate(arch.layers):
        for block in layer:
            always += sum(place(m, i, 1) for m in block.matrices)
            expert += sum(place(m, i, block.routed) for m in block.expert_matrices)
            rest = block.always.matrix - sum(m.elements for m in block.matrices)
            always += tally.put(rest, q4_k, "unlisted")
            rest = block.expert.matrix - sum(m.elements for m in block.expert_matrices)
            expert += tally.put(rest, q4_k, "unlisted", block.routed)
            always += tally.put(block.always.small, None, "norms, biases, routers")
            expert += tally.put(block.expert.small, None, "norms, biases, routers", block.routed)
    mtp = 0.0
    for block in arch.mtp:
        mtp += tally.put(block.always.matrix, q4_k, "MTP")
        mtp += tally.put(block.always.small, None, "norms, biases, routers")
        mtp += block.routed * tally.put(block.expert.matrix, q4_k, "MTP", block.routed)
        mtp += block.routed * tally.put(block.expert.small, None, "norms, biases, routers", block.routed)

    params = sum(tally.params.values())
    stored = sum(tally.bytes.values())
    bits = 8.0 * stored / params if params else 0.0
    steps = [
        Step(
            "bytes_per_param",
            stored / params if params else 0.0,
            f"q4_k_m (llama.cpp's Q4_K_M mix): {stored:.0f} B / {params} params = {stored / max(params, 1):.4f} B"
            f" ({bits:.3f} bits per weight); small tensors f32",
        )
    ]
    for name, count in sorted(tally.params.items(), key=lambda item: -tally.bytes[item[0]]):
        what = ", ".join(f"{n} {role}" for role, n in tally.tensors[name].most_common())
        steps.append(
            Step(
                f"mix.{name}",
                float(count),
                f"{count} params x {tally.bytes[name] / count:g} B = {tally.bytes[name]:.0f} B; tensors: {what}",
            )
        )
    steps.append(
        Step(
            "mix.use_more_bits",
            float(len(more_v) + len(more_down)),
            f"use_more_bits(i, n) = i < n/8 or i >= 7n/8 or (i - n/8) % 3 == 2: attn_v Q6_K at layers "
            f"{more_v} (i over {values} attention-value tensors), ffn_down Q6_K at layers {sorted(more_down)}"
            f" (n = {layers} layers)",
        )
    )
    steps.append(Step("mix.bits_per_weight", bits, f"8 x {stored:.0f} B / {params} params"))
    return _Stored(
        embedding, always, expert, mtp, "the Q4_K_M mix", "the Q4_K_M mix", _MIX_SMALL_BYTES, steps
    )


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
    weight_format: str,
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
    mtp_always = _sum(arch.mtp, "always")
    mtp_expert = sum((b.expert.times(b.routed) for b in arch.mtp), Count())
    mtp = mtp_always + mtp_expert
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
    if weight_format in WEIGHT_FORMATS:
        stored = _uniform_bytes(WEIGHT_FORMATS[weight_format], embedding, always, expert, mtp)
    elif weight_format in SPLIT_WEIGHT_FORMATS:
        dense, routed_format = SPLIT_WEIGHT_FORMATS[weight_format]
        stored = _uniform_bytes(
            WEIGHT_FORMATS[dense],
            embedding,
            always,
            expert,
            mtp_always,
            expert_layout=WEIGHT_FORMATS[routed_format],
            mtp_expert=mtp_expert,
        )
    else:
        stored = _q4_k_m_bytes(arch, head, final_norm, routed)
    steps += stored.steps
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
    embedding_bytes = stored.embedding
    always_bytes = stored.always
    expert_bytes = stored.expert
    mtp_bytes = stored.mtp
    resident = embedding_bytes + always_bytes + routed * expert_bytes + mtp_bytes
    weights = Weights(
        embedding_bytes=embedding_bytes,
        always_on_bytes=always_bytes,
        expert_bytes=expert_bytes if routed else 0.0,
        experts=Experts(routed, per_token) if routed else None,
        resident_bytes=resident,
    )
    steps.append(
        Step("embedding_bytes", embedding_bytes, f"{embedding.total} params x {stored.embedding_formula}")
    )
    steps.append(
        Step(
            "always_on_bytes",
            always_bytes,
            f"{always.matrix} matrix params x {stored.matrix_formula} + {always.small} small params x "
            f"{stored.small_bytes:g} B (attention, norms, routers, dense and shared MLPs, output head)",
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
    prefill, prefill_steps = _prefill(blocks, kv_alloc, weight_format, kv_precision)
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
        weight_precision=weight_format,
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


def _fold(terms: list[tuple[float, int]], what: str, steps: list[Step]) -> tuple[float, int]:
    """Window-capped terms (coefficient, window) as one coefficient at one window.

    One window: the terms add. Windows that differ: the largest window W is kept and a term capped at
    w < W enters as coefficient x w / W. Since min(L, w) >= (w / W) min(L, W) for every L, the folded
    term never exceeds the true one (traffic and FLOPs stay lower bounds) and equals it for L >= W.
    """
    live = [(value, window) for value, window in terms if value]
    widest = max((window for _, window in live), default=0)
    if len({window for _, window in live}) > 1:
        narrow: dict[int, float] = {}
        for value, window in live:
            if window != widest:
                narrow[window] = narrow.get(window, 0.0) + value
        parts = ", ".join(f"{value:g} x {window}/{widest}" for window, value in sorted(narrow.items()))
        steps.append(
            Step(
                "assumption",
                0.0,
                f"{what} windows differ {sorted({w for _, w in live})}: kept at the largest, {widest}; "
                f"narrower terms scaled by window / {widest} ({parts}), a lower bound exact from "
                f"{widest} tokens on",
            )
        )
    total = sum(value * (window / widest if widest else 1.0) for value, window in live)
    return total, widest


def _n(value: float) -> str:
    """A count as written in the audit: integers without a decimal point."""
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


def _kv(blocks: list[Block], e_kv: float, precision: str) -> tuple[KVShape, KVShape, list[Step]]:
    """Sum per-layer cache terms; one window per cache (windows that differ are folded, see _fold)."""
    steps: list[Step] = []
    alloc_global = sum(b.kv_global_elements for b in blocks)
    read_global = sum(
        b.kv_global_elements if b.read_global_elements is None else b.read_global_elements for b in blocks
    )
    alloc_local, alloc_window = _fold(
        [(b.kv_local_elements, b.window_tokens) for b in blocks], "cache", steps
    )
    read_terms = [
        (
            b.kv_local_elements if b.read_local_elements is None else b.read_local_elements,
            b.window_tokens if b.read_window_tokens is None else b.read_window_tokens,
        )
        for b in blocks
    ]
    read_terms += [(term.elements, term.window_tokens) for b in blocks for term in b.extra_local]
    read_local, read_window = _fold(read_terms, "read", steps)
    state = sum(b.state_bytes for b in blocks)
    read_state = sum(b.state_bytes if b.read_state_bytes is None else b.read_state_bytes for b in blocks)
    for kv_formula, n in Counter(b.kv_formula for b in blocks if b.kv_formula).items():
        per = next(b for b in blocks if b.kv_formula == kv_formula)
        elements = per.kv_global_elements + per.kv_local_elements
        if elements and per.state_bytes:
            value = n * elements * e_kv
            arithmetic = f"{n} layers x {_n(elements)} elements x {e_kv:g} B ({precision})"
            unit = f"bytes per token (the window part up to its window) + {n} x {per.state_bytes:g} B state"
        elif per.state_bytes:
            value, unit = n * per.state_bytes, "bytes per session"
            arithmetic = f"{n} layers x {per.state_bytes:g}"
        else:
            value, unit = n * elements * e_kv, "bytes per token"
            arithmetic = f"{n} layers x {kv_formula} x {e_kv:g} B ({precision})"
        steps.append(Step(f"kv.{per.label}", value, f"{arithmetic} = {value:g} {unit}; {kv_formula}"))
    alloc = KVShape(alloc_global * e_kv, alloc_local * e_kv, alloc_window, state)
    read = KVShape(read_global * e_kv, read_local * e_kv, read_window, read_state)
    steps.append(
        Step(
            "kv.alloc.global_bytes_per_token",
            alloc.global_bytes_per_token,
            f"{_n(alloc_global)} elements x {e_kv:g} B",
        )
    )
    steps.append(
        Step(
            "kv.alloc.local_bytes_per_token",
            alloc.local_bytes_per_token,
            f"{_n(alloc_local)} elements x {e_kv:g} B, window {alloc_window}",
        )
    )
    steps.append(
        Step("kv.alloc.state_bytes", state, "recurrent, convolution and compressor state at the state dtype")
    )
    if read != alloc:
        steps.append(
            Step(
                "kv.read.global_bytes_per_token",
                read.global_bytes_per_token,
                f"{_n(read_global)} elements x {e_kv:g} B",
            )
        )
        steps.append(
            Step(
                "kv.read.local_bytes_per_token",
                read.local_bytes_per_token,
                f"{_n(read_local)} elements x {e_kv:g} B, window {read_window}",
            )
        )
        if read_state != state:
            steps.append(
                Step("kv.read.state_bytes", read_state, "state bytes one decode step reads (per block)")
            )
    return alloc, read, steps


def _prefill(
    blocks: list[Block], kv_alloc: KVShape, weight_format: str, kv_precision: str
) -> tuple[PrefillShape, list[Step]]:
    linear = sum(b.linear_active_params for b in blocks)
    global_flops = sum(b.global_flops_per_pair for b in blocks)
    fold_steps: list[Step] = []
    local_terms = [
        (b.local_flops_per_pair, b.window_tokens if b.read_window_tokens is None else b.read_window_tokens)
        for b in blocks
    ]
    local_terms += [(term.flops_per_pair, term.window_tokens) for b in blocks for term in b.extra_local]
    local_flops, window = _fold(local_terms, "attention FLOP", fold_steps)
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
        linear_mode=linear_mode(_fastest_storage(weight_format)),
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
        *fold_steps,
        Step(
            "prefill.attention_local_flops_per_pair",
            float(local_flops),
            f"{grouped('local_flops_per_pair')}; window {window}",
        ),
        Step("prefill.attention_state_flops_per_token", float(state_flops), grouped("state_flops_per_token")),
        Step("prefill.kv_write_bytes_per_token", write, "global + local allocation bytes per token"),
    ]
    return prefill, steps


def _fastest_storage(weight_format: str) -> str:
    """The storage whose arithmetic mode prices the linear FLOPs. A split format multiplies in two
    modes; charging every FLOP at the faster one (the experts' FP4) keeps the prefill bound a ceiling."""
    return SPLIT_WEIGHT_FORMATS[weight_format][1] if weight_format in SPLIT_WEIGHT_FORMATS else weight_format


def _slug(label: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", label.lower()).strip("-") or "model"
