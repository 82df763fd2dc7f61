"""Nemotron-NAS (DeciLM: Llama-3.3-Nemotron-Super/Ultra): a Llama whose layers each have their own
attention and MLP shape, found by neural architecture search and listed one per layer in
``block_configs``.

Per layer, ``attention`` is one of: GQA attention with ``num_attention_heads / n_heads_in_group`` KV
heads; ``no_op`` (no attention and no input norm); ``replace_with_linear`` (one hidden x hidden
matrix and its norm). ``ffn`` likewise: a gated MLP of width from ``ffn_mult``, ``no_op``, or
``replace_with_linear``. The MLP width is DeciLM's own rule (``_ffn_mult_to_intermediate_size`` in the
model's code, and in llama.cpp's converter): ``int(2 x ffn_mult x hidden / 3)`` rounded up to a multiple
of 256; the config states no width of its own (``intermediate_size`` is null).
"""

from __future__ import annotations

from dataclasses import replace

from servebound.errors import InputError
from servebound.importers.hf.blocks import Block, Count, dense_mlp
from servebound.importers.hf.config import Arch, Cfg, full_attention, make_arch

#: DeciLM rounds every MLP width up to a multiple of this.
FFN_ROUNDING = 256


def ffn_width(ffn_mult: float, hidden: int) -> int:
    """DeciLM's MLP width: int(2 x ffn_mult x hidden / 3) rounded up to a multiple of 256."""
    width = int(2 * ffn_mult * hidden / 3)
    return -(-width // FFN_ROUNDING) * FFN_ROUNDING


def _linear(hidden: int, label: str) -> Block:
    """A layer part replaced by one hidden x hidden matrix, with its norm."""
    return Block(
        label=label,
        formula=f"linear {hidden}x{hidden} = {hidden * hidden}; 1 norm {hidden}",
        always=Count(hidden * hidden, hidden),
    )


def _attention(c: Cfg, part: Cfg, hidden: int, heads: int) -> Block | None:
    if part.flag("no_op", False):
        return None
    if part.flag("replace_with_linear", False):
        return _linear(hidden, "attention replaced by a linear layer")
    if part.has("window_length") or part.has("num_sink_tokens"):
        raise InputError(part.name("window_length"), "windowed or sink attention is not supported yet")
    group = part.integer("n_heads_in_group")
    if heads % group:
        raise InputError(part.name("n_heads_in_group"), f"{group} does not divide {heads} attention heads")
    kv = heads // group
    per_layer = Cfg({**c.data, "num_key_value_heads": kv}, c.where)
    per_layer.notes = c.notes
    return full_attention(
        per_layer,
        hidden,
        label=f"full attention ({kv} kv heads)",
        norms=1,
        o_bias=c.flag("attention_bias", False),
        q_bias=c.flag("attention_bias", False),
        kv_bias=c.flag("attention_bias", False),
    )


def _ffn(part: Cfg, hidden: int, mlp_bias: bool) -> Block | None:
    if part.flag("no_op", False):
        return None
    if part.flag("replace_with_linear", False):
        return _linear(hidden, "MLP replaced by a linear layer")
    raw = part.data.get("ffn_mult")
    if isinstance(raw, bool) or not isinstance(raw, int | float) or raw <= 0:
        raise InputError(part.name("ffn_mult"), f"expected a positive number, got {raw!r}")
    width = ffn_width(float(raw), hidden)
    mlp = dense_mlp(hidden=hidden, width=width, gated=True, label=f"MLP (ffn_mult {raw:g})", bias=mlp_bias)
    return replace(
        mlp,
        formula=f"width {width} = ceil256(int(2 x {raw:g} x {hidden} / 3)); {mlp.formula} + 1 norm",
        always=mlp.always + Count(0, hidden),
    )


def nemotron_nas(c: Cfg, model_type: str) -> Arch:
    hidden = c.integer("hidden_size")
    layers = c.integer("num_hidden_layers")
    heads = c.integer("num_attention_heads")
    mlp_bias = c.flag("mlp_bias", False)
    configs = c.items("block_configs", layers)
    out: list[list[Block]] = []
    for i, raw in enumerate(configs):
        if not isinstance(raw, dict):
            raise InputError(c.name(f"block_configs[{i}]"), "expected an object with attention and ffn")
        layer = Cfg(raw, c.name(f"block_configs[{i}]."))
        layer.notes = c.notes
        parts = [
            _attention(c, layer.sub("attention"), hidden, heads),
            _ffn(layer.sub("ffn"), hidden, mlp_bias),
        ]
        out.append([part for part in parts if part is not None])
    c.note(
        f"MLP widths from block_configs' ffn_mult by DeciLM's rule: int(2 x ffn_mult x {hidden} / 3) "
        f"rounded up to a multiple of {FFN_ROUNDING}"
    )
    return make_arch(c, model_type, hidden, out)
