"""Prefill ceilings and time to first token, as the derivation's prefill part and calculator procedure.

A setting is a batch of ``b`` prompts of ``L`` tokens pushed through in chunks of ``c`` tokens (the
last chunk may be shorter); chunk ``i`` starts after a cached prefix ``l = i c``. Per prompt token,

    q_pf(b, c, l) = W_batch(bc) / (bc) + K_read(l) / c + kappa_KV,w            (bytes)
    a_pf(c, l)    = 2 P_lin,active + a_attn(c, l)                              (FLOP)
    a_attn(c, l)  = alpha_global (l + (c+1)/2) + alpha_local/c sum_{j=1..c} min(l+j, w) + alpha_state

and the batch needs at least

    t_pf,min = max(Q_pf / R, A_linear / F_linear + A_attention / F_attention),   T_pf = b L / t_pf,min.

The kernel-dependent traffic (the attention kernel's own bytes and activations) is dropped, which only
lowers Q_pf and so keeps R / q_pf a ceiling; every result carries that assumption. So does the zero
prefill workspace Omega_pf in the capacity gate, which only admits more settings.

Three facts keep every evaluation closed-form, so a chunk of 1 over a million tokens costs the same as
one shot, and a million prompt lengths are one numpy pass:

* Total attention arithmetic does not depend on the chunking. Summed over the chunks of a prompt,
  ``c a_attn(c, l)`` counts every token ``t = 1..L`` once, with ``t`` pairs on global layers and
  ``min(t, w)`` on local ones, so ``A_attention = b L a_attn(L, 0)`` whatever ``c`` is.
* The prefixes form the arithmetic sequence ``c, 2c, ...`` and K_read is piecewise linear, so the
  summed rereads have a closed form (:func:`_summed_reread_bytes`).
* W_batch is the same function for every chunk except a shorter last one.

A first chunk has no cached prefix, so it rereads nothing (K_read(0) would otherwise charge recurrent
state that does not exist yet); the derivation's one-shot case ``c = L, l = 0`` has no reread term.
"""

from __future__ import annotations

import math
import operator
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Literal

from servebound.core.advice import Note, Setting
from servebound.core.arith import np
from servebound.core.errors import InputError
from servebound.core.hardware import Hardware
from servebound.core.model import ModelAdapter
from servebound.core.offload import (
    OffloadSpec,
    OffloadSplit,
    cache_factor,
    effective_model,
    one_shot_host_split,
    prefill_host_time,
    split,
    tier_report,
)
from servebound.core.prefill_cost import (
    Evaluation,
    crossover_tokens,
    crossover_with_attention,
    evaluate_one_shot,
    evaluate_settings,
    prefill_shape,
)
from servebound.core.prefill_records import (
    WORKSPACE_BYTES,
    BatchMode,
    ChunkMode,
    PrefillCurve,
    PrefillRange,
    PrefillResult,
    PrefillVerdict,
    assumptions_of,
    experts_touched,
)
from servebound.core.rates import BoundBy, bound_by, mode_rates
from servebound.core.search import largest_true
from servebound.core.workload import (
    KVAllocation,
    RangeLimit,
    Workload,
    memory_fit_batch,
    range_top,
)

if TYPE_CHECKING:
    from collections.abc import Callable

    from numpy.typing import ArrayLike

    from servebound.core.arith import Floats

# --- public procedures ---------------------------------------------------------------------------


def _positive_int(field: str, value: object) -> int:
    if isinstance(value, bool):
        raise InputError(field, f"must be a positive integer, got {value!r}")
    try:
        number = operator.index(value)  # type: ignore[arg-type]
    except TypeError:
        raise InputError(field, f"must be a positive integer, got {value!r}") from None
    if number < 1:
        raise InputError(field, f"must be at least 1, got {number}")
    return int(number)


