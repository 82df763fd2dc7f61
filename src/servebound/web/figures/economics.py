"""The /economics page's figures, drawn on the server from the core's records: the step time and the
cost per token against the batch (``core.cost.cost_curve`` for a catalog pair, with the balance batch
from ``questions.economics.balance``), trains of batches and the wait they make (``core.economics
.train_schedule``), the cost per token against context with the surcharge breakpoint (the KV bytes per
token ``core.economics.kv_bytes_per_token_from_breakpoint`` reads off it) and the memory tiers' drain
times (``core.economics.MEMORY_TIERS``). Each figure comes with the sentences that read it."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import partial

from markupsafe import Markup, escape

from servebound.catalog.hardware import CatalogHardware, get_hardware
from servebound.catalog.models import get_model
from servebound.core import economics as econ
from servebound.core.arith import np  # numpy on first use: a server starts without it
from servebound.core.cost import cost_curve, usd_per_mtok
from servebound.core.decode import decode
from servebound.errors import InputError
from servebound.inputs.pricing import resolve_price
from servebound.inputs.scenario import default_workload, resolve_scenario
from servebound.questions.economics import LECTURE, LECTURE_BLACKWELL, LECTURE_BREAKPOINT_MODE, balance
from servebound.views.cost_view import fmt_money
from servebound.web.figures.axes import Scale
from servebound.web.figures.charts import (
    CHAR_PX,
    Chart,
    Mark,
    Series,
    cost_batch_chart,
    flow,
    render_chart,
    svg,
)

#: The pair the batch figures are drawn for: the lecture's model family on a priced eight-GPU Blackwell
#: server, both catalog rows; short contexts (1,024 tokens reserved and read), so that the compute line
#: meets the memory line within the memory, as the lecture's figure has it.
FIGURE_HARDWARE = "8x-nvidia-b200"
FIGURE_MODEL = "deepseek-v3"
FIGURE_CONTEXT = 1024
#: The hold times the lecture's cache prices name: five minutes and an hour.
HOLDS_S = (300.0, 3600.0)


#: The lecture the page follows: its title, who gave it, where, when, and its page.
LECTURE_TITLE = "The math behind how LLMs are trained and served"
LECTURE_BY = "Reiner Pope (MatX), a blackboard lecture on the Dwarkesh Podcast"
LECTURE_DATE = "29 April 2026"
LECTURE_URL = "https://www.dwarkesh.com/p/reiner-pope"
LECTURE_VIDEO = "https://youtu.be/xmkSf5IS-zw"


@dataclass(frozen=True)
class EconFigure:
    id: str
    heading: str
    svg: Markup
    words: Sequence[str]


def duration(seconds: float) -> str:
    """A time as people say it: 14.4 ms, 13 s, 19.7 minutes, 1 hour, 23.4 hours."""
    scales = ((1e-3, 1e-6, "µs"), (1.0, 1e-3, "ms"), (120.0, 1.0, "s"), (3600.0, 60.0, "minute"))
    div, unit = next(((d, u) for limit, d, u in scales if seconds < limit), (3600.0, "hour"))
    text = f"{seconds / div:,.3g}"
    return f"{text} {unit}" + ("s" if unit in ("minute", "hour") and text != "1" else "")


def _size(n_bytes: float, unit: str = "B") -> str:
    for div, prefix in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if n_bytes >= div:
            return f"{n_bytes / div:,.4g} {prefix}{unit}"
    return f"{n_bytes:,.4g} {unit}"


def batch_figures() -> list[EconFigure]:
    """Step time and cost per million output tokens against the batch for DeepSeek-V3 on 8x B200."""
    row = get_hardware(FIGURE_HARDWARE)
    model = get_model(FIGURE_MODEL).adapter
    hw = row.hardware
    default = default_workload()
    declared = replace(
        default,
        stated=default.stated._with(alloc_context_tokens=FIGURE_CONTEXT, read_context_tokens=FIGURE_CONTEXT),
    )
    workload = resolve_scenario(declared, hardware=hw, model=model).workload
    price = resolve_price(hw, row.price)
    d = decode(hw, model, workload)
    exact = balance(hw, 1.0, model=model, workload=workload)[-1].value  # with the KV read and attention
    top = int(max(4 * (exact or 1), 2 * (d.batch_mem or 1), 100))
    batches = np.unique(np.round(np.geomspace(1, top, 80)).astype(np.int64))
    c = cost_curve(hw, model, workload, batches, price.usd_per_hour)
    xs = batches.astype(float).tolist()
    steps = c.steps
    marks = (
        [Mark(float(d.batch_mem), f"b_mem = {d.batch_mem:,} fit in memory", "bmem")] if d.batch_mem else []
    )
    if exact:
        marks.append(Mark(exact, f"balance batch {exact:,.0f}", "cross"))
    # Both charts share the batch axis (log-log), its marks and the shading past b_mem.
    shade = float(d.batch_mem) if d.batch_mem else None
    against_batch = partial(cost_batch_chart, x_marks=tuple(marks), shade_from_x=shade)
    series = [
        Series("memory: weights + every session's KV", xs, (steps.memory_time_s * 1e3).tolist(), "mem", "ms")
    ]
    if steps.compute_time_s is not None:
        series.append(Series("compute", xs, (steps.compute_time_s * 1e3).tolist(), "cmp", "ms"))
    series.append(
        Series("step time, the slower of the two", xs, (steps.step_time_s * 1e3).tolist(), "agg", "ms")
    )
    step_chart = against_batch(
        id="econ-step",
        title=f"Decode step time against batch, {model.name} on {row.name}",
        y_label="milliseconds per decode step",
        series=tuple(series),
        y_marks=(Mark(c.latency_floor_s * 1e3, f"latency floor {duration(c.latency_floor_s)}", "floor"),),
    )
    cost_chart = against_batch(
        id="econ-cost-batch",
        title=f"Cost per million output tokens against batch, {model.name} on {row.name}",
        y_label="USD per million output tokens",
        series=(
            Series("cost per token, price x t(b) / b", xs, c.usd_per_mtok_output.tolist(), "per", "USD/Mtok"),
        ),
        y_marks=(Mark(c.floor_usd_per_mtok, f"cost floor ${fmt_money(c.floor_usd_per_mtok)}", "floor"),),
    )
    at_one = float(c.usd_per_mtok_output[0])
    b_mem = d.batch_mem or 1
    at_mem = float(
        usd_per_mtok(
            price.usd_per_hour, steps.step_time_s[batches <= b_mem][-1], float(batches[batches <= b_mem][-1])
        )
    )
    setup = (
        f"{model.name}, {_size(model.weights.resident)} of weights, on the {row.name} row, priced at "
        f"${fmt_money(price.usd_per_hour)} an hour ({price.basis}), every session reserving and reading "
        f"{FIGURE_CONTEXT:,} tokens of context; the shaded batches do not fit in its memory."
    )
    step_words = [
        setup,
        f"However small the batch, a step must stream the weights once: {duration(c.latency_floor_s)}, the "
        "fastest any session can go on this machine, whatever it pays. Each session adds its own KV read "
        "to the memory line and its own multiplies to the compute line; the compute line is far below at "
        "small batches and catches up with the memory line only at the balance batch"
        + (
            f", about {exact:,.0f} sessions, past the {b_mem:,} that fit." if exact and exact > b_mem else "."
        ),
    ]
    cost_words = [
        f"A step costs the same whatever it carries, so the cost per token is the step's price over its b "
        f"tokens: ${fmt_money(at_one)} per million at batch 1, ${fmt_money(at_mem)} at the {b_mem:,} "
        f"sessions that fit, {at_one / at_mem:,.0f} times less. The weight fetch is shared by the whole "
        f"batch; what is left at large batches, the cost floor of ${fmt_money(c.floor_usd_per_mtok)}, is "
        "what every token pays alone (its KV read and its compute).",
        "That gap is the trade behind fast and slow tiers of the same model: a smaller batch buys a faster "
        "step for a higher price per token, down to the latency floor and no further, and a larger one buys "
        "little once the floor is near.",
    ]
    return [
        EconFigure("econ-step", "Step time against batch", render_chart(step_chart), step_words),
        EconFigure("econ-cost-batch", "Cost per token against batch", render_chart(cost_chart), cost_words),
    ]


def trains_figure() -> EconFigure:
    """Batches leaving every tau: a few requests, the wait for the next departure and the step they ride."""
    s = econ.train_schedule(LECTURE["batch"], 1.0 / LECTURE["steps_per_s"])
    tau = s.interval_s
    arrivals = (0.02, 0.55, 1.3, 1.97, 3.4)  # in steps: the first just misses a departure
    width, left, right, row_h = 640, 10, 10, 26
    span = 5.0
    top = 30
    axis_y = top + row_h * len(arrivals) + 6

    x = Scale(0.0, span, False, left, width - right)  # time in steps

    e = escape
    out = [
        f'<rect class="plot" x="{left}" y="{top - 6}" width="{width - left - right}" height="{axis_y - top + 6}"/>',
    ]
    for k in range(int(span) + 1):
        out.append(
            f'<g class="mark forced"><line x1="{x(k):.1f}" x2="{x(k):.1f}" y1="{top - 6}" y2="{axis_y}"/></g>'
            f'<text class="tick" x="{x(k):.1f}" y="{axis_y + 20}" text-anchor="{"start" if k == 0 else "middle"}">{k * tau * 1e3:,.3g}</text>'
        )
    out.append(
        f'<text class="label" x="4" y="18">each dashed line: a batch departs (one step every {e(duration(tau))})</text>'
    )
    worst = 0.0
    for i, a in enumerate(arrivals):
        y = top + row_h * i
        board = math.ceil(a)
        worst = max(worst, board + 1 - a)
        out.append(
            f'<rect class="seg wait" x="{x(a):.1f}" y="{y:.0f}" width="{x(board) - x(a):.1f}" height="14">'
            f"<title>arrives at {e(duration(a * tau))}, waits {e(duration((board - a) * tau))}</title></rect>"
            f'<rect class="seg ride" x="{x(board):.1f}" y="{y:.0f}" width="{x(board + 1) - x(board):.1f}" height="14">'
            f"<title>rides the step from {e(duration(board * tau))} to {e(duration((board + 1) * tau))}</title></rect>"
        )
    out.append(f'<line class="axis" x1="{left}" x2="{width - right}" y1="{axis_y}" y2="{axis_y}"/>')
    out.append(
        f'<text class="label" x="{width / 2:.0f}" y="{axis_y + 44}" text-anchor="middle">time (ms)</text>'
    )
    legend = (("wait", "waiting for the next batch"), ("ride", "riding one step"))
    spots = flow([26 + CHAR_PX * len(label) for _, label in legend], left, width - left, 18)
    for (css, label), (lx, row) in zip(legend, spots, strict=True):
        ly = axis_y + 72 + 24 * row
        out.append(
            f'<g class="legend"><rect class="seg {css}" x="{lx:.0f}" y="{ly - 11}" width="20" height="12"/>'
            f'<text x="{lx + 26:.0f}" y="{ly}">{label}</text></g>'
        )
    title = f"Batches departing every {duration(tau)}: the wait for the next one and the step it rides"
    words = [
        f"A server does not wait for a batch to fill: a batch leaves every step, {duration(tau)} at the "
        f"lecture's {LECTURE['steps_per_s']:g} steps a second, and whoever is ready boards it. A request "
        f"that arrives just after a departure waits almost a whole step and then rides one: at most "
        f"{duration(s.worst_queueing_s)} before its token, twice the step (the first row, "
        f"{duration(worst * tau)}).",
        f"At {LECTURE['batch']:,.0f} sessions a batch, that schedule carries {s.tok_s:,.0f} tokens a second "
        "from one system. The step itself is set by the memory: reading all of it once takes capacity over "
        "bandwidth (below), and a longer step would only read the same bytes again.",
    ]
    svg_ = svg("chart econ", "econ-trains", axis_y + 84 + 24 * spots[-1][1], title, out)
    return EconFigure("econ-trains", "Trains of batches and the wait they make", svg_, words)


def context_figure(blackwell: CatalogHardware) -> EconFigure:
    """Cost per token against context at a large batch, for the KV size a 200k breakpoint implies."""
    hw = blackwell.hardware
    flops = hw.compute_rate(LECTURE_BREAKPOINT_MODE) or hw.compute_rate("bf16") or 1.0
    active = LECTURE["frontier_active_params"]
    breakpoint_tokens = LECTURE["breakpoint_tokens"]
    kv = econ.kv_bytes_per_token_from_breakpoint(active, flops, hw.bandwidth_bytes_per_s, breakpoint_tokens)
    price = resolve_price(hw, blackwell.price)
    contexts = np.geomspace(1000, 2_000_000, 60)
    kv_s = contexts * kv / hw.bandwidth_bytes_per_s
    compute_s = np.full_like(contexts, 2.0 * active / flops)
    xs = contexts.tolist()

    def cost(seconds: np.ndarray) -> list[float]:
        return [float(v) for v in usd_per_mtok(price.usd_per_hour, seconds, 1.0)]

    chart = Chart(
        id="econ-context",
        title="Cost per million output tokens against context at a large batch, with the surcharge breakpoint",
        x_label="context read per token L (tokens)",
        y_label="USD per million output tokens",
        series=(
            Series("reading the KV cache, L κ / R", xs, cost(kv_s), "mem", "USD/Mtok"),
            Series("compute, 2 P_active / F", xs, cost(compute_s), "cmp", "USD/Mtok"),
            Series("cost per token, the larger", xs, cost(np.maximum(kv_s, compute_s)), "agg", "USD/Mtok"),
        ),
        x_log=True,
        y_log=True,
        x_marks=(Mark(breakpoint_tokens, f"breakpoint L* = {breakpoint_tokens:,.0f}", "cross"),),
        x_unit="tokens",
    )
    words = [
        f"At a batch large enough that the weight fetch is shared to nothing, each token pays for its own "
        f"compute, flat in the context, and for reading its session's KV cache, which grows with it. The two "
        f"cross at one context length; a provider that prices near cost puts its long-context surcharge "
        f"there. Read backwards, a surcharge at {breakpoint_tokens:,.0f} tokens on a "
        f"{active / 1e9:,.0f}-billion-active-parameter model served on the {blackwell.name} row "
        f"({LECTURE_BREAKPOINT_MODE.upper()}, {flops / 1e12:,.0f} TFLOP/s, "
        f"{hw.bandwidth_bytes_per_s / 1e12:,.4g} TB/s) says its KV cache holds about "
        f"{_size(kv)} per token (κ = 2 P_active R / (F L*)), a size a few shared attention contexts of "
        "grouped heads reach.",
        f"Priced at the row's ${fmt_money(price.usd_per_hour)} an hour ({price.basis}); past the breakpoint the "
        "cost per token rises in step with the context.",
    ]
    return EconFigure(
        "econ-context", "Cost per token against context, and the breakpoint", render_chart(chart), words
    )


def tiers_figure() -> EconFigure:
    """Each memory tier's drain time (capacity / bandwidth) on a log axis, with the cache hold times."""
    tiers = econ.MEMORY_TIERS
    width, left, right, top, row_h = 640, 10, 10, 52, 52
    lo, hi = 1e-3, 1e6
    axis_y = top + row_h * len(tiers)

    x = Scale(lo, hi, True, left, width - right)

    e = escape
    out = [
        f'<rect class="plot" x="{left}" y="{top}" width="{width - left - right}" height="{axis_y - top}"/>',
        '<text class="label" x="4" y="18">time to read the whole tier once (log scale)</text>',
    ]
    for k, label in ((1e-3, "1 ms"), (1.0, "1 s"), (60.0, "1 min"), (3600.0, "1 h"), (86400.0, "1 day")):
        out.append(
            f'<line class="grid" x1="{x(k):.1f}" x2="{x(k):.1f}" y1="{top}" y2="{axis_y}"/>'
            f'<text class="tick" x="{x(k):.1f}" y="{axis_y + 20}" text-anchor="{"start" if k == lo else "middle"}">{label}</text>'
        )
    for j, hold in enumerate(HOLDS_S):
        tx = x(hold)
        label = f"hold {duration(hold)}"
        anchor = "end" if j == 0 else "start"
        out.append(
            f'<g class="mark floor"><line x1="{tx:.1f}" x2="{tx:.1f}" y1="{top}" y2="{axis_y}"/>'
            f'<text x="{tx + (-4 if anchor == "end" else 4):.1f}" y="42" text-anchor="{anchor}">{e(label)}</text></g>'
        )
    for i, t in enumerate(tiers):
        y = top + row_h * i
        out.append(
            f'<text class="label tier" x="{left}" y="{y + 18}">{e(t.name)}: {e(_size(t.capacity_bytes))} at '
            f"{e(_size(t.bandwidth_bytes_per_s, 'B/s'))}, {e(duration(t.drain_time_s))}</text>"
            f'<rect class="seg ride" x="{left}" y="{y + 26}" width="{max(x(t.drain_time_s) - left, 2):.1f}" height="14">'
            f"<title>{e(t.device)}: {e(t.source)}</title></rect>"
        )
    out.append(f'<line class="axis" x1="{left}" x2="{width - right}" y1="{axis_y}" y2="{axis_y}"/>')
    title = "Drain time (capacity over bandwidth) of each memory tier, with cache hold times"
    figure = svg("chart econ", "econ-tiers", axis_y + 60, title, out)
    picks = [(hold, econ.tier_for_hold_time(hold)) for hold in HOLDS_S]
    split = len({t.name for _, t in picks}) == len(picks)
    words = [
        "Each tier down the hierarchy holds more per dollar and reads slower; the time to read a tier "
        "once, capacity over bandwidth, says which holds it suits: one much shorter than its drain time "
        "leaves its capacity idle, one much longer its bandwidth. The rows: "
        + "; ".join(f"{t.name}, {t.device}" for t in tiers)
        + ".",
        "A cache kept alive for "
        + " and one for ".join(
            f"{duration(h)} is nearest {t.name} ({duration(t.drain_time_s)})" for h, t in picks
        )
        + (
            ", so a provider's two cache prices read as two tiers."
            if split
            else ": on these rows both holds sit nearest the same tier, so the two cache prices do not tell "
            "two tiers apart here (the lecture put the hour on disk; this disk takes "
            f"{duration(tiers[-1].drain_time_s)} to read once)."
        ),
    ]
    return EconFigure("econ-tiers", "The memory tiers and their drain times", figure, words)


def economics_figures() -> list[EconFigure]:
    """The page's five figures, on the catalog's rows (whatever hardware a site was built with)."""
    blackwell = get_hardware(LECTURE_BLACKWELL)
    try:
        batch = batch_figures()
    except InputError:  # the figures' catalog pair is gone: the page stands without its two batch figures
        batch = []
    return [*batch, trains_figure(), context_figure(blackwell), tiers_figure()]
