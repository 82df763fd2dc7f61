"""Gemma 3 and Gemma 4 text models."""

from __future__ import annotations

from servebound.errors import InputError
from servebound.importers.hf.blocks import Block, dense_mlp, gqa_attention
from servebound.importers.hf.config import Arch, Cfg, gated_moe, kv_heads_of, layer_types_of, make_arch
from servebound.importers.hf.dense import dense_decoder

#: Gemma3TextConfig defaults (transformers), used by Google's sparse gemma-3 -it configs.
GEMMA3_TEXT_DEFAULTS: dict[str, object] = {
    "num_attention_heads": 8,
    "num_key_value_heads": 4,
    "head_dim": 256,
    "sliding_window_pattern": 6,
    "vocab_size": 262208,
    "max_position_embeddings": 131072,
    "sliding_window": 4096,
}


def gemma3_text(c: Cfg, model_type: str) -> Arch:
    merged = {**GEMMA3_TEXT_DEFAULTS, **{k: v for k, v in c.data.items() if v is not None}}
    for key, value in GEMMA3_TEXT_DEFAULTS.items():
        if c.data.get(key) is None:
            c.notes.append(f"{c.name(key)} absent: using {value!r} (transformers Gemma3TextConfig default)")
    inner = Cfg(merged, c.where)
    inner.notes = c.notes
    return dense_decoder(inner, "gemma3_text")


def gemma4_text(c: Cfg, model_type: str) -> Arch:
    hidden = c.integer("hidden_size")
    layers = c.integer("num_hidden_layers")
    heads = c.integer("num_attention_heads")
    kv = kv_heads_of(c, heads)
    head_dim = c.integer("head_dim")
    window = c.integer("sliding_window")
    kinds = layer_types_of(c, layers, {"full_attention", "sliding_attention"})
    if kinds is None:
        raise InputError(c.name("layer_types"), "missing; Gemma 4 needs the per-layer attention kinds")
    global_kv = c.integer("num_global_key_value_heads", kv)
    global_head_dim = c.integer("global_head_dim", head_dim)
    k_eq_v = c.flag("attention_k_eq_v", False)
    width = c.integer("intermediate_size")
    moe = c.flag("enable_moe_block", False)
    if c.opt_integer("num_kv_shared_layers", minimum=0):
        raise InputError(
            c.name("num_kv_shared_layers"), "KV-shared layers are not supported yet; set it to 0"
        )
    out: list[list[Block]] = []
    for kind in kinds:
        sliding = kind == "sliding_attention"
        blocks = [
            gqa_attention(
                hidden=hidden,
                q_heads=heads,
                kv_heads=kv if sliding else global_kv,
                head_dim=head_dim if sliding else global_head_dim,
                window=window if sliding else None,
                label="sliding attention"
                if sliding
                else "full attention (K=V)"
                if k_eq_v
                else "full attention",
                qk_norm="head",
                k_eq_v=k_eq_v and not sliding,
                norms=4,
            ),
            dense_mlp(hidden=hidden, width=width, gated=True, label="dense MLP"),
        ]
        if moe:
            blocks.append(
                gated_moe(c, hidden, "num_experts", "moe_intermediate_size", per_token="top_k_experts")
            )
        out.append(blocks)
    return make_arch(c, model_type, hidden, out, tied_default=True)