def _checked_setting(
    model: ModelAdapter,
    workload: Workload,
    prompt_tokens: int,
    chunk_tokens: int | None,
    ttft_budget_s: float | None,
    batch: int | Literal["max"],
) -> tuple[int, int, bool, int]:
    """(prompt, chunk, searching, given batch), or an InputError naming the argument."""
    prompt = _positive_int("prompt_tokens", prompt_tokens)
    limit = model.context_limit_tokens
    if limit is not None and prompt > limit:
        raise InputError(
            "prompt_tokens", f"{prompt} exceeds the context limit of model '{model.id}' ({limit} tokens)"
        )
    if workload.kv_allocation is not KVAllocation.PAGED and prompt > workload.alloc_context_tokens:
        raise InputError(
            "prompt_tokens",
            Note.of(
                f"{prompt:,} exceeds the reserved context ({workload.alloc_context_tokens:,} tokens); reserve at "
                "least the prompt (",
                Setting("alloc_context", prompt),
                ")",
                effect="the prompt fits its session's reservation",
            ),
        )
    chunk = prompt if chunk_tokens is None else min(_positive_int("chunk_tokens", chunk_tokens), prompt)
    if ttft_budget_s is not None and not (math.isfinite(ttft_budget_s) and ttft_budget_s > 0):
        raise InputError("ttft_budget_s", f"must be a positive number of seconds, got {ttft_budget_s!r}")
    searching = batch == "max"
    given = 1 if searching else _positive_int("batch", batch)
    return prompt, chunk, searching, given


def _choose(
    margin: float, batch_mem: int, searching: bool, given: int, within_budget: Callable[[int], bool]
) -> tuple[PrefillVerdict, int]:
    """The verdict and the batch evaluated: the first failing gate, else the given or searched batch."""
    if margin < 0:
        return PrefillVerdict.NO_RESIDENT_FIT, given
    if batch_mem == 0:
        return PrefillVerdict.NO_SESSION_FIT, given
    if searching:
        if not within_budget(1):
            return PrefillVerdict.OVER_BUDGET, 1
        chosen = batch_mem if within_budget(batch_mem) else largest_true(within_budget, 1, batch_mem)
        return PrefillVerdict.FITS, chosen
    if given > batch_mem:
        return PrefillVerdict.NO_BATCH_FIT, given
    return (PrefillVerdict.FITS if within_budget(given) else PrefillVerdict.OVER_BUDGET), given


def prefill(
    hardware: Hardware,
    model: ModelAdapter,
    prompt_tokens: int,
    *,
    workload: Workload | None = None,
    batch: int | Literal["max"] = 1,
    chunk_tokens: int | None = None,
    ttft_budget_s: float | None = None,
    linear_mode: str | None = None,
    attention_mode: str | None = None,
) -> PrefillResult:
    """The prefill ceiling T_pf = b L / t_pf,min for prompts of ``prompt_tokens`` tokens.

    ``batch``: a fixed b, or ``"max"`` for the largest b passing the capacity gate
    W_resident + O + b K_alloc(L_alloc) + Omega_pf <= C (Omega_pf = 0) and, with ``ttft_budget_s``,
    t_pf,min(b) <= tau* (found by bisection; t_pf,min and T_pf both rise with b). ``chunk_tokens``:
    None (or >= L) is one-shot, the ceiling at fixed batch; a smaller chunk gives a policy ceiling.
    ``linear_mode`` / ``attention_mode`` override the model's arithmetic modes for the rate lookups.

    A reserved cache holds the workload's alloc context (prefill writes the cache decode then reads),
    so the prompt must fit in it, L <= L_alloc; a paged cache holds what the prompt writes, K_store(L),
    so only the model's context limit (when it states one) caps L;
    anything else is an InputError naming ``prompt_tokens``. Failing gates and a budget no setting
    meets are verdicts in the result, never exceptions.

    With ``ttft_budget_s`` the result also carries ``unrestricted``, the same question without the
    budget: a caller who supplies tau* tightens the settings without hiding the unrestricted ceiling.
    """
    setting = (batch, chunk_tokens)
    result = _prefill(
        hardware, model, prompt_tokens, workload, *setting, ttft_budget_s, linear_mode, attention_mode
    )
    if ttft_budget_s is None:
        return result
    free = _prefill(hardware, model, prompt_tokens, workload, *setting, None, linear_mode, attention_mode)
    return replace(result, unrestricted=free)


