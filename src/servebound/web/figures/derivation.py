"""The derivation's figures as server-rendered SVG, at the text's toy setup and defaults.

Every number drawn comes from servebound.web.pages.derivation (the core's decode for the boards, closed forms
over numpy arrays for the sweeps); this module only maps numbers to pixels. Legends sit inside each
frame (a test checks their boxes in a real browser at a 1,300-pixel window).
"""

from __future__ import annotations

import math

from markupsafe import Markup, escape

from servebound.core.arith import np  # numpy on first use: a server starts without it
from servebound.core.units import GB
from servebound.web.figures.charts import CHAR_PX, Chart, Mark, Series, flow, render_chart, svg
from servebound.web.pages.derivation_toy import (
    TOY_BANDWIDTH_GB_PER_S,
    TOY_CAPACITY_GB,
    Boards,
    ReservationSweep,
    Toy,
    read_following,
    reservation_sweep,
)

e = escape


def _num(v: float) -> str:
    return f"{v:,.0f}"


def feasibility_svg(
    capacity_gb: float = TOY_CAPACITY_GB, bandwidth_gb_per_s: float = TOY_BANDWIDTH_GB_PER_S
) -> Markup:
    """The feasible set F(C, R): the rectangle 0 <= h <= C, 0 <= r <= R of area C R, with a workload
    inside it and one failing each way."""
    width, height, left, bottom, top, right = 640, 300, 70, 46, 18, 20
    sx = (width - left - right) / (capacity_gb * 1.5)
    sy = (height - top - bottom) / (bandwidth_gb_per_s * 1.5)

    def X(h: float) -> float:
        return left + h * sx

    def Y(r: float) -> float:
        return height - bottom - r * sy

    area = capacity_gb * bandwidth_gb_per_s
    title = (
        f"Feasible workloads (h, r) on a machine with C = {_num(capacity_gb)} GB and "
        f"R = {_num(bandwidth_gb_per_s)} GB/s: a rectangle of area C R = {_num(area)} GB²/s"
    )
    out = [
        f'<rect class="feasible" x="{X(0):.1f}" y="{Y(bandwidth_gb_per_s):.1f}" width="{capacity_gb * sx:.1f}" '
        f'height="{bandwidth_gb_per_s * sy:.1f}"><title>feasible: h &lt;= C and r &lt;= R</title></rect>',
        f'<text class="label" x="{X(capacity_gb / 2):.1f}" y="{Y(bandwidth_gb_per_s / 2):.1f}" text-anchor="middle">'
        f"area C R = {_num(area)} GB²/s</text>",
        f'<line class="axis" x1="{left}" x2="{width - right}" y1="{height - bottom}" y2="{height - bottom}"/>',
        f'<line class="axis" x1="{left}" x2="{left}" y1="{top}" y2="{height - bottom}"/>',
        f'<text class="label" x="{(left + width - right) / 2}" y="{height - 8}" text-anchor="middle">'
        "resident state h (GB)</text>",
        f'<text class="label" transform="translate(14 {(top + height - bottom) / 2}) rotate(-90)" '
        'text-anchor="middle">flow r (GB/s)</text>',
    ]
    for h in np.linspace(0, capacity_gb * 1.5, 7):
        out.append(
            f'<text class="tick" x="{X(h):.1f}" y="{height - bottom + 16}" text-anchor="middle">{_num(h)}</text>'
        )
    for r in np.linspace(0, bandwidth_gb_per_s * 1.5, 7):
        out.append(f'<text class="tick" x="{left - 6}" y="{Y(r) + 4:.1f}" text-anchor="end">{_num(r)}</text>')
    out.append(
        f'<g class="mark bmem"><line x1="{X(capacity_gb):.1f}" x2="{X(capacity_gb):.1f}" y1="{top}" '
        f'y2="{height - bottom}"/><text x="{X(capacity_gb) + 4:.1f}" y="{top + 12}">h = C</text></g>'
        f'<g class="mark bstar"><line x1="{left}" x2="{width - right}" y1="{Y(bandwidth_gb_per_s):.1f}" '
        f'y2="{Y(bandwidth_gb_per_s):.1f}"/><text x="{width - right - 4}" y="{Y(bandwidth_gb_per_s) - 4:.1f}" '
        'text-anchor="end">r = R</text></g>'
    )
    points = (
        (capacity_gb * 0.5, bandwidth_gb_per_s * 0.7, "fits", "feasible"),
        (capacity_gb * 1.3, bandwidth_gb_per_s * 0.4, "capacity failure: h > C", "fail"),
        (capacity_gb * 0.3, bandwidth_gb_per_s * 1.3, "flux failure: r > R", "fail"),
    )
    for h, r, label, css in points:
        right_side = X(h) > width - 200  # labels near the right edge run leftwards, inside the frame
        tx, anchor = (X(h) - 8, "end") if right_side else (X(h) + 8, "start")
        out.append(
            f'<g class="point {css}"><circle cx="{X(h):.1f}" cy="{Y(r):.1f}" r="5"/>'
            f'<text x="{tx:.1f}" y="{Y(r) + 4:.1f}" text-anchor="{anchor}">{e(label)}</text>'
            f"<title>workload h = {_num(h)} GB, r = {_num(r)} GB/s: {e(label)}</title></g>"
        )
    return svg("chart derivation", "fig-feasibility", height, title, out)


