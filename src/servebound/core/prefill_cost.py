"""What a prefill setting costs: per prompt token traffic and arithmetic, and the vectorized evaluation
of settings (arrays of batches, prompt lengths and chunks in one numpy pass).

The formulas are the derivation's prefill part (see ``core.prefill`` for the summary and the three
facts that keep every evaluation closed-form); ``core.prefill`` turns these costs into ceilings.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, TypeVar, overload

from servebound.core.arith import as_values, clip, filled, maximum, np
from servebound.core.errors import InputError
from servebound.core.experts import ExpertTraffic
from servebound.core.kv import KVShape
from servebound.core.model import ModelAdapter, PrefillShape, Weights
from servebound.core.rates import ModeRates
from servebound.core.roots import replayed_bisection

if TYPE_CHECKING:
    from numpy.typing import ArrayLike, NDArray

    from servebound.core.arith import Floats as Float


def prefill_shape(model: ModelAdapter) -> PrefillShape:
    if model.prefill is None:
        raise InputError(
            "prefill",
            f"model '{model.id}' has no [prefill] fields; add linear_active_params, the attention FLOP "
            "coefficients and kv_write_bytes_per_token to its [prefill] table (or import it from "
            "config.json) to compute prefill ceilings",
        )
    return model.prefill


# --- per-token quantities -------------------------------------------------------------------------


@overload
def attention_flops_per_token(shape: PrefillShape, chunk_tokens: float, prefix_tokens: float) -> float: ...
@overload
def attention_flops_per_token(
    shape: PrefillShape, chunk_tokens: ArrayLike, prefix_tokens: ArrayLike
) -> Float: ...
def attention_flops_per_token(shape: PrefillShape, chunk_tokens: Any, prefix_tokens: Any) -> Any:
    """a_attn(c, l): attention FLOPs per new token of a chunk of c tokens after a cached prefix of l
    (floats give a float, arrays an array).

    Global layers see the average attended context l + (c+1)/2; local layers cap each token's length
    at the window before averaging: sum_{j=1..c} min(l+j, w) = u l + u(u+1)/2 + (c-u) w with
    u = clip(w - l, 0, c) the tokens still inside the window. Closed form, vectorized.
    """
    window = float(shape.attention_window_tokens)
    if type(chunk_tokens) is float and type(prefix_tokens) is float:  # one setting: clip on floats inline
        c, prefix = chunk_tokens, prefix_tokens
        inside = window - prefix
        inside = inside if inside >= 0.0 else 0.0
        inside = inside if inside <= c else c
    else:
        c, prefix = as_values(chunk_tokens), as_values(prefix_tokens)
        inside = clip(window - prefix, 0.0, c)
    local_sum = inside * prefix + inside * (inside + 1.0) / 2.0 + (c - inside) * window
    return (
        shape.attention_global_flops_per_pair * (prefix + (c + 1.0) / 2.0)
        + shape.attention_local_flops_per_pair * local_sum / c
        + shape.attention_state_flops_per_token
    )


def compute_per_prompt_token(shape: PrefillShape, chunk_tokens: ArrayLike, prefix_tokens: ArrayLike) -> Float:
    """a_pf(c, l) = 2 P_lin,active + a_attn(c, l), FLOPs per prompt token (A_extra omitted)."""
    per_token: Float = 2.0 * shape.linear_active_params + attention_flops_per_token(
        shape, chunk_tokens, prefix_tokens
    )
    return per_token


def traffic_per_prompt_token(
    model: ModelAdapter,
    batch: ArrayLike,
    chunk_tokens: ArrayLike,
    prefix_tokens: float,
    expert_traffic: ExpertTraffic = ExpertTraffic.EXPECTED,
) -> Float:
    """q_pf(b, c, l) = W_batch(bc)/(bc) + K_read(l)/c + kappa_KV,w, bytes per prompt token.

    Kernel-dependent terms are dropped (ceiling-safe). At l = 0 there is no earlier chunk and nothing
    to reread. At c = 1, l = L_read this is decode's q_KV(b) plus the KV write term.
    """
    shape = prefill_shape(model)
    b = np.asarray(batch, dtype=np.float64)
    c = np.asarray(chunk_tokens, dtype=np.float64)
    reread = model.kv_read.bytes_at(prefix_tokens) if prefix_tokens > 0 else 0.0
    per_token: Float = (
        model.weights.batch(b * c, expert_traffic) / (b * c) + reread / c + shape.kv_write_bytes_per_token
    )
    return per_token


def sweep_fixed_point(weights: Weights, mode: ExpertTraffic, k: float) -> float:
    """The positive root of b = k W_batch(b) (W_batch concave and increasing: b - k W(b) is convex,
    non-positive at 0 and non-negative at k W_sat), by bisection; closed form when W is constant.
    The prefill crossover S* and the decode balance batch both solve it."""

    def sweep(tokens: float) -> float:
        return float(weights.batch(tokens, mode))

    if weights.experts is None or mode is ExpertTraffic.MINIMUM:
        return k * sweep(1.0)

    def gap(tokens: float) -> float:
        return tokens - k * sweep(tokens)

    hi = k * weights.saturated
    return replayed_bisection(gap, 0.0, hi, gap(0.0), gap(hi), relative_width=1e-12, zero_is_high=True)


def crossover_tokens(
    model: ModelAdapter,
    *,
    linear_flop_per_s: float,
    bandwidth_bytes_per_s: float,
    expert_traffic: ExpertTraffic = ExpertTraffic.EXPECTED,
) -> float | None:
    """S*, the tokens per weight sweep where sweep time equals linear math time (attention omitted):
    S* = W_batch(S*) F_linear / (2 P_lin,active R).

    Solved as a fixed point, not with the sparsity-scaled approximation: g(S) = S - k W_batch(S) with
    k = F / (2 P R) is convex (W_batch is concave), g(0) <= 0 and g(k W_sat) >= 0 for the saturated
    sweep W_sat, so bisection on [0, k W_sat] finds the one positive root. For a dense model, or with
    minimum expert traffic, W_batch is constant and S* = W_active k exactly. None when P_lin is zero.
    """
    shape = prefill_shape(model)
    if shape.linear_active_params <= 0:
        return None
    k = linear_flop_per_s / (2.0 * shape.linear_active_params * bandwidth_bytes_per_s)
    return sweep_fixed_point(model.weights, expert_traffic, k)


def crossover_with_attention(
    model: ModelAdapter,
    shape: PrefillShape,
    rates: ModeRates,
    bandwidth_bytes_per_s: float,
    expert_traffic: ExpertTraffic,
    batch: int,
    longest_tokens: int,
) -> float | None:
    """S* with attention included: the one-shot prompt length at which the memory time Q_pf / R equals
    the compute time A_linear / F_linear + A_attention / F_attention at ``batch``, the crossing of the
    two rooflines the prefill curve draws.

    Per prompt token the memory side W_batch(bL) / (bL) + kappa_KV,w never rises with L (W_batch is
    concave) and the compute side 2 P_lin / F_linear + a_attn(L, 0) / F_attention never falls, so their
    difference changes sign once: bisection on [1, ``longest_tokens``]. None without compute, or when
    one roofline binds over the whole interval.
    """
    if not rates.available:
        return None
    sweep, write = model.weights.batch, shape.kv_write_bytes_per_token
    linear_params, linear_rate, attention_rate = (
        shape.linear_active_params,
        rates.linear_flop_per_s,
        rates.attention_flop_per_s,
    )

    def gap(length: float) -> float:  # length is a float (the bisection's points): floats throughout
        tokens = batch * length
        memory = (sweep(tokens, expert_traffic) + tokens * write) / bandwidth_bytes_per_s
        linear = 2.0 * tokens * linear_params
        attention = tokens * attention_flops_per_token(shape, length, 0.0)
        compute = (linear / linear_rate if linear_rate else 0.0) + (
            attention / attention_rate if attention_rate else 0.0
        )
        return compute - memory

    lo, hi = 1.0, float(max(longest_tokens, 1))
    gap_lo, gap_hi = gap(lo), gap(hi)
    if gap_lo >= 0.0 or gap_hi <= 0.0:
        return None
    return replayed_bisection(gap, lo, hi, gap_lo, gap_hi, relative_width=1e-9, zero_is_high=False)


# --- the vectorized evaluation of settings -------------------------------------------------------


#: The value type of an evaluation: a float for one setting, a float64 array for arrays of settings.
F = TypeVar("F", float, "Float")


@dataclass(frozen=True)
class Evaluation(Generic[F]):
    """Totals and times for arrays of settings (b, L, c), broadcast together, or for one setting
    (:func:`evaluate_one_shot`: ints and floats). ``batch``, ``prompt``, ``chunk`` and ``chunks`` are
    ints for one setting, int64 arrays otherwise."""

    batch: Any
    prompt: Any
    chunk: Any
    chunks: Any
    sweep_bytes: F
    reread_bytes: F
    write_bytes: F
    linear_flops: F
    attention_flops: F
    memory_time: F
    linear_time: F | None
    attention_time: F | None

    @property
    def traffic_bytes(self) -> F:
        return self.sweep_bytes + self.reread_bytes + self.write_bytes

    @property
    def compute_time(self) -> F | None:
        if self.linear_time is None or self.attention_time is None:
            return None
        return self.linear_time + self.attention_time

    @property
    def time(self) -> F:
        compute = self.compute_time
        return self.memory_time if compute is None else maximum(self.memory_time, compute)

    @property
    def tokens(self) -> F:
        total: F = as_values(self.batch * self.prompt)
        return total


def _summed_reread_bytes(shape: KVShape, chunk: NDArray[np.int64], chunks: NDArray[np.int64]) -> Float:
    """sum_{i=1..n-1} K_read(i c): one session's prefix rereads over n chunks of width c (the first
    chunk rereads nothing). K = g L + local min(L, w) + state, and i c <= w exactly for i <= w // c, so
    with k = n - 1 and p = min(k, w // c):  g c k(k+1)/2 + local (c p(p+1)/2 + w (k - p)) + state k.
    """
    rereads = np.maximum(chunks - 1, 0).astype(np.float64)
    c = chunk.astype(np.float64)
    window = shape.window_tokens
    inside = np.minimum(rereads, (window // chunk).astype(np.float64)) if window > 0 else np.zeros_like(c)
    total: Float = (
        shape.global_bytes_per_token * c * rereads * (rereads + 1.0) / 2.0
        + shape.local_bytes_per_token * (c * inside * (inside + 1.0) / 2.0 + window * (rereads - inside))
        + shape.state_bytes * rereads
    )
    return total


def evaluate_settings(
    model: ModelAdapter,
    shape: PrefillShape,
    rates: ModeRates,
    bandwidth: float,
    expert_traffic: ExpertTraffic,
    batch: ArrayLike,
    prompt_tokens: ArrayLike,
    chunk_tokens: ArrayLike | None,
) -> Evaluation[Float]:
    b, prompt = np.broadcast_arrays(
        np.asarray(batch, dtype=np.int64), np.asarray(prompt_tokens, dtype=np.int64)
    )
    weights = model.weights
    if chunk_tokens is None:
        # One shot (the range's case): one sweep of b L routings, and no earlier chunk to reread.
        bf = b.astype(np.float64)
        tokens = bf * prompt
        chunk, chunks = prompt, np.ones_like(prompt)
        sweep = weights.batch(tokens, expert_traffic)
        reread = np.zeros_like(tokens)
    else:
        chunk = np.minimum(np.asarray(chunk_tokens, dtype=np.int64), prompt)
        b, prompt, chunk = np.broadcast_arrays(b, prompt, chunk)
        bf = b.astype(np.float64)
        tokens = bf * prompt
        full = prompt // chunk
        last = prompt - full * chunk
        chunks = full + (last > 0)
        sweep = full * weights.batch(bf * chunk, expert_traffic)
        sweep = sweep + np.where(last > 0, weights.batch(bf * last, expert_traffic), 0.0)
        reread = bf * _summed_reread_bytes(model.kv_read, chunk, chunks)
    return _evaluation(shape, rates, bandwidth, (b, prompt, chunk, chunks), tokens, prompt, sweep, reread)


def evaluate_one_shot(
    model: ModelAdapter,
    shape: PrefillShape,
    rates: ModeRates,
    bandwidth: float,
    expert_traffic: ExpertTraffic,
    batch: int,
    prompt_tokens: int,
) -> Evaluation[float]:
    """One one-shot setting (b prompts of L tokens in one chunk) on plain numbers: the operations of
    :func:`evaluate_settings`'s one-shot case on floats, without numpy's per-call cost (a ranking
    evaluates one setting per pair). W_batch is taken at one count, on floats, as decode takes it."""
    tokens = float(batch) * prompt_tokens
    sweep = model.weights.batch(tokens, expert_traffic)
    settings = (batch, prompt_tokens, prompt_tokens, 1)
    return _evaluation(shape, rates, bandwidth, settings, tokens, float(prompt_tokens), sweep, 0.0)


def _evaluation(
    shape: PrefillShape,
    rates: ModeRates,
    bandwidth: float,
    settings: tuple[Any, Any, Any, Any],
    tokens: F,
    lengths: Any,
    sweep: F,
    reread: F,
) -> Evaluation[F]:
    """The totals and times of ``settings`` (b, L, c, chunks) from b L tokens, their weight sweeps and
    their prefix rereads: the KV writes, the FLOPs (attention as one shot at the prompt ``lengths``:
    chunking never changes the total attention arithmetic, the chunk sum equals L a_attn(L, 0))."""
    write = tokens * shape.kv_write_bytes_per_token
    linear_flops = 2.0 * tokens * shape.linear_active_params
    attention_flops = tokens * attention_flops_per_token(shape, lengths, 0.0)
    memory_time = (sweep + reread + write) / bandwidth
    linear_time = attention_time = None
    if rates.available:
        linear_time = (
            linear_flops / rates.linear_flop_per_s
            if rates.linear_flop_per_s is not None
            else filled(tokens, 0.0)
        )
        attention_time = (
            attention_flops / rates.attention_flop_per_s
            if rates.attention_flop_per_s is not None
            else filled(tokens, 0.0)
        )
    b, prompt, chunk, chunks = settings
    return Evaluation(
        batch=b,
        prompt=prompt,
        chunk=chunk,
        chunks=chunks,
        sweep_bytes=sweep,
        reread_bytes=reread,
        write_bytes=write,
        linear_flops=linear_flops,
        attention_flops=attention_flops,
        memory_time=memory_time,
        linear_time=linear_time,
        attention_time=attention_time,
    )
