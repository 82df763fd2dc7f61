"""Per-block arithmetic for the Hugging Face config importer: parameters, cache and attention FLOPs.

Each builder turns the shapes of one block (an attention or recurrent mixer, a dense MLP or a
mixture-of-experts block) into a :class:`Block`: parameter counts split into matrices (stored in the
chosen weight format) and small tensors (norms, biases, routers, convolution taps: kept at 16 bits when
the format is narrower), cache elements per token, attention FLOPs per query-key pair and a one-line
formula that shows the arithmetic. The importer sums blocks over layers; nothing here reads a file.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Matrix:
    """One 2-D weight: ``inputs`` x ``outputs`` elements. ``inputs`` is the row length llama.cpp
    quantizes in blocks (ggml's ne[0]); ``role`` is the tensor's llama.cpp name (attn_v, ffn_down,
    ffn_down_exps ...) where a mixed-format policy singles it out, else empty."""

    name: str
    inputs: int
    outputs: int
    role: str = ""

    @property
    def elements(self) -> int:
        return self.inputs * self.outputs


@dataclass(frozen=True)
class Count:
    """Parameters of one group: ``matrix`` (2-D weights the format quantizes) and ``small`` (1-D
    tensors and routers, which quantized checkpoints keep at 16 bits)."""

    matrix: int = 0
    small: int = 0

    def __add__(self, other: Count) -> Count:
        return Count(self.matrix + other.matrix, self.small + other.small)

    def times(self, factor: int) -> Count:
        return Count(self.matrix * factor, self.small * factor)

    @property
    def total(self) -> int:
        return self.matrix + self.small


@dataclass(frozen=True)
class LocalTerm:
    """A further window-capped read and FLOP term of one block, beside its own local cache: ``elements``
    read per token of context and ``flops_per_pair`` per query-key pair, both up to ``window_tokens``
    of context (a sparse top-k span, say, next to a sliding window)."""

    elements: float
    window_tokens: int
    flops_per_pair: float


@dataclass(frozen=True)
class Block:
    """One block of one layer. ``always`` is swept every iteration; ``expert`` is one routed expert of
    this block (``routed`` of them, ``per_token`` chosen). Cache fields count elements per token
    (multiplied by the KV element width later) except ``state_bytes``, already in bytes at the state
    dtype. ``read_*`` default to the allocation fields; sparse attention reads less than it keeps.
    ``matrices`` lists the always-on matrices one by one (their elements sum to ``always.matrix``)
    and ``expert_matrices`` those of one routed expert, for per-tensor formats such as Q4_K_M.
    """

    label: str
    formula: str
    always: Count = Count()
    expert: Count = Count()
    routed: int = 0
    per_token: int = 0
    router_params: int = 0
    kv_global_elements: float = 0
    kv_local_elements: float = 0
    window_tokens: int = 0
    read_global_elements: float | None = None
    read_local_elements: float | None = None
    read_window_tokens: int | None = None
    state_bytes: float = 0.0
    read_state_bytes: float | None = None
    kv_formula: str = ""
    global_flops_per_pair: float = 0
    local_flops_per_pair: float = 0
    state_flops_per_token: float = 0.0
    flops_formula: str = ""
    matrices: tuple[Matrix, ...] = ()
    expert_matrices: tuple[Matrix, ...] = ()
    extra_local: tuple[LocalTerm, ...] = ()
    #: Attention heads, for parallel layouts: ``query_heads`` a tensor-parallel split must divide, and
    #: ``cache_shards`` the heads the cache splits over (KV heads; 1 for a latent or shared entry).
    #: 0 in a block without softmax attention.
    query_heads: int = 0
    cache_shards: int = 0

    @property
    def linear_active_params(self) -> int:
        """Matrices a token multiplies through: always-on matrices, the router, k routed experts."""
        return self.always.matrix + self.router_params + self.per_token * self.expert.matrix


def matrix_terms(
    parts: list[tuple[str, int, int]], roles: Mapping[str, str] | None = None
) -> tuple[str, int, tuple[Matrix, ...]]:
    """Render ``name inputs x outputs`` terms, their sum and the matrices (role by name from ``roles``)."""
    shown = [f"{name} {rows}x{cols}" for name, rows, cols in parts if rows * cols]
    total = sum(rows * cols for _, rows, cols in parts)
    matrices = tuple(
        Matrix(name, rows, cols, (roles or {}).get(name, "")) for name, rows, cols in parts if rows * cols
    )
    return " + ".join(shown), total, matrices


def matrix_block(
    label: str,
    parts: list[tuple[str, int, int]],
    small: int,
    small_text: str,
    roles: Mapping[str, str] | None = None,
    **fields: Any,
) -> Block:
    """A block of the matrices ``parts`` (see :func:`matrix_terms`) plus ``small`` 1-D parameters,
    shown as ``small_text``; ``fields`` are the block's cache and FLOP fields."""
    matrices, matrix_total, listed = matrix_terms(parts, roles)
    return Block(
        label=label,
        formula=f"{matrices} = {matrix_total}; small: {small_text} = {small}",
        always=Count(matrix_total, small),
        matrices=listed,
        **fields,
    )


def gqa_attention(
    *,
    hidden: int,
    q_heads: int,
    kv_heads: int,
    head_dim: int,
    window: int | None,
    label: str,
    norms: int = 2,
    q_bias: bool = False,
    kv_bias: bool = False,
    o_bias: bool = False,
    qk_norm: str = "none",
    output_gate: bool = False,
    head_gate: bool = False,
    sinks: bool = False,
    k_eq_v: bool = False,
    fused_qkv: bool = False,
) -> Block:
    """Softmax attention with grouped KV heads. ``window`` None means full attention; otherwise the
    layer caches and attends to at most ``window`` tokens (sliding or chunked). ``output_gate`` doubles
    the query projection (a sigmoid gate per query channel); ``head_gate`` adds one gate per head;
    ``k_eq_v`` shares keys and values (no V projection, one cached tensor); ``qk_norm`` is "head"
    (one head_dim vector each) or "full" (over all heads); ``fused_qkv`` marks a checkpoint whose
    q, k and v are one tensor (llama.cpp's attn_qkv), which mixed formats treat as one."""
    q_out = q_heads * head_dim * (2 if output_gate else 1)
    kv_out = kv_heads * head_dim
    roles = {"q": "attn_q", "k": "attn_k", "v": "attn_v", "o": "attn_output"}
    if fused_qkv:
        roles |= dict.fromkeys(("q", "k", "v"), "attn_qkv")
    small = norms * hidden
    small_terms = [f"{norms} norms x {hidden}"]
    if q_bias:
        small += q_out
        small_terms.append(f"q bias {q_out}")
    if kv_bias:
        small += kv_out * (1 if k_eq_v else 2)
        small_terms.append(f"kv bias {kv_out * (1 if k_eq_v else 2)}")
    if o_bias:
        small += hidden
        small_terms.append(f"o bias {hidden}")
    if qk_norm == "head":
        small += 2 * head_dim
        small_terms.append(f"qk norm 2x{head_dim}")
    elif qk_norm == "full":
        small += q_heads * head_dim + kv_out
        small_terms.append(f"qk norm {q_heads * head_dim}+{kv_out}")
    if sinks:
        small += q_heads
        small_terms.append(f"sinks {q_heads}")
    tensors = 1 if k_eq_v else 2
    elements = tensors * kv_heads * head_dim
    kv_formula = f"{tensors} ({'K=V' if k_eq_v else 'K,V'}) x {kv_heads} kv heads x {head_dim} head_dim"
    flops = 4 * q_heads * head_dim
    flops_formula = f"4 x {q_heads} query heads x {head_dim} head_dim"
    full = window is None
    return matrix_block(
        label,
        [
            ("q", hidden, q_out),
            ("k", hidden, kv_out),
            ("v", 0 if k_eq_v else hidden, kv_out),
            ("o", q_heads * head_dim, hidden),
            ("gate", hidden if head_gate else 0, q_heads),
        ],
        small,
        " + ".join(small_terms),
        roles,
        kv_global_elements=elements if full else 0,
        kv_local_elements=0 if full else elements,
        window_tokens=0 if full else int(window or 0),
        kv_formula=kv_formula + ("" if full else f" (window {window})"),
        global_flops_per_pair=flops if full else 0,
        local_flops_per_pair=0 if full else flops,
        flops_formula=flops_formula,
        query_heads=q_heads,
        cache_shards=kv_heads,
    )


@dataclass(frozen=True)
class SparseIndexer:
    """DeepSeek sparse attention's lightning indexer: ``heads`` x ``head_dim`` scores, one cached key of
    ``head_dim`` per token, and the top ``topk`` tokens kept for the main attention."""

    heads: int
    head_dim: int
    topk: int


def mla_attention(
    *,
    hidden: int,
    heads: int,
    q_lora_rank: int | None,
    kv_lora_rank: int,
    qk_nope_head_dim: int,
    qk_rope_head_dim: int,
    v_head_dim: int,
    label: str,
    indexer: SparseIndexer | None = None,
    norms: int = 2,
) -> Block:
    """Multi-head latent attention: the cache holds the compressed latent (kv_lora_rank) plus the shared
    rotary key (qk_rope_head_dim) per token per layer. With a sparse indexer the layer also caches one
    indexer key per token and the main attention reads only the top-k latents."""
    qk_dim = qk_nope_head_dim + qk_rope_head_dim
    parts: list[tuple[str, int, int]] = []
    small = norms * hidden + kv_lora_rank
    if q_lora_rank:
        parts += [("q_a", hidden, q_lora_rank), ("q_b", q_lora_rank, heads * qk_dim)]
        small += q_lora_rank
    else:
        parts.append(("q", hidden, heads * qk_dim))
    parts += [
        ("kv_a", hidden, kv_lora_rank + qk_rope_head_dim),
        ("kv_b", kv_lora_rank, heads * (qk_nope_head_dim + v_head_dim)),
        ("o", heads * v_head_dim, hidden),
    ]
    if indexer is not None:
        parts += [
            ("indexer q", q_lora_rank or hidden, indexer.heads * indexer.head_dim),
            ("indexer k", hidden, indexer.head_dim),
            ("indexer weights", hidden, indexer.heads),
        ]
        small += 2 * indexer.head_dim
    matrices, matrix_total, listed = matrix_terms(parts, {"o": "attn_output", "kv_b": "attn_kv_b"})
    latent = kv_lora_rank + qk_rope_head_dim
    flops = 2 * heads * qk_dim + 2 * heads * v_head_dim
    flops_formula = f"2 x {heads} heads x {qk_dim} qk_head_dim + 2 x {heads} heads x {v_head_dim} v_head_dim"
    formula = f"{matrices} = {matrix_total}; small (norms, latent norms) = {small}"
    if indexer is None:
        return Block(
            label=label,
            formula=formula,
            always=Count(matrix_total, small),
            matrices=listed,
            kv_global_elements=latent,
            kv_formula=f"{kv_lora_rank} kv_lora_rank + {qk_rope_head_dim} qk_rope_head_dim",
            global_flops_per_pair=flops,
            flops_formula=flops_formula,
            query_heads=heads,
            cache_shards=1,
        )
    return Block(
        label=label,
        formula=formula,
        always=Count(matrix_total, small),
        matrices=listed,
        kv_global_elements=latent + indexer.head_dim,
        read_global_elements=indexer.head_dim,
        read_local_elements=latent,
        read_window_tokens=indexer.topk,
        kv_formula=(
            f"keep {kv_lora_rank} kv_lora_rank + {qk_rope_head_dim} qk_rope_head_dim + {indexer.head_dim}"
            f" indexer key per token; read every indexer key and at most {indexer.topk} latents (index_topk)"
        ),
        global_flops_per_pair=2 * indexer.heads * indexer.head_dim,
        local_flops_per_pair=flops,
        window_tokens=0,
        flops_formula=(
            f"indexer 2 x {indexer.heads} x {indexer.head_dim} over every pair; "
            f"{flops_formula} over the top {indexer.topk}"
        ),
        query_heads=heads,
        cache_shards=1,
    )


def _per_token(elements: int, ratio: int) -> float:
    """Elements per token of context when one entry of ``elements`` stands for ``ratio`` tokens."""
    return elements // ratio if elements % ratio == 0 else elements / ratio


#: The roles of compressed attention's matrices by the names its parts carry.
_COMPRESSED_ATTENTION_ROLES = {
    "q_a": "attn_q_a",
    "q_b": "attn_q_b",
    "kv": "attn_kv",
    "o_a": "attn_output_a",
    "o_b": "attn_output_b",
}


def compressed_attention(
    *,
    hidden: int,
    heads: int,
    head_dim: int,
    q_lora_rank: int,
    o_groups: int,
    o_lora_rank: int,
    window: int,
    ratio: int,
    indexer: SparseIndexer | None,
    state_bytes_per_element: float,
    label: str,
    norms: int = 2,
) -> Block:
    """DeepSeek-V4 attention: ``heads`` query heads over one shared ``head_dim`` entry per position that
    serves as key and value (multi-query, K = V), a low-rank query (q_lora_rank), a grouped low-rank
    output (o_groups groups of heads*head_dim/o_groups -> o_lora_rank, then o_groups*o_lora_rank ->
    hidden) and a per-head softmax sink. Every layer keeps its last ``window`` entries uncompressed.

    ``ratio`` 0: the window only. ``ratio`` r > 0: a compressor (kv and gate projections of width
    coff x head_dim, a learned r x coff x head_dim position bias, a norm) pools each r consecutive
    positions into one more cached entry, so the cache grows by head_dim / r elements per token. With
    an ``indexer`` (CSA, the reference's ratio-4 layers) pooling windows overlap (coff 2), the indexer
    keeps its own compressed key (index_head_dim / r per token), scores every compressed key and the
    attention reads the window plus the top ``indexer.topk`` compressed entries; without one (HCA) it
    reads the window plus every compressed entry. The compressor's running buffers (kv and score,
    coff x r rows of coff x width each, at ``state_bytes_per_element``) are a fixed per-session state;
    a decode step writes one row of each and pools the buffer once every r tokens, so it reads
    state / r bytes per step on average.
    """
    parts: list[tuple[str, int, int]] = [
        ("q_a", hidden, q_lora_rank),
        ("q_b", q_lora_rank, heads * head_dim),
        ("kv", hidden, head_dim),
        ("o_a", heads * head_dim // o_groups, o_groups * o_lora_rank),
        ("o_b", o_groups * o_lora_rank, hidden),
    ]
    small = norms * hidden + heads + q_lora_rank + head_dim
    small_terms = [
        f"{norms} norms x {hidden}",
        f"sink {heads}",
        f"q norm {q_lora_rank}",
        f"kv norm {head_dim}",
    ]
    state_elements = 0
    kv_terms = [f"window {head_dim} head_dim (last {window} tokens)"]
    global_elements: float = 0
    read_global: float = 0
    global_flops: float = 0
    flops_terms = [f"4 x {heads} heads x {head_dim} head_dim over the window"]
    extra: tuple[LocalTerm, ...] = ()
    if ratio:
        coff = 2 if indexer is not None else 1
        parts += [("compressor kv", hidden, coff * head_dim), ("compressor gate", hidden, coff * head_dim)]
        small += ratio * coff * head_dim + head_dim
        small_terms.append(f"compressor bias {ratio}x{coff * head_dim} + norm {head_dim}")
        state_elements += 2 * coff * ratio * coff * head_dim
        per_token = _per_token(head_dim, ratio)
        global_elements += per_token
        kv_terms.append(f"+ {head_dim} / {ratio} compressed")
        if indexer is None:
            read_global += per_token
            global_flops += 4 * heads * head_dim / ratio
            flops_terms.append(f"4 x {heads} x {head_dim} / {ratio} over every compressed entry")
        else:
            index_width = 2 * indexer.head_dim
            parts += [
                ("indexer q", q_lora_rank, indexer.heads * indexer.head_dim),
                ("indexer weights", hidden, indexer.heads),
                ("indexer compressor kv", hidden, index_width),
                ("indexer compressor gate", hidden, index_width),
            ]
            small += ratio * index_width + indexer.head_dim
            small_terms.append(f"indexer compressor bias {ratio}x{index_width} + norm {indexer.head_dim}")
            state_elements += 2 * 2 * ratio * index_width
            index_per_token = _per_token(indexer.head_dim, ratio)
            global_elements += index_per_token
            read_global += index_per_token
            kv_terms.append(
                f"+ {indexer.head_dim} / {ratio} indexer key; read every indexer key and at most"
                f" {indexer.topk} compressed entries (index_topk)"
            )
            global_flops += 2 * indexer.heads * indexer.head_dim / ratio
            span = ratio * indexer.topk
            extra = (LocalTerm(per_token, span, 4 * heads * head_dim / ratio),)
            flops_terms.append(
                f"indexer 2 x {indexer.heads} x {indexer.head_dim} / {ratio} over every compressed key; "
                f"4 x {heads} x {head_dim} / {ratio} over the top {indexer.topk} (first {span} tokens)"
            )
    state_bytes = state_elements * state_bytes_per_element
    if state_elements:
        kv_terms[-1] += f"; compressor buffers {state_elements} x {state_bytes_per_element:g} B per session"
    return matrix_block(
        label,
        parts,
        small,
        " + ".join(small_terms),
        _COMPRESSED_ATTENTION_ROLES,
        kv_global_elements=global_elements,
        kv_local_elements=head_dim,
        window_tokens=window,
        read_global_elements=read_global,
        state_bytes=state_bytes,
        read_state_bytes=state_bytes / ratio if ratio else 0.0,
        kv_formula=" ".join(kv_terms),
        global_flops_per_pair=global_flops,
        local_flops_per_pair=4 * heads * head_dim,
        flops_formula="; ".join(flops_terms),
        extra_local=extra,
        query_heads=heads,
        cache_shards=1,
    )


def hyper_connections(*, hidden: int, streams: int, sites: int, label: str) -> Block:
    """Manifold-constrained hyper-connections: the residual is ``streams`` copies of the hidden state.
    Each of ``sites`` mixing points (attention and MLP in a layer) holds a (2 + s) s x s h mixing
    matrix (pre weights, post weights, s x s residual mix), a bias of (2 + s) s and 3 scales. The mixing
    matrices multiply every token (counted with the linear FLOPs, like a router) and are kept at 16 bits
    or more, like routers; :func:`hyper_connection_head` reduces the streams to one at the end."""
    mix = (2 + streams) * streams
    matrix = mix * streams * hidden
    per_site = matrix + mix + 3
    return Block(
        label=label,
        formula=f"{sites} sites x ({mix}x{streams * hidden} mix + {mix} bias + 3 scales) = {sites * per_site}",
        always=Count(0, sites * per_site),
        router_params=sites * matrix,
    )


def hyper_connection_head(*, hidden: int, streams: int, label: str) -> Block:
    """The final hyper-connection reduction before the output norm: an s x s h matrix, s biases, 1 scale."""
    matrix = streams * streams * hidden
    return Block(
        label=label,
        formula=f"{streams}x{streams * hidden} + {streams} bias + 1 scale = {matrix + streams + 1}",
        always=Count(0, matrix + streams + 1),
        router_params=matrix,
    )


def dense_mlp(*, hidden: int, width: int, gated: bool, label: str, bias: bool = False) -> Block:
    """A dense feed-forward block: gate, up and down (or up and down when not gated)."""
    count = 3 if gated else 2
    params = count * hidden * width
    small = ((count - 1) * width + hidden) if bias else 0
    names = "gate, up, down" if gated else "up, down"
    return Block(
        label=label,
        formula=f"{count} ({names}) x {hidden} x {width} = {params}" + (f"; biases {small}" if bias else ""),
        always=Count(params, small),
        matrices=_mlp_matrices(hidden, width, gated, ""),
    )


def _mlp_matrices(hidden: int, width: int, gated: bool, suffix: str) -> tuple[Matrix, ...]:
    """gate and up (hidden -> width), down (width -> hidden), named as llama.cpp names them."""
    if not width:
        return ()
    ins = [Matrix("gate", hidden, width, "ffn_gate" + suffix)] if gated else []
    return (
        *ins,
        Matrix("up", hidden, width, "ffn_up" + suffix),
        Matrix("down", width, hidden, "ffn_down" + suffix),
    )


def moe_block(
    *,
    hidden: int,
    routed: int,
    per_token: int,
    width: int,
    gated: bool,
    label: str,
    shared_width: int = 0,
    shared_gate: bool = False,
    router_bias: bool = False,
    correction_bias: bool = False,
    expert_bias: bool = False,
) -> Block:
    """Routed experts (one shown as ``expert``) plus always-on router and shared experts.

    ``shared_width`` is the total width of the shared expert(s); ``shared_gate`` a sigmoid gate on the
    shared expert (hidden x 1); ``correction_bias`` the routing bias of aux-loss-free balancing."""
    count = 3 if gated else 2
    expert_params = count * hidden * width
    expert_small = ((count - 1) * width + hidden) if expert_bias else 0
    shared = count * hidden * shared_width
    router = hidden * routed
    small = (routed if router_bias else 0) + (routed if correction_bias else 0)
    small += hidden if shared_gate else 0
    formula = (
        f"expert {count} x {hidden} x {width} = {expert_params}; router {hidden}x{routed} = {router}"
        + (f"; shared {count} x {hidden} x {shared_width} = {shared}" if shared_width else "")
    )
    return Block(
        label=label,
        formula=formula,
        always=Count(shared, small + router),
        expert=Count(expert_params, expert_small),
        routed=routed,
        per_token=per_token,
        router_params=router,
        matrices=_mlp_matrices(hidden, shared_width, gated, "_shexp"),
        expert_matrices=_mlp_matrices(hidden, width, gated, "_exps"),
    )
