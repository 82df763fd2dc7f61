"""Per-block arithmetic of recurrent and linear-attention mixers: gated delta-net, Mamba-1, Mamba-2,
lightning attention. Like :mod:`servebound.importers.hf.blocks`, each builder returns a Block whose
cache is a fixed state per session (bytes at the state dtype) instead of elements per token."""

from __future__ import annotations

from servebound.importers.hf.blocks import Block, Count, matrix_terms


def gated_delta_net(
    *,
    hidden: int,
    key_heads: int,
    value_heads: int,
    key_head_dim: int,
    value_head_dim: int,
    conv_kernel: int,
    state_bytes_per_element: float,
    state_dtype: str,
    conv_bytes_per_element: float,
    label: str,
    norms: int = 2,
) -> Block:
    """Gated delta-net linear attention (Qwen3-Next, Qwen3.5): a fixed state of value_heads x
    key_head_dim x value_head_dim per layer plus the short convolution's last kernel-1 inputs."""
    key_dim = key_heads * key_head_dim
    value_dim = value_heads * value_head_dim
    conv_dim = 2 * key_dim + value_dim
    matrices, matrix_total, listed = matrix_terms(
        [
            ("in qkvz", hidden, 2 * key_dim + 2 * value_dim),
            ("in ba", hidden, 2 * value_heads),
            ("out", value_dim, hidden),
        ]
    )
    small = conv_dim * conv_kernel + 2 * value_heads + value_head_dim + norms * hidden
    state_elements = value_heads * key_head_dim * value_head_dim
    conv_elements = conv_dim * (conv_kernel - 1)
    state_bytes = state_elements * state_bytes_per_element + conv_elements * conv_bytes_per_element
    return Block(
        label=label,
        formula=f"{matrices} = {matrix_total}; small: conv {conv_dim}x{conv_kernel} + dt, A, norms = {small}",
        always=Count(matrix_total, small),
        matrices=listed,
        state_bytes=state_bytes,
        kv_formula=(
            f"state {value_heads} value heads x {key_head_dim} x {value_head_dim} x "
            f"{state_bytes_per_element:g} B ({state_dtype}) + conv {conv_dim} x {conv_kernel - 1} x "
            f"{conv_bytes_per_element:g} B"
        ),
        state_flops_per_token=6 * state_elements + 2 * conv_dim * conv_kernel,
        flops_formula=(
            f"estimate 6 x {state_elements} state elements (read S^T k, rank-1 update, S^T q readout) "
            f"+ 2 x {conv_dim} x {conv_kernel} conv"
        ),
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
    state_bytes_per_element: float,
    state_dtype: str,
    conv_bytes_per_element: float,
    label: str,
    norms: int = 1,
) -> Block:
    """Mamba-1 selective SSM: state d_inner x d_state plus the convolution's last d_conv-1 inputs."""
    matrices, matrix_total, listed = matrix_terms(
        [
            ("in", hidden, 2 * d_inner),
            ("x", d_inner, dt_rank + 2 * d_state),
            ("dt", dt_rank, d_inner),
            ("out", d_inner, hidden),
        ]
    )
    small = d_inner * d_conv + (d_inner if conv_bias else 0) + d_inner + d_inner * d_state + d_inner
    small += (2 * d_inner + hidden) if proj_bias else 0
    small += norms * hidden
    state_elements = d_inner * d_state
    conv_elements = d_inner * (d_conv - 1)
    return Block(
        label=label,
        formula=f"{matrices} = {matrix_total}; small: conv, dt, A {d_inner}x{d_state}, D, norms = {small}",
        always=Count(matrix_total, small),
        matrices=listed,
        state_bytes=state_elements * state_bytes_per_element + conv_elements * conv_bytes_per_element,
        kv_formula=(
            f"ssm {d_inner} d_inner x {d_state} d_state x {state_bytes_per_element:g} B ({state_dtype}) "
            f"+ conv {d_inner} x {d_conv - 1} x {conv_bytes_per_element:g} B"
        ),
        state_flops_per_token=6 * state_elements + 2 * d_inner * d_conv,
        flops_formula=(
            f"estimate 6 x {state_elements} state elements (discretize, update, readout) "
            f"+ 2 x {d_inner} x {d_conv} conv"
        ),
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
    state_bytes_per_element: float,
    state_dtype: str,
    conv_bytes_per_element: float,
    label: str,
    norms: int = 1,
) -> Block:
    """Mamba-2 SSD mixer: state heads x head_dim x d_state plus the convolution over x, B and C."""
    d_inner = heads * head_dim
    conv_dim = d_inner + 2 * groups * d_state
    matrices, matrix_total, listed = matrix_terms(
        [("in", hidden, 2 * d_inner + 2 * groups * d_state + heads), ("out", d_inner, hidden)]
    )
    small = conv_dim * d_conv + (conv_dim if conv_bias else 0) + 3 * heads + d_inner + norms * hidden
    state_elements = heads * head_dim * d_state
    conv_elements = conv_dim * (d_conv - 1)
    return Block(
        label=label,
        formula=f"{matrices} = {matrix_total}; small: conv {conv_dim}x{d_conv}, dt, A, D, norms = {small}",
        always=Count(matrix_total, small),
        matrices=listed,
        state_bytes=state_elements * state_bytes_per_element + conv_elements * conv_bytes_per_element,
        kv_formula=(
            f"ssm {heads} heads x {head_dim} head_dim x {d_state} d_state x {state_bytes_per_element:g} B "
            f"({state_dtype}) + conv {conv_dim} x {d_conv - 1} x {conv_bytes_per_element:g} B"
        ),
        state_flops_per_token=6 * state_elements + 2 * conv_dim * d_conv,
        flops_formula=(
            f"estimate 6 x {state_elements} state elements (decay, update, readout) + 2 x {conv_dim} x "
            f"{d_conv} conv"
        ),
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
    matrices, matrix_total, listed = matrix_terms(
        [("qkv", hidden, 3 * inner), ("output gate", hidden, inner), ("out", inner, hidden)]
    )
    small = inner + norms * hidden
    state_elements = heads * head_dim * head_dim
    return Block(
        label=label,
        formula=f"{matrices} = {matrix_total}; small: norm {inner} + norms = {small}",
        always=Count(matrix_total, small),
        matrices=listed,
        state_bytes=state_elements * state_bytes_per_element,
        kv_formula=(
            f"state {heads} heads x {head_dim} x {head_dim} x {state_bytes_per_element:g} B ({state_dtype})"
        ),
        state_flops_per_token=4 * state_elements,
        flops_formula=f"estimate 4 x {state_elements} state elements (decay and update, readout)",
    )
