"""`servebound economics`: the economics quantities as records (``Shown``), each formula with its
numbers substituted, for the CLI, the API and the /economics page (one answer, so the three never
drift). The numbers come from :mod:`servebound.core.economics`; nothing here computes a quantity of its
own."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any

from servebound.core import economics as econ
from servebound.core.advice import Note, Setting
from servebound.core.decode_compute import decode_compute
from servebound.core.formats import format_words
from servebound.core.hardware import ARITHMETIC_MODES, Hardware
from servebound.core.model import ModelAdapter
from servebound.core.prefill import crossover_tokens
from servebound.core.rates import linear_mode_for
from servebound.errors import InputError
from servebound.inputs.declared import AnyWorkload
from servebound.inputs.scenario import resolve_scenario


@dataclass(frozen=True)
class Shown:
    """One quantity: what it is, its formula, the formula with numbers in, the value and its unit."""

    name: str
    formula: str
    substituted: str
    value: float | None
    unit: str
    inputs: dict[str, Any] = field(default_factory=dict)
    note: str | None = None

    def json(self) -> dict[str, Any]:  # every field under its own name: the --json and API keys
        return asdict(self)


def _g(x: float) -> str:
    """A number as a reader writes it: 4 significant figures, thousands separated, no float noise."""
    if x == 0:
        return "0"
    if abs(x) >= 1e7:  # 5e+07 reads "50 million", 2.592e+14 "259.2 trillion"
        for div, word in ((1e15, "quadrillion"), (1e12, "trillion"), (1e9, "billion"), (1e6, "million")):
            if abs(x) >= div:
                return f"{x / div:,.4g} {word}"
    if abs(x) < 1e-3:
        return f"{x:.4g}"
    return f"{x:,.4g}" if abs(x) < 1e4 else f"{x:,.0f}"


#: Inputs outside these bounds are typos or fuzz (they would under- or overflow), not settings.
INPUT_RANGE = (1e-9, 1e18)


def _positive(**values: float) -> None:
    """InputError naming the first of ``values`` that is not a finite number within INPUT_RANGE."""
    lo, hi = INPUT_RANGE
    for name, value in values.items():
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
            raise InputError(name, f"must be a positive finite number (got {value!r})")
        if not lo <= value <= hi:
            raise InputError(name, f"must lie between {lo:g} and {hi:g} (got {value:g})")


def _finite(name: str, value: float) -> float:
    if not math.isfinite(value) or value <= 0:
        raise InputError(
            name, f"the inputs give no finite positive result (got {value!r}); check their units"
        )
    return value


# --- hardware balance ---------------------------------------------------------------------------


def balance(
    hardware: Hardware,
    bytes_per_weight: float,
    *,
    model: ModelAdapter | None = None,
    workload: AnyWorkload | None = None,
) -> list[Shown]:
    """F / (2R) per mode; with a model, its balance batch three ways (sparsity approximation, exact
    from W_batch without KV, exact with the KV read and attention at L_read)."""
    _positive(bytes_per_weight=bytes_per_weight)
    r = hardware.bandwidth_bytes_per_s
    out: list[Shown] = []
    for mode in ARITHMETIC_MODES:
        f = hardware.compute_rate(mode)
        if f is None:
            continue
        b = econ.hardware_balance(f, r, bytes_per_weight)
        out.append(
            Shown(
                f"hardware balance ({format_words(mode)})",
                "F e_w / (2 R) multiplies per weight fetched",
                f"{_g(f / 1e12)} TFLOP/s x {_g(bytes_per_weight)} B / (2 x {_g(r / 1e12)} TB/s) = "
                f"{_g(b.multiplies_per_weight)} (F / 2R = {_g(b.multiplies_per_byte)} per byte)",
                b.multiplies_per_weight,
                "multiplies per weight",
                {
                    "mode": mode,
                    "tflops": f / 1e12,
                    "bandwidth_gb_per_s": r / 1e9,
                    "bytes_per_weight": bytes_per_weight,
                },
            )
        )
    if not out:
        raise InputError("hardware", f"'{hardware.id}' publishes no compute rate; the balance needs F")
    if model is None:
        return out
    shape = model.prefill
    if shape is None:
        raise InputError(
            "model",
            f"model '{model.id}' has no [prefill] fields (P_lin,active); the balance batch needs them",
        )
    workload = resolve_scenario(workload, hardware=hardware, model=model).workload
    mode, _ = linear_mode_for(hardware, shape)
    f_lin = hardware.compute_rate(mode)
    if f_lin is None:
        raise InputError("hardware", f"'{hardware.id}' has no {mode} rate (the model's linear mode)")
    weights = model.weights
    routed = weights.experts
    if routed is not None:
        saturated = weights.saturated
        approx = econ.every_expert_balance_batch(f_lin, saturated, shape.linear_active_params, r)
        out.append(
            Shown(
                "balance batch, every expert fetched (the lecture's form)",
                "F_linear W_all / (2 P_lin,active R) = (F e_w / 2R) x (P_total / P_active)",
                f"{_g(f_lin / 1e12)} TFLOP/s x {_g(saturated / 1e9)} GB / (2 x {_g(shape.linear_active_params)} x "
                f"{_g(r / 1e12)} TB/s) = {_g(approx)}",
                approx,
                "sessions",
                {"mode": mode, "experts": routed.routed, "per_token": routed.per_token},
            )
        )
    exact = crossover_tokens(
        model, linear_flop_per_s=f_lin, bandwidth_bytes_per_s=r, expert_traffic=workload.expert_traffic
    )
    out.append(
        Shown(
            "balance batch, weights only",
            "b = F_linear W_batch(b) / (2 P_lin,active R)",
            f"b = {_g(f_lin / 1e12)} TFLOP/s x W_batch(b) / (2 x {_g(shape.linear_active_params)} x {_g(r / 1e12)} TB/s)"
            f" = {_g(exact) if exact is not None else 'n/a'} (W_batch({_g(exact or 0)}) = "
            f"{_g(float(weights.batch(exact or 1.0, workload.expert_traffic)) / 1e9)} GB)",
            exact,
            "sessions",
            {"mode": mode, "expert_traffic": workload.expert_traffic.value},
        )
    )
    compute = decode_compute(hardware, model, workload)
    k_read = model.kv_read.bytes_at(workload.read_context_tokens)
    c = compute.seconds_per_session_step
    with_kv = (
        econ.balance_batch(
            weights,
            bandwidth_bytes_per_s=r,
            seconds_per_session_step=c,
            kv_read_bytes=k_read,
            expert_traffic=workload.expert_traffic,
        )
        if c is not None
        else None
    )
    out.append(
        Shown(
            "balance batch, with KV and attention",
            "b c R = W_batch(b) + b K_read, c = 2 P_lin / F_lin + a_attn(1, L_read) / F_attn",
            (
                f"b = W_batch(b) / ({_g(r / 1e12)} TB/s x {_g(c * 1e6)} us - {_g(k_read / 1e6)} MB) = "
                + (_g(with_kv) if with_kv is not None else "none: the KV read alone outlasts the compute")
                if c is not None
                else f"unavailable: {compute.status.value}"
            ),
            with_kv,
            "sessions",
            {"read_context_tokens": workload.read_context_tokens},
        )
    )
    return out


# --- step time and trains ---------------------------------------------------------------------------


def drain(capacity_bytes: float, bandwidth_bytes_per_s: float) -> Shown:
    _positive(capacity_gb=capacity_bytes, bandwidth_gb_per_s=bandwidth_bytes_per_s)
    t = _finite("bandwidth_gb_per_s", econ.drain_time_s(capacity_bytes, bandwidth_bytes_per_s))
    return Shown(
        "drain time",
        "C / R",
        f"{_g(capacity_bytes / 1e9)} GB / {_g(bandwidth_bytes_per_s / 1e12)} TB/s = {_g(t * 1e3)} ms",
        t,
        "s",
        {"capacity_gb": capacity_bytes / 1e9, "bandwidth_gb_per_s": bandwidth_bytes_per_s / 1e9},
    )


def trains(batch: float, interval_s: float) -> list[Shown]:
    _positive(batch=batch, interval_s=interval_s)
    _finite("interval_s", batch / interval_s)
    s = econ.train_schedule(batch, interval_s)
    inputs = {"batch": batch, "interval_s": interval_s}
    return [
        Shown(
            "tokens per second per system",
            "b / tau",
            f"{_g(batch)} / {_g(interval_s * 1e3)} ms = {_g(batch)} x {_g(s.steps_per_s)} steps/s = {_g(s.tok_s)}",
            s.tok_s,
            "tok/s",
            inputs,
        ),
        Shown(
            "worst-case queueing",
            "2 tau",
            f"2 x {_g(interval_s * 1e3)} ms = {_g(s.worst_queueing_s * 1e3)} ms",
            s.worst_queueing_s,
            "s",
            inputs,
        ),
    ]


# --- prices ----------------------------------------------------------------------------------------


def breakpoint_kv(
    active_params: float, flop_per_s: float, bandwidth_bytes_per_s: float, breakpoint_tokens: float
) -> Shown:
    _positive(
        active_params=active_params,
        tflops=flop_per_s,
        bandwidth_gb_per_s=bandwidth_bytes_per_s,
        breakpoint_tokens=breakpoint_tokens,
    )
    k = econ.kv_bytes_per_token_from_breakpoint(
        active_params, flop_per_s, bandwidth_bytes_per_s, breakpoint_tokens
    )
    return Shown(
        "KV bytes per token from a surcharge breakpoint",
        "kappa = 2 P_active R / (F L*)",
        f"2 x {_g(active_params)} x {_g(bandwidth_bytes_per_s / 1e12)} TB/s / ({_g(flop_per_s / 1e12)} TFLOP/s x "
        f"{_g(breakpoint_tokens)}) = {_g(k)} B",
        k,
        "bytes per token",
        {
            "active_params": active_params,
            "tflops": flop_per_s / 1e12,
            "bandwidth_gb_per_s": bandwidth_bytes_per_s / 1e9,
            "breakpoint_tokens": breakpoint_tokens,
        },
    )


def _give_one(first: str, *pair: str) -> Note:
    """``give --hardware, or both --capacity-gb and --bandwidth-gb-per-s``, spelt per surface."""
    return Note.of("give ", Setting(first), ", or both ", Setting(pair[0]), " and ", Setting(pair[1]))


def drain_of(hw: Hardware | None, capacity_gb: float | None, bandwidth_gb_per_s: float | None) -> Shown:
    """C / R of a hardware row, or of a capacity and bandwidth stated instead of one (not both)."""
    if hw is not None:
        _one_source(hw, "capacity_gb", capacity_gb, "bandwidth_gb_per_s", bandwidth_gb_per_s)
        return drain(hw.memory_bytes, hw.bandwidth_bytes_per_s)
    if capacity_gb is None or bandwidth_gb_per_s is None:
        raise InputError("hardware", _give_one("hardware", "capacity_gb", "bandwidth_gb_per_s"))
    return drain(capacity_gb * 1e9, bandwidth_gb_per_s * 1e9)


def _one_source(hw: Hardware, *given: str | float | None) -> None:
    """InputError when numbers are given beside a hardware row they would silently lose to."""
    names = [str(given[i]) for i in range(0, len(given), 2) if given[i + 1] is not None]
    if names:
        stated: list[str | Setting] = [Setting(names[0])]
        for name in names[1:]:
            stated += [" and ", Setting(name)]
        raise InputError(
            names[0],
            Note.of(
                *stated,
                f" {'conflicts' if len(names) == 1 else 'conflict'} with ",
                Setting("hardware"),
                f" '{hw.id}', which states its own; give one or the other",
            ),
        )


def trains_of(batch: float, steps_per_s: float | None, interval_ms: float | None) -> list[Shown]:
    """``trains`` with the interval given as departures per second or as milliseconds (exactly one)."""
    if (steps_per_s is None) == (interval_ms is None):
        raise InputError(
            "steps_per_s",
            Note.of("give exactly one of ", Setting("steps_per_s"), " or ", Setting("interval_ms")),
        )
    if steps_per_s is not None:
        if not steps_per_s > 0:
            raise InputError("steps_per_s", f"must be positive (got {steps_per_s:g})")
        return trains(batch, 1.0 / steps_per_s)
    assert interval_ms is not None
    return trains(batch, interval_ms / 1e3)


def breakpoint_of(
    active_params: float,
    breakpoint_tokens: float,
    hw: Hardware | None,
    mode: str,
    tflops: float | None,
    bandwidth_gb_per_s: float | None,
) -> Shown:
    """``breakpoint_kv`` on a hardware row's rate in ``mode`` and its bandwidth, or on F and R stated
    instead of one."""
    if hw is not None:
        _one_source(hw, "tflops", tflops, "bandwidth_gb_per_s", bandwidth_gb_per_s)
        rate = hw.compute_rate(mode)
        if rate is None:
            raise InputError(
                "mode",
                Note.of(
                    f"'{hw.id}' has no {mode} rate; pick another ",
                    Setting("mode"),
                    " or give ",
                    Setting("tflops"),
                ),
            )
        f, r = rate, hw.bandwidth_bytes_per_s
    elif tflops is None or bandwidth_gb_per_s is None:
        raise InputError("hardware", _give_one("hardware", "tflops", "bandwidth_gb_per_s"))
    else:
        f, r = tflops * 1e12, bandwidth_gb_per_s * 1e9
    return breakpoint_kv(active_params, f, r, breakpoint_tokens)


def price_ratio(output_usd_per_mtok: float, input_usd_per_mtok: float) -> Shown:
    _positive(output_usd=output_usd_per_mtok, input_usd=input_usd_per_mtok)
    _finite("input_usd", output_usd_per_mtok / input_usd_per_mtok)
    p = econ.price_ratio_reading(output_usd_per_mtok, input_usd_per_mtok)
    return Shown(
        "how memory-bound decode is at the provider's operating point",
        "output price / input price = decode time per token / compute floor per token",
        f"{_g(output_usd_per_mtok)} / {_g(input_usd_per_mtok)} = {_g(p.ratio)}x the compute floor; "
        f"memory-bound share of a step 1 - 1/{_g(p.ratio)} = {p.memory_share:.0%}",
        p.ratio,
        "x the compute floor",
        {"output_usd_per_mtok": output_usd_per_mtok, "input_usd_per_mtok": input_usd_per_mtok},
    )


def _hours(seconds: float) -> str:
    return f"{_g(seconds / 60)} minutes" if seconds < 3600 else f"{_g(seconds / 3600)} h"


def lecture_reading(hold_s: float, chosen: econ.MemoryTier, tiers: tuple[econ.MemoryTier, ...]) -> str:
    """The lecture's reading of the cache prices beside this answer: where it puts this hold (when the hold
    is one it names), and why the rows given here place it elsewhere when they do."""
    named = ", ".join(
        f"a {_g(hold / 60) + '-minute' if hold < 3600 else _g(hold / 3600) + '-hour'} cache on "
        f"{'spinning disk' if tier == 'disk' else tier}"
        for hold, tier in econ.LECTURE_CACHE_TIERS
    )
    text = f"The lecture's reading: {named} (flash drains in about a minute there, disk in about an hour)."
    lecture_tier = dict(econ.LECTURE_CACHE_TIERS).get(hold_s)
    if lecture_tier is None or lecture_tier == chosen.name:
        return text
    theirs = next((t for t in tiers if t.name == lecture_tier), None)
    why = (
        f" On these rows {lecture_tier} drains in {_hours(theirs.drain_time_s)}, so this hold sits nearest "
        f"{chosen.name}; the tier rows, not the rule, differ (give yours with --tiers)."
        if theirs is not None
        else f" These rows have no {lecture_tier} tier."
    )
    return text + why


def cache_tier(hold_s: float, tiers: tuple[econ.MemoryTier, ...] = econ.MEMORY_TIERS) -> list[Shown]:
    """Each tier's drain time and the tier nearest ``hold_s`` (log scale), with the lecture's reading."""
    _positive(hold_s=hold_s)
    chosen = econ.tier_for_hold_time(hold_s, tiers)
    out = [
        Shown(
            f"drain time of {t.name}",
            "capacity / bandwidth",
            f"{_g(t.capacity_bytes / 1e9)} GB / {_g(t.bandwidth_bytes_per_s / 1e9)} GB/s = {_g(t.drain_time_s)} s",
            t.drain_time_s,
            "s",
            {"device": t.device, "source": t.source},
        )
        for t in tiers
    ]
    out.append(
        Shown(
            "tier for the hold time",
            "the tier whose drain time is nearest the hold time (log scale)",
            f"hold {_g(hold_s)} s -> {chosen.name} (drains in {_g(chosen.drain_time_s)} s)",
            chosen.drain_time_s,
            "s",
            {
                "hold_s": hold_s,
                "tier": chosen.name,
                "lecture_tier": dict(econ.LECTURE_CACHE_TIERS).get(hold_s),
                "lecture_source": econ.LECTURE_CACHE_TIERS_SOURCE,
            },
            lecture_reading(hold_s, chosen, tiers),
        )
    )
    return out


# --- training ---------------------------------------------------------------------------------------


def training(
    traffic_tok_s: float,
    life_days: float,
    active_params: float,
    *,
    rl_flops_per_param_token: float = 4.0,
    rl_efficiency: float = 0.3,
) -> list[Shown]:
    _positive(
        traffic_tok_s=traffic_tok_s,
        life_days=life_days,
        active_params=active_params,
        rl_efficiency=rl_efficiency,
    )
    if rl_efficiency > 1.0:
        raise InputError(
            "rl_efficiency",
            f"is a fraction of training's efficiency, at most 1 (got {rl_efficiency:g}); give e.g. 0.3",
        )
    if not 2.0 <= rl_flops_per_param_token <= 6.0:
        raise InputError(
            "rl_flops",
            f"RL costs between 2 and 6 FLOPs per parameter per token (got {rl_flops_per_param_token:g})",
        )
    _finite("traffic_tok_s", traffic_tok_s * life_days * econ.SECONDS_PER_DAY / active_params)
    e = econ.equal_cost(
        traffic_tok_s,
        life_days * econ.SECONDS_PER_DAY,
        active_params,
        rl_flops_per_param_token=rl_flops_per_param_token,
        rl_efficiency=rl_efficiency,
    )
    inputs = {
        "traffic_tok_s": traffic_tok_s,
        "life_days": life_days,
        "active_params": active_params,
        "rl_flops_per_param_token": rl_flops_per_param_token,
        "rl_efficiency": rl_efficiency,
    }
    return [
        Shown(
            "lifetime inference tokens",
            "D_inf = traffic x life",
            f"{_g(traffic_tok_s)} tok/s x {_g(life_days)} days x 86,400 s = {_g(e.inference_tokens)}",
            e.inference_tokens,
            "tokens",
            inputs,
        ),
        Shown(
            "equal-cost pre-training tokens",
            "6 N D_pre = 2 N D_inf, so D_pre = D_inf / 3",
            f"{_g(e.inference_tokens)} / 3 = {_g(e.pretrain_tokens_equal_cost)}",
            e.pretrain_tokens_equal_cost,
            "tokens",
            inputs,
        ),
        Shown(
            "equal-cost RL tokens",
            "(c_rl / eta) N D_rl = 2 N D_inf, so D_rl = 2 eta D_inf / c_rl",
            f"2 x {_g(rl_efficiency)} x {_g(e.inference_tokens)} / {_g(rl_flops_per_param_token)} = {_g(e.rl_tokens_equal_cost)}",
            e.rl_tokens_equal_cost,
            "tokens",
            inputs,
        ),
        Shown(
            "Chinchilla-optimal tokens",
            "20 N",
            f"20 x {_g(active_params)} = {_g(e.chinchilla_tokens)}",
            e.chinchilla_tokens,
            "tokens",
            inputs,
        ),
        Shown(
            "over-training",
            "D / (20 N), with D_pre ~ D_inf (the text's reading: the token counts about the same)",
            f"{_g(e.inference_tokens)} / {_g(e.chinchilla_tokens)} = {_g(e.over_training)}x "
            f"(exact equal cost, D_inf / 3: {_g(e.over_training_equal_cost)}x)",
            e.over_training,
            "x Chinchilla",
            inputs,
        ),
    ]


# --- the lecture's worked numbers ---------------------------------------------------------------------


#: The lecture's inputs where it states them; the Blackwell row and its rates come from the catalog.
#: The breakpoint reading charges the row's FP8 rate (the serving precision assumed for a frontier model).
LECTURE_BREAKPOINT_MODE = "fp8"
LECTURE_BLACKWELL = "nvidia-b200"
LECTURE: dict[str, float] = {
    "fp4_bytes_per_weight": 0.5,
    "hardware_constant": 300.0,
    "deepseek_experts": 256,
    "deepseek_active_experts": 32,
    "rubin_capacity_bytes": 288e9,
    "rubin_bandwidth_bytes_per_s": 20e12,
    "batch": 2000.0,
    "steps_per_s": 64.0,
    "breakpoint_tokens": 200_000.0,
    "frontier_active_params": 100e9,
    "traffic_tok_s": 50e6,
    "life_days": 60.0,
}


def lecture(blackwell: Hardware) -> list[Shown]:
    """The lecture's own numbers, recomputed: the Blackwell row's FP4 balance, 300 x sparsity 8, the
    Rubin drain time, the 2,000-session train at 64 steps/s, the KV bytes behind a 200k breakpoint
    (100B active, the row's FP8 rate), and two months of 50M tok/s against 20 tokens per parameter."""
    L = LECTURE
    fp4 = blackwell.compute_rate("fp4")
    if fp4 is None:
        raise InputError("hardware", f"'{blackwell.id}' has no fp4 rate for the lecture's FP4 balance")
    out = [s for s in balance(blackwell, L["fp4_bytes_per_weight"]) if s.inputs.get("mode") == "fp4"]
    sparsity = L["deepseek_experts"] / L["deepseek_active_experts"]
    approx = econ.sparsity_balance_batch(
        L["hardware_constant"], L["deepseek_experts"], L["deepseek_active_experts"]
    )
    out.append(
        Shown(
            "the lecture's balance batch (DeepSeek, 32 of 256 experts)",
            "~300 x sparsity",
            f"{_g(L['hardware_constant'])} x {L['deepseek_experts']} / {L['deepseek_active_experts']} = {_g(approx)}",
            approx,
            "sessions",
            {"hardware_constant": L["hardware_constant"], "sparsity": sparsity},
        )
    )
    out.append(drain(L["rubin_capacity_bytes"], L["rubin_bandwidth_bytes_per_s"]))
    out.extend(trains(L["batch"], 1.0 / L["steps_per_s"]))
    mode = LECTURE_BREAKPOINT_MODE
    rate = blackwell.compute_rate(mode)
    if rate is not None:
        out.append(
            breakpoint_kv(
                L["frontier_active_params"], rate, blackwell.bandwidth_bytes_per_s, L["breakpoint_tokens"]
            )
        )
    out.extend(training(L["traffic_tok_s"], L["life_days"], L["frontier_active_params"]))
    return out
