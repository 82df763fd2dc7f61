"""Linear-attention and state-space hybrids: Qwen3-Next/Qwen3.5, Nemotron-H, Granite 4.0."""

from __future__ import annotations

from dataclasses import replace

from servebound.errors import InputError
from servebound.importers.hf.blocks import (
    Block,
    Count,
    Matrix,
    dense_mlp,
    moe_block,
)
from servebound.importers.hf.config import (
    Arch,
    Cfg,
    full_attention,
    gated_moe,
    layer_types_of,
    make_arch,
    state_storage_of,
)
from servebound.importers.hf.mixers import gated_delta_net, mamba2_mixer
from servebound.importers.hf.moe import mtp_like


def qwen_hybrid(c: Cfg, model_type: str) -> Arch:
    """Qwen3-Next and Qwen3.5: gated delta-net layers with a gated full-attention layer every
    full_attention_interval layers; MoE (with a gated shared expert) or dense MLPs."""
    hidden = c.integer("hidden_size")
    layers = c.integer("num_hidden_layers")
    kinds = layer_types_of(c, layers, {"full_attention", "linear_attention"})
    if kinds is None:
        interval = c.integer("full_attention_interval")
        kinds = ["full_attention" if (i + 1) % interval == 0 else "linear_attention" for i in range(layers)]
    storage = state_storage_of(c, "mamba_ssm_dtype")
    if not c.has("mamba_ssm_dtype"):
        c.notes.append(f"delta-net state dtype not in config: using the model dtype {storage.state_dtype}")
    gated_output = c.flag("attn_output_gate", True)
    is_moe = c.has("num_experts")
    only_dense = set(c.items("mlp_only_layers")) if c.has("mlp_only_layers") else set()
    out: list[list[Block]] = []
    for i, kind in enumerate(kinds):
        if kind == "full_attention":
            mixer = full_attention(
                c,
                hidden,
                label="gated full attention",
                qk_norm="head",
                output_gate=gated_output,
                q_bias=c.flag("attention_bias", False),
                kv_bias=c.flag("attention_bias", False),
            )
        else:
            mixer = gated_delta_net(
                hidden=hidden,
                key_heads=c.integer("linear_num_key_heads"),
                value_heads=c.integer("linear_num_value_heads"),
                key_head_dim=c.integer("linear_key_head_dim"),
                value_head_dim=c.integer("linear_value_head_dim"),
                conv_kernel=c.integer("linear_conv_kernel_dim"),
                storage=storage,
                label="gated delta-net",
            )
        if is_moe and i not in only_dense:
            mlp = gated_moe(
                c,
                hidden,
                "num_experts",
                "moe_intermediate_size",
                shared_width=c.integer("shared_expert_intermediate_size", 0, minimum=0),
                shared_gate=True,
            )
        else:
            mlp = dense_mlp(hidden=hidden, width=c.integer("intermediate_size"), gated=True, label="MLP")
        out.append([mixer, mlp])
    full_index = kinds.index("full_attention") if "full_attention" in kinds else len(kinds) - 1
    mtp = mtp_like(out[full_index], hidden, c.integer("mtp_num_hidden_layers", 0, minimum=0))
    return make_arch(c, model_type, hidden, out, mtp=mtp)


def nemotron_h(c: Cfg, model_type: str) -> Arch:
    """Nemotron-H: one mixer per layer from hybrid_override_pattern (M Mamba-2, * attention,
    - MLP, E MoE); squared-ReLU MLPs are not gated."""
    hidden = c.integer("hidden_size")
    layers = c.integer("num_hidden_layers")
    pattern = c.text("hybrid_override_pattern")
    if len(pattern) != layers or set(pattern) - set("M*-E"):
        raise InputError(
            c.name("hybrid_override_pattern"),
            f"expected {layers} characters from M, *, -, E; got {pattern!r}",
        )
    storage = state_storage_of(c, "mamba_ssm_cache_dtype")
    out: list[list[Block]] = []
    for symbol in pattern:
        if symbol == "M":
            block = mamba2_mixer(
                hidden=hidden,
                heads=c.integer("mamba_num_heads"),
                head_dim=c.integer("mamba_head_dim"),
                groups=c.integer("n_groups"),
                d_state=c.integer("ssm_state_size"),
                d_conv=c.integer("conv_kernel"),
                conv_bias=c.flag("use_conv_bias", True),
                storage=storage,
                label="Mamba-2",
            )
        elif symbol == "*":
            block = full_attention(
                c,
                hidden,
                label="full attention",
                norms=1,
            )
        elif symbol == "-":
            mlp = dense_mlp(hidden=hidden, width=c.integer("intermediate_size"), gated=False, label="MLP")
            block = replace(mlp, formula=mlp.formula + " + 1 norm", always=mlp.always + Count(0, hidden))
        else:
            block = _nemotron_moe(c, hidden)
        out.append([block])
    return make_arch(c, model_type, hidden, out)


