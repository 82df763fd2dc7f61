"""The compute roof of a decode step: the second line of the two-line roofline.

A decode step for b sessions runs each session's new tokens through the model. With the prefill
adapter's own quantities at chunk n (the tokens a session pushes through per step, 1 for ordinary
decoding, gamma + 1 for a speculative verification pass) after a cached prefix of L_read tokens,

    t_cmp(b) = b * n * (2 P_lin,active / F_linear + a_attn(n, L_read) / F_attention)   [+ draft]

charged at the rates of the modes the prefill adapter selects (the same lookups as prefill). The
step's memory time is decode's t_mem(b) = b rho q(b) / R, so a step takes at least
t(b) = max(t_mem(b), t_cmp(b)), and the aggregate T(b) = b rho / t(b) = min(R / q(b), rho / c)
with c = t_cmp(b) / b the compute seconds per session per step: compute adds a constant ceiling
rho / c to decode's memory aggregate, so T stays non-decreasing and r = T / b non-increasing.

A speculative draft runs gamma sequential one-token steps per session: its compute
gamma (2 P_lin,draft / F + a_attn,draft(1, L_read) / F) is charged too when the draft has prefill
fields and rates; otherwise it is left out (which only loosens the ceiling) and the result says so.

Where a rate is missing, the model has no prefill fields, or the caller asks for the memory-only
bound, compute is unavailable: never a zero rate, never a substitute mode. Decode then gives exactly
the memory-only result, and ``status`` says why.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING

from servebound.core.arith import Values, as_values, filled
from servebound.core.hardware import Hardware
from servebound.core.model import ModelAdapter, PrefillShape
from servebound.core.prefill_cost import attention_flops_per_token
from servebound.core.rates import ModeRates, mode_rates
from servebound.core.workload import Workload

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

    from servebound.core.arith import Floats


class ComputeStatus(StrEnum):
    """Whether decode's compute roof is charged, and if not, why."""

    CHARGED = "charged"
    MEMORY_ONLY = "memory_only"
    NO_PREFILL_FIELDS = "no_prefill_fields"
    MISSING_RATE = "missing_rate"


def _step(
    shape: PrefillShape, rates: ModeRates, tokens: int, prefix_tokens: Values
) -> tuple[float, Values, Values | None]:
    """FLOPs (linear, attention) of one session's ``tokens`` new tokens after ``prefix_tokens`` (one
    prefix or an array of prefixes), and their time at the given rates (None when a needed rate is
    missing)."""
    linear = 2.0 * shape.linear_active_params * tokens
    attention = tokens * attention_flops_per_token(shape, float(tokens), prefix_tokens)
    if not rates.available:
        return linear, attention, None
    linear_s = linear / rates.linear_flop_per_s if rates.linear_flop_per_s else 0.0
    attention_s = (
        attention / rates.attention_flop_per_s if rates.attention_flop_per_s else filled(attention, 0.0)
    )
    return linear, attention, linear_s + attention_s


def seconds_per_session_step_over_contexts(
    hardware: Hardware, model: ModelAdapter, workload: Workload, contexts: ArrayLike
) -> Floats | None:
    """c(L) for an array of read contexts in ordinary decoding: the same lookups and FLOP counts as
    :func:`decode_compute`, vectorized over L for figures. None when compute is unavailable (no
    prefill fields, a missing rate, memory-only) and for speculation (use decode_compute per context)."""
    shape = model.prefill
    if shape is None or workload.memory_only or workload.speculation is not None:
        return None
    rates = mode_rates(hardware, shape)
    return _step(shape, rates, 1, as_values(contexts))[2]


@dataclass(frozen=True)
class DecodeCompute:
    """The compute side of one decode step, per session, with the inputs that produced it.

    ``tokens_per_session_step`` is n (1, or gamma + 1 with speculation). ``flops_per_session_step``
    counts the target's linear and attention FLOPs for those n tokens (plus the draft's when charged);
    ``flops_per_token`` divides by rho, the tokens emitted (``decode_flops_per_token``: at rho = 1 this
    is 2 P_lin,active + a_attn(1, L_read)). ``seconds_per_session_step`` is c, so t_cmp(b) = b c; None
    unless ``status`` is CHARGED. ``draft`` says how a speculative draft's compute was treated.
    """

    status: ComputeStatus
    rates: ModeRates | None
    read_context_tokens: int
    tokens_per_session_step: int
    tokens_per_step: float
    linear_flops_per_session_step: float | None
    attention_flops_per_session_step: float | None
    draft_flops_per_session_step: float
    seconds_per_session_step: float | None
    draft: str | None = None

    @property
    def available(self) -> bool:
        """t_cmp is charged (a rate for every needed mode, prefill fields, compute not switched off)."""
        return self.status is ComputeStatus.CHARGED and self.seconds_per_session_step is not None

    @property
    def flops_per_session_step(self) -> float | None:
        if self.linear_flops_per_session_step is None or self.attention_flops_per_session_step is None:
            return None
        return (
            self.linear_flops_per_session_step
            + self.attention_flops_per_session_step
            + self.draft_flops_per_session_step
        )

    @property
    def flops_per_token(self) -> float | None:
        """FLOPs per emitted token at L_read (the step's FLOPs per session over rho)."""
        step = self.flops_per_session_step
        return None if step is None else step / self.tokens_per_step

    @property
    def ceiling_tok_s(self) -> float | None:
        """T_cmp = rho / c: the aggregate the compute roof allows at any batch (None without compute)."""
        c = self.seconds_per_session_step
        return None if not self.available or c is None or c <= 0 else self.tokens_per_step / c

    def time_s(self, batch: Values) -> Values | None:
        """t_cmp(b) = b c in seconds, for one batch or an array of batches (None without compute)."""
        if not self.available or self.seconds_per_session_step is None:
            return None
        return as_values(batch) * self.seconds_per_session_step

    def bytes_equivalent(self, bandwidth_bytes_per_s: float) -> float:
        """R c / rho: the compute roof as bytes per emitted token, so T(b) = R / max(q(b), this).

        Zero without compute, which leaves the memory-only q(b) exactly unchanged.
        """
        c = self.seconds_per_session_step
        if not self.available or c is None:
            return 0.0
        return bandwidth_bytes_per_s * c / self.tokens_per_step


