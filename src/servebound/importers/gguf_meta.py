"""A GGUF header's metadata as typed facts: the architecture, the layer counts (with MTP and
recurrent layers), the attention layout (heads, head sizes, sliding windows, latent caches) and the
recurrent state, each look-up naming its ``{arch}.*`` key when it fails. ``gguf_file`` builds the
adapter from them."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from servebound.errors import InputError
from servebound.importers.gguf_reader import GGUFHeader

#: Layers a file may claim (the largest published models have a few hundred); per-layer lists are
#: built from block_count, so a corrupted count must not allocate gigabytes.
MAX_BLOCKS = 1 << 16

#: Layers sliding-window per period where the file gives a window but no pattern (llama.cpp's
#: set_swa_pattern: layer i slides when i % period < period - 1).
DEFAULT_SWA_PERIOD = {"gemma2": 2, "gemma3": 6, "gpt-oss": 2, "cohere2": 4}


class Meta:
    """Typed look-ups of ``{arch}.*`` keys, with errors that name the key."""

    def __init__(self, header: GGUFHeader, arch: str, field: str) -> None:
        self.values, self.arch, self.field = header.metadata, arch, field

    def get(self, key: str) -> Any:
        return self.values.get(f"{self.arch}.{key}")

    def count(self, key: str, required: bool = False) -> int | None:
        value = self.get(key)
        if value is None:
            if required:
                raise InputError(f"{self.field}: {self.arch}.{key}", "missing from the metadata")
            return None
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise InputError(
                f"{self.field}: {self.arch}.{key}", f"must be a non-negative integer, got {value!r}"
            )
        return value

    def per_layer(self, key: str, layers: int, default: int | None) -> list[int] | None:
        """An integer or a per-layer array (hybrid models give 0 for layers without attention)."""
        value = self.get(key)
        name = f"{self.field}: {self.arch}.{key}"
        if value is None:
            return None if default is None else [default] * layers
        if isinstance(value, list):
            if len(value) != layers or any(
                isinstance(v, bool) or not isinstance(v, int) or v < 0 for v in value
            ):
                raise InputError(name, f"must hold {layers} non-negative integers, one per layer")
            return list(value)
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise InputError(name, f"must be a non-negative integer or a per-layer array, got {value!r:.60}")
        return [value] * layers


@dataclass(frozen=True)
class Attention:
    kv_global_elements: int  # cached elements per token over full-attention layers
    kv_local_elements: int
    window: int
    flops_global: float
    flops_local: float
    recurrent_layers: int
    key_length: int
    value_length: int
    formula: str


def sliding_layers(meta: Meta, layers: int) -> tuple[list[bool], int, str]:
    window = meta.count("attention.sliding_window") or 0
    if window == 0:
        return [False] * layers, 0, "no sliding window"
    pattern = meta.get("attention.sliding_window_pattern")
    if isinstance(pattern, list):
        if len(pattern) != layers:
            raise InputError(
                f"{meta.field}: {meta.arch}.attention.sliding_window_pattern", f"must hold {layers} entries"
            )
        return [bool(p) for p in pattern], window, "per-layer sliding_window_pattern"
    period = pattern if isinstance(pattern, int) and not isinstance(pattern, bool) else None
    source = "sliding_window_pattern"
    if period is None:
        period = DEFAULT_SWA_PERIOD.get(meta.arch)
        source = f"llama.cpp's period for {meta.arch}"
    if period is None:
        return [False] * layers, 0, f"sliding_window {window} given without a layer pattern: all layers full"
    slides = [period == 0 or i % period < period - 1 for i in range(layers)]
    return slides, window, f"layer i slides when i % {period} < {period - 1} ({source})"


def attention_layout(meta: Meta, layers: int) -> Attention:
    embedding = meta.count("embedding_length", required=True)
    assert embedding is not None
    heads = meta.per_layer("attention.head_count", layers, None)
    if heads is None:
        raise InputError(f"{meta.field}: {meta.arch}.attention.head_count", "missing from the metadata")
    kv_heads = meta.per_layer("attention.head_count_kv", layers, None) or list(heads)
    first_heads = max(heads) or 1
    key_length = meta.count("attention.key_length") or embedding // first_heads
    value_length = meta.count("attention.value_length") or key_length
    key_swa = meta.count("attention.key_length_swa") or key_length
    value_swa = meta.count("attention.value_length_swa") or value_length
    latent = meta.count("attention.kv_lora_rank")
    key_mla = meta.count("attention.key_length_mla")
    value_mla = meta.count("attention.value_length_mla")
    slides, window, swa_note = sliding_layers(meta, layers)
    interval = meta.count("full_attention_interval")
    global_elements = local_elements = 0
    flops_global = flops_local = 0.0
    recurrent = 0
    for layer in range(layers):
        attends = kv_heads[layer] > 0 and (not interval or (layer + 1) % interval == 0)
        if not attends:
            recurrent += 1
            continue
        k_len, v_len = (key_swa, value_swa) if slides[layer] else (key_length, value_length)
        if latent and key_mla:
            # MLA as llama.cpp caches it: one latent row (kv_lora_rank + rope dims = key_length) per
            # token serves as both K and V; attention math runs at the decompressed head sizes.
            cached = kv_heads[layer] * k_len
            flops = 2.0 * heads[layer] * (key_mla + (value_mla or key_mla))
        else:
            cached = kv_heads[layer] * (k_len + v_len)
            flops = 2.0 * heads[layer] * (k_len + v_len)
        if slides[layer]:
            local_elements += cached
            flops_local += flops
        else:
            global_elements += cached
            flops_global += flops
    formula = (
        f"sum over {layers - recurrent} attention layers of head_count_kv x (key_length + value_length); "
        f"key_length {key_length}, value_length {value_length}; {swa_note}"
    )
    if latent and key_mla:
        formula = f"MLA latent: sum over layers of key_length {key_length} (kv_lora_rank {latent} + rope)"
    return Attention(
        global_elements,
        local_elements,
        window,
        flops_global,
        flops_local,
        recurrent,
        key_length,
        value_length,
        formula,
    )


def recurrent_state_elements(meta: Meta, recurrent_layers: int) -> tuple[int, str]:
    """llama.cpp's recurrent cache per layer: conv (d_conv - 1) x (d_inner + 2 n_group d_state) plus
    the scan state d_state x d_inner (Mamba, Mamba-2, gated delta nets); RWKV: token shift
    token_shift_count x n_embd plus n_embd x wkv head size."""
    if recurrent_layers == 0:
        return 0, "no recurrent layers"
    conv, inner, state = (
        meta.count("ssm.conv_kernel"),
        meta.count("ssm.inner_size"),
        meta.count("ssm.state_size"),
    )
    if conv is not None and inner is not None and state is not None:
        groups = meta.count("ssm.group_count") or 0
        per_layer = max(conv - 1, 0) * (inner + 2 * groups * state) + state * inner
        return recurrent_layers * per_layer, (
            f"{recurrent_layers} layers x ((d_conv {conv} - 1) x (d_inner {inner} + 2 x groups {groups} x "
            f"d_state {state}) + d_state x d_inner)"
        )
    head_size = meta.count("wkv.head_size")
    embedding = meta.count("embedding_length") or 0
    if head_size is not None:
        shift = meta.count("token_shift_count") or 2
        per_layer = shift * embedding + embedding * head_size
        return recurrent_layers * per_layer, (
            f"{recurrent_layers} layers x (token_shift {shift} x n_embd {embedding}"
            f" + n_embd x head {head_size})"
        )
    return 0, f"{recurrent_layers} layers without attention whose state this importer does not model"


#: llama.cpp stores recurrent state in f32.
RECURRENT_STATE_BYTES_PER_ELEMENT = 4


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "model"


@dataclass(frozen=True)
class Layers:
    """The header's layer counts: ``block_count`` blocks, of which the last ``nextn`` are MTP blocks
    and the first ``decoder`` the layers a token passes through; E and k (None for a dense model)."""

    block_count: int
    nextn: int
    decoder: int
    experts: int | None
    per_token: int | None


def architecture(header: GGUFHeader, field: str) -> tuple[str, bool, Meta]:
    """``general.architecture``, whether the installed gguf package knows it, and its key reader."""
    arch = header.metadata.get("general.architecture")
    if not isinstance(arch, str) or not arch:
        raise InputError(
            f"{field}: general.architecture", "missing; the file does not say what model it holds"
        )
    from gguf.constants import MODEL_ARCH_NAMES  # the installed gguf package's architectures

    known = arch in MODEL_ARCH_NAMES.values()
    if f"{arch}.block_count" not in header.metadata:
        hint = "" if known else "; it is not an architecture the installed gguf package knows (upgrade gguf?)"
        raise InputError(
            f"{field}: general.architecture", f"unknown architecture {arch!r}: no {arch}.block_count{hint}"
        )
    return arch, known, Meta(header, arch, field)


def layer_counts(meta: Meta) -> Layers:
    """Block, MTP and decoder layer counts and the expert counts, each checked against the others."""
    key = f"{meta.field}: {meta.arch}"
    block_count = meta.count("block_count", required=True)
    assert block_count is not None
    if block_count == 0:
        raise InputError(f"{key}.block_count", "is 0; a model has at least one layer")
    if block_count > MAX_BLOCKS:
        raise InputError(f"{key}.block_count", f"{block_count} layers exceeds the cap {MAX_BLOCKS}")
    nextn = meta.count("nextn_predict_layers") or 0
    if nextn >= block_count:
        raise InputError(
            f"{key}.nextn_predict_layers",
            f"{nextn} leaves no decoder layer of block_count {block_count}",
        )
    experts = meta.count("expert_count") or None
    per_token = meta.count("expert_used_count") or None
    if experts and per_token and per_token > experts:
        raise InputError(f"{key}.expert_used_count", f"{per_token} exceeds expert_count {experts}")
    return Layers(block_count, nextn, block_count - nextn, experts, per_token)


#: Tensors that only an attention layer holds (llama.cpp names: q/k/v, fused qkv, MLA's projections).
