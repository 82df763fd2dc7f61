"""HTML pages and their markdown mirrors (the same path plus ``.md``)."""

from __future__ import annotations

from collections.abc import Callable

from fastapi import Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from servebound.errors import InputError
from servebound.inputs.declare import unknown
from servebound.web.app.query import IGNORED_ON_PAGES, parse_workload_query
from servebound.web.app.state import Web, heavy, page_response, split_md
from servebound.web.pages.contexts import Page
from servebound.web.pages.derivation_toy import TOY_LIMITS, Toy, toy_from_query
from servebound.web.pages.pair_records import ALL, ANSWER, SECTIONS, PairRecords
from servebound.web.pages.records import HardwareFilters, ModelFilters
from servebound.web.pages.registry import PAGES, PageSpec
from servebound.web.pages.renderer import Renderer
from servebound.web.pages.site import compute_pair
from servebound.web.pages.text import mirror_path, pair_path
from servebound.web.routes import Routes

routes = Routes(include_in_schema=False)


def only(request: Request, *known: str) -> None:
    """A page that reads ``known`` parameters refuses any other (400 naming it and the close match) and
    a repeated one, as the JSON API does; tracking tags (``utm_*``, ``IGNORED_ON_PAGES``) pass."""
    seen: set[str] = set()
    for key, _ in request.query_params.multi_items():
        if key.startswith("utm_") or key in IGNORED_ON_PAGES:
            continue
        if key not in known:
            raise unknown(key, known) if known else InputError(key, "unknown parameter; this page takes none")
        if key in seen:
            raise InputError(key, "given more than once; give it once")
        seen.add(key)


def _is_md(request: Request) -> bool:
    return request.url.path.endswith(".md")


def _fixed_page(spec: PageSpec) -> Callable[[Request, Web], Response]:
    """A page built from the site alone (a row of the registry enumerating nothing), cached under its path."""

    def page(request: Request, web: Web) -> Response:
        only(request)
        render: Callable[[], Page] = getattr(web.renderer, spec.method)
        return page_response(
            web.cache.get(spec.path, heavy(render) if spec.gated else render), _is_md(request)
        )

    return page


def hardware_index(request: Request, web: Web) -> Response:
    only(request, "vendor", "class", "min_memory_gb", "sort", "model")
    p = request.query_params
    f = HardwareFilters(
        vendor=p.get("vendor") or None,
        cls=p.get("class") or None,
        min_memory_gb=number("min_memory_gb", p.get("min_memory_gb")),
        sort=_choice("sort", p.get("sort") or "name", list(Renderer.HARDWARE_SORTS)),
        model=web.get_model(p["model"]).id if p.get("model") else None,
    )
    return page_response(heavy(lambda: web.renderer.hardware_index(f))(), _is_md(request))


def hardware_page(ref: str, request: Request, web: Web) -> Response:
    """A hardware page; ``?model=`` chooses the model a system's layouts are shown for."""
    ref, markdown = split_md(ref)
    only(request, "model")
    hw, q = web.get_hw(ref), request.query_params
    model = web.get_model(q["model"]).id if q.get("model") else None
    key = f"/hardware/{hw.id}" + ("" if model is None else f"?model={model}")
    return page_response(web.cache.get(key, heavy(lambda: web.renderer.hardware_page(hw, model))), markdown)


def models_index(request: Request, web: Web) -> Response:
    only(request, "family", "min_params_b", "max_params_b", "fits", "sort")
    p = request.query_params
    fits = web.get_hw(p["fits"]).id if p.get("fits") else None  # an unknown id: 404 before any 400
    f = ModelFilters(
        family=p.get("family") or None,
        min_params_b=number("min_params_b", p.get("min_params_b")),
        max_params_b=number("max_params_b", p.get("max_params_b")),
        fits=fits,
        sort=_choice("sort", p.get("sort") or "name", list(Renderer.MODEL_SORTS)),
    )
    return page_response(heavy(lambda: web.renderer.models_index(f))(), _is_md(request))


def model_page(ref: str, request: Request, web: Web) -> Response:
    only(request)
    ref, markdown = split_md(ref)
    m = web.get_model(ref)
    return page_response(
        web.cache.get(f"/models/{m.id}", heavy(lambda: web.renderer.model_page(m))), markdown
    )


@routes.get("/pair")
def pair_form(request: Request, web: Web) -> Response:
    p = dict(request.query_params)
    hw_ref, model_ref = p.pop("hardware", ""), p.pop("model", "")
    if not hw_ref:
        raise InputError("hardware", "choose a hardware row")
    if not model_ref:
        raise InputError("model", "choose a model")
    hw, m = web.get_hw(hw_ref), web.get_model(model_ref)
    return RedirectResponse(pair_path(hw.id, m.id, {k: v for k, v in p.items() if v}), status_code=303)


