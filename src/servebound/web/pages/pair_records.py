"""One request's pair-page quantities, each computed once and only where a part of the page reads it.

A pair page reads its curves from one :class:`PairRecords`: the full page, the markdown mirror and each
folded section's fragment (``?section=charts``, ``?section=cost``) take the same attribute, so every
curve is computed at most once per request, and a page whose heavy sections are folded computes none
of them until a fragment asks. The sections are listed once here (:data:`SECTIONS`): their template
(``templates/pair_<name>.html``), included inline by ``pair.html`` and rendered alone as the fragment.
"""

from __future__ import annotations

import math
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from jinja2 import Template
from markupsafe import Markup

from servebound.views.report import fmt_rate
from servebound.web.app.query import MAX_SITE_CONTEXT_TOKENS
from servebound.web.figures import charts as figures
from servebound.web.pages.cost import CostView, pair_cost, render_cost_charts
from servebound.web.pages.site import Pair


@dataclass(frozen=True)
class Section:
    """A heavy part of a pair page, folded on a computed page and filled from its fragment."""

    name: str
    #: The <details> summary of the folded section (what it holds).
    summary: str


#: The foldable sections, in page order: ``?section=NAME`` answers one as an HTML fragment.
SECTIONS: dict[str, Section] = {
    s.name: s
    for s in (
        Section("charts", "Charts: decode against context and batch, prefill against prompt"),
        Section("cost", "Step time, cost against batch and context, and the priced table"),
    )
}
#: ``?section=all``: a computed page with every section inline (the no-script reader's link).
ALL = "all"
#: ``?section=answer``: the page's answer regions alone (``pair.html``'s ``answer_<region>`` blocks), what
#: the script swaps whole when a control moves: everything on the page that belongs to the workload.
ANSWER = "answer"
REGIONS = ("top", "rest")


def answer_regions(template: Template, values: dict[str, Any]) -> str:
    """A pair page's answer regions alone (``?section=answer``): its ``answer_<region>`` blocks over the
    full page's own context, each in the ``<div data-region>`` the page has, which the script swaps
    whole when a control moves, so a moved control shows what a fresh load of its URL shows."""
    # a block rendered alone skips the page's top-level imports: give it the macros they import
    macros = template.environment.get_template("_macros.html").make_module(values)
    exported = {name: value for name, value in vars(macros).items() if not name.startswith("_")}
    ctx = template.new_context({**exported, **values})
    return "".join(
        f'<div class="region" data-region="{name}">{"".join(template.blocks["answer_" + name](ctx))}</div>'
        for name in REGIONS
    )


def slider_ranges(pair: Pair) -> dict[str, int]:
    """The tops of a pair page's sliders: each holds the page's own value and the model's limit."""
    q, d = pair.query, pair.decode_result
    return {
        "alloc_max": max(
            q.alloc_context,
            min(MAX_SITE_CONTEXT_TOKENS, pair.model.adapter.context_limit_tokens or 1_000_000),
        ),
        "overhead_max": max(64, math.ceil(pair.workload.overhead_bytes / 1e9)),
        "batch_max": max(256, min(1_000_000, int((d.batch_mem or 0) * 2)), q.batch or 1),
        "prompt_max": max(pair.prompt_tokens or 1, q.alloc_context),
    }


class PairRecords:
    """The curves and figures of one pair at one workload, each computed on first use."""

    def __init__(self, pair: Pair) -> None:
        self.pair = pair

    @cached_property
    def decode_charts(self) -> tuple[figures.Chart, figures.Chart]:
        """T(b) and r(b) over the sampled batches (one decode curve)."""
        return figures.decode_charts(self.pair)

    @cached_property
    def figure_points(self) -> list[tuple[str, str, str]]:
        """A few points of the decode curve (batch, aggregate, per session), formatted: the mirror's text
        form of the charts, read off the charts' own curve (every eighth batch and the last)."""
        agg, per = (chart.series[0] for chart in self.decode_charts)
        xs = agg.xs
        keep = sorted({*range(0, len(xs), max(1, len(xs) // 8)), len(xs) - 1})
        return [(f"{int(xs[i]):,}", fmt_rate(agg.ys[i]), fmt_rate(per.ys[i])) for i in keep]

    @cached_property
    def prefill_charts(self) -> tuple[figures.Chart, figures.Chart] | None:
        return figures.prefill_charts(self.pair)

    @cached_property
    def context(self) -> dict[str, Any]:
        """The decode-against-read-context figure (fig_context, context_top, context_note)."""
        return figures.context_figure(self.pair)

    @cached_property
    def charts(self) -> dict[str, Markup | None]:
        """The four decode and prefill charts as SVG."""
        agg, per = self.decode_charts
        pre = self.prefill_charts
        return {
            "aggregate": figures.render_chart(agg),
            "per_session": figures.render_chart(per),
            "prefill_rate": figures.render_chart(pre[0]) if pre else None,
            "prefill_time": figures.render_chart(pre[1]) if pre else None,
        }

    @cached_property
    def cost(self) -> CostView:
        """The cost section's record (the same numbers as ``servebound cost --json``)."""
        return pair_cost(self.pair)

    @cached_property
    def cost_figures(self) -> list[Markup]:
        return render_cost_charts(self.pair, self.cost)


class RecentRecords:
    """The records of the last few pairs a served page computed, by (hardware, model, workload): a
    folded section's fragment, asked for after its page, reads the page's own records (its decode and
    prefill, and any curve already drawn) instead of computing them again."""

    def __init__(self, size: int = 32) -> None:
        self.size = size
        self._kept: OrderedDict[Hashable, PairRecords] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Hashable, build: Callable[[], PairRecords]) -> PairRecords:
        with self._lock:
            found = self._kept.get(key)
            if found is not None:
                self._kept.move_to_end(key)
                return found
        records = build()
        with self._lock:
            self._kept[key] = records
            while len(self._kept) > self.size:
                self._kept.popitem(last=False)
        return records
