"""Figures as inline SVG, drawn on the server so they exist without JavaScript.

Curves come from the core's vectorized functions (``servebound.core.decode.curve`` and
``servebound.core.prefill.prefill_curve``); this module only maps numbers to pixels. Every sampled point
carries an SVG ``<title>``, so hovering shows its values in any browser, script or not. Each chart
also carries its series as JSON in ``data-series`` for the page's script (hover readout, redraw).
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from markupsafe import Markup, escape

from servebound.core.arith import np  # numpy on first use: a server starts without it
from servebound.core.decode import curve
from servebound.core.decode_range import decode_context_range
from servebound.core.prefill import prefill_curve
from servebound.core.units import GB
from servebound.core.workload import MAX_BATCH
from servebound.views.report import fmt_gb, fmt_rate
from servebound.web.figures.axes import Scale, floats, nice_step, short_number, ticks
from servebound.web.pages.site import Pair

WIDTH = 640
LEFT, RIGHT, TOP, BOTTOM = 70, 20, 18, 46
#: The line charts' layout (render_chart): the plot's height; the rows above it that hold the x marks'
#: labels (one row each, from MARK_TOP); the legend's rows under the axis label, from LEGEND_X. Text is
#: measured at the phone font (18 user units, site.css), CHAR_PX a character, so what fits there fits
#: at the desktop's 11.
PLOT_H = 236
MARK_TOP, MARK_ROW = 8, 24
LEGEND_X, LEGEND_ROW = 8, 24
CHAR_PX = 12.0


@dataclass(frozen=True)
class Series:
    name: str
    xs: Sequence[float]
    ys: Sequence[float]
    css: str
    unit: str = ""


@dataclass(frozen=True)
class Mark:
    value: float
    label: str
    css: str


@dataclass(frozen=True)
class Chart:
    """One line chart: series, vertical marks (x), horizontal marks (y), axes."""

    id: str
    title: str
    x_label: str
    y_label: str
    series: tuple[Series, ...]
    x_log: bool = True
    y_log: bool = False
    x_marks: tuple[Mark, ...] = ()
    y_marks: tuple[Mark, ...] = ()
    shade_from_x: float | None = None
    x_unit: str = ""
    notes: tuple[str, ...] = field(default=())
    #: The x axis counts whole things (devices, stages, sessions): only whole ticks are labelled.
    x_integer: bool = False


#: A chart against the batch, log-log: the step time and the cost per token (pair pages, /economics).
cost_batch_chart = partial(
    Chart, x_label="batch b (concurrent sessions)", x_log=True, y_log=True, x_unit="sessions"
)


def _mark_label_x(x: float, label: str) -> tuple[float, str]:
    """Where an x mark's label goes in its row above the plot: just right of its line, else just left,
    else as far right as it fits (measured at the phone font, so it fits at a desktop too)."""
    w = CHAR_PX * len(label)
    if x + 4 + w <= WIDTH - 4:
        return x + 4, "start"
    if x - 4 - w >= 4:
        return x - 4, "end"
    return max(4.0, WIDTH - 4 - w), "start"


def flow(widths: Sequence[float], x0: float, right: float, gap: float) -> list[tuple[float, int]]:
    """Legend entries of these widths placed left to right from ``x0``, ``gap`` apart, wrapping before
    one that would pass ``right``: each entry's x and row."""
    out, x, row = [], float(x0), 0
    for w in widths:
        if x > x0 and x + w > right:
            x, row = float(x0), row + 1
        out.append((x, row))
        x += w + gap
    return out


def svg(css: str, svg_id: str, height: float, title: str, body: Sequence[str], attrs: str = "") -> Markup:
    """A figure as an ``<svg>`` element WIDTH wide, labelled by its ``<title>`` (its first child)."""
    e = escape
    return Markup(
        f'<svg class="{css}" id="{e(svg_id)}" viewBox="0 0 {WIDTH} {height:g}" role="img" '
        f'aria-labelledby="{e(svg_id)}-t"{attrs}><title id="{e(svg_id)}-t">{e(title)}</title>'
        + "".join(body)
        + "</svg>"
    )


def legend_entries(chart: Chart, in_range: Sequence[Mark]) -> list[tuple[str, str, float, float]]:
    """The legend under the chart: (label, class of its swatch, x, baseline y) for each series, then
    each horizontal mark; entries flow left to right and wrap (widths at the phone font)."""
    items = [(s.name, f"series {s.css}") for s in chart.series] + [
        (m.label, f"mark {m.css}") for m in in_range
    ]
    spots = flow([24 + CHAR_PX * len(label) for label, _ in items], LEGEND_X, WIDTH - LEGEND_X, 18)
    return [(label, css, x, float(row)) for (label, css), (x, row) in zip(items, spots, strict=True)]


