"""The Python API: typed entry points a notebook can call in a loop. The CLI is a thin layer on top.

Each question lives in its module of ``servebound.questions`` (decode, prefill, layout, plan, ...): it
takes the pair and the workload, resolves them once into a scenario (a system's layouts against the
system) and answers; the core never resolves. This module gathers them under one name and loads the
views that write each record's ``to_dict()``.
"""

from __future__ import annotations

from servebound.inputs.scenario import (
    Scenario,
    default_workload,
    load_hardware,
    load_model,
    make_workload,
    resolve_scenario,
    with_kv_precision,
)
from servebound.questions.cost import cost, cost_answer
from servebound.questions.decode import decode, decode_answer
from servebound.questions.layout import layout
from servebound.questions.plan import plan
from servebound.questions.prefill import prefill, prefill_answer
from servebound.views import cost_view as _cost_view  # noqa: F401 (registers the cost answers' JSON)
from servebound.views import layout_view as _layout_view  # noqa: F401 (registers the layouts' and plans' JSON)
from servebound.views import report as _report  # noqa: F401 (registers the answers' JSON views)

__all__ = [
    "Scenario",
    "cost",
    "cost_answer",
    "decode",
    "decode_answer",
    "default_workload",
    "layout",
    "load_hardware",
    "load_model",
    "make_workload",
    "plan",
    "prefill",
    "prefill_answer",
    "resolve_scenario",
    "with_kv_precision",
]