def pair_page(request: Request, hw_ref: str, model_ref: str, web: Web) -> Response:
    """A pair page; a computed one (a workload other than the default) folds its heavy sections, and
    ``?section=NAME`` answers one of them alone (``pair_records.SECTIONS``; ``all``: none folded)."""
    model_ref, markdown = split_md(model_ref)
    hw, m = web.get_hw(hw_ref), web.get_model(model_ref)
    params = dict(request.query_params)
    if params.pop("maximize", None):
        params.pop("batch", None)
    section = params.pop("section", None)
    if section is not None and section not in (ALL, ANSWER) and section not in SECTIONS:
        raise InputError("section", f"use one of {', '.join([*SECTIONS, ALL, ANSWER])} (got {section!r})")
    if section is not None and markdown:
        raise InputError("section", "the markdown mirror carries every section: drop section")
    query = parse_workload_query(params)
    draft = web.get_model(query.draft) if query.draft else None
    if query.engine is not None:  # a bare release under an engine that runs another format: that format
        given = draft.adapter if draft is not None else None
        chosen = query.scenario(hw.hardware, web.scenario_model(model_ref, m), given).model.id
        if chosen != m.id:
            target = pair_path(hw.id, chosen) + (".md" if markdown else "")
            return RedirectResponse(f"{target}?{request.url.query}", status_code=307)

    def records() -> PairRecords:  # one computation per workload for a page and its fragments
        key = (hw.id, m.id, query)
        return web.renderer.recent.get(key, lambda: PairRecords(compute_pair(hw, m, query, draft=draft)))

    if section == ANSWER:  # the answer regions of the page a fresh load of this URL shows
        folded = not query.is_default
        return HTMLResponse(
            heavy(lambda: web.renderer.pair_page(records(), folded=folded, answer=True).html)()
        )
    if section is not None and section != ALL:
        name = section
        return HTMLResponse(heavy(lambda: web.renderer.pair_section(records(), name))())

    def build(resolved: bool) -> Callable[[], Page]:
        def run() -> Page:
            folded = not query.is_default and not resolved and section is None
            page = web.renderer.pair_page(records(), folded=folded)
            return page.resolved() if resolved else page

        return heavy(run)

    # The cache keeps the mirror's text, not the context that renders it; a page computed for its query
    # renders its mirror only when that is the one asked for.
    page = web.cache.get(f"/pair/{hw.id}/{m.id}", build(True)) if query.is_default else build(markdown)()
    return page_response(page, markdown)


def doc_page(name: str, web: Web) -> Response:
    """A document of the manual (``/docs/cli``) or its mirror (``/docs/cli.md``)."""
    name, markdown = split_md(name)
    return page_response(web.cache.get(f"/docs/{name}", lambda: web.renderer.doc_page(name)), markdown)


def derivation_page(request: Request, web: Web) -> Response:
    only(request, *TOY_LIMITS, "maximize")
    toy = toy_from_query(dict(request.query_params))
    if toy == Toy():
        return page_response(web.cache.get("/derivation", web.renderer.derivation), _is_md(request))
    return page_response(web.renderer.derivation(toy), _is_md(request))


def search_page(request: Request, web: Web) -> Response:
    """The search page; ``?q=WORDS`` lists the hits (``catalog.search``, the rows this site shows)."""
    only(request, "q")
    return page_response(web.renderer.search_page(request.query_params.get("q", "")), _is_md(request))


#: The handlers of the pages that read their query (filters, a layout's model, a workload, a toy).
_HANDLERS: dict[str, Callable[..., Response]] = {
    "derivation": derivation_page,
    "doc_page": doc_page,
    "hardware_index": hardware_index,
    "hardware_page": hardware_page,
    "models_index": models_index,
    "model_page": model_page,
    "pair_page": pair_page,
    "search_page": search_page,
}

for _spec in PAGES:  # every page of the registry, and a page of its own's markdown mirror
    _handler = _HANDLERS.get(_spec.method) or _fixed_page(_spec)
    routes.get(_spec.path)(_handler)
    if not _spec.over:
        routes.get(mirror_path(_spec.path))(_handler)


def number(field: str, text: str | None) -> float | None:
    """A finite number from a query value (None when absent or blank)."""
    if text is None or text.strip() == "":
        return None
    try:
        value = float(text)
    except ValueError:
        raise InputError(field, f"must be a number (got {text!r})") from None
    if value != value or value in (float("inf"), float("-inf")):
        raise InputError(field, f"must be a finite number (got {text!r})")
    return value


def _choice(field: str, value: str, choices: list[str]) -> str:
    if value not in choices:
        raise InputError(field, f"use one of {', '.join(choices)} (got {value!r})")
    return value
