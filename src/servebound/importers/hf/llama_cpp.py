"""llama.cpp's file types as its quantizer writes them: the ggml type of each 2-D weight.

A llama.cpp "Q4_K_M" or "Q4_0" file is not one format: ``llama-quantize`` picks a type per tensor from
the file type, the tensor's role and its layer (``llama_tensor_get_type`` in llama.cpp's
src/llama-quant.cpp). The rules below restate, for the file types in :data:`LLAMA_CPP_MIXES`, what that
function does without an importance matrix, Falcon's own rules included (``falcon`` in
:class:`TensorPlace`). 1-D tensors (norms,
biases), routers and convolution taps are never quantized; the converter writes them as f32.
"""

from __future__ import annotations

from dataclasses import dataclass

from servebound.core.formats import FORMATS, BlockLayout

#: llama.cpp file type -> the ggml type of every tensor no rule singles out (its
#: llama_ftype_get_default_type). ``f16``: every matrix F16, nothing quantized. ``mxfp4_moe``: routed
#: experts MXFP4, every other matrix Q8_0 (the file type of ggml-org's gpt-oss GGUFs). ``q4_0_qat``:
#: Google's Gemma 3 QAT Q4_0 GGUFs, written by Google, not by llama-quantize: the token embedding
#: (tied to the output) F16, every other matrix Q4_0 (stduhpf's requantization notes on the 27B).
LLAMA_CPP_MIXES: dict[str, str] = {
    "f16": "fp16",
    "q8_0": "q8_0",
    "q4_0": "q4_0",
    "q4_1": "q4_1",
    "q5_0": "q5_0",
    "q5_1": "q5_1",
    "q2_k": "q2_k",
    "q3_k_m": "q3_k",
    "q4_k_s": "q4_k",
    "q4_k_m": "q4_k",
    "q5_k_m": "q5_k",
    "q6_k": "q6_k",
    "iq4_xs": "iq4_xs",
    "mxfp4_moe": "q8_0",
    "q4_0_qat": "q4_0",
}

#: Where a row is not a whole number of the chosen type's blocks (llama.cpp's tensor_type_fallback).
ROW_FALLBACK = {
    "q2_k": "q4_0",
    "q3_k": "q4_0",
    "q4_k": "q5_0",
    "q5_k": "q5_1",
    "q6_k": "q8_0",
    "iq4_xs": "iq4_nl",
}

#: Families llama.cpp types as 70B when they have 80 layers (its attn_v rule then lifts Q3_K/Q4_K to Q5_K).
LLAMA_CPP_70B_FAMILIES = frozenset({"llama", "qwen2", "olmo"})
#: model_types whose llama.cpp converter leaves the multi-token-prediction layers out of the GGUF
#: (convert_hf_to_gguf.py's DeepseekV2Model, which DeepSeek V2/V3/R1 and Kimi K2 use, has
#: ``skip_mtp = True``: tensors of ``model.layers.N`` with N >= num_hidden_layers are not written).
LLAMA_CPP_DROPS_MTP = frozenset({"deepseek_v2", "deepseek_v3", "kimi_k2"})
#: Tensors that count as attention-value tensors for the attn_v index (llama.cpp's n_attention_wv).
VALUE_ROLES = frozenset({"attn_v", "attn_qkv", "attn_kv_b"})


def use_more_bits(layer: int, layers: int) -> bool:
    """llama.cpp's layers that get more bits in its _M mixes, with C integer division:
    ``i < n/8 or i >= 7n/8 or (i - n/8) % 3 == 2`` -- the first eighth, the last eighth and every third
    layer in between. For 8 layers: 0, 3, 6, 7; for 32: 0-3, 6, 9, ..., 27, 28-31 (16 of 32)."""
    eighth = layers // 8
    return layer < eighth or layer >= 7 * layers // 8 or (layer - eighth) % 3 == 2


@dataclass(frozen=True)
class TensorPlace:
    """Where a tensor sits, as llama.cpp's rules read it. ``value_index`` / ``values``: its index among
    the attention-value tensors and their count; ``layer`` / ``layers``: its layer (ffn_down);
    ``routed_experts``: the model's expert count; ``gqa``: query heads per KV head; ``falcon``: the model
    is llama.cpp's LLM_ARCH_FALCON (model_type falcon), which has rules of its own."""

    value_index: int = 0
    values: int = 1
    layer: int = 0
    layers: int = 1
    routed_experts: int = 0
    type_70b: bool = False
    gqa: int = 1
    falcon: bool = False


def _attn_v(mix: str, base: str, place: TensorPlace) -> str:
    chosen = base
    if mix == "q2_k":
        chosen = "q4_k" if place.gqa >= 4 else "q3_k"
    elif mix == "q3_k_m":
        chosen = "q5_k" if place.value_index < 2 else "q4_k"
    elif mix == "iq4_xs" and place.gqa >= 4:
        chosen = "q5_k"
    elif mix in {"q4_k_m", "q5_k_m"} and use_more_bits(place.value_index, place.values):
        chosen = "q6_k"
    elif mix == "q4_k_s" and place.value_index < 4:
        chosen = "q5_k"
    if place.type_70b and chosen in {"q3_k", "q4_k"}:
        chosen = "q5_k"
    return "q8_0" if place.routed_experts == 8 else chosen


