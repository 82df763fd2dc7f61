"""Cost on a system of devices, at the scenario's layout (``Scenario.layout``): the system's price per
hour over the tokens a second of the layout emits, dp pp b / tau(b), per micro-batch b
(``questions.layout.layout_cost_points``). ``servebound cost``, ``cost()`` and /api/cost answer it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from servebound.core.fields import ResultRecord
from servebound.core.layout import LayoutResult
from servebound.core.model import ModelAdapter
from servebound.core.workload import Workload
from servebound.inputs.layout import LayoutChoice, ResolvedSystem
from servebound.inputs.pricing import ResolvedPrice
from servebound.questions.layout import layout_cost_points


@dataclass(frozen=True, repr=False)
class LayoutCost(ResultRecord):
    """Cost per million output tokens over the micro-batch of the layout a system answers at."""

    __repr_fields__ = ("label", "usd_per_hour")

    choice: LayoutChoice
    model: ModelAdapter
    workload: Workload
    result: LayoutResult
    points: tuple[dict[str, Any], ...]
    price: ResolvedPrice

    @property
    def hardware(self) -> ResolvedSystem:
        return self.choice.system

    @property
    def label(self) -> str:
        return self.choice.label

    @property
    def usd_per_hour(self) -> float:
        return self.price.usd_per_hour


def layout_cost(
    choice: LayoutChoice,
    model: ModelAdapter,
    workload: Workload,
    price: ResolvedPrice,
    batches: list[int] | None = None,
) -> LayoutCost:
    """The cost curve of ``choice``'s layout under the scenario's workload, priced at ``price``."""
    result, points = layout_cost_points(
        choice.system, model, workload, choice.layout, price.usd_per_hour, batches
    )
    return LayoutCost(choice, model, workload, result, tuple(points), price)
