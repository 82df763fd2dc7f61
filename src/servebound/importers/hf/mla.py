"""Latent attention (DeepSeek V2/V3/V3.2, Kimi K2, GLM-4.7-Flash, GLM-5)."""

from __future__ import annotations

from servebound.importers.hf.blocks import Block, SparseIndexer, dense_mlp, mla_attention, moe_block
from servebound.importers.hf.config import Arch, Cfg, make_arch
from servebound.importers.hf.moe import mtp_like


def deepseek_moe(c: Cfg, hidden: int, routed: int, width: int, label: str, *, correction_bias: bool) -> Block:
    """DeepSeek's MoE layer: E routed experts of ``width``, k from num_experts_per_tok, and
    n_shared_experts shared experts of the same width (DeepSeek V2/V3/V4, Kimi K2, GLM)."""
    return moe_block(
        hidden=hidden,
        routed=routed,
        per_token=c.integer("num_experts_per_tok"),
        width=width,
        gated=True,
        label=label,
        shared_width=c.integer("n_shared_experts", 0, minimum=0) * width,
        correction_bias=correction_bias,
    )


def mla_moe(c: Cfg, model_type: str) -> Arch:
    hidden = c.integer("hidden_size")
    layers = c.integer("num_hidden_layers")
    heads = c.integer("num_attention_heads")
    indexer = None
    if c.has("index_topk"):
        indexer = SparseIndexer(
            c.integer("index_n_heads"), c.integer("index_head_dim"), c.integer("index_topk")
        )
    q_lora = c.opt_integer("q_lora_rank")
    dense_from = c.integer("first_k_dense_replace", 0, minimum=0)
    freq = c.integer("moe_layer_freq", 1)
    routed = c.opt_integer("n_routed_experts")
    width = c.integer("moe_intermediate_size") if routed else 0
    out: list[list[Block]] = []
    for i in range(layers):
        attention = mla_attention(
            hidden=hidden,
            heads=heads,
            q_lora_rank=q_lora,
            kv_lora_rank=c.integer("kv_lora_rank"),
            qk_nope_head_dim=c.integer("qk_nope_head_dim"),
            qk_rope_head_dim=c.integer("qk_rope_head_dim"),
            v_head_dim=c.integer("v_head_dim"),
            indexer=indexer,
            label="MLA + sparse indexer" if indexer else "MLA",
        )
        if routed and i >= dense_from and i % freq == 0:
            mlp = deepseek_moe(
                c, hidden, routed, width, "MoE", correction_bias=c.data.get("topk_method") == "noaux_tc"
            )
        else:
            mlp = dense_mlp(
                hidden=hidden, width=c.integer("intermediate_size"), gated=True, label="dense MLP"
            )
        out.append([attention, mlp])
    mtp = mtp_like(out[-1], hidden, c.integer("num_nextn_predict_layers", 0, minimum=0))
    return make_arch(c, model_type, hidden, out, mtp=mtp)
