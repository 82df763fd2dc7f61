"""Compressed and sparse attention with hyper-connections (DeepSeek V4)."""

from __future__ import annotations

from typing import Any

from servebound.errors import InputError
from servebound.importers.hf.blocks import (
    Block,
    Count,
    SparseIndexer,
    compressed_attention,
    hyper_connection_head,
    hyper_connections,
)
from servebound.importers.hf.config import Arch, Cfg, make_arch
from servebound.importers.hf.mla import deepseek_moe

#: The compression ratio whose layers the reference gives an indexer and overlapping pools (CSA).
V4_SPARSE_RATIO = 4
#: The reference keeps the compressor's running kv and score buffers in float32.
V4_COMPRESSOR_STATE_BYTES = 4.0


def deepseek_v4(c: Cfg, model_type: str) -> Arch:
    """DeepSeek V4: per layer, attention chosen by compress_ratios (0: a sliding window only; 4: CSA,
    compressed entries read through the sparse indexer's top index_topk; other ratios: HCA, every
    compressed entry read), hyper-connections over hc_mult residual streams, and a MoE with shared
    experts (the first num_hash_layers route by token id). compress_ratios holds one more entry per MTP
    layer (num_nextn_predict_layers); MTP modules are resident and not swept."""
    hidden = c.integer("hidden_size")
    layers = c.integer("num_hidden_layers")
    heads = c.integer("num_attention_heads")
    if c.integer("num_key_value_heads", 1) != 1:
        raise InputError(c.name("num_key_value_heads"), "DeepSeek V4 shares one key-value entry; expected 1")
    head_dim = c.integer("head_dim")
    o_groups = c.integer("o_groups")
    if heads % o_groups:
        raise InputError(c.name("o_groups"), f"must divide num_attention_heads {heads}, got {o_groups}")
    mtp_layers = c.integer("num_nextn_predict_layers", 0, minimum=0)
    ratios: list[int] = []
    for value in c.items("compress_ratios"):
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise InputError(c.name("compress_ratios"), f"entries must be integers >= 0, got {value!r}")
        ratios.append(value)
    if len(ratios) not in {layers, layers + mtp_layers}:
        raise InputError(
            c.name("compress_ratios"),
            f"has {len(ratios)} entries; expected {layers} layers + {mtp_layers} MTP layers",
        )
    indexer = SparseIndexer(c.integer("index_n_heads"), c.integer("index_head_dim"), c.integer("index_topk"))
    streams = c.integer("hc_mult")
    hash_layers = c.integer("num_hash_layers", 0, minimum=0)
    routed = c.integer("n_routed_experts")
    width = c.integer("moe_intermediate_size")
    attention_args: dict[str, Any] = {
        "hidden": hidden,
        "heads": heads,
        "head_dim": head_dim,
        "q_lora_rank": c.integer("q_lora_rank"),
        "o_groups": o_groups,
        "o_lora_rank": c.integer("o_lora_rank"),
        "window": c.integer("sliding_window"),
        "state_bytes_per_element": V4_COMPRESSOR_STATE_BYTES,
    }

    def layer(i: int, ratio: int) -> list[Block]:
        sparse = ratio == V4_SPARSE_RATIO
        label = (
            "sliding-window attention"
            if not ratio
            else f"CSA attention (ratio {ratio}) + indexer"
            if sparse
            else f"HCA attention (ratio {ratio})"
        )
        attention = compressed_attention(
            ratio=ratio, indexer=indexer if sparse else None, label=label, **attention_args
        )
        hashed = i < hash_layers
        mlp = deepseek_moe(
            c, hidden, routed, width, "MoE (hash-routed)" if hashed else "MoE", correction_bias=not hashed
        )
        return [
            attention,
            hyper_connections(hidden=hidden, streams=streams, sites=2, label="hyper-connections"),
            mlp,
        ]

    out = [layer(i, ratio) for i, ratio in enumerate(ratios[:layers])]
    out[-1].append(hyper_connection_head(hidden=hidden, streams=streams, label="hyper-connection head"))
    mtp: list[Block] = []
    if mtp_layers:
        module, expert = Count(), Count()
        for j in range(mtp_layers):
            ratio = ratios[layers + j] if len(ratios) > layers else 0
            blocks = layer(layers + j, ratio)
            blocks.append(hyper_connection_head(hidden=hidden, streams=streams, label="MTP head"))
            module += sum((b.always for b in blocks), Count())
            expert += sum((b.expert for b in blocks), Count())
        module += Count(2 * hidden * hidden, 3 * hidden).times(mtp_layers)
        size = module + expert.times(routed)
        mtp = [
            Block(
                label="MTP module",
                formula=(
                    f"{mtp_layers} x (decoder layer with its hyper-connections and head + e_proj and h_proj "
                    f"2x{hidden}x{hidden} + 3 norms) = {size.total}"
                ),
                always=module,
                expert=expert,
                routed=routed,
            )
        ]
    if hash_layers:
        c.notes.append(
            f"the first {hash_layers} MoE layers route by token id (a vocab x top-k integer table, "
            "not a weight: not counted)"
        )
    c.notes.append(
        "hyper-connection mixing weights and compressor position biases are float32 in the reference; "
        "counted at the small-tensor width"
    )
    c.notes.append(
        "compressor running buffers (kv and score) counted as float32 state per session; the reference "
        "stores cached entries at reduced precision (FP8 main entries, FP4 indexer keys): pick kv_precision"
    )
    return make_arch(c, model_type, hidden, out, mtp=mtp)
