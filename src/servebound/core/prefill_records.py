"""The records prefill returns: the verdict and the settings it chose (chunking, batch), what bound it,
what limited a range, the assumptions it states, one result, a curve over prompt lengths and a range
(``core.prefill`` computes them)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING

from servebound.core.arith import np
from servebound.core.band import BASIS_HELP, BandBasis, ExpectedBand
from servebound.core.engines import FormatSupport
from servebound.core.experts import ExpertTraffic, distinct_experts
from servebound.core.fields import ResultRecord, documented, documented_property
from servebound.core.hardware import Hardware
from servebound.core.model import ModelAdapter
from servebound.core.offload import OffloadReport
from servebound.core.rates import BoundBy, ModeRates
from servebound.core.reading import is_estimate
from servebound.core.workload import NOT_CHECKED, RangeLimit, Workload

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from servebound.core.arith import Floats as Float

#: Omega_pf, the temporary prefill workspace in the capacity gate: zero in this theoretical bound.
WORKSPACE_BYTES = 0.0


class PrefillVerdict(StrEnum):
    """The first gate that fails names the verdict.

    ``fits``: the setting fits memory (and the TTFT budget, when one was given).
    ``over_budget``: it fits memory, but no fitting setting finishes within the budget; the result
    holds the setting with the shortest wait (batch 1 when searching, the given batch otherwise).
    ``no_batch_fit``: a given batch exceeds the largest fitting batch (the numbers are the formula's
    at that batch, as decode's forced batch). ``no_session_fit`` and ``no_resident_fit`` as in decode.
    """

    FITS = "fits"
    OVER_BUDGET = "over_budget"
    NO_BATCH_FIT = "no_batch_fit"
    NO_SESSION_FIT = "no_session_fit"
    NO_RESIDENT_FIT = "no_resident_fit"


class ChunkMode(StrEnum):
    """``one_shot``: c = L, the true ceiling at fixed batch. ``policy``: a given c < L, the ceiling of
    a scheduler that caps its chunks at c (a one-shot implementation may legitimately exceed it)."""

    ONE_SHOT = "one_shot"
    POLICY = "policy"


class BatchMode(StrEnum):
    """``given``: the batch was fixed by the caller. ``max``: the largest batch passing the capacity
    gate and, with a budget, the TTFT budget (throughput never falls as the batch grows)."""

    GIVEN = "given"
    MAX = "max"


@dataclass(frozen=True)
class PrefillAssumptions:
    """Every input that moves a prefill result, stated with it.

    ``linear_flop_per_s`` / ``attention_flop_per_s`` are F_hw of the two modes, None when the hardware
    row does not publish that mode; ``compute_available`` is False when a needed rate is missing (then
    the combined ceiling is the memory one). ``kernel_terms_dropped``: q_attn^HBM and q_act are left
    out of the traffic (ceiling-safe). ``is_estimate``: expected MoE routing or measured (not peak)
    hardware rates make the result an estimate rather than a bound. ``linear_mode_choice`` says why
    ``linear_mode`` was charged (:func:`servebound.core.rates.linear_mode_for`).
    """

    overhead_bytes: float
    alloc_context_tokens: int
    linear_mode: str
    attention_mode: str
    linear_flop_per_s: float | None
    attention_flop_per_s: float | None
    compute_available: bool
    missing_modes: tuple[str, ...]
    expert_traffic: ExpertTraffic
    is_estimate: bool
    hardware_provenance: str
    workspace_bytes: float = WORKSPACE_BYTES
    kernel_terms_dropped: bool = True
    linear_mode_choice: str = ""
    linear_mode_charged: str | None = None
    attention_mode_charged: str | None = None
    linear_charge_reason: str = ""
    attention_charge_reason: str = ""
    charge_note: str = ""
    #: Mixed-precision linear math: (mode, parameters, mode charged, rate) per part (ModeRates.linear_split).
    linear_split: tuple[tuple[str, float, str | None, float | None], ...] = ()


@dataclass(frozen=True, repr=False)
class PrefillResult(ResultRecord):
    """The prefill ceiling for one prompt length at the chosen (or searched) setting.

    Times are for the whole batch: ``time_s`` is t_pf,min, ``memory_time_s`` Q_pf / R and
    ``compute_time_s`` A_linear / F_linear + A_attention / F_attention (None when compute is
    unavailable). Throughputs are b L divided by those times. ``chunk`` is the width actually
    used (a chunk at least as long as the prompt is one-shot). ``crossover_tokens`` is S*, the tokens
    per weight sweep at which sweep time equals linear math time (None without a linear rate).
    ``ttft_ok`` is None when no budget was given.
    """

    __repr_fields__ = ("verdict", "prompt_tokens", "batch", "tok_s", "time_s", "bound_by")

    hardware: Hardware
    model: ModelAdapter
    workload: Workload
    assumptions: PrefillAssumptions
    verdict: PrefillVerdict = documented(
        "`fits`, `over_budget`, `no_batch_fit`, `no_session_fit` or `no_resident_fit`: the first gate that fails"
    )
    prompt_tokens: int = documented("L, the prompt length evaluated", "tokens")
    batch: int = documented("b, prompts prefilled together (the best one when searching)", "prompts")
    batch_mode: BatchMode = documented("`given` (fixed) or `max` (the largest batch the gates admit)")
    chunk: int = documented("c, the chunk width used (c = L is one-shot)", "tokens")
    chunk_mode: ChunkMode = documented("`one_shot` (c = L, the ceiling) or `policy` (a given c < L)")
    chunks: int = documented("ceil(L / c), the chunks per prompt")
    resident_bytes: float = documented("W_resident, the weights held in memory", "bytes", json=None)
    resident_margin_bytes: float = documented("C - W_resident - O, the memory left for caches", "bytes")
    kv_alloc_bytes: float = documented("K_alloc(L_alloc), the cache reserved per prompt", "bytes")
    batch_mem: int = documented("b_mem, the prompts whose reserved caches fit in memory", "prompts")
    batch_mem_capped: bool = documented("b_mem reached the search cap", json=None)
    memory_tok_s: float = documented("b L / (Q_pf / R), the memory roofline", "tok/s")
    compute_tok_s: float | None = documented(
        "b L / (A_linear / F_linear + A_attention / F_attention); null when a rate is unknown",
        "tok/s",
    )
    tok_s: float = documented("b L / t_pf,min, the combined ceiling", "tok/s")
    time_s: float = documented("t_pf,min, the modeled prefill time for the batch", "s")
    memory_time_s: float = documented("Q_pf / R", "s")
    compute_time_s: float | None = documented("A_linear / F_linear + A_attention / F_attention", "s")
    linear_time_s: float | None = documented("A_linear / F_linear", "s")
    attention_time_s: float | None = documented("A_attention / F_attention", "s")
    bound_by: BoundBy = documented("`memory` or `compute`: the roofline that sets t_pf,min")
    traffic_bytes: float = documented("Q_pf, the bytes the batch moves", "bytes")
    weight_sweep_bytes: float = documented("the weight sweeps, one per chunk", "bytes")
    kv_reread_bytes: float = documented("the cache reread by later chunks", "bytes")
    kv_write_bytes: float = documented("kappa_KV,w x b L, the cache written", "bytes")
    linear_flops: float = documented("A_linear, the linear-layer work", "FLOP")
    attention_flops: float = documented("A_attention, the attention work", "FLOP")
    bytes_per_token: float = documented("Q_pf / (b L)", "bytes")
    flops_per_token: float = documented("(A_linear + A_attention) / (b L)", "FLOP")
    crossover_tokens: float | None = documented(
        "S*, where the weight sweep time equals the linear math time (null without a linear rate)", "tokens"
    )
    ttft_budget_s: float | None = documented("tau*, the --ttft-budget given (null without one)", "s")
    ttft_ok: bool | None = documented("with --ttft-budget: whether t_pf,min fits the budget")
    crossover_with_attention_tokens: float | None = documented(
        "S* with attention: the prompt length where one-shot memory time equals compute time (linear and "
        "attention math) at this batch, the crossing the drawn curve shows (null when compute is unavailable "
        "or one roofline binds at every length)",
        "tokens",
        default=None,
    )
    experts_touched: float | None = documented(
        "m(b c): the distinct routed experts one full chunk's sweep touches, expected under uniform routing "
        "(k with --expert-traffic minimum); null for a model without routed experts",
        default=None,
    )
    offload: OffloadReport | None = documented(
        "with --cpu-moe, --n-cpu-moe or --gpu-layers: where the bytes sit, the bytes per prompt token on each "
        "tier, and (device memory time, host weight-transfer time) (null without offload)",
        default=None,
    )
    unrestricted: PrefillResult | None = documented(
        "with --ttft-budget: the same question without the budget (every setting that fits), so the "
        "restriction never hides the ceiling: `{verdict, batch, tok_s, time_s, bound_by, ...}` (null "
        "without a budget)",
        default=None,
    )
    expected: ExpectedBand | None = documented(
        "`{p10_tok_s, p50_tok_s, p90_tok_s, runs, engine, hardware_class, phase, ...}`, the band of a "
        "per-token time t = a t_ceiling + t_0 fitted on published prefill runs of the engine (--engine, else "
        "the one usually run here: `expected_from`) and hardware class, beside tok_s and never above it; an "
        "estimate, never a bound (null under 5 runs)",
        default=None,
    )
    expected_from: BandBasis | None = documented(BASIS_HELP, default=None)

    @documented_property("the mode whose rate the linear math is charged at (null: the row publishes none)")
    def linear_mode_charged(self) -> str | None:
        return self.assumptions.linear_mode_charged

    @documented_property("why the linear math is charged at another mode's rate (null: its own mode's rate)")
    def linear_mode_charged_why(self) -> str | None:
        return self.assumptions.linear_charge_reason or None

    @documented_property(
        "the mode whose rate the attention math is charged at (null: the row publishes none)"
    )
    def attention_mode_charged(self) -> str | None:
        return self.assumptions.attention_mode_charged

    @documented_property(
        "why the attention math is charged at another mode's rate (null: its own mode's rate)"
    )
    def attention_mode_charged_why(self) -> str | None:
        return self.assumptions.attention_charge_reason or None

    @documented_property(
        "`native`, `dequantized` or `unsupported`: whether the device (and --engine) runs the weight format"
    )
    def format_support(self) -> FormatSupport:
        return (self.workload.format_support or NOT_CHECKED)[0]

    @documented_property("why the weight format is native, dequantized or unsupported here, with the source")
    def format_support_why(self) -> str:
        return (self.workload.format_support or NOT_CHECKED)[1]

    @documented_property("a fallback rate or a memory-only figure, in one sentence (null: neither)")
    def compute_note(self) -> str | None:
        return self.assumptions.charge_note or None

    @property
    def admissible(self) -> bool:
        """The setting passes every gate (memory, and the budget when one was given)."""
        return self.verdict is PrefillVerdict.FITS


@dataclass(frozen=True)
class PrefillCurve:
    """Prefill ceilings over arrays of prompt lengths (and batches), for figures and tables.

    ``compute_tok_s`` and ``compute_time_s`` are None when a needed rate is missing.
    ``bound_by_memory`` is True where the memory roofline sets the time. No capacity gate is applied.
    """

    prompt_tokens: NDArray[np.int64]
    batch: NDArray[np.int64]
    chunk_tokens: NDArray[np.int64]
    memory_tok_s: Float
    compute_tok_s: Float | None
    tok_s: Float
    time_s: Float
    memory_time_s: Float
    compute_time_s: Float | None
    bytes_per_token: Float
    flops_per_token: Float
    bound_by_memory: NDArray[np.bool_]
    assumptions: PrefillAssumptions


@dataclass(frozen=True)
class PrefillRange:
    """T_pf,lo and T_pf,hi over every integer prompt length 1..``max_prompt_tokens`` at one batch,
    one-shot, each with the length where it occurs (the shortest such length on ties).

    ``max_prompt_tokens`` is the longest length that fits: the model's context limit (the workload's
    alloc context when the model states none), cut by the capacity gate with each length reserving
    its own cache, W_resident + O + b K_alloc(L) <= C; ``limited_by`` says which. When no length fits,
    the verdict says why and the ceilings are None. T_pf,lo is still a ceiling at its length, never a
    floor on what real software achieves.
    """

    assumptions: PrefillAssumptions
    verdict: PrefillVerdict
    batch: int
    max_prompt_tokens: int
    limited_by: RangeLimit
    lo_tok_s: float | None
    lo_prompt_tokens: int | None
    lo_bound_by: BoundBy | None
    hi_tok_s: float | None
    hi_prompt_tokens: int | None
    hi_bound_by: BoundBy | None


def assumptions_of(
    hardware: Hardware, model: ModelAdapter, workload: Workload, rates: ModeRates
) -> PrefillAssumptions:
    """What a prefill result states it assumed: the workload's O and L_alloc, the modes and the rates
    charged (and why), the expert traffic and whether the figure is a bound or an estimate."""
    return PrefillAssumptions(
        overhead_bytes=workload.overhead_bytes,
        alloc_context_tokens=workload.alloc_context_tokens,
        linear_mode=rates.linear_mode,
        attention_mode=rates.attention_mode,
        linear_mode_choice=rates.linear_mode_choice,
        linear_mode_charged=rates.linear_mode_charged if rates.needs_linear else rates.linear_mode,
        attention_mode_charged=rates.attention_mode_charged
        if rates.needs_attention
        else rates.attention_mode,
        linear_charge_reason=rates.linear_charge_reason if rates.needs_linear else "",
        attention_charge_reason=rates.attention_charge_reason if rates.needs_attention else "",
        charge_note=rates.charge_note,
        linear_split=rates.linear_split,
        linear_flop_per_s=rates.linear_flop_per_s,
        attention_flop_per_s=rates.attention_flop_per_s,
        compute_available=rates.available,
        missing_modes=rates.missing_modes,
        expert_traffic=workload.expert_traffic,
        is_estimate=is_estimate(hardware, model, workload.expert_traffic),
        hardware_provenance=hardware.provenance,
    )


def experts_touched(model: ModelAdapter, routings: float, traffic: ExpertTraffic) -> float | None:
    """m(n) for the model's routed experts at ``routings`` (None for a model without them)."""
    experts = model.weights.experts
    return (
        None
        if experts is None
        else float(distinct_experts(routings, experts.routed, experts.per_token, traffic))
    )
