"""A system page's links and parallel layouts for one model: what the HTML page and its mirror share.

The numbers come from ``servebound.questions.layout`` (the CLI's ``layout`` command); the figures from the
core's per-device bytes and step times. Nothing here computes a ceiling of its own.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from markupsafe import Markup

from servebound.core.arith import np  # numpy on first use: a server starts without it
from servebound.core.layout import Layout, LayoutResult, System, evaluate_layout, times_at
from servebound.core.units import GB
from servebound.core.workload import Workload
from servebound.inputs.layout import compute_seconds_per_session_step, resolve_system
from servebound.inputs.scenario import default_workload, resolve_on_system
from servebound.questions.layout import run_layouts
from servebound.views.report import fmt_gb, fmt_rate
from servebound.web.figures.charts import Chart, Series, render_chart
from servebound.web.pages.site import SiteHardware, SiteModel
from servebound.web.pages.text import VERDICT_TEXT

#: Layouts listed on a system page (the JSON API lists all).
TOP_LAYOUTS = 12


@dataclass(frozen=True)
class LinkRow:
    name: str
    value: str
    source: str


@dataclass(frozen=True)
class LayoutRow:
    label: str
    verdict: str
    batch_star: str
    sessions: str
    aggregate: str
    per_session: str
    bound_by: str
    weight: str
    kv: str
    free: str
    communication: str


@dataclass(frozen=True)
class SystemLayouts:
    """The links, the chosen model, its best layouts and two figures."""

    model: SiteModel
    ideal: bool
    links: Sequence[LinkRow]
    rows: Sequence[LayoutRow]
    #: The valid layouts past the table's first rows (listed folded below it).
    rest: Sequence[LayoutRow]
    total: int
    best: str
    memory_chart: Markup | None
    step_chart: Markup | None
    models: Sequence[SiteModel]


def _row(r: LayoutResult) -> LayoutRow:
    t = r.times
    return LayoutRow(
        label=r.layout.label,
        verdict=VERDICT_TEXT[r.verdict.value],
        batch_star="n/a" if r.batch_star is None else f"{r.batch_star:,}",
        sessions="n/a" if r.sessions is None else f"{r.sessions:,}",
        aggregate=fmt_rate(r.aggregate_tok_s),
        per_session=fmt_rate(r.per_session_tok_s),
        bound_by="n/a" if t is None else t.bound_by.value,
        weight=fmt_gb(r.per_device.weight_bytes),
        kv=fmt_gb(r.per_device.kv_bytes),
        free=fmt_gb(r.per_device.free_bytes),
        communication="n/a" if t is None else f"{t.communication_s * 1e3:,.3f} ms",
    )


def link_rows(system: System, sources: dict[str, str]) -> list[LinkRow]:
    link = system.interconnect
    if link.ideal:
        return [LinkRow("Link", "none stated: the ideal upper bound (communication free)", "")]
    return [
        LinkRow("Devices", f"{system.count} x {system.device.name}", ""),
        LinkRow("Scale-up domain", f"{link.scale_up_devices} devices", ""),
        LinkRow(
            "Scale-up, each way per device",
            f"{link.scale_up_bytes_per_s / GB:,.1f} GB/s ({link.scale_up_link})",
            sources.get("scale_up_gb_per_s", ""),
        ),
        LinkRow(
            "Scale-out, each way per device",
            f"{link.scale_out_bytes_per_s / GB:,.1f} GB/s ({link.scale_out_link})",
            sources.get("scale_out_gb_per_s", ""),
        ),
    ]


def memory_vs_stages_chart(system: System, model: SiteModel, workload: Workload) -> Markup | None:
    """Per-device weights and KV of the pure pipeline layouts (one device per stage), each at its own
    sessions (the layout's b* micro-batches in flight, as its row of the table), against the device's
    capacity: weights fall as 1 / pp while the cache grows with the sessions the freed memory holds."""
    shape = model.adapter.shape
    max_pp = system.count if shape is None else min(system.count, shape.layers)
    if max_pp < 2:
        return None
    c = compute_seconds_per_session_step(system.device, model.adapter, workload)
    pipelines = [
        evaluate_layout(system, model.adapter, Layout(pp=pp), workload, compute_s_per_session_step=c)
        for pp in range(1, max_pp + 1)
    ]
    stages = [r.layout.pp for r in pipelines]
    capacity = pipelines[0].per_device.capacity_bytes / GB
    return render_chart(
        Chart(
            id="layout-memory",
            title="Per-device memory vs pipeline stages (one device per stage, at each layout's own sessions)",
            x_label="pipeline stages pp",
            x_integer=True,
            y_label="GB per device",
            series=(
                Series(
                    "weights", stages, [r.per_device.weight_bytes / GB for r in pipelines], "s-weights", "GB"
                ),
                Series(
                    "KV cache at the layout's sessions",
                    stages,
                    [r.per_device.kv_bytes / GB for r in pipelines],
                    "s-kv",
                    "GB",
                ),
                Series("device capacity", stages, [capacity] * len(stages), "s-capacity", "GB"),
            ),
            x_log=False,
        )
    )


def step_time_chart(
    system: System, model: SiteModel, layouts: Sequence[LayoutResult], workload: Workload
) -> Markup | None:
    """Token time tau(b) against the micro-batch for the best layouts that fit."""
    fits = [r for r in layouts if r.batch_mem]
    if not fits:
        return None
    c = compute_seconds_per_session_step(system.device, model.adapter, workload)
    series = []
    for i, r in enumerate(fits[:3]):
        top = max(2, min(r.batch_mem or 1, 4096))
        batches = np.unique(np.geomspace(1, top, 24).astype(int))
        times = [
            times_at(system, model.adapter, r.layout, int(b), workload, compute_s_per_session_step=c).token_s
            * 1e3
            for b in batches
        ]
        series.append(Series(r.layout.label, [float(b) for b in batches], times, f"s-layout-{i}", "ms"))
    return render_chart(
        Chart(
            id="layout-step",
            title="Token time vs micro-batch, best layouts",
            x_label="sessions per micro-batch b",
            x_integer=True,
            y_label="ms per token",
            series=tuple(series),
        )
    )


def system_layouts(
    hw: SiteHardware, model: SiteModel, models: Sequence[SiteModel], workload: Workload | None = None
) -> SystemLayouts:
    """The layouts section of a system page for ``model`` at the default workload."""
    assert hw.parallel is not None
    resolved = resolve_system(hw)
    work = resolve_on_system(workload or default_workload(), resolved.system, model.adapter)
    _, results = run_layouts(resolved, model.adapter, work)
    best = results[0] if results else None
    return SystemLayouts(
        model=model,
        ideal=hw.parallel.interconnect.ideal,
        links=link_rows(hw.parallel, dict(hw.link_sources)),
        rows=[_row(r) for r in results[:TOP_LAYOUTS]],
        rest=[_row(r) for r in results[TOP_LAYOUTS:]],
        total=len(results),
        best="" if best is None else best.layout.label,
        memory_chart=memory_vs_stages_chart(hw.parallel, model, work),
        step_chart=step_time_chart(hw.parallel, model, results, work),
        models=models,
    )


def layout_model(
    hw: SiteHardware, models: Sequence[SiteModel], ranked_ids: Sequence[str]
) -> SiteModel | None:
    """The model a system page shows layouts for by default: the best-ranked one with a layer shape."""
    by_id = {m.id: m for m in models}
    for model_id in ranked_ids:
        m = by_id.get(model_id)
        if m is not None and m.adapter.shape is not None:
            return m
    return next((m for m in models if m.adapter.shape is not None), None)
