"""The layout search's work is bounded: a budget of layouts checked before the first is evaluated, a
few token-time evaluations per layout, and its fast step time the same float as the full record's."""

from __future__ import annotations

import math
from typing import Any

import pytest

from servebound import Workload
from servebound.catalog.hardware import get_hardware
from servebound.catalog.models import all_profiles, get_model
from servebound.core import layout as layout_module
from servebound.core import system as system_module
from servebound.core.errors import InputError
from servebound.core.experts import ExpertTraffic
from servebound.core.layout import _LayoutModel, evaluate_layout
from servebound.core.layout_search import search_layouts
from servebound.core.system import MAX_LAYOUTS_SEARCHED, valid_layouts
from servebound.core.workload import MAX_BATCH
from servebound.inputs.layout import resolve_system


def _system(ref: str) -> Any:
    return resolve_system(get_hardware(ref)).system


@pytest.mark.parametrize("traffic", list(ExpertTraffic))
@pytest.mark.parametrize(
    ("system_id", "model_id"),
    [("nvidia-gb200-nvl72", "deepseek-v3"), ("8x-nvidia-h100-sxm", "llama-3.1-70b")],
)
def test_the_fast_step_time_is_the_records(system_id: str, model_id: str, traffic: ExpertTraffic) -> None:
    rack = get_hardware(system_id).system
    system = rack.parallel_system() if rack is not None else _system(system_id)
    model = get_model(model_id).adapter
    workload = Workload(expert_traffic=traffic)
    batches = [1, 2, 3, 7, 64, 1000, 123_457, MAX_BATCH]
    for compute in (None, 3e-5):
        for layout in valid_layouts(system, model):
            lm = _LayoutModel(system, model, workload, layout, compute, 2.0)
            for b in batches:
                assert lm.token_s(b) == lm.times(b).token_s, (layout, b)
            assert [lm.token_s(b) for b in batches] == [lm.times(b).token_s for b in batches]  # kept


def test_a_layout_takes_a_few_step_times(monkeypatch: pytest.MonkeyPatch) -> None:
    """Two bisections over 1..MAX_BATCH and a handful of probes, each batch computed once."""
    computed: list[int] = []
    real = _LayoutModel.token_s

    def counted(self: _LayoutModel, batch: int) -> float:
        if batch not in self._token_s:
            computed.append(batch)
        return real(self, batch)

    monkeypatch.setattr(_LayoutModel, "token_s", counted)
    system = _system("64x-nvidia-b200")
    model = get_model("deepseek-v3").adapter
    bound = 2 * math.ceil(math.log2(MAX_BATCH)) + 4
    for layout in list(valid_layouts(system, model))[:40]:
        computed.clear()
        evaluate_layout(system, model, layout, Workload(), compute_s_per_session_step=1e-5)
        assert len(computed) <= bound, (layout, len(computed))
        assert len(computed) == len(set(computed))


def test_a_search_over_its_budget_is_refused_before_any_work(monkeypatch: pytest.MonkeyPatch) -> None:
    system = _system("64x-nvidia-b200")
    model = get_model("deepseek-v3").adapter
    count = len(list(valid_layouts(system, model)))
    monkeypatch.setattr(system_module, "MAX_LAYOUTS_SEARCHED", count - 1)

    def never(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a layout was evaluated")

    monkeypatch.setattr(layout_module, "evaluate_layout", never)
    with pytest.raises(InputError) as refused:
        search_layouts(system, model, Workload())
    assert refused.value.field == "hardware"
    assert f"{count:,} valid layouts" in str(refused.value) and "--layout LAYOUT" in str(refused.value)
    assert "layout=LAYOUT" in refused.value.note.api


def test_the_largest_system_searches_every_catalog_model_within_the_budget() -> None:
    """1,024 devices, the most a system id may name: every catalog model's layouts fit the budget."""
    system = _system("1024x-nvidia-b200")
    counts = {m.id: sum(1 for _ in valid_layouts(system, m.adapter)) for m in all_profiles()}
    assert max(counts.values()) <= MAX_LAYOUTS_SEARCHED
    assert counts["deepseek-v3"] == 1615