def render_chart(chart: Chart) -> Markup:
    """The chart as an ``<svg>`` element (scales with its container; readable on a phone). Nothing but
    the series, the grid and the mark lines is drawn in the plot (``rect.plot``): the y axis's label sits
    in a row above it and the x marks' labels in the rows under that, one each; the legend (series, then
    the horizontal marks) below the x axis's label, and the hover readout under the legend."""
    xs_all = [x for s in chart.series for x in s.xs]
    ys_all = [y for s in chart.series for y in s.ys if math.isfinite(y) and (y > 0 or not chart.y_log)]
    x_lo, x_hi = min(xs_all), max(xs_all)
    y_vals = ys_all + [m.value for m in chart.y_marks if m.value > 0]
    if chart.y_log and not y_vals:  # nothing to draw (no session fits anywhere): an empty decade
        y_lo, y_hi = 1.0, 10.0
    elif chart.y_log:
        y_lo, y_hi = min(y_vals), max(y_vals)
        y_lo, y_hi = 10 ** math.floor(math.log10(y_lo)), 10 ** math.ceil(math.log10(y_hi))
    else:
        y_lo, y_hi = 0.0, max(y_vals) * 1.08 if y_vals else 1.0
        step = nice_step(y_hi)
        y_hi = math.ceil(y_hi / step) * step
    sx = Scale(x_lo, x_hi, chart.x_log, LEFT, WIDTH - RIGHT)
    x_marks = [m for m in chart.x_marks if sx.lo <= m.value <= sx.hi]
    top = MARK_TOP + MARK_ROW * (1 + len(x_marks)) + 6
    bottom = top + PLOT_H
    sy = Scale(y_lo, y_hi, chart.y_log, bottom, top)
    y_marks = [m for m in chart.y_marks if sy.lo <= m.value <= sy.hi]
    legend = legend_entries(chart, y_marks)
    legend_top = bottom + 72
    readout_y = legend_top + LEGEND_ROW * (int(legend[-1][3]) + 1 if legend else 0)
    height = readout_y + 10
    e = escape
    out = [f'<rect class="plot" x="{LEFT}" y="{top}" width="{WIDTH - RIGHT - LEFT}" height="{PLOT_H}"/>']
    if chart.shade_from_x is not None and chart.shade_from_x < sx.hi:
        x0 = sx(max(chart.shade_from_x, sx.lo))
        out.append(
            f'<rect class="nofit" x="{x0:.1f}" y="{top}" width="{WIDTH - RIGHT - x0:.1f}" '
            f'height="{PLOT_H}"><title>batches beyond b_mem do not fit in memory</title></rect>'
        )
    x_ticks = ticks(sx.lo, sx.hi, chart.x_log)
    if chart.x_integer:  # 1, 2, 3 rather than 1, 1.5, 2
        whole = [t for t in x_ticks if t == round(t)]
        x_ticks = (
            whole if len(whole) >= 2 else [float(v) for v in range(math.ceil(sx.lo), math.floor(sx.hi) + 1)]
        )
    for t in x_ticks:
        x = sx(t)
        out.append(f'<line class="grid" x1="{x:.1f}" x2="{x:.1f}" y1="{top}" y2="{bottom}"/>')
        out.append(
            f'<text class="tick" x="{x:.1f}" y="{bottom + 20}" text-anchor="middle">{e(short_number(t))}</text>'
        )
    for t in ticks(sy.lo, sy.hi, chart.y_log):
        y = sy(t)
        out.append(f'<line class="grid" x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{y:.1f}" y2="{y:.1f}"/>')
        out.append(
            f'<text class="tick" x="{LEFT - 6}" y="{y + 4:.1f}" text-anchor="end">{e(short_number(t))}</text>'
        )
    out.append(
        f'<line class="axis" x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{bottom}" y2="{bottom}"/>'
        f'<line class="axis" x1="{LEFT}" x2="{LEFT}" y1="{top}" y2="{bottom}"/>'
        f'<text class="label" x="{(LEFT + WIDTH - RIGHT) / 2}" y="{bottom + 46}" text-anchor="middle">{e(chart.x_label)}</text>'
        f'<text class="label" x="4" y="{MARK_TOP + MARK_ROW - 6}">{e(chart.y_label)}</text>'
    )
    for m in y_marks:
        y = sy(m.value)
        out.append(
            f'<g class="mark {e(m.css)}"><line x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{y:.1f}" y2="{y:.1f}"/>'
            f"<title>{e(m.label)}</title></g>"
        )
    for i, m in enumerate(x_marks):
        x = sx(m.value)
        tx, anchor = _mark_label_x(x, m.label)
        out.append(
            f'<g class="mark {e(m.css)}"><line x1="{x:.1f}" x2="{x:.1f}" y1="{top}" y2="{bottom}"/>'
            f'<text x="{tx:.1f}" y="{MARK_TOP + MARK_ROW * (i + 2) - 6}" text-anchor="{anchor}">{e(m.label)}</text></g>'
        )
    data = []
    drawn = [_drawn_points(s, chart.y_log) for s in chart.series]
    for s, (xs, ys) in zip(chart.series, drawn, strict=True):
        path = " ".join([f"{x:.1f},{y:.1f}" for x, y in zip(sx.many(xs), sy.many(ys), strict=True)])
        out.append(
            f'<polyline class="series {e(s.css)}" points="{path}"><title>{e(s.name)}</title></polyline>'
        )
        data.append({"name": s.name, "css": s.css, "unit": s.unit, "x": xs, "y": ys})
    # Hover targets: every few points, a dot whose title states the values (no script needed).
    for s in chart.series:
        stride = max(1, len(s.xs) // 24)
        dot = f'<circle class="dot {e(s.css)}" cx="'
        dots = [
            (x, y)
            for x, y in list(zip(floats(s.xs), floats(s.ys), strict=True))[::stride]
            if math.isfinite(y) and not (chart.y_log and y <= 0)
        ]
        at = zip(sx.many([x for x, _ in dots]), sy.many([y for _, y in dots]), strict=True)
        for (x, y), (cx, cy) in zip(dots, at, strict=True):
            # HTML escaping works character by character: one call for the whole title.
            title = e(f"{s.name}: {_value(y, s.unit)} at {_value(x, chart.x_unit)}")
            out.append(f'{dot}{cx:.1f}" cy="{cy:.1f}" r="3"><title>{title}</title></circle>')
    for label, css, lx, row in legend:
        y = legend_top + LEGEND_ROW * row
        out.append(
            f'<g class="legend"><line class="{e(css)}" x1="{lx:.1f}" x2="{lx + 20:.1f}" y1="{y - 5:.1f}" y2="{y - 5:.1f}"/>'
            f'<text x="{lx + 24:.1f}" y="{y:.1f}">{e(label)}</text></g>'
        )
    out.append(f'<text class="readout" x="{WIDTH - RIGHT}" y="{readout_y}" text-anchor="end"></text>')
    payload = json.dumps(data, allow_nan=False).replace("<", "\\u003c").replace("&", "\\u0026")
    out.append(f'<desc class="series-data">{e(payload)}</desc>')
    axes = (
        f' data-xlog="{int(chart.x_log)}" data-ylog="{int(chart.y_log)}" '
        f'data-x0="{sx.lo:g}" data-x1="{sx.hi:g}" data-y0="{sy.lo:g}" data-y1="{sy.hi:g}"'
    )
    return svg("chart", chart.id, height, chart.title, out, axes)


def _drawn_points(series: Series, y_log: bool) -> tuple[list[float], list[float]]:
    """The points a series draws: finite y, and positive y on a log axis."""
    xs, ys = floats(series.xs), floats(series.ys)
    if len(xs) != len(ys):
        raise ValueError(f"series {series.name!r}: {len(xs)} x values against {len(ys)} y values")
    isfinite = math.isfinite
    keep = [i for i, y in enumerate(ys) if isfinite(y) and (y > 0 or not y_log)]
    if len(keep) == len(ys):
        return xs, ys
    return [xs[i] for i in keep], [ys[i] for i in keep]


def _value(v: float, unit: str) -> str:
    text = f"{v:,.0f}" if abs(v) >= 100 else f"{v:,.3g}"
    return f"{text} {unit}".strip()


# --------------------------------------------------------------------------------------------------
# The pair's figures
# --------------------------------------------------------------------------------------------------


def decode_batches(pair: Pair) -> np.ndarray:
    """Batches to sample: log-spaced from 1 past b_mem (or b*), with b_mem and b* themselves."""
    d = pair.decode_result
    known = [v for v in (d.batch_mem, d.batch_star, d.forced.batch if d.forced else None) if v]
    top = min(int(max([8, *known]) * 1.5) + 1, MAX_BATCH)
    samples = np.unique(np.round(np.logspace(0, math.log10(top), 90)).astype(np.int64))
    extra = np.array([v for v in known if v <= top], dtype=np.int64)
    return np.unique(np.concatenate([samples, extra]))


def decode_charts(pair: Pair) -> tuple[Chart, Chart]:
    d = pair.decode_result
    batches = decode_batches(pair)
    aggregate, per_session = curve(pair.hardware.hardware, pair.model.adapter, pair.workload, batches)
    xs = batches.astype(float).tolist()
    marks = []
    if d.batch_mem:
        marks.append(Mark(float(d.batch_mem), f"b_mem = {d.batch_mem:,}", "bmem"))
    if d.batch_star:
        marks.append(Mark(float(d.batch_star), f"b* = {d.batch_star:,}", "bstar"))
    if d.forced:
        marks.append(Mark(float(d.forced.batch), f"batch {d.forced.batch:,}", "forced"))
    # Both charts share the batch axis: its scale, the batch marks and the shading past b_mem.
    against_batch = partial(
        Chart,
        x_label="batch b (concurrent sessions)",
        x_log=xs[-1] / xs[0] >= 50,
        x_marks=tuple(marks),
        shade_from_x=float(d.batch_mem) if d.batch_mem is not None else 1.0,
        x_unit="sessions",
    )
    agg = against_batch(
        id="fig-aggregate",
        title=f"Aggregate decode ceiling T(b) against batch b for {pair.model.name} on {pair.hardware.name}",
        y_label="aggregate tok/s",
        series=(Series("aggregate T(b)", xs, aggregate.tolist(), "agg", "tok/s"),),
    )
    floor = pair.workload.floor_tok_s
    per = against_batch(
        id="fig-per-session",
        title=f"Per-session decode ceiling r(b) against batch b, with the floor r* = {floor:g} tok/s",
        y_label="tok/s per session",
        series=(Series("per session r(b)", xs, per_session.tolist(), "per", "tok/s"),),
        y_log=bool(per_session.max() / max(per_session.min(), 1e-300) > 100),
        y_marks=(Mark(floor, f"floor r* = {floor:g}", "floor"),) if floor > 0 else (),
    )
    return agg, per


def prefill_lengths(pair: Pair) -> np.ndarray:
    rng = pair.prefill_range
    top = (
        rng.max_prompt_tokens if rng is not None and rng.max_prompt_tokens >= 1 else pair.query.alloc_context
    )
    top = max(top, pair.prompt_tokens or 1, 2)
    return np.unique(np.round(np.logspace(0, math.log10(top), 90)).astype(np.int64))


def prefill_charts(pair: Pair) -> tuple[Chart, Chart] | None:
    if pair.prefill_result is None:
        return None
    lengths = prefill_lengths(pair)
    c = prefill_curve(pair.hardware.hardware, pair.model.adapter, lengths, workload=pair.workload)
    xs = lengths.astype(float).tolist()
    marks = []
    # The crossing the drawn rooflines make (attention included), not the linear-only S*.
    crossover = pair.prefill_result.crossover_with_attention_tokens
    if crossover:
        marks.append(Mark(float(crossover), f"crossover S* = {crossover:,.0f} (attention included)", "cross"))
    marks.append(Mark(float(pair.prompt_tokens or 1), f"prompt {pair.prompt_tokens:,}", "forced"))
    series = [Series("prefill ceiling", xs, c.tok_s.tolist(), "agg", "tok/s")]
    series.append(Series("memory roofline", xs, c.memory_tok_s.tolist(), "mem", "tok/s"))
    if c.compute_tok_s is not None:
        series.append(Series("compute roofline", xs, c.compute_tok_s.tolist(), "cmp", "tok/s"))
    # Both charts share the prompt-length axis, with the crossover and the prompt marked.
    against_prompt = partial(
        Chart, x_label="prompt length L (tokens)", y_log=True, x_marks=tuple(marks), x_unit="tokens"
    )
    throughput = against_prompt(
        id="fig-prefill-rate",
        title="Prefill throughput ceiling against prompt length (batch 1, one shot)",
        y_label="prefill tok/s",
        series=tuple(series),
    )
    time = against_prompt(
        id="fig-prefill-time",
        title="Modeled prefill time (time to first token, lower bound) against prompt length",
        y_label="seconds",
        series=(Series("t_pf,min", xs, c.time_s.tolist(), "per", "s"),),
    )
    return throughput, time


@dataclass(frozen=True)
class BarPart:
    name: str
    bytes: float
    css: str


def memory_parts(pair: Pair) -> tuple[list[BarPart], int]:
    """Weights, overhead, the KV cache of the sessions shown, and what is left, in bytes."""
    d = pair.decode_result
    sessions = int(d.forced.batch) if d.forced else int(d.batch_star or d.batch_mem or 0)
    capacity = d.hardware.memory_bytes
    parts = [
        BarPart("weights (resident)", d.resident_bytes, "w"),
        BarPart("runtime overhead", pair.workload.overhead_bytes, "o"),
        BarPart(
            f"KV cache, {sessions:,} session{'' if sessions == 1 else 's'}", sessions * d.kv_alloc_bytes, "kv"
        ),
    ]
    used = sum(p.bytes for p in parts)
    parts.append(BarPart("free", max(0.0, capacity - used), "free"))
    return parts, sessions


def memory_bar(pair: Pair) -> Markup:
    parts, _ = memory_parts(pair)
    capacity = pair.decode_result.hardware.memory_bytes
    total = max(capacity, sum(p.bytes for p in parts))
    left = 4
    usable = WIDTH - 2 * left
    e = escape
    out = []
    x = float(left)
    for p in parts:
        w = usable * p.bytes / total if total > 0 else 0
        if w <= 0:
            continue
        out.append(
            f'<rect class="seg {e(p.css)}" x="{x:.1f}" y="8" width="{w:.1f}" height="30">'
            f"<title>{e(p.name)}: {e(fmt_gb(p.bytes))}</title></rect>"
        )
        x += w
    cap_x = left + usable * capacity / total
    out.append(
        f'<line class="cap" x1="{cap_x:.1f}" x2="{cap_x:.1f}" y1="2" y2="44"><title>capacity C</title></line>'
    )
    labels = [f"{p.name} {p.bytes / GB:,.1f} GB" for p in parts]
    # measured at the phone font, like the line charts' legends; every entry stays inside the frame
    spots = flow([14 + CHAR_PX * len(label) for label in labels], left, WIDTH - left, 12)
    for p, label, (lx, row) in zip(parts, labels, spots, strict=True):
        ly = 56.0 + LEGEND_ROW * row
        out.append(
            f'<g class="legend"><rect class="seg {e(p.css)}" x="{lx:.1f}" y="{ly:.0f}" width="10" height="10"/>'
            f'<text x="{lx + 14:.1f}" y="{ly + 10:.0f}">{e(label)}</text></g>'
        )
    title = f"Memory: capacity {fmt_gb(capacity)} split into weights, overhead, KV sessions and free"
    return svg("chart membar", "fig-memory", 80.0 + LEGEND_ROW * spots[-1][1], title, out)


# --------------------------------------------------------------------------------------------------
# The validation page's figure
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class StripDot:
    """One reported run on the efficiency strip: its anchor, efficiency (measured / ceiling), a title."""

    anchor: str
    efficiency: float
    above: bool
    title: str


#: The strip's label column: wide enough for "unified-memory SoC (194)" at its phone font (16 units).
STRIP_LABEL = 250
STRIP_CHAR_PX = 10.0
#: Room right of the axis for half its last tick label ("150 %") at that font.
STRIP_RIGHT = 32
STRIP_ROW = 30


def efficiency_strip(chart_id: str, title: str, rows: Sequence[tuple[str, Sequence[StripDot]]]) -> Markup:
    """Each run's efficiency as a dot on a 0..max axis, one row per group, with the 100 % line.

    The axis runs from 0 to the largest efficiency (at least 100 %) rounded up to its tick step. Dots
    above 100 % carry the class ``above``; each dot links to its run's row (``#anchor``) and its
    ``<title>`` states the run and the figure, so the figure reads without a script.
    """
    values = [d.efficiency for _, dots in rows for d in dots]
    top = max([1.0, *values])
    step = 0.25 if top <= 1.5 else 0.5 if top <= 4 else float(math.ceil(top / 8))
    top = math.ceil(top / step - 1e-9) * step
    height = TOP + STRIP_ROW * max(1, len(rows)) + BOTTOM
    sx = Scale(0.0, top, False, STRIP_LABEL, WIDTH - STRIP_RIGHT)
    e = escape
    bottom = height - BOTTOM
    out = []
    tick = 0.0
    while tick <= top + 1e-9:
        x = sx(tick)
        out.append(f'<line class="grid" x1="{x:.1f}" x2="{x:.1f}" y1="{TOP}" y2="{bottom}"/>')
        out.append(
            f'<text class="tick" x="{x:.1f}" y="{bottom + 16}" text-anchor="middle">{100 * tick:.0f} %</text>'
        )
        tick += step
    for i, (label, dots) in enumerate(rows):
        y = TOP + STRIP_ROW * i + STRIP_ROW / 2
        out.append(
            f'<text class="label" x="{STRIP_LABEL - 8}" y="{y + 4:.1f}" text-anchor="end">'
            f"{e(label)} ({len(dots)})</text>"
        )
        for j, dot in enumerate(dots):
            dy = ((j % 3) - 1) * 6  # three lanes, so close dots stay apart
            css = "run above" if dot.above else "run"
            out.append(
                f'<a href="#{e(dot.anchor)}"><circle class="{css}" cx="{sx(dot.efficiency):.1f}" '
                f'cy="{y + dy:.1f}" r="4.5"><title>{e(dot.title)}</title></circle></a>'
            )
    x100 = sx(1.0)
    ceiling = "ceiling (100 %)"
    end = x100 + 4 + STRIP_CHAR_PX * len(ceiling) > WIDTH  # it would run off the right: end at its line
    out.append(
        f'<g class="mark ceiling"><line x1="{x100:.1f}" x2="{x100:.1f}" y1="{TOP - 6}" y2="{bottom}"/>'
        f'<text x="{x100 + (-4 if end else 4):.1f}" y="{TOP - 8 + 12}" text-anchor="{"end" if end else "start"}">'
        f"{ceiling}</text></g>"
    )
    out.append(
        f'<line class="axis" x1="{STRIP_LABEL}" x2="{WIDTH - STRIP_RIGHT}" y1="{bottom}" y2="{bottom}"/>'
        f'<text class="label" x="10" y="{height - 8}">'
        "efficiency: measured / ceiling for the run's own setting</text>"
    )
    return svg("strip", chart_id, height, title, out)


# --------------------------------------------------------------------------------------------------
# Decode against read context (decode --range)
# --------------------------------------------------------------------------------------------------


def context_figure(pair: Pair) -> dict[str, Any]:
    """The pair page's context-range chart (fig_context, context_top, context_note): the single-session
    ceiling and the aggregate at b* over read contexts 1..the model's limit (log axis; the value at an
    empty context goes in the caption), from servebound.core.decode_range."""
    result = pair.decode_result
    rng = decode_context_range(result.hardware, result.model, result.workload)
    empty: dict[str, Any] = {"fig_context": None, "context_top": None, "context_note": ""}
    if rng.curve is None or rng.max_read_context_tokens is None or rng.at_shortest is None:
        return empty
    c = rng.curve
    keep = c.read_context_tokens >= 1
    xs = c.read_context_tokens[keep].astype(float).tolist()
    if len(xs) < 2:
        return empty
    series = [Series("one session", xs, c.single_session_tok_s[keep].tolist(), "per", "tok/s")]
    agg = c.aggregate_tok_s[keep]
    if np.any(np.isfinite(agg)):
        series.append(Series("aggregate at b*", xs, agg.tolist(), "agg", "tok/s"))
    read = pair.workload.read_context_tokens
    marks = [Mark(float(read), f"L_read {read:,}", "forced")]
    edge = rng.floor_read_context_tokens
    if edge is not None and edge < rng.max_read_context_tokens:
        marks.append(Mark(float(max(edge, 1)), f"floor holds up to {edge:,}", "floor"))
    chart = Chart(
        id="fig-context",
        title="Decode ceilings against read context (depth)",
        x_label="read context L_read (tokens)",
        y_label="tok/s",
        series=tuple(series),
        x_log=True,
        y_log=True,
        x_marks=tuple(marks),
        x_unit="tokens",
    )
    s = rng.at_shortest
    note = f"one session {fmt_rate(s.single_session_tok_s)}" + (
        f", aggregate {fmt_rate(s.aggregate_tok_s)} at b* = {s.batch_star:,}"
        if s.aggregate_tok_s is not None and s.batch_star is not None
        else ""
    )
    return {
        "fig_context": render_chart(chart),
        "context_top": rng.max_read_context_tokens,
        "context_note": note,
    }