def _prefill(
    hardware: Hardware,
    model: ModelAdapter,
    prompt_tokens: int,
    workload: Workload | None,
    batch: int | Literal["max"],
    chunk_tokens: int | None,
    ttft_budget_s: float | None,
    linear_mode: str | None,
    attention_mode: str | None,
) -> PrefillResult:
    """:func:`prefill` under one set of settings (the budget, when given, restricting them)."""
    workload = workload or Workload()
    shape = prefill_shape(model)
    prompt, chunk, searching, given = _checked_setting(
        model, workload, prompt_tokens, chunk_tokens, ttft_budget_s, batch
    )
    if workload.offload is not None:
        return _offloaded_prefill(
            hardware, model, workload, prompt, chunk, batch, ttft_budget_s, linear_mode, attention_mode
        )

    rates = mode_rates(hardware, shape, linear_mode, attention_mode)
    assumptions = assumptions_of(hardware, model, workload, rates)
    resident = model.weights.resident
    margin = hardware.memory_bytes - resident - workload.overhead_bytes - WORKSPACE_BYTES
    # Reserved: each prompt's session holds K_alloc(L_alloc); paged: the cache its prompt writes, K_store(L).
    held = prompt if workload.kv_allocation is KVAllocation.PAGED else workload.alloc_context_tokens
    kv_alloc = model.kv_alloc.bytes_at(held)
    batch_mem, capped = memory_fit_batch(margin, kv_alloc)

    def evaluate(b: int) -> Evaluation[Any]:
        bandwidth, traffic = hardware.bandwidth_bytes_per_s, workload.expert_traffic
        if chunk == prompt:  # one shot: no earlier chunk to reread, one sweep (plain floats)
            return evaluate_one_shot(model, shape, rates, bandwidth, traffic, b, prompt)
        return evaluate_settings(model, shape, rates, bandwidth, traffic, b, prompt, chunk)

    def within_budget(b: int) -> bool:
        return ttft_budget_s is None or float(evaluate(b).time) <= ttft_budget_s

    verdict, chosen = _choose(margin, batch_mem, searching, given, within_budget)

    ev = evaluate(chosen)
    tokens = float(ev.tokens)
    time = float(ev.time)
    memory_time = float(ev.memory_time)
    compute_time = None if ev.compute_time is None else float(ev.compute_time)
    flops = float(ev.linear_flops + ev.attention_flops)
    traffic = float(ev.traffic_bytes)
    crossover = None
    if rates.linear_flop_per_s is not None:
        crossover = crossover_tokens(
            model,
            linear_flop_per_s=rates.linear_flop_per_s,
            bandwidth_bytes_per_s=hardware.bandwidth_bytes_per_s,
            expert_traffic=workload.expert_traffic,
        )
    with_attention = crossover_with_attention(
        model,
        shape,
        rates,
        hardware.bandwidth_bytes_per_s,
        workload.expert_traffic,
        chosen,
        range_top(model, workload)[0],
    )
    return PrefillResult(
        hardware=hardware,
        model=model,
        workload=workload,
        assumptions=assumptions,
        verdict=verdict,
        prompt_tokens=prompt,
        batch=chosen,
        batch_mode=BatchMode.MAX if searching else BatchMode.GIVEN,
        chunk=chunk,
        chunk_mode=ChunkMode.ONE_SHOT if chunk == prompt else ChunkMode.POLICY,
        chunks=int(ev.chunks),
        resident_bytes=resident,
        resident_margin_bytes=margin,
        kv_alloc_bytes=kv_alloc,
        batch_mem=batch_mem,
        batch_mem_capped=capped,
        memory_tok_s=tokens / memory_time,
        compute_tok_s=None if compute_time is None else tokens / compute_time,
        tok_s=tokens / time,
        time_s=time,
        memory_time_s=memory_time,
        compute_time_s=compute_time,
        linear_time_s=None if ev.linear_time is None else float(ev.linear_time),
        attention_time_s=None if ev.attention_time is None else float(ev.attention_time),
        bound_by=bound_by(memory_time, compute_time),
        traffic_bytes=traffic,
        weight_sweep_bytes=float(ev.sweep_bytes),
        kv_reread_bytes=float(ev.reread_bytes),
        kv_write_bytes=float(ev.write_bytes),
        linear_flops=float(ev.linear_flops),
        attention_flops=float(ev.attention_flops),
        bytes_per_token=traffic / tokens,
        flops_per_token=flops / tokens,
        crossover_tokens=crossover,
        ttft_budget_s=ttft_budget_s,
        ttft_ok=None if ttft_budget_s is None else time <= ttft_budget_s,
        crossover_with_attention_tokens=with_attention,
        experts_touched=experts_touched(model, chosen * chunk, workload.expert_traffic),
    )


