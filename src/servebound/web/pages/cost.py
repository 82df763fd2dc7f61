"""Cost per token on the site: a pair page's cost section (table, figures, the same JSON as
`servebound cost --json`) and the /economics page's context. Numbers come from the core
(servebound.core.cost, servebound.questions.cost, servebound.questions.economics); this module formats."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any
from urllib.parse import urlencode

from markupsafe import Markup

from servebound.core.arith import np  # numpy on first use: a server starts without it
from servebound.core.cost import context_curve, cost_curve
from servebound.core.fields import clean_json
from servebound.errors import InputError
from servebound.inputs.pricing import resolve_price
from servebound.questions.cost import CostReport, cost_report
from servebound.questions.economics import Shown, lecture
from servebound.questions.layout import layout_cost_points
from servebound.views.cost_view import cost_json, cost_summary, fmt_money
from servebound.views.economics_asides import asides
from servebound.web.figures import economics as ef
from servebound.web.figures.charts import Chart, Mark, Series, cost_batch_chart, render_chart
from servebound.web.pages.site import Pair, SiteHardware
from servebound.web.pages.words import page_text


@dataclass(frozen=True)
class CostRow:
    batch: str
    step: str
    tok_s: str
    per_session: str
    bound_by: str
    usd: str


@dataclass(frozen=True)
class CostView:
    """A pair's cost section. ``reason`` says why there is none (no price, nothing fits)."""

    reason: str | None
    usd_per_hour: str = ""
    basis: str = ""
    price_source: str = ""
    rows: Sequence[CostRow] = ()
    lines: Sequence[str] = ()
    api_cost: str = ""
    data: Any = None
    report: CostReport | None = None


def pair_cost(pair: Pair) -> CostView:
    """The cost section for a pair at its workload, priced as `servebound cost` prices it by default."""
    hw, m = pair.hardware, pair.model
    params = {k: v for k, v in pair.query.params().items() if k != "batch"}
    api = "/api/cost?" + urlencode({"hardware": hw.id, "model": m.id, **params})
    try:
        price = resolve_price(hw.hardware, hw.row_price)
    except InputError as exc:
        return CostView(
            reason=f"No price for this row ({page_text(exc.note)}); /api/cost takes usd_per_hour.",
            api_cost=api,
        )
    if pair.decode_result.batch_mem in (None, 0):
        return CostView(reason="Nothing to price: no session fits.", api_cost=api)
    choice = getattr(pair.decode_result, "layout", None)  # a system prices its layout's tokens
    if choice is not None:
        return _layout_cost(pair, choice, price, api)
    report = cost_report(
        hw.hardware, m.adapter, pair.workload, price, prompt_tokens=pair.prompt_tokens or 8192
    )
    data = clean_json(cost_json(report))
    rows = [
        CostRow(
            f"{p['batch']:,}",
            f"{p['step_time_s'] * 1e3:,.3f} ms",
            f"{p['tok_s']:,.0f}",
            f"{p['per_session_tok_s']:,.1f}",
            p["bound_by"],
            fmt_money(p["usd_per_mtok_output"]),
        )
        for p in data["points"]
    ]
    return CostView(
        reason=None,
        usd_per_hour=fmt_money(price.usd_per_hour),
        basis=price.basis,
        price_source=price.source,
        rows=rows,
        lines=cost_summary(data),
        api_cost=api,
        data=data,
        report=report,
    )


def _layout_cost(pair: Pair, choice: Any, price: Any, api: str) -> CostView:
    """A system's cost section at the layout it answers at (as ``servebound cost`` prices it): the
    system's price per hour over the tokens dp pp b sessions emit, per micro-batch b; the batch column
    counts sessions, as decode's b* does."""
    _, points = layout_cost_points(
        choice.system, pair.model.adapter, pair.workload, choice.layout, price.usd_per_hour
    )
    rows = [
        CostRow(
            f"{p['sessions']:,}",
            f"{p['token_time_s'] * 1e3:,.3f} ms",
            f"{p['tok_s']:,.0f}",
            f"{p['per_session_tok_s']:,.1f}",
            p["bound_by"],
            fmt_money(p["usd_per_mtok_output"]),
        )
        for p in points
        if p["fits_memory"]
    ]
    lines = [f"Priced at the parallel layout {choice.label} ({choice.why}); batch counts sessions."]
    return CostView(
        reason=None,
        usd_per_hour=fmt_money(price.usd_per_hour),
        basis=price.basis,
        price_source=price.source,
        rows=rows,
        lines=lines,
        api_cost=api,
    )