def _nemotron_moe(c: Cfg, hidden: int) -> Block:
    """Nemotron-H's MoE layer: squared-ReLU experts, a shared expert and a router on the hidden state.
    With ``moe_latent_size`` (Nemotron 3 Super's latent MoE) the routed experts work in that latent
    width, between one hidden -> latent and one latent -> hidden projection per layer."""
    routed, width = c.integer("n_routed_experts"), c.integer("moe_intermediate_size")
    moe = moe_block(
        hidden=hidden,
        routed=routed,
        per_token=c.integer("num_experts_per_tok"),
        width=width,
        gated=False,
        label="MoE",
        shared_width=c.integer("n_shared_experts", 0, minimum=0)
        * c.integer("moe_shared_expert_intermediate_size", 0, minimum=0),
        correction_bias=True,
    )
    latent = c.opt_integer("moe_latent_size")
    if latent is not None:
        experts = moe_block(
            hidden=latent, routed=routed, per_token=moe.per_token, width=width, gated=False, label="MoE"
        )
        projections = (Matrix("latent_down", hidden, latent), Matrix("latent_up", latent, hidden))
        moe = replace(
            moe,
            label="latent MoE",
            formula=f"{moe.formula}; experts in latent {latent}: {experts.formula.split(';')[0]}; "
            f"projections 2 x {hidden}x{latent}",
            always=moe.always + Count(2 * hidden * latent, 0),
            expert=experts.expert,
            matrices=moe.matrices + projections,
            expert_matrices=experts.expert_matrices,
        )
    return replace(moe, formula=moe.formula + " + 1 norm", always=moe.always + Count(0, hidden))


def granite_hybrid(c: Cfg, model_type: str) -> Arch:
    """Granite 4.0 hybrid: Mamba-2 or attention per layer_types, each followed by a MoE (with a shared
    MLP) or, without experts, a dense shared MLP."""
    hidden = c.integer("hidden_size")
    layers = c.integer("num_hidden_layers")
    kinds = layer_types_of(c, layers, {"mamba", "attention"})
    if kinds is None:
        raise InputError(c.name("layer_types"), "missing; granitemoehybrid needs mamba/attention per layer")
    storage = state_storage_of(c, "mamba_ssm_cache_dtype")
    routed = c.integer("num_local_experts", 0, minimum=0)
    out: list[list[Block]] = []
    for kind in kinds:
        if kind == "mamba":
            expand = c.integer("mamba_expand", 2)
            head_dim = c.integer("mamba_d_head")
            mixer = mamba2_mixer(
                hidden=hidden,
                heads=c.integer("mamba_n_heads", expand * hidden // head_dim),
                head_dim=head_dim,
                groups=c.integer("mamba_n_groups"),
                d_state=c.integer("mamba_d_state"),
                d_conv=c.integer("mamba_d_conv"),
                conv_bias=c.flag("mamba_conv_bias", True),
                storage=storage,
                label="Mamba-2",
                norms=2,
            )
        else:
            mixer = full_attention(
                c,
                hidden,
                label="full attention",
                q_bias=c.flag("attention_bias", False),
                kv_bias=c.flag("attention_bias", False),
                o_bias=c.flag("attention_bias", False),
            )
        shared = c.integer("shared_intermediate_size", 0, minimum=0)
        if routed:
            mlp = gated_moe(c, hidden, "num_local_experts", "intermediate_size", shared_width=shared)
        else:
            mlp = dense_mlp(hidden=hidden, width=shared, gated=True, label="shared MLP")
        out.append([mixer, mlp])
    return make_arch(c, model_type, hidden, out, tied_default=True)
