"""GPT-J and Falcon: decoders whose attention and MLP read the same normed input (parallel blocks).

Both name their shapes differently from Llama and keep LayerNorms with a bias, so each is read here
from its own config keys, as transformers' GPTJConfig and FalconConfig define them:

- GPT-J (``gptj``): ``n_embd``, ``n_layer``, ``n_head``, ``n_inner`` (null: 4 x n_embd),
  ``n_positions``; one LayerNorm per layer (weight and bias), q/k/v/out without bias, an MLP
  fc_in/fc_out with biases, a final LayerNorm, an untied output head with a bias
  (GPTJConfig's tie_word_embeddings defaults to false).
- Falcon (``falcon``): ``hidden_size``, ``num_hidden_layers``, ``num_attention_heads``; KV heads are
  ``num_kv_heads`` under ``new_decoder_architecture``, else 1 with ``multi_query`` (its default), else
  one per query head; one fused query_key_value projection; ``ffn_hidden_size`` (null: 4 x hidden);
  ``bias`` on every linear layer or none; LayerNorms per layer: ``num_ln_in_parallel_attn`` (null: 2)
  under the new architecture, else 1 with ``parallel_attn`` and 2 without; embeddings tied unless the
  config says otherwise.
"""

from __future__ import annotations

from servebound.errors import InputError
from servebound.importers.hf.blocks import Block, dense_mlp, gqa_attention
from servebound.importers.hf.config import Arch, Cfg, dtype_of

#: A LayerNorm with a bias is two hidden-sized vectors.
LAYERNORM_VECTORS = 2


def _heads_divide(c: Cfg, hidden: int, heads: int, hidden_key: str, heads_key: str) -> int:
    if hidden % heads:
        raise InputError(c.name(heads_key), f"{heads} heads do not divide {hidden_key} {hidden}")
    c.note(f"head_dim: {hidden_key} / {heads_key} = {hidden} / {heads} = {hidden // heads}")
    return hidden // heads


def gptj(c: Cfg, model_type: str) -> Arch:
    hidden = c.integer("n_embd")
    layers = c.integer("n_layer")
    heads = c.integer("n_head")
    head_dim = _heads_divide(c, hidden, heads, "n_embd", "n_head")
    width = c.integer("n_inner", 4 * hidden)
    vocab = c.integer("vocab_size")
    c.note(f"output head bias: {vocab} (vocab), counted with the final LayerNorm")
    out: list[list[Block]] = []
    for _ in range(layers):
        attention = gqa_attention(
            hidden=hidden,
            q_heads=heads,
            kv_heads=heads,
            head_dim=head_dim,
            window=None,
            label="attention (parallel with the MLP, one LayerNorm)",
            norms=LAYERNORM_VECTORS,
        )
        out.append([attention, dense_mlp(hidden=hidden, width=width, gated=False, label="MLP", bias=True)])
    return Arch(
        model_type=model_type,
        hidden=hidden,
        vocab=vocab,
        tied=c.flag("tie_word_embeddings", False),
        layers=out,
        context_limit_tokens=c.opt_integer("n_positions"),
        final_norms=LAYERNORM_VECTORS,
        head_bias=vocab,
        dtype=dtype_of(c),
    )


def _falcon_kv_heads(c: Cfg, heads: int) -> int:
    if c.flag("new_decoder_architecture", False):
        if c.has("num_kv_heads"):
            return c.integer("num_kv_heads")
        c.note(
            f"{c.name('num_kv_heads')} absent: one KV head per query head ({heads}), FalconConfig's default"
        )
        return heads
    if c.flag("multi_query", True):
        c.note("multi_query: one KV head shared by every query head")
        return 1
    return heads


def _falcon_layernorms(c: Cfg) -> int:
    if c.flag("new_decoder_architecture", False):
        count = c.integer("num_ln_in_parallel_attn", 2)
        if count not in (1, 2):
            raise InputError(c.name("num_ln_in_parallel_attn"), f"must be 1 or 2, got {count}")
        return count
    return 1 if c.flag("parallel_attn", True) else 2


def falcon(c: Cfg, model_type: str) -> Arch:
    hidden = c.integer("hidden_size")
    layers = c.integer("num_hidden_layers")
    heads = c.integer("num_attention_heads")
    head_dim = _heads_divide(c, hidden, heads, "hidden_size", "num_attention_heads")
    kv_heads = _falcon_kv_heads(c, heads)
    width = c.integer("ffn_hidden_size", 4 * hidden)
    bias = c.flag("bias", False)
    norms = _falcon_layernorms(c)
    out: list[list[Block]] = []
    for _ in range(layers):
        attention = gqa_attention(
            hidden=hidden,
            q_heads=heads,
            kv_heads=kv_heads,
            head_dim=head_dim,
            window=None,
            label=f"attention (fused query_key_value, {norms} LayerNorm{'s' if norms > 1 else ''})",
            norms=norms * LAYERNORM_VECTORS,
            q_bias=bias,
            kv_bias=bias,
            o_bias=bias,
            fused_qkv=True,
        )
        out.append([attention, dense_mlp(hidden=hidden, width=width, gated=False, label="MLP", bias=bias)])
    return Arch(
        model_type=model_type,
        hidden=hidden,
        vocab=c.integer("vocab_size"),
        tied=c.flag("tie_word_embeddings", True),
        layers=out,
        context_limit_tokens=c.opt_integer("max_position_embeddings"),
        final_norms=LAYERNORM_VECTORS,
        dtype=dtype_of(c),
    )