def _device_tier(
    hardware: Hardware, model: ModelAdapter, workload: Workload
) -> tuple[OffloadSpec, OffloadSplit, ModelAdapter]:
    """The offload spec, where the bytes sit, and the device tier's adapter (its cache scaled to the
    margins both tiers leave): what every prefill with weights in host RAM evaluates on the device."""
    spec = workload.offload
    assert spec is not None
    where = split(model, spec)
    device_margin = hardware.memory_bytes - where.device_resident_bytes - workload.overhead_bytes
    host_margin = spec.host_memory_bytes - where.host_resident_bytes
    return spec, where, effective_model(model, where, 0.0, cache_factor(where, device_margin, host_margin))


def _offloaded_prefill(
    hardware: Hardware,
    model: ModelAdapter,
    workload: Workload,
    prompt: int,
    chunk: int,
    batch: int | Literal["max"],
    ttft_budget_s: float | None,
    linear_mode: str | None,
    attention_mode: str | None,
) -> PrefillResult:
    """Prefill with weights in host RAM: the device's own traffic and math on the device-tier adapter,
    and the host tier's weights moved per chunk (``core.offload.prefill_host_time``); the batch takes
    the larger of the two times (either can overlap the other)."""
    spec, where, device_only = _device_tier(hardware, model, workload)
    host_margin = spec.host_memory_bytes - where.host_resident_bytes
    r = _prefill(
        hardware,
        device_only,
        prompt,
        replace(workload, offload=None),
        batch,
        chunk,
        ttft_budget_s,
        linear_mode,
        attention_mode,
    )
    host_bytes, host_s = prefill_host_time(
        model, where, spec, r.batch, prompt, chunk, workload.expert_traffic
    )
    # The host tier's memory read alone (its CPU's FLOPs, where stated, can only lengthen a chunk).
    _, host_read_s = prefill_host_time(
        model, where, spec.without_cpu(), r.batch, prompt, chunk, workload.expert_traffic
    )
    tokens = float(r.batch * prompt)
    time = max(r.time_s, host_s)
    memory = max(r.memory_time_s, host_read_s)
    compute = r.compute_time_s
    if host_s > host_read_s:  # the CPU's FLOPs set some chunk's time: compute bound there
        compute = max(compute or 0.0, host_s)
    per_token = (r.traffic_bytes / tokens, host_bytes / tokens)
    report = tier_report(model, spec, where, host_margin, r.batch, per_token, (r.memory_time_s, host_s))
    return replace(
        r,
        model=model,
        workload=workload,
        time_s=time,
        tok_s=tokens / time,
        memory_time_s=memory,
        memory_tok_s=tokens / memory,
        bound_by=bound_by(memory, compute),
        ttft_ok=None if ttft_budget_s is None else time <= ttft_budget_s,
        offload=report,
        experts_touched=experts_touched(model, r.batch * chunk, workload.expert_traffic),
        verdict=r.verdict if host_margin >= 0 else PrefillVerdict.NO_RESIDENT_FIT,
    )


