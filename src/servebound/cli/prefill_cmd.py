"""`servebound prefill`: prefill ceilings and the wait for the first token."""

from __future__ import annotations

from typing import Literal

from servebound.cli.common import HARDWARE, JSON, MODEL, command, option, workload
from servebound.cli.output import console, line, on, print_json, print_table, render_assumptions, strong
from servebound.core.prefill import PrefillRange, PrefillResult
from servebound.inputs.scenario import resolve_scenario
from servebound.inputs.workload import WorkloadInputs
from servebound.questions.prefill import prefill_answer
from servebound.runs.band import expected_text
from servebound.views.report import (
    NOTHING_FITS,
    PREFILL_VERDICT_TEXT,
    fmt_rate,
    prefill_assumptions,
    prefill_json,
)


@command(
    "prefill",
    HARDWARE,
    MODEL,
    workload("context", "serving", "workload", "prefill", "layout"),
    option(
        "range_",
        bool,
        False,
        "Also report T_pf,lo and T_pf,hi over every prompt length that fits.",
        "--range",
    ),
    JSON,
    examples=(
        "servebound prefill -H nvidia-rtx-4090 -m qwen3-8b --prompt 8192",
        "servebound prefill -H nvidia-dgx-spark -m qwen3.6-35b-a3b-nvfp4 --prompt 32000 --ttft-budget 2 --json",
    ),
)
def prefill_command(hardware: str, model: str, flags: WorkloadInputs, range_: bool, json_out: bool) -> None:
    batch: int | Literal["max"] = "max" if flags.batch == "max" else int(flags.batch or 1)
    scenario = resolve_scenario(flags, hardware=hardware, model=model, batch=None)
    mdl = scenario.model
    result, rng = prefill_answer(
        scenario,
        flags.prompt,
        batch=batch,
        prompt_range=range_,
        chunk_tokens=flags.chunk,
        ttft_budget_s=flags.ttft_budget,
        linear_mode=flags.linear_mode,
        attention_mode=flags.attention_mode,
    )
    if json_out:
        print_json(prefill_json(result, rng))
        return
    if result is not None and getattr(result, "layout", None) is not None:  # a system, at its layout
        out = prefill_json(result)
        time_s, tok_s = out["time_s"], out["tok_s"]
        said = (
            "nothing fits in memory"
            if time_s is None
            else f"{tok_s:,.0f} tok/s prefill ceiling, {time_s * 1e3:,.2f} ms for {out['batch']} x "
            f"{out['prompt_tokens']:,} tokens (bound by {out['bound_by']}); communication "
            f"{out['communication_time_s'] * 1e3:,.3f} ms"
        )
        where = f" on {out['system']['name']}, {out['layout']['label']} ({out['layout']['why']}): "
        console.print(line(strong(mdl.name), where + said))
        return
    if result is not None:
        render_prefill(result)
        console.print(expected_text(result.expected, result.expected_from).terminal)
    if rng is not None:
        render_range(rng)


def render_prefill(r: PrefillResult) -> None:
    """The human report, in the derivation's terms."""
    policy = (
        " (policy ceiling: a one-shot implementation may exceed it)" if r.chunk_mode.value == "policy" else ""
    )
    console.print(
        on(
            r.model.name,
            r.hardware.name,
            f", prompt {r.prompt_tokens:,} tokens, batch {r.batch:,}, chunk {r.chunk:,}{policy}: "
            f"{PREFILL_VERDICT_TEXT[r.verdict.value]}",
        )
    )
    rows = [
        ("bytes per prompt token", f"{r.bytes_per_token:,.1f} B", "Q_pf / (b L): sweep + reread + KV write"),
        (
            "FLOPs per prompt token",
            f"{r.flops_per_token / 1e9:,.3f} GFLOP",
            "(A_linear + A_attention) / (b L)",
        ),
    ]
    if r.verdict.value in NOTHING_FITS:
        rows.append(("modeled prefill time", "none", "nothing fits in memory, so nothing runs"))
        print_table(("quantity", "value", "how"), rows, right=("value",))
        render_assumptions(prefill_assumptions(r))
        return
    compute = (
        fmt_rate(r.compute_tok_s)
        if r.compute_tok_s is not None
        else f"unavailable (no rate for {', '.join(r.assumptions.missing_modes)})"
    )
    rows += [
        ("memory ceiling", fmt_rate(r.memory_tok_s), "b L / (Q_pf / R)"),
        ("compute ceiling", compute, "b L / (A_lin/F_lin + A_attn/F_attn)"),
    ]
    if r.compute_note:
        rows.append(("compute rates", r.compute_note, "the row lacks a mode's rate"))
    if r.offload is not None:
        dev_s, host_s = r.offload.step_time_split_s
        moved_gb = r.offload.host_bytes_per_token * r.batch * r.prompt_tokens / 1e9
        how = f"{r.offload.mode}: {moved_gb:,.2f} GB over min(link, host) per chunk; device memory {dev_s:,.4f} s"
        rows.append(("host weights moved", f"{host_s:,.4f} s", how))
    rows.append(("combined ceiling", fmt_rate(r.tok_s), f"bound by {r.bound_by.value}"))
    if r.format_support.value != "native":
        rows.append(("weight format", r.format_support.value, r.format_support_why[:120]))
    rows.append(("modeled prefill time", f"{r.time_s:,.4f} s", "t_pf,min for the whole batch"))
    if r.crossover_tokens is not None:
        rows.append(("crossover S*", f"{r.crossover_tokens:,.0f} tokens", "sweep time = linear math time"))
    if (crossing := r.crossover_with_attention_tokens) is not None:
        rows.append(
            ("roofline crossing", f"{crossing:,.0f} tokens", "memory time = compute time, attention included")
        )
    if r.ttft_budget_s is not None:
        rows.append(("TTFT budget", f"{r.ttft_budget_s:g} s", "met" if r.ttft_ok else "not met"))
        if (free := r.unrestricted) is not None and free.verdict.value not in NOTHING_FITS:
            rows.append(
                (
                    "without the budget",
                    fmt_rate(free.tok_s),
                    f"unrestricted: batch {free.batch:,}, {free.time_s:,.4f} s, bound by {free.bound_by.value}",
                )
            )
    print_table(("quantity", "value", "how"), rows, right=("value",))
    render_assumptions(prefill_assumptions(r))


def render_range(rng: PrefillRange) -> None:
    if rng.lo_tok_s is None or rng.hi_tok_s is None:
        console.print(f"range: no prompt length fits ({rng.verdict.value})")
        return
    console.print(
        f"range over L = 1..{rng.max_prompt_tokens:,} (limited by {rng.limited_by.value}), batch {rng.batch}: "
        f"lo {fmt_rate(rng.lo_tok_s)} at L = {rng.lo_prompt_tokens:,} ({rng.lo_bound_by}), "
        f"hi {fmt_rate(rng.hi_tok_s)} at L = {rng.hi_prompt_tokens:,} ({rng.hi_bound_by})"
    )