def _ffn_down(mix: str, base: str, place: TensorPlace) -> str:
    i, n = place.layer, place.layers
    if mix == "q2_k":
        return "q3_k"
    if mix == "q3_k_m":
        more = not place.falcon or use_more_bits(i, n)
        return "q5_k" if i < n // 16 else "q4_k" if more else "q3_k"
    if mix == "q4_k_m" and place.falcon:
        return "q6_k" if i < n // 16 else "q5_k" if use_more_bits(i, n) else "q4_k"
    if mix == "q4_k_s" and place.falcon:
        return base
    if mix in {"q4_k_m", "q5_k_m"} and use_more_bits(i, n):
        return "q6_k"
    if mix in {"q4_k_s", "iq4_xs"} and i < n // 8:
        return "q5_k"
    return base


def _attn_output(mix: str, base: str, place: TensorPlace) -> str:
    if place.falcon:
        return base
    if place.routed_experts == 8:
        return "q5_k" if mix in {"q2_k", "q3_k_m", "q4_k_s", "q4_k_m", "iq4_xs"} else base
    return {"q2_k": "q3_k", "q3_k_m": "q4_k"}.get(mix, base)


def llama_cpp_type(mix: str, role: str, row_length: int, place: TensorPlace = TensorPlace()) -> BlockLayout:
    """The storage llama.cpp's quantizer gives one 2-D weight in a file of type ``mix``.

    ``role`` is the tensor's llama.cpp name (``output``, ``token_embd``, ``attn_v``, ``attn_k``,
    ``attn_output``, ``attn_qkv``, ``ffn_down``, ``ffn_down_exps``, ``ffn_up_exps`` ...), ``row_length``
    its input width (ggml's ne[0]). The rules (a tied token embedding is the output):

    - ``output``: Q6_K, Q8_0 when the row is not a whole number of the file type's blocks, and left at
      Q8_0 in Q8_0 files; Q8_0 in mxfp4_moe files and in every Falcon file.
    - ``attn_v`` (and fused attn_qkv, MLA's attn_kv_b): Q2_K: Q4_K with 4+ query heads per KV head,
      else Q3_K; Q3_K_M: Q5_K for the first two, else Q4_K; IQ4_XS: Q5_K with 4+ query heads per KV
      head; Q4_K_M, Q5_K_M: Q6_K where :func:`use_more_bits`; Q4_K_S: Q5_K for the first four. Then Q3_K
      and Q4_K become Q5_K in 70B-type models, and every attn_v is Q8_0 with exactly 8 routed experts.
    - ``attn_k``: Q8_0 with exactly 8 routed experts.
    - ``attn_output``: with 8 routed experts Q5_K in the K-quant and IQ4_XS files; else Q2_K: Q3_K,
      Q3_K_M: Q4_K; Falcon's: the file type's own type.
    - ``ffn_down*``: Q2_K: Q3_K; Q3_K_M: Q5_K in the first sixteenth of layers, else Q4_K; Q4_K_M,
      Q5_K_M: Q6_K where :func:`use_more_bits`; Q4_K_S, IQ4_XS: Q5_K in the first eighth. Falcon:
      Q3_K_M: Q5_K in the first sixteenth, then Q4_K where :func:`use_more_bits`, else Q3_K; Q4_K_M:
      Q6_K in the first sixteenth, then Q5_K where :func:`use_more_bits`, else Q4_K; Q4_K_S: no change.
    - mxfp4_moe: routed experts (``*_exps``) MXFP4, everything else Q8_0.
    - q4_0_qat (Google's QAT files): ``output`` / ``token_embd`` F16, every other matrix Q4_0.
    - everything else, the untied ``token_embd`` included: the file type's own type.

    Then rows that are not a whole number of blocks fall back (:data:`ROW_FALLBACK`), and to F16 when
    the row is not a multiple of the fallback's 32 either (llama.cpp refuses to write such a file for
    32-element types; F16 here). The llama.cpp version read: the attn_qkv rule of its older releases
    (Q4_K_M: Q5_K, Q5_K_M: Q6_K) is kept, as the fused-QKV files people run were written by them.
    """
    base = LLAMA_CPP_MIXES[mix]
    if mix == "f16":
        return FORMATS["fp16"]
    if mix == "q4_0_qat":
        return FORMATS["fp16" if role in {"output", "token_embd"} or row_length % 32 else "q4_0"]
    if role == "output":
        q8 = place.falcon or row_length % FORMATS[base].block or base == "q8_0"
        chosen = "q8_0" if q8 else "q6_k"
    elif mix == "mxfp4_moe":
        chosen = "mxfp4" if role.endswith("_exps") else "q8_0"
    elif role == "attn_qkv" and (mix in {"q4_k_m", "q5_k_m"} or place.falcon):
        chosen = {"q3_k_m": "q4_k", "q4_k_m": "q5_k", "q5_k_m": "q6_k"}.get(mix, base)
    elif role in VALUE_ROLES:
        chosen = _attn_v(mix, base, place)
    elif role == "attn_k":
        chosen = "q8_0" if place.routed_experts == 8 else base
    elif role == "attn_output":
        chosen = _attn_output(mix, base, place)
    elif role.startswith("ffn_down"):
        chosen = _ffn_down(mix, base, place)
    else:
        chosen = base
    layout = FORMATS[chosen]
    if row_length % layout.block == 0:
        return layout
    fallback = FORMATS.get(ROW_FALLBACK.get(chosen, ""))
    if fallback is not None and row_length % fallback.block == 0:
        return fallback
    return FORMATS["fp16"]
