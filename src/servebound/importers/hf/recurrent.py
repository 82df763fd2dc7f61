"""Recurrent mixers: Mamba, Jamba and MiniMax lightning attention."""

from __future__ import annotations

from servebound.errors import InputError
from servebound.importers.hf.blocks import (
    Block,
    dense_mlp,
)
from servebound.importers.hf.config import (
    Arch,
    Cfg,
    full_attention,
    gated_moe,
    head_dim_of,
    make_arch,
    state_storage_of,
)
from servebound.importers.hf.mixers import lightning_attention, mamba1_mixer
from servebound.importers.hf.moe import gqa_moe


def mamba(c: Cfg, model_type: str) -> Arch:
    hidden = c.integer("hidden_size")
    layers = c.integer("num_hidden_layers")
    d_inner = c.integer("intermediate_size")
    d_state = c.integer("state_size")
    dt_rank = c.integer("time_step_rank")
    block = mamba1_mixer(
        hidden=hidden,
        d_inner=d_inner,
        d_state=d_state,
        d_conv=c.integer("conv_kernel"),
        dt_rank=dt_rank,
        conv_bias=c.flag("use_conv_bias", True),
        proj_bias=c.flag("use_bias", False),
        storage=state_storage_of(c),
        label="Mamba-1",
    )
    return make_arch(c, model_type, hidden, [[block] for _ in range(layers)], tied_default=True)


def jamba(c: Cfg, model_type: str) -> Arch:
    """Jamba: attention every attn_layer_period layers (at attn_layer_offset), Mamba-1 elsewhere; MoE
    every expert_layer_period layers (at expert_layer_offset), dense MLPs elsewhere."""
    hidden = c.integer("hidden_size")
    layers = c.integer("num_hidden_layers")
    attn_period, attn_offset = c.integer("attn_layer_period"), c.integer("attn_layer_offset", minimum=0)
    moe_period, moe_offset = c.integer("expert_layer_period"), c.integer("expert_layer_offset", minimum=0)
    storage = state_storage_of(c)
    expand = c.integer("mamba_expand")
    d_state = c.integer("mamba_d_state")
    out: list[list[Block]] = []
    for i in range(layers):
        if i % attn_period == attn_offset:
            mixer = full_attention(
                c,
                hidden,
                label="full attention",
            )
        else:
            dt_rank = c.data.get("mamba_dt_rank")
            mixer = mamba1_mixer(
                hidden=hidden,
                d_inner=expand * hidden,
                d_state=d_state,
                d_conv=c.integer("mamba_d_conv"),
                dt_rank=c.integer("mamba_dt_rank") if dt_rank not in (None, "auto") else -(-hidden // 16),
                conv_bias=c.flag("mamba_conv_bias", True),
                proj_bias=c.flag("mamba_proj_bias", False),
                storage=storage,
                label="Mamba-1",
                norms=2,
            )
        if i % moe_period == moe_offset and c.integer("num_experts", 1) > 1:
            mlp = gated_moe(c, hidden, "num_experts", "intermediate_size")
        else:
            mlp = dense_mlp(hidden=hidden, width=c.integer("intermediate_size"), gated=True, label="MLP")
        out.append([mixer, mlp])
    return make_arch(c, model_type, hidden, out)


def minimax(c: Cfg, model_type: str) -> Arch:
    """MiniMax-Text-01: attn_type_list picks lightning (0) or softmax (1) attention per layer; MoE."""
    hidden = c.integer("hidden_size")
    layers = c.integer("num_hidden_layers")
    heads = c.integer("num_attention_heads")
    head_dim = head_dim_of(c, hidden, heads)
    kinds = c.items("attn_type_list", layers)
    out: list[list[Block]] = []
    for kind in kinds:
        if kind == 1:
            mixer = full_attention(
                c,
                hidden,
                label="softmax attention",
            )
        elif kind == 0:
            mixer = lightning_attention(
                hidden=hidden,
                heads=heads,
                head_dim=head_dim,
                state_bytes_per_element=4.0,
                state_dtype="float32",
                label="lightning attention",
            )
        else:
            raise InputError(c.name("attn_type_list"), f"entries must be 0 or 1, got {kind!r}")
        mlp = gated_moe(c, hidden, "num_local_experts", "intermediate_size")
        out.append([mixer, mlp])
    c.notes.append("lightning-attention state assumed float32 (heads x head_dim x head_dim per layer)")
    return make_arch(c, model_type, hidden, out)


def minimax_m2(c: Cfg, model_type: str) -> Arch:
    if c.has("attn_type_list") and any(kind != 1 for kind in c.items("attn_type_list")):
        return minimax(c, model_type)
    return gqa_moe(c, model_type)
