"""Dense decoders: Llama-like models with full and sliding-window attention layers.

Per family, what differs from Llama is written in the tables below (each from the family's modeling
code in transformers): query/key norms (``head``: one head_dim vector each, ``full``: over all heads),
norms per layer (Gemma, GLM-4: four; OLMo 1: none, its norms carry no weights; OLMo 2/3 and EXAONE 4
place their two after attention and MLP), and which projections take ``attention_bias``.
"""

from __future__ import annotations

from typing import Any

from servebound.errors import InputError
from servebound.importers.hf.blocks import Block, dense_mlp
from servebound.importers.hf.config import Arch, Cfg, decoder_shape, full_attention, layer_types_of, make_arch

#: Families whose output projection takes ``attention_bias`` too (Qwen2 and GLM-4 bias q, k, v only).
O_BIAS_FAMILIES = frozenset({"llama", "granite", "olmo", "olmo2", "olmo3", "mistral", "smollm3"})
#: Query/key norms: "head" (q_norm, k_norm over head_dim) or "full" (over all query and all KV heads).
QK_NORM = {"qwen3": "head", "gemma3_text": "head", "exaone4": "head", "olmo2": "full", "olmo3": "full"}
#: Norm vectors per layer where not 2 (GLM-4: input, post-attention, pre-MLP and post-MLP norms).
NORMS_PER_LAYER = {"gemma": 4, "gemma2": 4, "gemma3_text": 4, "glm4": 4, "olmo": 0}


def dense_decoder(c: Cfg, model_type: str) -> Arch:
    hidden, layers, *_ = decoder_shape(c)  # its notes (KV heads, head_dim) lead the audit
    width = c.integer("intermediate_size")
    gemma = model_type in {"gemma", "gemma2", "gemma3_text"}
    tied = c.flag("tie_word_embeddings", gemma)
    window = c.opt_integer("sliding_window")
    kinds = layer_types_of(c, layers, {"full_attention", "sliding_attention"})
    if kinds is None:
        if model_type == "gemma2":
            kinds = ["sliding_attention" if i % 2 == 0 else "full_attention" for i in range(layers)]
        elif model_type == "gemma3_text":
            pattern = c.integer("sliding_window_pattern", 6)
            kinds = [
                "full_attention" if (i + 1) % pattern == 0 else "sliding_attention" for i in range(layers)
            ]
        elif model_type in {"qwen2", "qwen3"} and window and c.flag("use_sliding_window", False):
            start = c.integer("max_window_layers", layers, minimum=0)
            kinds = ["sliding_attention" if i >= start else "full_attention" for i in range(layers)]
        elif model_type in {"mistral", "ministral3", "phi3"} and window:
            kinds = ["sliding_attention"] * layers
        else:
            kinds = ["full_attention"] * layers
    if "sliding_attention" in kinds and window is None:
        raise InputError(c.name("sliding_window"), "missing, but some layers are sliding-window layers")
    bias = c.flag("attention_bias", False)
    attention_args: dict[str, Any] = {
        "q_bias": bias or model_type == "qwen2",
        "kv_bias": bias or model_type == "qwen2",
        "o_bias": bias and model_type in O_BIAS_FAMILIES,
        "qk_norm": QK_NORM.get(model_type, "none"),
        "norms": NORMS_PER_LAYER.get(model_type, 2),
        "fused_qkv": model_type == "phi3",
    }
    mlp_bias = c.flag("mlp_bias", False)
    out: list[list[Block]] = []
    for kind in kinds:
        attention = full_attention(
            c, hidden, window=window if kind == "sliding_attention" else None, **attention_args
        )
        out.append([attention, dense_mlp(hidden=hidden, width=width, gated=True, label="MLP", bias=mlp_bias)])
    return make_arch(
        c, model_type, hidden, out, tied_default=tied, final_norms=0 if model_type == "olmo" else 1
    )