# --- figures -----------------------------------------------------------------------------------------


def cost_charts(pair: Pair, report: CostReport) -> list[Chart]:
    """Step time against batch (memory line, compute line, their max, balance batch marked); cost per
    million output tokens against batch (log-log); cost against read context at b* with the crossover."""
    curve = report.curve
    if curve is None:
        return []
    b_mem = report.decode.batch_mem or 1
    batches = np.unique(np.round(np.geomspace(1, max(b_mem, 2), 48)).astype(np.int64))
    c = cost_curve(
        pair.hardware.hardware, pair.model.adapter, report.workload, batches, report.price.usd_per_hour
    )
    xs = batches.astype(float).tolist()
    steps = c.steps
    marks = []
    if report.decode.balance_batch:
        marks.append(
            Mark(float(report.decode.balance_batch), f"balance {report.decode.balance_batch:,}", "cross")
        )
    if report.decode.batch_star:
        marks.append(Mark(float(report.decode.batch_star), f"b* = {report.decode.batch_star:,}", "bstar"))
    series = [Series("memory t_mem(b)", xs, (steps.memory_time_s * 1e3).tolist(), "mem", "ms")]
    if steps.compute_time_s is not None:
        series.append(Series("compute t_cmp(b)", xs, (steps.compute_time_s * 1e3).tolist(), "cmp", "ms"))
    series.append(Series("step t(b) = max", xs, (steps.step_time_s * 1e3).tolist(), "agg", "ms"))
    name = f"{pair.model.name} on {pair.hardware.name}"
    # The step-time and cost charts share the batch axis (log-log, with the balance batch and b* marked).
    against_batch = partial(cost_batch_chart, x_marks=tuple(marks))
    step_chart = against_batch(
        id="fig-step-time",
        title=f"Decode step time against batch for {name}: memory line, compute line and their max",
        y_label="step time (ms)",
        series=tuple(series),
    )
    cost = against_batch(
        id="fig-cost-batch",
        title=f"Cost per million output tokens against batch for {name}",
        y_label="USD per million output tokens",
        series=(Series("cost p t(b) / b", xs, c.usd_per_mtok_output.tolist(), "per", "USD/Mtok"),),
        y_marks=(Mark(c.floor_usd_per_mtok, "cost floor", "floor"),) if c.floor_usd_per_mtok > 0 else (),
    )
    charts = [step_chart, cost]
    batch = report.decode.batch_star or 1
    top = max(2, report.workload.alloc_context_tokens)
    contexts = np.unique(np.round(np.geomspace(1, top, 40)))
    ctx = context_curve(
        pair.hardware.hardware,
        pair.model.adapter,
        report.workload,
        batch,
        contexts,
        report.price.usd_per_hour,
    )
    cx = ctx.contexts.tolist()
    ctx_series = [Series("memory t_mem(L)", cx, (ctx.memory_time_s * 1e3).tolist(), "mem", "ms")]
    if ctx.compute_time_s is not None:
        ctx_series.append(Series("compute t_cmp(L)", cx, (ctx.compute_time_s * 1e3).tolist(), "cmp", "ms"))
    ctx_series.append(
        Series("USD per million tokens", cx, ctx.usd_per_mtok_output.tolist(), "per", "USD/Mtok")
    )
    charts.append(
        Chart(
            id="fig-cost-context",
            title=f"Step time and cost per million output tokens against read context at batch {batch:,}",
            x_label="read context L (tokens)",
            y_label="ms per step; USD per million tokens",
            series=tuple(ctx_series),
            x_log=True,
            y_log=True,
            x_marks=(Mark(float(ctx.crossover_tokens), f"crossover {ctx.crossover_tokens:,}", "cross"),)
            if ctx.crossover_tokens
            else (),
            x_unit="tokens",
        )
    )
    return charts