def decode_compute(
    hardware: Hardware,
    model: ModelAdapter,
    workload: Workload | None = None,
    *,
    linear_mode: str | None = None,
    attention_mode: str | None = None,
) -> DecodeCompute:
    """The compute roof of a decode step for (hardware, model, workload): the one place decode's
    compute time is computed. ``decode_compute(...).time_s(b)`` is t_cmp(b); callers that split a
    model over devices (parallel layouts) scale the hardware or the model and call this again.

    The workload's ``memory_only`` switches compute off (status MEMORY_ONLY); the FLOP counts are
    still reported where the model has prefill fields. Computed once per hardware record for each set
    of the inputs it reads (``Hardware.lookups``).
    """
    workload = workload or Workload()
    key = (
        "decode_compute",
        model.prefill,
        workload.speculation,
        workload.read_context_tokens,
        type(workload.read_context_tokens),  # the result repeats it as given (32000 and 32000.0 are one key)
        workload.memory_only,
        linear_mode,
        attention_mode,
    )
    return hardware.looked_up(
        key, lambda: _decode_compute(hardware, model, workload, linear_mode, attention_mode)
    )


def _decode_compute(
    hardware: Hardware,
    model: ModelAdapter,
    workload: Workload,
    linear_mode: str | None,
    attention_mode: str | None,
) -> DecodeCompute:
    spec = workload.speculation
    n = 1 if spec is None else spec.draft_tokens + 1
    rho = workload.tokens_per_step
    context = workload.read_context_tokens
    shape = model.prefill
    if shape is None:
        return DecodeCompute(
            status=ComputeStatus.NO_PREFILL_FIELDS,
            rates=None,
            read_context_tokens=context,
            tokens_per_session_step=n,
            tokens_per_step=rho,
            linear_flops_per_session_step=None,
            attention_flops_per_session_step=None,
            draft_flops_per_session_step=0.0,
            seconds_per_session_step=None,
        )
    rates = mode_rates(hardware, shape, linear_mode, attention_mode)
    linear, attention, seconds = _step(shape, rates, n, context)
    draft_flops = 0.0
    draft_note: str | None = None
    if spec is not None and spec.draft_tokens > 0:
        draft_shape = spec.draft.prefill
        if draft_shape is None:
            draft_note = (
                f"omitted: draft '{spec.draft.id}' has no [prefill] fields (only loosens the ceiling)"
            )
        else:
            draft_rates = mode_rates(hardware, draft_shape)
            d_linear, d_attention, d_seconds = _step(draft_shape, draft_rates, 1, context)
            if d_seconds is None:
                draft_note = (
                    f"omitted: no {'/'.join(draft_rates.missing_modes)} rate for the draft's modes "
                    "(only loosens the ceiling)"
                )
            else:
                draft_flops = spec.draft_tokens * (d_linear + d_attention)
                draft_note = (
                    f"charged: {spec.draft_tokens} one-token draft steps at "
                    f"{draft_rates.linear_mode}/{draft_rates.attention_mode}"
                )
                if seconds is not None:
                    seconds += spec.draft_tokens * d_seconds
    if workload.memory_only:
        status = ComputeStatus.MEMORY_ONLY
        seconds = None
    elif seconds is None:
        status = ComputeStatus.MISSING_RATE
    else:
        status = ComputeStatus.CHARGED
    return DecodeCompute(
        status=status,
        rates=rates,
        read_context_tokens=context,
        tokens_per_session_step=n,
        tokens_per_step=rho,
        linear_flops_per_session_step=linear,
        attention_flops_per_session_step=attention,
        draft_flops_per_session_step=draft_flops,
        seconds_per_session_step=seconds,
        draft=draft_note,
    )


def compute_statement(compute: DecodeCompute) -> str:
    """One sentence for the assumptions: what the compute roof charged, or why it is omitted."""
    status = compute.status
    if status is ComputeStatus.MEMORY_ONLY:
        return "omitted on request (memory only): memory roofline only (dropping compute only loosens the ceiling)"
    if status is ComputeStatus.NO_PREFILL_FIELDS:
        return (
            "omitted: the model has no [prefill] fields (P_lin,active, attention FLOPs), so the memory "
            "roofline only (dropping compute only loosens the ceiling)"
        )
    rates = compute.rates
    assert rates is not None
    if status is ComputeStatus.MISSING_RATE:
        return (
            f"omitted: the hardware row publishes no compute rate (needed: {'/'.join(rates.missing_modes)}), "
            "so the figure is memory-only (no rate is assumed; dropping compute only loosens the ceiling)"
        )
    n = compute.tokens_per_session_step
    parts = [
        f"t_cmp(b) = b * {n} * (2 P_lin,active / F_{rates.linear_mode} + a_attn({n}, L_read) / "
        f"F_{rates.attention_mode}), rates from the hardware row"
    ]
    if rates.fallback:
        parts.append(rates.charge_note)
    if compute.draft is not None:
        parts.append(f"draft compute {compute.draft}")
    return "; ".join(parts)