def prefill_curve(
    hardware: Hardware,
    model: ModelAdapter,
    prompt_tokens: ArrayLike,
    *,
    workload: Workload | None = None,
    batch: ArrayLike = 1,
    chunk_tokens: int | None = None,
    linear_mode: str | None = None,
    attention_mode: str | None = None,
) -> PrefillCurve:
    """Prefill ceilings over arrays of prompt lengths and batches (broadcast), vectorized.

    The same evaluation as :func:`prefill` without gates or searches: every entry is the formula at
    that (b, L, c), with ``chunk_tokens`` None for one-shot (each chunk is capped at its prompt).
    """
    workload = workload or Workload()
    if workload.offload is not None:
        return _offloaded_curve(
            hardware, model, workload, prompt_tokens, batch, chunk_tokens, linear_mode, attention_mode
        )
    shape = prefill_shape(model)
    prompts = np.asarray(prompt_tokens, dtype=np.int64)
    batches = np.asarray(batch, dtype=np.int64)
    if prompts.size and prompts.min() < 1:
        raise InputError("prompt_tokens", "every prompt length must be at least 1")
    if batches.size and batches.min() < 1:
        raise InputError("batch", "every batch must be at least 1")
    chunk = None if chunk_tokens is None else _positive_int("chunk_tokens", chunk_tokens)
    rates = mode_rates(hardware, shape, linear_mode, attention_mode)
    ev = evaluate_settings(
        model, shape, rates, hardware.bandwidth_bytes_per_s, workload.expert_traffic, batches, prompts, chunk
    )
    tokens = ev.tokens
    compute_time = ev.compute_time
    time = ev.time
    return PrefillCurve(
        prompt_tokens=ev.prompt,
        batch=ev.batch,
        chunk_tokens=ev.chunk,
        memory_tok_s=tokens / ev.memory_time,
        compute_tok_s=None if compute_time is None else tokens / compute_time,
        tok_s=tokens / time,
        time_s=time,
        memory_time_s=ev.memory_time,
        compute_time_s=compute_time,
        bytes_per_token=ev.traffic_bytes / tokens,
        flops_per_token=(ev.linear_flops + ev.attention_flops) / tokens,
        bound_by_memory=ev.memory_time >= time,
        assumptions=assumptions_of(hardware, model, workload, rates),
    )


def _offloaded_curve(
    hardware: Hardware,
    model: ModelAdapter,
    workload: Workload,
    prompt_tokens: ArrayLike,
    batch: ArrayLike,
    chunk_tokens: int | None,
    linear_mode: str | None,
    attention_mode: str | None,
) -> PrefillCurve:
    """The curve with weights in host RAM: the device tier's curve, each one-shot time raised to the
    host tier's weight transfer where that is longer (chunked curves charge the device tier only)."""
    spec, where, device_only = _device_tier(hardware, model, workload)
    c = prefill_curve(
        hardware,
        device_only,
        prompt_tokens,
        workload=replace(workload, offload=None),
        batch=batch,
        chunk_tokens=chunk_tokens,
        linear_mode=linear_mode,
        attention_mode=attention_mode,
    )
    if chunk_tokens is not None:
        return c
    tokens = (c.batch * c.prompt_tokens).astype(np.float64)
    host_read, host_s = one_shot_host_split(model, where, spec, tokens, workload.expert_traffic)
    memory = np.maximum(c.memory_time_s, host_read)
    time = np.maximum(c.time_s, host_s)
    return replace(
        c,
        memory_tok_s=tokens / memory,
        tok_s=tokens / time,
        time_s=time,
        memory_time_s=memory,
        bound_by_memory=memory >= time,
    )


#: Prompt lengths evaluated per vectorized block by :func:`prefill_range` (about 10 float64 arrays of
#: this length live at once: some 20 MB).
RANGE_BLOCK_LENGTHS = 1 << 18