def render_cost_charts(pair: Pair, view: CostView) -> list[Markup]:
    return [render_chart(ch) for ch in cost_charts(pair, view.report)] if view.report is not None else []


# --- the /economics page -------------------------------------------------------------------------------


#: The page's formulas as TeX (MathML on the page, TeX in the mirror).
FORMULAS: dict[str, str] = {
    "step": (
        r"t(b) = \max\left(\frac{W_{\mathrm{batch}}(b) + b\,K_{\mathrm{read}}(L_{\mathrm{read}})}{R},\; "
        r"b\left(\frac{2P_{\mathrm{lin,active}}}{F_{\mathrm{linear}}} + "
        r"\frac{a_{\mathrm{attn}}(1, L_{\mathrm{read}})}{F_{\mathrm{attention}}}\right)\right)"
    ),
    "cost": r"\text{cost per token} = \frac{p\,t(b)}{b} = \frac{p}{T(b)}",
    "balance": (
        r"b_{\mathrm{balance}} = \frac{F\,e_w}{2R} \times \frac{P_{\mathrm{total}}}{P_{\mathrm{active}}}"
    ),
    "training": (
        r"6 N D_{\mathrm{pre}} = \frac{c_{\mathrm{rl}}}{\eta} N D_{\mathrm{rl}} = 2 N D_{\mathrm{inf}}, "
        r"\quad D_{\mathrm{inf}} = \text{traffic} \times \text{life}"
    ),
}


@dataclass(frozen=True)
class EconomicsContext:
    blackwell: SiteHardware
    lecture: Sequence[Shown]
    api: Sequence[tuple[str, str]]
    formulas: dict[str, str]
    #: The lecture's figures, drawn from servebound's records (``web.figures.economics``).
    figures: Sequence[Any] = ()
    credit: dict[str, str] | None = None
    #: The lecture's asides, each (heading, sentence) with its figures computed (``views.economics_asides``).
    asides: Sequence[tuple[str, str]] = ()


API_EXAMPLES: tuple[tuple[str, str], ...] = (
    ("/api/economics/lecture", "the lecture's numbers recomputed"),
    ("/api/economics/balance?hardware=nvidia-b200&bytes_per_weight=0.5", "F e_w / 2R per mode"),
    ("/api/economics/drain?capacity_gb=288&bandwidth_gb_per_s=20000", "C / R"),
    ("/api/economics/trains?batch=2000&steps_per_s=64", "b / tau and 2 tau"),
    (
        "/api/economics/breakpoint?hardware=nvidia-b200&mode=fp8&active_params=1e11&breakpoint_tokens=200000",
        "KV bytes per token from a surcharge breakpoint",
    ),
    ("/api/economics/price-ratio?output_usd=15&input_usd=3", "how memory-bound decode is"),
    ("/api/economics/cache-tier?hold_s=300", "the tier for a cache hold time"),
    ("/api/economics/training?traffic_tok_s=5e7&life_days=60&active_params=1e11", "equal-cost training"),
    (
        "/api/cost?hardware=nvidia-b200&model=llama-3.1-8b",
        "a pair's cost curve (as the servebound cost command prints it)",
    ),
)


def economics_context(blackwell: SiteHardware) -> EconomicsContext:
    credit = {
        "title": ef.LECTURE_TITLE,
        "by": ef.LECTURE_BY,
        "date": ef.LECTURE_DATE,
        "url": ef.LECTURE_URL,
        "video": ef.LECTURE_VIDEO,
    }

    return EconomicsContext(
        blackwell,
        lecture(blackwell.hardware),
        API_EXAMPLES,
        FORMULAS,
        ef.economics_figures(),
        credit,
        asides(blackwell.hardware),
    )