BOARD_COLS, BOARD_ROWS = 24, 16


def boards_svg(b: Boards) -> Markup:
    """Two copies of the toy machine's usable memory (C - O) side by side, cell by cell: weights in
    orange, each session's reserved cache in blue containers. The left board charges only the weight
    cells each iteration (memory-power accounting); the right charges the weights plus every session's
    read cells (the KV-aware bound). Sessions past capacity are drawn below the board, not fitting."""
    toy = b.toy
    width, height = 640, 402
    board_w, board_h, board_y = 300, 200, 60
    cells = BOARD_COLS * BOARD_ROWS
    usable = (toy.capacity_gb - toy.overhead_gb) * GB
    cell_bytes = usable / cells
    cw, ch = board_w / BOARD_COLS, board_h / BOARD_ROWS
    weight_cells = round(toy.weights_gb * GB / cell_bytes)
    per_session = b.kv_alloc_bytes / cell_bytes
    read_share = b.kv_read_bytes / b.kv_alloc_bytes if b.kv_alloc_bytes > 0 else 0.0
    fitting = min(b.batch, b.batch_mem)
    overflow = b.batch - fitting
    out = []
    for side, x0 in (("left", 10), ("right", 330)):
        charge_reads = side == "right"
        title = "memory-power accounting" if side == "left" else "KV-aware bound"
        out.append(f'<text class="label board-title" x="{x0}" y="20">{e(title)}</text>')
        out.append(  # two short lines: each fits its board's width at the phone font
            f'<text class="tick" x="{x0}" y="36">{"weights only" if side == "left" else "weights + every session’s reads"}'
            f'</text><text class="tick" x="{x0}" y="52">charged per iteration</text>'
        )
        for i in range(cells):
            x = x0 + (i % BOARD_COLS) * cw
            y = board_y + (i // BOARD_COLS) * ch
            if i < weight_cells:
                css = "cell w lit"
            else:
                pos = (i - weight_cells + 0.5) / per_session if per_session > 0 else math.inf
                session = int(pos)
                if session >= fitting:
                    css = "cell free"
                else:
                    in_read = (pos - session) < read_share
                    css = f"cell kv s{session % 2}" + (" lit" if charge_reads and in_read else "")
            out.append(
                f'<rect class="{css}" x="{x:.1f}" y="{y:.1f}" width="{cw - 1:.1f}" height="{ch - 1:.1f}"/>'
            )
        moved = b.left_bytes if side == "left" else b.right_bytes
        rate = b.left_tok_s if side == "left" else b.right_tok_s
        out.append(
            f'<text class="counter" x="{x0}" y="{board_y + board_h + 22}" data-k="{side}_tok_s">'
            f"{_num(rate)} tok/s</text>"
            f'<text class="tick" x="{x0}" y="{board_y + board_h + 38}">{moved / GB:,.1f} GB moved per iteration</text>'
            f'<text class="tick" x="{x0}" y="{board_y + board_h + 54}">batch {b.batch:,}</text>'
        )
        if overflow > 0:
            out.append(
                f'<rect class="cell nofit" x="{x0}" y="{board_y + board_h + 60}" width="{board_w}" height="10"/>'
                f'<text class="tick fail" x="{x0}" y="{board_y + board_h + 82}">{overflow:,} {"session does" if overflow == 1 else "sessions do"} not fit</text>'
            )
    line = (
        f"memory-power bound (maximize batch, b_mem = {b.batch_mem:,}): {_num(b.memory_power_tok_s)} tok/s"
        if b.memory_power_tok_s is not None
        else "memory-power bound undefined: no session fits"
    )
    out.append(f'<text class="label" x="10" y="{height - 42}" data-k="memory_power_tok_s">{e(line)}</text>')
    legend = (
        ("w lit", "weights"),
        ("kv s0", "KV reserved"),
        ("kv s0 lit", "KV read per iteration"),
        ("free", "free"),
    )
    # wrapped at the phone font's width (figures.CHAR_PX a character)
    spots = flow([14 + CHAR_PX * len(label) for _, label in legend], 10, width - 10, 14)
    for (css, label), (lx, row) in zip(legend, spots, strict=True):
        ly = height - 15 + 24 * row
        out.append(
            f'<g class="legend"><rect class="cell {css}" x="{lx:.1f}" y="{ly - 9}" width="10" height="10"/>'
            f'<text x="{lx + 14:.1f}" y="{ly}">{e(label)}</text></g>'
        )
    out.append(
        f'<text class="tick" x="{width - 10}" y="{ly + 24}" text-anchor="end">reserved {toy.reserved:,}, '
        f"read {toy.read:,} tokens</text>"
    )
    title = (
        f"The two bounds side by side at batch {b.batch:,}: memory-power accounting "
        f"{_num(b.left_tok_s)} tok/s, KV-aware {_num(b.right_tok_s)} tok/s"
    )
    return svg("chart derivation boards", "fig-boards", ly + 34, title, out)


def read_context_chart(toy: Toy) -> Markup:
    """L_read following L_alloc: the read fraction, with the unread rest capped at 32k."""
    reserved = np.unique(np.rint(np.geomspace(1_000, 1_000_000, 80)))
    read = np.asarray(
        [read_following(int(r), toy.fraction, toy.unread_cap) for r in reserved], dtype=np.float64
    )
    chart = Chart(
        id="fig-read-context",
        title=f"Read context following the reservation at {toy.fraction:.0%}, unread rest capped at {toy.unread_cap:,}",
        x_label="reserved context L_alloc (tokens)",
        y_label="read context L_read (tokens)",
        series=(
            Series("L_read", reserved.tolist(), read.tolist(), "agg", "tokens"),
            Series("L_alloc (all read)", reserved.tolist(), reserved.tolist(), "mem", "tokens"),
        ),
        x_log=True,
        y_log=True,
        x_marks=(Mark(toy.reserved, f"reserved {toy.reserved:,}", "forced"),),
        x_unit="tokens",
    )
    return render_chart(chart)


def _bounds_chart(
    *,
    chart_id: str,
    title: str,
    x_label: str,
    xs: np.ndarray,
    sweep: ReservationSweep,
    x_marks: tuple[Mark, ...],
    x_unit: str,
    shade_from_x: float | None = None,
) -> Markup:
    """Both accountings against one swept input, log-log: the memory-power bound and the KV-aware
    aggregate at the largest fitting batch (a ``reservation_sweep``)."""
    x = xs.tolist()
    chart = Chart(
        id=chart_id,
        title=title,
        x_label=x_label,
        y_label="tok/s",
        series=(
            Series("memory-power bound", x, sweep.memory_power_tok_s.tolist(), "mem", "tok/s"),
            Series("KV-aware at b_mem", x, sweep.kv_aware_tok_s.tolist(), "agg", "tok/s"),
        ),
        y_log=True,
        x_marks=x_marks,
        shade_from_x=shade_from_x,
        x_unit=x_unit,
    )
    return render_chart(chart)


def reservation_chart(toy: Toy) -> Markup:
    """Both bounds in maximize mode against the reservation: the containers stop fitting where one
    session's cache passes the room left after weights and overhead."""
    reserved = np.unique(np.rint(np.geomspace(500, 1_000_000, 120)))
    last_fit = math.floor(toy.margin_gb / toy.kv_gb_per_1k * 1000)
    return _bounds_chart(
        chart_id="fig-containers",
        title="Memory-power bound and KV-aware aggregate at the largest fitting batch, against the reservation",
        x_label="reserved context L_alloc (tokens)",
        xs=reserved,
        sweep=reservation_sweep(toy, reserved),
        x_marks=(
            Mark(toy.reserved, f"reserved {toy.reserved:,}", "forced"),
            Mark(last_fit, f"one session stops fitting past {last_fit:,}", "bmem"),
        ),
        x_unit="tokens",
        shade_from_x=last_fit,
    )


def model_size_chart(toy: Toy) -> Markup:
    """Growing the model slows both accountings in step while its weights eat the sessions' room."""
    top = toy.capacity_gb - toy.overhead_gb - toy.kv_gb_per_1k * toy.reserved / 1000
    sizes = np.geomspace(1.0, max(top, 1.5), 100)
    return _bounds_chart(
        chart_id="fig-model-size",
        title=f"Both bounds against the model's weight size at a {toy.reserved:,}-token reservation",
        x_label="weights W (GB)",
        xs=sizes,
        sweep=reservation_sweep(toy, np.asarray(float(toy.reserved)), sizes),
        x_marks=(Mark(toy.weights_gb, f"W = {toy.weights_gb:g} GB", "forced"),),
        x_unit="GB",
    )
