"""Choosing among a system's layouts: every valid layout ranked best first (``search_layouts``), and the
first of that ranking found without evaluating every layout in full (``best_layout``). Each layout's
own evaluation is ``core.layout.evaluate_layout``.
"""

from __future__ import annotations

import math

from servebound.core.decode import VERDICT_ORDER, Verdict
from servebound.core.layout import (
    DEFAULT_ACTIVATION_BYTES,
    LayoutResult,
    _LayoutModel,
    evaluate_layout,
)
from servebound.core.model import ModelAdapter
from servebound.core.system import Layout, System, searched_layouts, valid_layouts
from servebound.core.workload import MAX_BATCH, Workload, memory_fit_batch


def rank_key(result: LayoutResult) -> tuple[float, ...]:
    """Best first: floor fits by aggregate, then the rest by single-session rate, then the non-fits by
    free bytes per device; ties go to fewer devices, then fewer pipeline stages."""
    order = VERDICT_ORDER[result.verdict]
    if result.verdict is Verdict.FLOOR_FIT:
        value = result.aggregate_tok_s or 0.0
    elif result.verdict is Verdict.NO_FLOOR:
        value = result.single_session_tok_s or 0.0
    else:
        value = result.per_device.free_bytes
    return (order, -value, result.devices, result.layout.pp, result.layout.tp)


def search_layouts(
    system: System,
    model: ModelAdapter,
    workload: Workload | None = None,
    *,
    compute_s_per_session_step: float | None = None,
    activation_bytes: float = DEFAULT_ACTIVATION_BYTES,
) -> list[LayoutResult]:
    """Every valid layout evaluated and ranked best first (``rank_key``); more than
    ``MAX_LAYOUTS_SEARCHED`` is an InputError, before any is evaluated (``searched_layouts``)."""
    workload = workload or Workload()
    layouts = searched_layouts(system, model)
    results = [
        evaluate_layout(
            system,
            model,
            layout,
            workload,
            compute_s_per_session_step=compute_s_per_session_step,
            activation_bytes=activation_bytes,
        )
        for layout in layouts
    ]
    return sorted(results, key=rank_key)


def best_layout(
    system: System,
    model: ModelAdapter,
    workload: Workload | None = None,
    *,
    compute_s_per_session_step: float | None = None,
    activation_bytes: float = DEFAULT_ACTIVATION_BYTES,
) -> LayoutResult | None:
    """The layout ``search_layouts`` ranks first (None where none is valid), without evaluating every
    layout in full. T(b) never falls with b, so T(b_mem) bounds a layout's aggregate at b*: the layouts
    are evaluated in order of that bound, and the search stops once a floor fit's aggregate exceeds
    every bound left (a layout ranks above a floor fit only as a floor fit at least as fast)."""
    workload = workload or Workload()
    c, e_a = compute_s_per_session_step, activation_bytes
    bounded: list[tuple[float, Layout]] = []
    for layout in valid_layouts(system, model):
        lm = _LayoutModel(system, model, workload, layout, c, e_a)
        top = 0 if lm.margin_bytes < 0 else memory_fit_batch(lm.margin_bytes, lm.kv_alloc_per_session)[0]
        top = min(top, MAX_BATCH)
        bounded.append((layout.dp * layout.pp * top / lm.token_s(top) if top else -math.inf, layout))
    best: LayoutResult | None = None
    for bound, layout in sorted(bounded, key=lambda item: -item[0]):
        fast = None if best is None or best.verdict is not Verdict.FLOOR_FIT else best.aggregate_tok_s
        if fast is not None and bound < fast:
            break
        result = evaluate_layout(
            system, model, layout, workload, compute_s_per_session_step=c, activation_bytes=e_a
        )
        best = result if best is None or rank_key(result) < rank_key(best) else best
    return best
