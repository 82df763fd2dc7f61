"""Per-block arithmetic of recurrent and linear-attention mixers: gated delta-net, Mamba-1, Mamba-2,
lightning attention. Like :mod:`servebound.importers.hf.blocks`, each builder returns a Block whose
cache is a fixed state per session (bytes at the state dtype) instead of elements per token."""

from __future__ import annotations

from dataclasses import dataclass

from servebound.importers.hf.blocks import Block, matrix_block


@dataclass(frozen=True)
class StateStorage:
    """How a recurrent mixer's per-session state is stored: the state's dtype and bytes per element,
    and the bytes per element of the convolution's cached inputs."""

    state_dtype: str
    state_bytes_per_element: float
    conv_bytes_per_element: float


def _convolved_state_block(
    *,
    label: str,
    parts: list[tuple[str, int, int]],
    small: int,
    small_text: str,
    state_elements: int,
    state_text: str,
    conv_dim: int,
    conv_kernel: int,
    storage: StateStorage,
    flops_text: str,
) -> Block:
    """A recurrent mixer behind a short convolution: per session a state of ``state_elements``
    (``state_text``) plus the convolution's last kernel-1 inputs of ``conv_dim`` channels; per token an
    estimated 6 FLOPs per state element (``flops_text`` names the steps) plus 2 per convolution tap."""
    state_bytes = storage.state_bytes_per_element
    conv_bytes = storage.conv_bytes_per_element
    return matrix_block(
        label,
        parts,
        small,
        small_text,
        state_bytes=state_elements * state_bytes + conv_dim * (conv_kernel - 1) * conv_bytes,
        kv_formula=(
            f"{state_text} x {state_bytes:g} B ({storage.state_dtype}) "
            f"+ conv {conv_dim} x {conv_kernel - 1} x {conv_bytes:g} B"
        ),
        state_flops_per_token=6 * state_elements + 2 * conv_dim * conv_kernel,
        flops_formula=(
            f"estimate 6 x {state_elements} state elements ({flops_text}) "
            f"+ 2 x {conv_dim} x {conv_kernel} conv"
        ),
    )


def gated_delta_net(
    *,
    hidden: int,
    key_heads: int,
    value_heads: int,
    key_head_dim: int,
    value_head_dim: int,
    conv_kernel: int,
    storage: StateStorage,
    label: str,
    norms: int = 2,
) -> Block:
    """Gated delta-net linear attention (Qwen3-Next, Qwen3.5): a fixed state of value_heads x
    key_head_dim x value_head_dim per layer plus the short convolution's last kernel-1 inputs."""
    key_dim = key_heads * key_head_dim
    value_dim = value_heads * value_head_dim
    conv_dim = 2 * key_dim + value_dim
    small = conv_dim * conv_kernel + 2 * value_heads + value_head_dim + norms * hidden
    return _convolved_state_block(
        label=label,
        parts=[
            ("in qkvz", hidden, 2 * key_dim + 2 * value_dim),
            ("in ba", hidden, 2 * value_heads),
            ("out", value_dim, hidden),
        ],
        small=small,
        small_text=f"conv {conv_dim}x{conv_kernel} + dt, A, norms",
        state_elements=value_heads * key_head_dim * value_head_dim,
        state_text=f"state {value_heads} value heads x {key_head_dim} x {value_head_dim}",
        conv_dim=conv_dim,
        conv_kernel=conv_kernel,
        storage=storage,
        flops_text="read S^T k, rank-1 update, S^T q readout",
    )


def mamba1_mixer(
    *,
    hidden: int,
    d_inner: int,
    d_state: int,
    d_conv: int,
    dt_rank: int,
    conv_bias: bool,
    proj_bias: bool,
    storage: StateStorage,
    label: str,
    norms: int = 1,
) -> Block:
    """Mamba-1 selective SSM: state d_inner x d_state plus the convolution's last d_conv-1 inputs."""
    small = d_inner * d_conv + (d_inner if conv_bias else 0) + d_inner + d_inner * d_state + d_inner
    small += (2 * d_inner + hidden) if proj_bias else 0
    small += norms * hidden
    return _convolved_state_block(
        label=label,
        parts=[
            ("in", hidden, 2 * d_inner),
            ("x", d_inner, dt_rank + 2 * d_state),
            ("dt", dt_rank, d_inner),
            ("out", d_inner, hidden),
        ],
        small=small,
        small_text=f"conv, dt, A {d_inner}x{d_state}, D, norms",
        state_elements=d_inner * d_state,
        state_text=f"ssm {d_inner} d_inner x {d_state} d_state",
        conv_dim=d_inner,
        conv_kernel=d_conv,
        storage=storage,
        flops_text="discretize, update, readout",
    )


def mamba2_mixer(
    *,
    hidden: int,
    heads: int,
    head_dim: int,
    groups: int,
    d_state: int,
    d_conv: int,
    conv_bias: bool,
    storage: StateStorage,
    label: str,
    norms: int = 1,
) -> Block:
    """Mamba-2 SSD mixer: state heads x head_dim x d_state plus the convolution over x, B and C."""
    d_inner = heads * head_dim
    conv_dim = d_inner + 2 * groups * d_state
    return _convolved_state_block(
        label=label,
        parts=[("in", hidden, 2 * d_inner + 2 * groups * d_state + heads), ("out", d_inner, hidden)],
        small=conv_dim * d_conv + (conv_dim if conv_bias else 0) + 3 * heads + d_inner + norms * hidden,
        small_text=f"conv {conv_dim}x{d_conv}, dt, A, D, norms",
        state_elements=heads * head_dim * d_state,
        state_text=f"ssm {heads} heads x {head_dim} head_dim x {d_state} d_state",
        conv_dim=conv_dim,
        conv_kernel=d_conv,
        storage=storage,
        flops_text="decay, update, readout",
    )


def lightning_attention(
    *,
    hidden: int,
    heads: int,
    head_dim: int,
    state_bytes_per_element: float,
    state_dtype: str,
    label: str,
    norms: int = 2,
) -> Block:
    """MiniMax lightning (linear) attention: a heads x head_dim x head_dim state per layer."""
    inner = heads * head_dim
    state_elements = heads * head_dim * head_dim
    return matrix_block(
        label,
        [("qkv", hidden, 3 * inner), ("output gate", hidden, inner), ("out", inner, hidden)],
        inner + norms * hidden,
        f"norm {inner} + norms",
        state_bytes=state_elements * state_bytes_per_element,
        kv_formula=(
            f"state {heads} heads x {head_dim} x {head_dim} x {state_bytes_per_element:g} B ({state_dtype})"
        ),
        state_flops_per_token=4 * state_elements,
        flops_formula=f"estimate 4 x {state_elements} state elements (decay and update, readout)",
    )
