"""The site's search page (``/search?q=WORDS``): models and hardware rows the words name, best first.

One search answers it, ``catalog.search.search`` (the same as `servebound search` and ``/api/search``),
kept to the rows the site shows. A served site lists the hits in the page; a static copy cannot read
the address on the server, so its page holds the box and ``static/pickers.js`` lists the hits of
``?q=`` from ``data/names.json`` (``catalog.search.browser_index``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from servebound.catalog.search import MAX_LIMIT, search
from servebound.errors import InputError

if TYPE_CHECKING:
    from servebound.web.pages.site import SiteData

#: The most hits the page lists.
PAGE_LIMIT = 50
TITLE = "Search models and hardware"
DESCRIPTION = "Type a model or a machine as people name them: Hub ids, Ollama tags, loose words."


@dataclass(frozen=True)
class SearchRow:
    """One hit as the page shows it: its kind, id, name, detail and page."""

    kind: str
    id: str
    name: str
    detail: str
    href: str


@dataclass(frozen=True)
class SearchContext:
    q: str
    rows: Sequence[SearchRow]
    problem: str | None
    examples: Sequence[str]


EXAMPLES = ("llama3.3:70b", "gemma 3 27b", "Qwen/Qwen3-30B-A3B", "qwen3 30b a3b q4", "4090", "dgx spark")


def search_rows(site: SiteData, q: str) -> tuple[list[SearchRow], str | None]:
    """The hits of ``q`` on ``site`` (and the problem with the words, if any)."""
    if not q.strip():
        return [], None
    try:
        hits = search(q, limit=MAX_LIMIT)
    except InputError as exc:
        return [], exc.problem
    rows = []
    for hit in hits:
        on_site = hit.id in (site.models_by_id if hit.kind == "model" else site.hardware_by_id)
        if on_site:
            section = "models" if hit.kind == "model" else "hardware"
            rows.append(SearchRow(hit.kind, hit.id, hit.name, hit.detail, f"/{section}/{hit.id}"))
    return rows[:PAGE_LIMIT], None


def search_context(site: SiteData, mode: str, q: str = "") -> SearchContext:
    """The search page's context: a served site lists the hits of ``q``; a static copy's page holds the
    box alone (its script lists the hits)."""
    served = mode == "server"
    rows, problem = search_rows(site, q) if served else ([], None)
    return SearchContext(q if served else "", rows, problem, EXAMPLES)
