"""Mixture-of-experts decoders with GQA attention, their MTP modules, and Llama 4."""

from __future__ import annotations

from servebound.errors import InputError
from servebound.importers.hf import config
from servebound.importers.hf.blocks import Block, Count, dense_mlp, moe_block
from servebound.importers.hf.config import Arch, Cfg, decoder_shape, layer_types_of, make_arch

#: Config keys of the routed expert count and expert width where a family does not use num_experts and
#: moe_intermediate_size.
EXPERT_KEYS = {
    "mixtral": ("num_local_experts", "intermediate_size"),
    "gpt_oss": ("num_local_experts", "intermediate_size"),
    "minimax_m2": ("num_local_experts", "intermediate_size"),
    "minimax": ("num_local_experts", "intermediate_size"),
    "glm4_moe": ("n_routed_experts", "moe_intermediate_size"),
}


def gqa_moe(c: Cfg, model_type: str) -> Arch:
    hidden, layers, heads, *_ = decoder_shape(c)  # its notes (KV heads, head_dim) lead the audit
    window = c.opt_integer("sliding_window")
    kinds = layer_types_of(c, layers, {"full_attention", "sliding_attention"})
    if kinds is None:
        sliding_all = model_type == "mixtral" and window is not None
        kinds = ["sliding_attention" if sliding_all else "full_attention"] * layers
    if "sliding_attention" in kinds and window is None:
        raise InputError(c.name("sliding_window"), "missing, but some layers are sliding-window layers")
    routed_key, width_key = EXPERT_KEYS.get(model_type, ("num_experts", "moe_intermediate_size"))
    shared = 0
    if model_type in {"qwen2_moe", "laguna"}:
        shared = c.integer("shared_expert_intermediate_size", 0, minimum=0)
    elif model_type == "glm4_moe":
        shared = c.integer("n_shared_experts", 0, minimum=0) * c.integer(width_key)
    elif model_type == "minimax_m2":
        shared = c.integer("shared_intermediate_size", 0, minimum=0)
    moe = config.gated_moe(
        c,
        hidden,
        routed_key,
        width_key,
        shared_width=shared,
        shared_gate=model_type == "qwen2_moe" and shared > 0,
        router_bias=model_type == "gpt_oss",
        correction_bias=model_type in {"glm4_moe", "minimax_m2", "laguna"},
        expert_bias=model_type == "gpt_oss",
    )
    dense_from = 0
    mlp_kinds: list[str]
    if model_type == "laguna":
        mlp_kinds = [str(kind) for kind in c.items("mlp_layer_types", layers)]
    else:
        if model_type == "glm4_moe":
            dense_from = c.integer("first_k_dense_replace", 0, minimum=0)
        step = c.integer("decoder_sparse_step", 1)
        only_dense = set(c.items("mlp_only_layers")) if c.has("mlp_only_layers") else set()
        mlp_kinds = [
            "dense" if (i < dense_from or i in only_dense or (i + 1) % step) else "sparse"
            for i in range(layers)
        ]
    bias = c.flag("attention_bias", model_type == "gpt_oss")
    per_layer_heads = (
        [int(str(h)) for h in c.items("num_attention_heads_per_layer", layers)]
        if c.has("num_attention_heads_per_layer")
        else [heads] * layers
    )
    qk_norm = "none"
    if model_type in {"qwen3_moe", "laguna"} or (model_type == "glm4_moe" and c.flag("use_qk_norm", False)):
        qk_norm = "head"
    if model_type == "minimax_m2" and c.flag("use_qk_norm", False):
        qk_norm = "full"
    out: list[list[Block]] = []
    for kind, mlp_kind, q_heads in zip(kinds, mlp_kinds, per_layer_heads, strict=True):
        sliding = kind == "sliding_attention"
        attention = config.full_attention(
            c,
            hidden,
            window=window if sliding else None,
            q_heads=q_heads,
            label=("sliding attention" if sliding else "full attention") + f" ({q_heads} q heads)",
            q_bias=bias or model_type == "qwen2_moe",
            kv_bias=bias or model_type == "qwen2_moe",
            o_bias=bias and model_type == "gpt_oss",
            qk_norm=qk_norm,
            sinks=model_type == "gpt_oss",
            head_gate=model_type == "laguna" and bool(c.data.get("gating")),
        )
        if mlp_kind == "dense":
            mlp = dense_mlp(
                hidden=hidden, width=c.integer("intermediate_size"), gated=True, label="dense MLP"
            )
        else:
            mlp = moe
        out.append([attention, mlp])
    mtp: list[Block] = []
    if model_type == "glm4_moe":
        mtp = mtp_like(out[-1], hidden, c.integer("num_nextn_predict_layers", 0, minimum=0))
    elif model_type == "minimax_m2" and c.flag("use_mtp", False):
        modules = c.integer("num_mtp_modules", 0, minimum=0) * c.integer("mtp_transformer_layers", 1)
        mtp = mtp_like(out[-1], hidden, modules)
    return make_arch(c, model_type, hidden, out, mtp=mtp)


def mtp_like(layer: list[Block], hidden: int, modules: int) -> list[Block]:
    """MTP modules: one decoder layer like the last plus a 2h x h input projection and norms each.
    The module's embedding and output head are shared with the main model and not counted again."""
    if modules == 0:
        return []
    layer_params = sum((b.always + b.expert.times(b.routed) for b in layer), Count())
    projection = Count(2 * hidden * hidden, 3 * hidden)
    per_module = layer_params + projection
    return [
        Block(
            label="MTP module",
            formula=(
                f"{modules} x (decoder layer {layer_params.total} + projection 2x{hidden}x{hidden} + 3 norms)"
            ),
            always=per_module.times(modules),
        )
    ]


def llama4_text(c: Cfg, model_type: str) -> Arch:
    hidden, layers, *_ = decoder_shape(c)  # its notes (KV heads, head_dim) lead the audit
    chunk = c.integer("attention_chunk_size")
    step = c.integer("interleave_moe_layer_step", 1)
    if c.has("no_rope_layers"):
        rope = [bool(x) for x in c.items("no_rope_layers", layers)]
    else:
        interval = c.integer("no_rope_layer_interval", 4)
        c.notes.append(
            f"{c.name('no_rope_layers')} absent: every {interval}th layer is a global NoPE layer "
            "(transformers Llama4TextConfig default); the others use chunked attention"
        )
        rope = [(i + 1) % interval != 0 for i in range(layers)]
    moe_layers = set(range(step - 1, layers, step))
    out: list[list[Block]] = []
    for i in range(layers):
        attention = config.full_attention(
            c,
            hidden,
            window=chunk if rope[i] else None,
            label="chunked attention" if rope[i] else "global NoPE attention",
        )
        if i in moe_layers:
            width = c.integer("intermediate_size")
            mlp = moe_block(
                hidden=hidden,
                routed=c.integer("num_local_experts"),
                per_token=c.integer("num_experts_per_tok"),
                width=width,
                gated=True,
                label="MoE",
                shared_width=width,
            )
        else:
            mlp = dense_mlp(
                hidden=hidden, width=c.integer("intermediate_size_mlp"), gated=True, label="dense MLP"
            )
        out.append([attention, mlp])
    c.notes.append(
        f"chunked attention (attention_chunk_size {chunk}) is treated as a sliding window of {chunk} tokens"
    )
    return make_arch(c, model_type, hidden, out)
