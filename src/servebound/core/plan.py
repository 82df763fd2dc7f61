"""Fleet sizing: how many systems a stated traffic needs at a per-session floor and a first-token budget.

Every number comes from ceilings computed elsewhere, so the counts are lower bounds (no fleet smaller
than this can serve the traffic; a real one needs more):

* One system under its best layout holds ``sessions`` decode sessions at b*, each at ``r`` tok/s >= r*.
* The traffic's sessions spread over the decode systems run at the speed of the batch they make
  (``served_batch``: at most b* per replica), not at b*'s: fewer sessions run faster.
* Concurrent decode sessions: N users (each streaming), or by Little's law lambda G / r for lambda
  requests/s of G output tokens each (a session lasts G / r seconds).
* Request rate: lambda given, or N r / G for N users who send their next prompt as the last answer ends.
* One replica prefills a prompt of L tokens in t_pf (its stages one after another), and its pp stages
  work on pp prompts at once: a system prefills dp pp L / t_pf tokens/s. The first token waits t_pf,
  which must fit the budget.
* Separate (disaggregated) pools: ceil(lambda L / P) prefill systems plus ceil(sessions / S) decode
  systems. Shared pool: a system spends the fraction lambda L / (n P) of its time on prefill and
  sessions / (n S) on decode, so n >= lambda L / P + sessions / S.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from servebound.core.cost import usd_per_mtok_at_rate
from servebound.core.layout import LayoutResult, System, times_at
from servebound.core.model import ModelAdapter
from servebound.core.steps import Step
from servebound.core.workload import Workload


@dataclass(frozen=True)
class FleetPlan:
    """Systems (and devices) needed for separate and shared pools, with every step."""

    request_rate_per_s: float
    concurrent_sessions: float
    output_tok_s: float
    prefill_tok_s: float
    decode_systems: int
    prefill_systems: int
    separate_systems: int
    shared_systems: int
    devices_per_system: int
    ttft_s: float
    ttft_ok: bool | None
    usd_per_hour_separate: float | None
    usd_per_hour_shared: float | None
    usd_per_mtok_output_shared: float | None
    steps: tuple[Step, ...]


def plan_fleet(
    *,
    sessions_per_system: int,
    per_session_tok_s: float,
    prefill_s: float,
    prefill_parallel_prompts: int,
    prompt_tokens: int,
    output_tokens: int,
    devices_per_system: int,
    users: float | None = None,
    requests_per_s: float | None = None,
    ttft_budget_s: float | None = None,
    usd_per_device_hour: float | None = None,
) -> FleetPlan:
    """Size a fleet (see the module docstring); exactly one of ``users`` and ``requests_per_s``."""
    if (users is None) == (requests_per_s is None):
        raise ValueError("give exactly one of users and requests_per_s")
    r = per_session_tok_s
    g, length = output_tokens, prompt_tokens
    steps: list[Step] = []
    rate, concurrent = _traffic(users, requests_per_s, r, g, steps)
    output_rate = concurrent * r
    steps.append(Step("output_tok_per_s", output_rate, f"sessions x r = {concurrent:.4g} x {r:.4g}"))
    decode_systems = math.ceil(concurrent / sessions_per_system - 1e-12)
    steps.append(
        Step(
            "decode_systems",
            decode_systems,
            f"ceil(sessions / S) = ceil({concurrent:.4g} / {sessions_per_system})",
        )
    )
    prefill_rate = prefill_parallel_prompts * length / prefill_s
    steps.append(
        Step(
            "prefill_tok_per_s_per_system",
            prefill_rate,
            f"P = dp pp L / t_pf = {prefill_parallel_prompts} x {length} / {prefill_s:.4g} s",
        )
    )
    demand = rate * length
    prefill_systems = math.ceil(demand / prefill_rate - 1e-12)
    steps.append(
        Step(
            "prefill_systems",
            prefill_systems,
            f"ceil(lambda L / P) = ceil({demand:.4g} / {prefill_rate:.4g})",
        )
    )
    separate = prefill_systems + decode_systems
    steps.append(Step("separate_systems", separate, f"{prefill_systems} prefill + {decode_systems} decode"))
    shared = max(1, math.ceil(demand / prefill_rate + concurrent / sessions_per_system - 1e-12))
    steps.append(
        Step(
            "shared_systems",
            shared,
            f"ceil(lambda L / P + sessions / S) = ceil({demand / prefill_rate:.4g} + "
            f"{concurrent / sessions_per_system:.4g})",
        )
    )
    ttft_ok = None if ttft_budget_s is None else prefill_s <= ttft_budget_s
    steps.append(
        Step(
            "ttft_s",
            prefill_s,
            "t_pf of one prompt on one replica"
            + (
                ""
                if ttft_budget_s is None
                else f"; budget {ttft_budget_s:g} s {'met' if ttft_ok else 'MISSED'}"
            ),
        )
    )
    per_hour_sep = per_hour_shared = per_mtok = None
    if usd_per_device_hour is not None:
        per_hour_sep = separate * devices_per_system * usd_per_device_hour
        per_hour_shared, per_mtok = _shared_cost(
            shared, devices_per_system, usd_per_device_hour, output_rate, steps
        )
    return FleetPlan(
        request_rate_per_s=rate,
        concurrent_sessions=concurrent,
        output_tok_s=output_rate,
        prefill_tok_s=demand,
        decode_systems=decode_systems,
        prefill_systems=prefill_systems,
        separate_systems=separate,
        shared_systems=shared,
        devices_per_system=devices_per_system,
        ttft_s=prefill_s,
        ttft_ok=ttft_ok,
        usd_per_hour_separate=per_hour_sep,
        usd_per_hour_shared=per_hour_shared,
        usd_per_mtok_output_shared=per_mtok,
        steps=tuple(steps),
    )


def _traffic(
    users: float | None, requests_per_s: float | None, r: float, g: int, steps: list[Step]
) -> tuple[float, float]:
    """The request rate and the concurrent sessions, from N users or from lambda (Little's law)."""
    if users is not None:
        concurrent = float(users)
        rate = users * r / g
        steps.append(Step("concurrent_sessions", concurrent, f"N users = {users:g}"))
        steps.append(Step("request_rate_per_s", rate, f"N r / G = {users:g} x {r:.4g} / {g}"))
        return rate, concurrent
    assert requests_per_s is not None
    rate = float(requests_per_s)
    concurrent = rate * g / r
    steps.append(Step("request_rate_per_s", rate, f"lambda = {rate:g}"))
    steps.append(
        Step("concurrent_sessions", concurrent, f"Little's law lambda G / r = {rate:g} x {g} / {r:.4g}")
    )
    return rate, concurrent


def _shared_cost(
    shared: int, devices: int, usd_per_device_hour: float, output_rate: float, steps: list[Step]
) -> tuple[float, float | None]:
    """The shared pool's USD per hour and, when it emits tokens, its USD per million output tokens."""
    per_hour = shared * devices * usd_per_device_hour
    steps.append(
        Step(
            "usd_per_hour_shared",
            per_hour,
            f"{shared} systems x {devices} devices x ${usd_per_device_hour:g}/device-hour",
        )
    )
    if output_rate <= 0:
        return per_hour, None
    per_mtok = usd_per_mtok_at_rate(per_hour, output_rate)
    steps.append(
        Step(
            "usd_per_mtok_output_shared",
            per_mtok,
            f"$/h / (output tok/s x 3600) x 1e6 = {per_hour:.4g} / ({output_rate:.4g} x 3600) x 1e6",
        )
    )
    return per_hour, per_mtok


@dataclass(frozen=True)
class ServedBatch:
    """The decode systems as the traffic fills them: sessions per system, the micro-batch per replica
    (at most b*) and the per-session speed there, with whether it clears the floor."""

    sessions_per_system: float
    batch: int
    per_session_tok_s: float
    clears_floor: bool


def served_batch(
    system: System,
    model: ModelAdapter,
    best: LayoutResult,
    workload: Workload,
    compute_s: float | None,
    *,
    users: float | None,
    requests_per_s: float | None,
    output_tokens: int,
) -> ServedBatch:
    """The speed N concurrent sessions get: spread over ceil(N / S) systems, ceil(N / (n dp pp)) per
    replica's micro-batch, r = 1 / tau(b). From a request rate, N = lambda G / r depends on r, so the
    batch is found by iteration (each step lowers it; it stops when the batch repeats)."""
    assert best.sessions is not None and best.batch_star is not None
    sessions, star, lanes = best.sessions, best.batch_star, best.layout.dp * best.layout.pp

    def at(concurrent: float) -> tuple[float, int, float]:
        per_system = concurrent / max(1, math.ceil(concurrent / sessions - 1e-12))
        batch = max(1, min(star, math.ceil(per_system / lanes - 1e-12)))
        times = times_at(system, model, best.layout, batch, workload, compute_s_per_session_step=compute_s)
        return per_system, batch, 1.0 / times.token_s

    if users is not None:
        per_system, batch, rate = at(users)
    else:
        assert requests_per_s is not None and best.per_session_tok_s is not None
        rate, previous = best.per_session_tok_s, None
        for _ in range(64):
            per_system, batch, rate = at(requests_per_s * output_tokens / rate)
            if batch == previous:
                break
            previous = batch
    clears = rate >= workload.floor_tok_s * (1 - 1e-12)
    return ServedBatch(per_system, batch, rate, clears)


def served_step(served: ServedBatch, lanes: int, floor: float) -> Step:
    verdict = "clears" if served.clears_floor else "is BELOW"
    return Step(
        "served_per_session_tok_per_s",
        served.per_session_tok_s,
        f"r(b) at b = ceil(sessions per system / (dp pp)) = ceil({served.sessions_per_system:.4g} / {lanes})"
        f" = {served.batch}; {verdict} the floor r* = {floor:g}",
    )
