"""Serving on many devices: the ceilings of a parallel layout on a system, per device.

The system, its interconnect and the layouts themselves (which are valid, and why not) are in
``core.system``; this module holds the math on them.

A system is N identical devices (capacity C, bandwidth R, rates F each) grouped in scale-up domains of
S devices. Every device sends at ``scale_up`` bytes/s each way to a device of its own domain and at
``scale_out`` bytes/s to a device of another. A layout splits one model over them:

* ``tp`` tensor parallel: each attention and dense MLP matrix split ``tp`` ways; two all-reduces of the
  activations per layer.
* ``ep`` expert parallel: the routed experts spread whole over ``ep`` devices; attention runs tensor
  parallel ``tp`` ways and data parallel ``ep / tp`` ways over the same devices (``ep`` is 1, or a
  multiple of ``tp``). One stage group has G = max(tp, ep) devices. Each MoE layer dispatches every
  token to its k experts and combines the results back: an all-to-all each way.
* ``pp`` pipeline stages: consecutive groups hold consecutive layers; a token's activations hop from
  stage to stage. P = pp micro-batches of b sessions are in flight, so a replica holds B = P b sessions.
* ``dp`` replicas of the whole pipeline.

Per device, with W_d = W_resident - E w_e the weights outside the routed experts, K_alloc and K_read the
per-session cache and h = min(tp, cache heads) the heads the cache splits over (a latent cache has 1):

    weight bytes   W_d / (tp pp) + E w_e / (G pp)
    KV bytes       P b (tp / G) K_alloc / (h pp) = b tp K_alloc / (G h)       (P = pp cancels)
    memory time    [W_on / (tp pp) + w_e m(b) / (G pp) + b (tp / G) K_read / (h pp)] / R
    compute time   b c / (G pp)               (c: seconds of one session's step at one device's rates)
    all-reduce     2 (L / pp) * 2 (tp - 1) / tp * (b tp / G) d e_a / B_link
    dispatch+comb. 2 (L_moe / pp) (b / G) k d e_a * sum over peers outside the device of 1/G / B_link
    stage hop      (b / G) d e_a / B_link     (each device sends its share to its counterpart)

with d the residual width and e_a the activation element bytes. A stage step takes at least
t_s(b) = max(memory, compute, all-reduce + dispatch/combine) on the slowest device. A session's token
passes every stage and every hop in sequence: tau(b) = pp t_s(b) + (pp - 1) t_hop(b). With pp
micro-batches in flight the system emits T(b) = dp pp b / tau(b) tokens/s, each session r(b) = 1/tau(b).
Every term of tau grows with b and tau(b)/b never grows, so r falls and T rises with b: the best usable
micro-batch b* is the smallest reaching the largest aggregate among those with r(b) >= r* that fit (past
the batch where compute or communication binds, T is flat), found by bisection as in single-device decode.

Averages stand for maxima: the per-device bytes and times are the mean over devices (the busiest device
holds at least the mean), so the ceiling stays an upper bound. Link latency per message is not charged
(it only lowers the ceiling further). With an ideal interconnect (no link stated, every rate infinite),
tp = N reproduces the ``Nx-`` system exactly: the pooled C, R and F, and the pooled overhead.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from enum import StrEnum

from servebound.core.arith import Values, as_values, filled
from servebound.core.decode import Verdict
from servebound.core.experts import distinct_experts, touched_at
from servebound.core.model import ModelAdapter
from servebound.core.search import largest_true
from servebound.core.system import Interconnect, Layout, System, layout_problem
from servebound.core.workload import MAX_BATCH, Workload, memory_fit_batch

__all__ = [
    "DEFAULT_ACTIVATION_BYTES",
    "BoundBy",
    "Layout",
    "LayoutResult",
    "Links",
    "PerDevice",
    "PrefillCommunication",
    "StepTimes",
    "System",
    "evaluate_layout",
    "layout_problem",
    "per_device_bytes",
    "prefill_communication",
    "times_at",
]

#: Activation element width between devices (bf16): the default e_a.
DEFAULT_ACTIVATION_BYTES = 2.0


class BoundBy(StrEnum):
    MEMORY = "memory"
    COMPUTE = "compute"
    COMMUNICATION = "communication"


@dataclass(frozen=True)
class PerDevice:
    """One (average) device of the layout: capacity, its share of the overhead, weights, KV at the
    evaluated batch, and what is left."""

    capacity_bytes: float
    overhead_bytes: float
    weight_bytes: float
    kv_bytes: float
    free_bytes: float
    kv_bytes_per_session: float


@dataclass(frozen=True)
class LinkSeconds:
    """Link time on the average device: all-reduce and dispatch/combine (all-to-all) within a stage,
    and the pipeline hops; of one decode step (``StepTimes``) or one prefill pass (``PrefillCommunication``)."""

    all_reduce_s: float
    all_to_all_s: float
    hop_s: float

    @property
    def communication_s(self) -> float:
        """All-reduce plus dispatch/combine within the stage, plus the hops a token makes."""
        return self.all_reduce_s + self.all_to_all_s + self.hop_s


@dataclass(frozen=True)
class StepTimes(LinkSeconds):
    """One stage step at micro-batch ``batch`` on the average device, and the token time tau."""

    batch: int
    memory_s: float
    compute_s: float | None
    stage_s: float
    token_s: float
    bound_by: BoundBy


@dataclass(frozen=True)
class Links:
    """Which link each collective crosses (``scale-up``, ``scale-out``, ``mixed`` or ``none``)."""

    tensor_parallel: str
    expert_parallel: str
    pipeline: str


@dataclass(frozen=True)
class LayoutResult:
    """The ceilings of one layout. ``batch_*`` count sessions of one micro-batch of one replica;
    ``sessions`` is every session the system holds at b* (dp pp b*)."""

    layout: Layout
    devices: int
    idle_devices: int
    verdict: Verdict  # the same stack of gates as one device's decode, with the same names
    per_device: PerDevice
    links: Links
    activation_bytes: float
    weight_fetch_latency_s: float
    compute_charged: bool
    batch_mem: int | None = None
    batch_star: int | None = None
    sessions: int | None = None
    single_session_tok_s: float | None = None
    aggregate_tok_s: float | None = None
    per_session_tok_s: float | None = None
    times: StepTimes | None = None

    @property
    def fits(self) -> bool:
        return self.verdict in (Verdict.FLOOR_FIT, Verdict.NO_FLOOR)


def _placement(system: System, layout: Layout) -> tuple[float, float, float, Links]:
    """The link rates each collective sees on its worst device, placing groups on consecutive devices
    (stage groups inside a replica, replicas one after another).

    Returns the all-reduce rate in bytes/s, the all-to-all seconds per byte a device's tokens send to
    their experts, the seconds per byte of every pipeline hop on one token's path (summed), and which
    links they cross. They depend on the links and the layout alone: each pair is placed once (a
    system's page asks the same layouts for every model it ranks).
    """
    return _placed(system.interconnect, layout)


@functools.lru_cache(maxsize=65536)
def _placed(link: Interconnect, layout: Layout) -> tuple[float, float, float, Links]:
    """:func:`_placement` for ``link``."""
    size = link.scale_up_devices
    up, out = link.scale_up_bytes_per_s, link.scale_out_bytes_per_s
    group, tp = layout.group, layout.tp

    def domain(i: int) -> int:
        return i // size

    def kind(kinds: set[str]) -> str:
        if not kinds:
            return "none"
        return kinds.pop() if len(kinds) == 1 else "mixed"

    groups = layout.devices // group
    if layout.devices <= size:  # one scale-up domain holds every device: no collective crosses out
        return _inside_one_domain(layout, up)

    def period(step: int) -> int:
        """Groups placed every ``step`` devices meet the scale-up domains in the same way again after
        size / gcd(step, size) of them: only that many need looking at (a 1,024-device search is then
        as quick as an 8-device one)."""
        return size // math.gcd(step, size)

    # Tensor parallel: the slowest attention group's ring runs at its slowest link.
    ar_rate, ar_kinds = math.inf, set()
    if tp > 1:
        for start in range(0, min(layout.devices, period(tp) * tp), tp):
            crosses = domain(start) != domain(start + tp - 1)
            ar_kinds.add("scale-out" if crosses else "scale-up")
            ar_rate = min(ar_rate, out if crosses else up)
    # Expert parallel: a device sends 1/G of its tokens' expert copies to each other device of its group.
    a2a_per_byte, a2a_kinds = 0.0, set()
    if layout.ep > 1:
        for g in range(min(groups, period(group))):
            start = g * group
            for first in {start, start + group - 1}:
                d = domain(first)  # devices of the group in first's domain: the two ranges' overlap
                mates = min((d + 1) * size, start + group) - max(d * size, start) - 1
                strangers = group - 1 - mates
                if mates:
                    a2a_kinds.add("scale-up")
                if strangers:
                    a2a_kinds.add("scale-out")
                cost = max(
                    mates / group / up if mates else 0.0, strangers / group / out if strangers else 0.0
                )
                a2a_per_byte = max(a2a_per_byte, cost)
    # Pipeline: a token's path crosses pp - 1 boundaries; the worst replica's sum of seconds per byte.
    # A hop from devices start..start+group-1 to the next group crosses a domain boundary iff one lies
    # in (start, start + 2 group - 1]: device i and i + group then sit in different domains.
    # The hops of a replica repeat every period(group) stages, so one period's crossings are counted.
    hop_per_byte, hop_kinds = 0.0, set[str]()
    hops, cycle = layout.pp - 1, period(group)
    for r in range(min(layout.dp, period(layout.pp * group)) if hops else 0):
        first = r * layout.pp * group
        flags = [
            domain(first + s * group) != domain(first + s * group + 2 * group - 1)
            for s in range(min(hops, cycle))
        ]
        crossing = (hops // len(flags)) * sum(flags) + sum(flags[: hops % len(flags)])
        hop_kinds.update(("scale-out",) * bool(crossing) + ("scale-up",) * bool(hops - crossing))
        hop_per_byte = max(hop_per_byte, crossing / out + (hops - crossing) / up)
    links = Links(kind(ar_kinds), kind(a2a_kinds), kind(hop_kinds))
    return ar_rate, a2a_per_byte, hop_per_byte, links


def _inside_one_domain(layout: Layout, up: float) -> tuple[float, float, float, Links]:
    """:func:`_placement` when every device sits in one scale-up domain: each collective runs at the
    scale-up rate (a device's expert group mates are the other group - 1 devices)."""
    group = layout.group
    mates = group - 1
    a2a = mates / group / up if layout.ep > 1 and mates else 0.0
    links = Links(
        "scale-up" if layout.tp > 1 else "none",
        "scale-up" if layout.ep > 1 and mates else "none",
        "scale-up" if layout.pp > 1 else "none",
    )
    return (up if layout.tp > 1 else math.inf), a2a, (layout.pp - 1) / up if layout.pp > 1 else 0.0, links


class _LayoutModel:
    """The per-device bytes and times of one layout, vectorized over micro-batches."""

    def __init__(
        self,
        system: System,
        model: ModelAdapter,
        workload: Workload,
        layout: Layout,
        compute_s_per_session_step: float | None,
        activation_bytes: float,
    ) -> None:
        self.system, self.model, self.workload, self.layout = system, model, workload, layout
        tp, pp, group = layout.tp, layout.pp, layout.group
        weights = model.weights
        experts = weights.experts
        routed_bytes = (experts.routed * weights.expert_bytes) if experts else 0.0
        shape = model.shape
        heads = min(tp, shape.cache_shards) if shape is not None else 1
        self.heads = max(1, heads)
        self.weight_bytes = (weights.resident - routed_bytes) / (tp * pp) + routed_bytes / (group * pp)
        self.overhead_bytes = workload.overhead_bytes / system.count
        self.kv_alloc_session = model.kv_alloc.bytes_at(workload.held_context_tokens)
        self.kv_read_session = model.kv_read.bytes_at(workload.read_context_tokens)
        # Per session of a micro-batch, on one device: its share of the cache it holds and reads.
        self.kv_alloc_per_session = tp * self.kv_alloc_session / (group * self.heads)
        self.kv_read_per_session = tp * self.kv_read_session / (group * self.heads * pp)
        self.compute = compute_s_per_session_step
        self.activation_bytes = activation_bytes
        ar_rate, a2a_per_byte, hop_per_byte, self.links = _placement(system, layout)
        d = shape.hidden_size if shape is not None else 0
        layers = shape.layers if shape is not None else 0
        moe_layers = shape.moe_layers if shape is not None else 0
        k = experts.per_token if experts else 0
        # Seconds per session of the micro-batch for each communication term (all linear in b).
        self.all_reduce_per_session = (
            2 * (layers / pp) * 2 * (tp - 1) / tp * (tp / group) * d * activation_bytes / ar_rate
            if tp > 1
            else 0.0
        )
        self.all_to_all_per_session = 2 * (moe_layers / pp) * k / group * d * activation_bytes * a2a_per_byte
        self.hop_per_session = d * activation_bytes / group * hop_per_byte
        # The scalar step time of the search (``token_s``): the terms of ``memory_s`` that do not depend
        # on b, and each batch's token time once (a search asks some batches twice).
        self._always_share = float(weights.always_on_bytes / (tp * pp))
        traffic = workload.expert_traffic
        self._touched = None if experts is None else touched_at(experts.routed, experts.per_token, traffic)
        self._stages_share = group * pp  # G pp: the devices one micro-batch's work spreads over
        self._token_s: dict[int, float] = {}

    def memory_s(self, batch: Values) -> Values:
        """Seconds the average device spends reading its weights and its sessions' cache in one step
        (one micro-batch or an array of them)."""
        b = as_values(batch)
        weights = self.model.weights
        layout = self.layout
        experts = weights.experts
        swept = filled(b, weights.always_on_bytes / (layout.tp * layout.pp))
        if experts is not None:
            touched = distinct_experts(b, experts.routed, experts.per_token, self.workload.expert_traffic)
            swept = swept + weights.expert_bytes * touched / (layout.group * layout.pp)
        return (swept + b * self.kv_read_per_session) / self.system.device.bandwidth_bytes_per_s

    @property
    def margin_bytes(self) -> float:
        """What one device has left for caches: its memory less its overhead and weight share."""
        return self.system.device.memory_bytes - self.overhead_bytes - self.weight_bytes

    def per_device(self, batch: int) -> PerDevice:
        """The average device's bytes with ``batch`` sessions per micro-batch."""
        kv = batch * self.kv_alloc_per_session
        return PerDevice(
            capacity_bytes=self.system.device.memory_bytes,
            overhead_bytes=self.overhead_bytes,
            weight_bytes=self.weight_bytes,
            kv_bytes=kv,
            free_bytes=self.margin_bytes - kv,
            kv_bytes_per_session=self.kv_alloc_per_session,
        )

    def times(self, batch: int) -> StepTimes:
        memory = float(self.memory_s(float(batch)))
        layout = self.layout
        compute = None if self.compute is None else batch * self.compute / (layout.group * layout.pp)
        all_reduce = batch * self.all_reduce_per_session
        all_to_all = batch * self.all_to_all_per_session
        hop = batch * self.hop_per_session
        stage = max(memory, compute or 0.0, all_reduce + all_to_all)
        pp = layout.pp
        token = pp * stage + hop
        terms = {
            BoundBy.MEMORY: pp * memory,
            BoundBy.COMPUTE: pp * (compute or 0.0),
            BoundBy.COMMUNICATION: pp * (all_reduce + all_to_all) + hop,
        }
        bound = max(terms, key=lambda key: terms[key])
        return StepTimes(
            all_reduce_s=all_reduce,
            all_to_all_s=all_to_all,
            hop_s=hop,
            batch=batch,
            memory_s=memory,
            compute_s=compute,
            stage_s=stage,
            token_s=token,
            bound_by=bound,
        )

    def token_s(self, batch: int) -> float:
        """``times(batch).token_s``, the same float, computed on floats alone (the search's hot path:
        no records, no arrays) and kept per batch."""
        kept = self._token_s.get(batch)
        if kept is not None:
            return kept
        b = float(batch)
        swept = self._always_share
        if self._touched is not None:
            swept = swept + self.model.weights.expert_bytes * self._touched(b) / self._stages_share
        memory = (swept + b * self.kv_read_per_session) / self.system.device.bandwidth_bytes_per_s
        compute = 0.0 if self.compute is None else batch * self.compute / self._stages_share
        links = batch * self.all_reduce_per_session + batch * self.all_to_all_per_session
        token = self.layout.pp * max(memory, compute, links) + batch * self.hop_per_session
        self._token_s[batch] = token
        return token


def evaluate_layout(
    system: System,
    model: ModelAdapter,
    layout: Layout,
    workload: Workload | None = None,
    *,
    compute_s_per_session_step: float | None = None,
    activation_bytes: float = DEFAULT_ACTIVATION_BYTES,
) -> LayoutResult:
    """The gates and ceilings of one valid layout (see the module docstring for every term).

    ``compute_s_per_session_step`` is c, one session's decode-step compute time at one device's rates
    (the compute roof's, evaluated by the caller); None leaves compute uncharged, which only loosens
    the ceiling. A forced batch in the workload is ignored here (``times_at`` evaluates any batch).
    """
    workload = workload or Workload()
    problem = layout_problem(system, model, layout)
    if problem is not None:
        raise ValueError(problem)
    if workload.speculation is not None:
        raise ValueError("parallel layouts do not model speculative decoding; drop the draft")
    lm = _LayoutModel(system, model, workload, layout, compute_s_per_session_step, activation_bytes)
    device = system.device
    margin = lm.margin_bytes
    fetch = system.interconnect.weight_fetch_latency_s(model.weights.resident, device.bandwidth_bytes_per_s)
    per_device = lm.per_device

    base = dict(
        layout=layout,
        devices=layout.devices,
        idle_devices=system.count - layout.devices,
        links=lm.links,
        activation_bytes=activation_bytes,
        weight_fetch_latency_s=fetch,
        compute_charged=compute_s_per_session_step is not None,
    )
    if margin < 0:
        return LayoutResult(verdict=Verdict.NO_RESIDENT_FIT, per_device=per_device(0), **base)  # type: ignore[arg-type]
    batch_mem, _ = memory_fit_batch(margin, lm.kv_alloc_per_session)
    if batch_mem == 0:
        return LayoutResult(
            verdict=Verdict.NO_SESSION_FIT,
            per_device=per_device(0),
            batch_mem=0,
            **base,  # type: ignore[arg-type]
        )
    single = 1.0 / lm.token_s(1)
    floor = workload.floor_tok_s

    def clears(batch: int) -> bool:
        return 1.0 / lm.token_s(batch) >= floor

    if not clears(1):
        times = lm.times(1)
        return LayoutResult(
            verdict=Verdict.NO_FLOOR,
            per_device=per_device(1),
            batch_mem=batch_mem,
            single_session_tok_s=single,
            times=times,
            **base,  # type: ignore[arg-type]
        )
    upper = min(batch_mem, MAX_BATCH)
    usable = upper if clears(upper) else largest_true(clears, 1, upper)
    star = _smallest_reaching_best(lm, usable)
    times = lm.times(star)
    sessions = layout.dp * layout.pp * star
    return LayoutResult(
        verdict=Verdict.FLOOR_FIT,
        per_device=per_device(star),
        batch_mem=batch_mem,
        batch_star=star,
        sessions=sessions,
        single_session_tok_s=single,
        aggregate_tok_s=sessions / times.token_s,
        per_session_tok_s=1.0 / times.token_s,
        times=times,
        **base,  # type: ignore[arg-type]
    )


def _smallest_reaching_best(lm: _LayoutModel, usable: int) -> int:
    """b*: the smallest batch whose aggregate reaches the largest usable one. Once compute or
    communication (both linear in b) binds every stage, b / tau(b) is flat and a larger batch only slows
    each session; the aggregate never falls, so bisection finds the first batch on the plateau."""
    best = usable / lm.token_s(usable)

    def short(batch: int) -> bool:
        return batch / lm.token_s(batch) < best * (1 - 1e-12)

    if not short(1):
        return 1
    # largest batch still short of the plateau, plus one
    return largest_true(short, 1, usable) + 1


def per_device_bytes(
    system: System, model: ModelAdapter, layout: Layout, batch: int, workload: Workload | None = None
) -> PerDevice:
    """The average device's bytes with ``batch`` sessions per micro-batch (pp micro-batches in flight)."""
    workload = workload or Workload()
    return _LayoutModel(system, model, workload, layout, None, DEFAULT_ACTIVATION_BYTES).per_device(batch)


def times_at(
    system: System,
    model: ModelAdapter,
    layout: Layout,
    batch: int,
    workload: Workload | None = None,
    *,
    compute_s_per_session_step: float | None = None,
    activation_bytes: float = DEFAULT_ACTIVATION_BYTES,
) -> StepTimes:
    """Step and token times of ``layout`` at micro-batch ``batch`` (for forced batches and figures)."""
    workload = workload or Workload()
    lm = _LayoutModel(system, model, workload, layout, compute_s_per_session_step, activation_bytes)
    return lm.times(batch)


@dataclass(frozen=True)
class PrefillCommunication(LinkSeconds):
    """The link time of prefilling ``tokens`` tokens (b prompts of L) through one replica, per device:
    the same all-reduce and dispatch/combine terms as decode with b L tokens in place of b sessions
    (every stage in turn), and the pp - 1 hops of the activations."""

    tokens: int


def prefill_communication(
    system: System,
    model: ModelAdapter,
    layout: Layout,
    tokens: int,
    workload: Workload | None = None,
    *,
    activation_bytes: float = DEFAULT_ACTIVATION_BYTES,
) -> PrefillCommunication:
    """Link seconds on the average device to prefill ``tokens`` tokens through one replica; the stages run
    one after another, so the per-stage terms add up over pp stages."""
    workload = workload or Workload()
    lm = _LayoutModel(system, model, workload, layout, None, activation_bytes)
    pp = layout.pp
    return PrefillCommunication(
        tokens=tokens,
        all_reduce_s=pp * tokens * lm.all_reduce_per_session,
        all_to_all_s=pp * tokens * lm.all_to_all_per_session,
        hop_s=tokens * lm.hop_per_session,
    )
