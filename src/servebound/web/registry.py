"""The site's pages, listed once: the server's routes (``web.routes.pages``) and the static export
(``web.export``: its pages, mirrors, llms.txt, llms-full.txt and sitemap) iterate this one table."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from servebound.web.machine import Document
from servebound.web.text import pair_path

Over = Literal["", "hardware", "models", "pairs", "docs"]


@dataclass(frozen=True)
class PageSpec:
    """A path (a route pattern where it enumerates hardware rows, models or exported pairs), the
    ``Renderer`` method that builds it, its llms.txt group, title and description, and whether the
    server builds it under the heavy-work gate."""

    path: str
    method: str
    group: str
    title: str = ""
    description: str = ""
    over: Over = ""
    gated: bool = False


PAGES: tuple[PageSpec, ...] = (
    PageSpec("/", "home", "Start here", "servebound: how fast can this machine serve this model?"),
    PageSpec(
        "/methodology", "methodology", "Start here", "Methodology: how servebound computes its ceilings"
    ),
    PageSpec(
        "/derivation",
        "derivation",
        "Start here",
        "The roofline derivation",
        "every formula numbered, worked examples live, figures",
    ),
    PageSpec("/license", "license", "Start here", "License (CC BY 4.0)"),
    PageSpec(
        "/validation",
        "validation_page",
        "Start here",
        "Validation: published runs against their ceilings",
        "every reported measurement, its ceiling and its efficiency",
        gated=True,
    ),
    PageSpec(
        "/economics",
        "economics_page",
        "Start here",
        "Economics: step time, balance batch and cost per token",
        "the two-line roofline, cost per token and the serving-economics lecture's numbers recomputed",
        gated=True,
    ),
    PageSpec(
        "/docs", "docs_index", "Manual", "The servebound manual", "the manual's documents, one per subject"
    ),
    PageSpec("/docs/{name}", "doc_page", "Manual", over="docs"),
    PageSpec("/hardware", "hardware_index", "Hardware", "Hardware: every row"),
    PageSpec("/hardware/{ref}", "hardware_page", "Hardware", over="hardware"),
    PageSpec("/models", "models_index", "Models", "Models: every profile"),
    PageSpec("/models/{ref}", "model_page", "Models", over="models"),
    PageSpec("/pair/{hw_ref}/{model_ref}", "pair_page", "Pairs (default workload)", over="pairs"),
)


def entries(site: Any, pair_ids: Sequence[tuple[str, str]]) -> Iterator[tuple[PageSpec, Document, Any]]:
    """Every page of the table over ``site``, in order: its row, its document (path, title, group,
    description) and the item it shows (None, a hardware row, a model, a (hardware, model) pair, or a
    document of the manual by name)."""
    for spec in PAGES:
        if spec.over == "":
            yield spec, Document(spec.path, spec.title, spec.group, spec.description), None
        elif spec.over == "hardware":
            for h in site.hardware:
                note = f"{h.memory_gb:,.0f} GB, {h.bandwidth_gb_per_s:,.0f} GB/s"
                yield spec, Document(f"/hardware/{h.id}", h.name, spec.group, note), h
        elif spec.over == "docs":
            from servebound.web.manual import documents

            for doc in documents():
                yield spec, Document(f"/docs/{doc.name}", doc.title, spec.group, doc.description), doc.name
        elif spec.over == "models":
            for m in site.models:
                yield spec, Document(f"/models/{m.id}", m.name, spec.group), m
        else:
            for hw_id, model_id in pair_ids:
                h, m = site.hardware_by_id[hw_id], site.models_by_id[model_id]
                yield spec, Document(pair_path(hw_id, model_id), f"{m.name} on {h.name}", spec.group), (h, m)


def render(renderer: Any, spec: PageSpec, item: Any, *, markdown: bool = False) -> Any:
    """The page ``spec`` builds for ``item`` at the default workload (a Page), or with ``markdown`` its
    mirror's text alone (a pair's computed without the prompt-length range only the HTML shows)."""
    from servebound.web.query import WorkloadQuery
    from servebound.web.site import compute_pair

    if spec.over == "pairs":
        hw, model = item
        pair = compute_pair(hw, model, WorkloadQuery(), with_range=not markdown)
        return renderer.pair_markdown(pair) if markdown else renderer.pair_page(pair)
    build = getattr(renderer, spec.method)
    page = build() if item is None else build(item)
    return page.markdown if markdown else page
