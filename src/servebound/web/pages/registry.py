"""The site's pages, listed once: the server's routes and mirrors (``web.routes.pages``), the header's
links on every page (:func:`nav`) and the static export (``web.export.build``: its pages, mirrors,
llms.txt, llms-full.txt and sitemap) iterate this one table. A page added here is served, linked,
mirrored, indexed and exported; the tests read their page counts from it."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from servebound.web.app.query import WorkloadQuery
from servebound.web.pages.machine_files import Document
from servebound.web.pages.manual import documents
from servebound.web.pages.site import compute_pair
from servebound.web.pages.text import pair_path

Over = Literal["", "hardware", "models", "pairs", "docs"]


@dataclass(frozen=True)
class PageSpec:
    """A path (a route pattern where it enumerates hardware rows, models or exported pairs), the
    ``Renderer`` method that builds it, its llms.txt group, title and description, whether the
    server builds it under the heavy-work gate, its link in the header (``nav``: the label, ``nav_at``:
    its place among the header's links; no label, no link) and whether llms-full.txt carries its mirror
    (``full_text``: the documents and the catalog's tables; each hardware, model and pair page is one
    ``.md`` away, listed in llms.txt and the sitemap)."""

    path: str
    method: str
    group: str
    title: str = ""
    description: str = ""
    over: Over = ""
    gated: bool = False
    nav: str = ""
    nav_at: int = 0
    full_text: bool = True


PAGES: tuple[PageSpec, ...] = (
    PageSpec("/", "home", "Start here", "servebound: how fast can this machine serve this model?"),
    PageSpec(
        "/methodology",
        "methodology",
        "Start here",
        "Methodology: how servebound computes its ceilings",
        nav="Methodology",
        nav_at=3,
    ),
    PageSpec(
        "/derivation",
        "derivation",
        "Start here",
        "The roofline derivation",
        "every formula numbered, worked examples live, figures",
        nav="Derivation",
        nav_at=4,
    ),
    PageSpec("/license", "license", "Start here", "License (CC BY 4.0)"),
    PageSpec(
        "/search",
        "search_page",
        "Start here",
        "Search models and hardware",
        "names as people type them: Hub ids, Ollama tags, loose words; /search?q=WORDS",
        nav="Search",
        nav_at=8,
        full_text=False,
    ),
    PageSpec(
        "/validation",
        "validation_page",
        "Start here",
        "Validation: published runs against their ceilings",
        "every reported measurement, its ceiling and its efficiency",
        gated=True,
        nav="Validation",
        nav_at=5,
    ),
    PageSpec(
        "/economics",
        "economics_page",
        "Start here",
        "Economics: step time, balance batch and cost per token",
        "the two-line roofline, cost per token and the serving-economics lecture's numbers recomputed",
        gated=True,
        nav="Economics",
        nav_at=6,
    ),
    PageSpec(
        "/docs",
        "docs_index",
        "Manual",
        "The servebound manual",
        "the manual's documents, one per subject",
        nav="Manual",
        nav_at=7,
    ),
    PageSpec("/docs/{name}", "doc_page", "Manual", over="docs"),
    PageSpec("/hardware", "hardware_index", "Hardware", "Hardware: every row", nav="Hardware", nav_at=1),
    PageSpec("/hardware/{ref}", "hardware_page", "Hardware", over="hardware", full_text=False),
    PageSpec("/models", "models_index", "Models", "Models: every profile", nav="Models", nav_at=2),
    PageSpec("/models/{ref}", "model_page", "Models", over="models", full_text=False),
    PageSpec(
        "/pair/{hw_ref}/{model_ref}", "pair_page", "Pairs (default workload)", over="pairs", full_text=False
    ),
)


@dataclass(frozen=True)
class NavLink:
    """A link in every page's header: its label and address."""

    label: str
    href: str


#: The header's links to what is not a page of the table, after the pages': the machine index, and
#: on a served site (not a static copy) the API reference.
MACHINE_NAV = (NavLink("llms.txt", "/llms.txt"),)
SERVER_NAV = (NavLink("API", "/api"),)


def nav(mode: str) -> tuple[NavLink, ...]:
    """The header's links on every page, for a ``server`` or ``static`` site: the table's pages that
    name a ``nav`` label, in their ``nav_at`` order, then the machine index and the served extras."""
    pages = sorted((spec for spec in PAGES if spec.nav), key=lambda spec: spec.nav_at)
    extra = SERVER_NAV if mode == "server" else ()
    return (*(NavLink(spec.nav, spec.path) for spec in pages), *MACHINE_NAV, *extra)


def fixed_pages() -> tuple[PageSpec, ...]:
    """The table's pages that enumerate nothing (one page each)."""
    return tuple(spec for spec in PAGES if not spec.over)


def spec_for(path: str) -> PageSpec | None:
    """The row that serves the page at ``path`` (a site path, or its mirror's without ``.md``: the
    start page's mirror is ``/index.md``), or None."""
    path = "/" if path == "/index" else path
    for spec in PAGES:
        head = spec.path.split("{", 1)[0]
        enumerated = bool(spec.over) and path.startswith(head) and len(path) > len(head)
        if path == spec.path or enumerated:
            return spec
    return None


def in_full_text(path: str) -> bool:
    """Whether llms-full.txt holds the page at ``path`` (its row's ``full_text``)."""
    spec = spec_for(path)
    return spec is not None and spec.full_text


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
    if spec.over == "pairs":
        hw, model = item
        pair = compute_pair(hw, model, WorkloadQuery(), with_range=not markdown)
        return renderer.pair_markdown(pair) if markdown else renderer.pair_page(pair)
    build = getattr(renderer, spec.method)
    page = build() if item is None else build(item)
    return page.markdown if markdown else page