def prefill_range(
    hardware: Hardware,
    model: ModelAdapter,
    *,
    workload: Workload | None = None,
    batch: int = 1,
    linear_mode: str | None = None,
    attention_mode: str | None = None,
) -> PrefillRange:
    """T_pf,lo and T_pf,hi, one-shot at ``batch``, over every integer prompt length that fits.

    The length set is the derivation's: 1 <= L <= L_model,max (the model's context limit, else the
    workload's alloc context) with W_resident + O + b K_alloc(L) <= C, each length reserving its own
    cache. K_alloc never falls with L, so the set is a prefix 1..L_fit found in closed form, and the
    ceilings over it are one vectorized pass (exact at every integer length, no sampling).
    """
    workload = workload or Workload()
    shape = prefill_shape(model)
    b = _positive_int("batch", batch)
    host_seconds: Callable[[Floats], tuple[Floats, Floats]] | None = None
    if workload.offload is not None:
        # Two tiers: the device tier's adapter, each one-shot time raised to the host weights' transfer.
        full = model
        spec, where, model = _device_tier(hardware, model, workload)
        workload = replace(workload, offload=None)

        def _host(tokens: Floats) -> tuple[Floats, Floats]:
            return one_shot_host_split(full, where, spec, tokens, workload.expert_traffic)

        host_seconds = _host

    rates = mode_rates(hardware, shape, linear_mode, attention_mode)
    assumptions = assumptions_of(hardware, model, workload, rates)
    longest, limited_by = range_top(model, workload)
    margin = hardware.memory_bytes - model.weights.resident - workload.overhead_bytes - WORKSPACE_BYTES

    def empty(verdict: PrefillVerdict, longest_fitting: int, limit: RangeLimit) -> PrefillRange:
        return PrefillRange(
            assumptions, verdict, b, longest_fitting, limit, None, None, None, None, None, None
        )

    if margin < 0:
        return empty(PrefillVerdict.NO_RESIDENT_FIT, 0, RangeLimit.MEMORY)
    budget = margin / b
    if model.kv_alloc.bytes_at(longest) > budget:
        # The inverse is asked only when the longest length does not fit, so its answer is below it.
        fitting = model.kv_alloc.max_context_within(budget)
        longest, limited_by = (-1 if fitting is None else fitting), RangeLimit.MEMORY
    if longest < 1:
        one_fits = model.kv_alloc.bytes_at(1) <= margin
        return empty(
            PrefillVerdict.NO_BATCH_FIT if one_fits else PrefillVerdict.NO_SESSION_FIT, 0, limited_by
        )
    # One vectorized pass per block of lengths: a 10M-token context in one pass held some 1 GB of
    # temporaries (issue 14); blocks keep the scan exact at every length with bounded memory.
    lo = hi = 0
    lo_rate, hi_rate = math.inf, -math.inf
    lo_bound = hi_bound = BoundBy.MEMORY
    for start in range(1, longest + 1, RANGE_BLOCK_LENGTHS):
        lengths = np.arange(start, min(longest, start + RANGE_BLOCK_LENGTHS - 1) + 1, dtype=np.int64)
        ev = evaluate_settings(
            model, shape, rates, hardware.bandwidth_bytes_per_s, workload.expert_traffic, b, lengths, None
        )
        memory_time, time = ev.memory_time, ev.time
        if host_seconds is not None:
            host_read, host = host_seconds(ev.tokens)
            memory_time, time = np.maximum(memory_time, host_read), np.maximum(time, host)
        throughput = ev.tokens / time
        i_lo, i_hi = int(np.argmin(throughput)), int(np.argmax(throughput))
        if throughput[i_lo] < lo_rate:  # strict: the first length wins a tie, as one argmin would
            lo, lo_rate = start + i_lo, float(throughput[i_lo])
            lo_bound = bound_by(float(memory_time[i_lo]), float(time[i_lo]))
        if throughput[i_hi] > hi_rate:
            hi, hi_rate = start + i_hi, float(throughput[i_hi])
            hi_bound = bound_by(float(memory_time[i_hi]), float(time[i_hi]))

    return PrefillRange(
        assumptions=assumptions,
        verdict=PrefillVerdict.FITS,
        batch=b,
        max_prompt_tokens=longest,
        limited_by=limited_by,
        lo_tok_s=lo_rate,
        lo_prompt_tokens=lo,
        lo_bound_by=lo_bound,
        hi_tok_s=hi_rate,
        hi_prompt_tokens=hi,
        hi_bound_by=hi_bound,
    )


__all__ = [
    "WORKSPACE_BYTES",
    "BatchMode",
    "BoundBy",
    "ChunkMode",
    "PrefillCurve",
    "PrefillRange",
    "PrefillResult",
    "PrefillVerdict",
    "RangeLimit",
    "crossover_tokens",
    "prefill",
    "prefill_curve",
    "prefill_range",
]
