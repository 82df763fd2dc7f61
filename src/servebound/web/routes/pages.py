"""HTML pages and their markdown mirrors (the same path plus ``.md``)."""

from __future__ import annotations

from collections.abc import Callable

from fastapi import APIRouter, Request
from fastapi.responses import RedirectResponse, Response

from servebound.errors import InputError
from servebound.web.pages import HardwareFilters, ModelFilters, Page, Renderer, pair_path
from servebound.web.query import parse_workload_query
from servebound.web.site import compute_pair
from servebound.web.state import Web, heavy, page_response, split_md

router = APIRouter(include_in_schema=False)


def _is_md(request: Request) -> bool:
    return request.url.path.endswith(".md")


#: The pages built from the site alone, each cached under its path: (path, its markdown mirror's path,
#: the renderer's method, whether it runs under the heavy-work gate).
_FIXED_PAGES: tuple[tuple[str, str, str, bool], ...] = (
    ("/", "/index.md", "home", False),
    ("/methodology", "/methodology.md", "methodology", False),
    ("/validation", "/validation.md", "validation_page", True),
    ("/economics", "/economics.md", "economics_page", True),
    ("/license", "/license.md", "license", False),
)


def _fixed_page(path: str, method: str, gated: bool) -> Callable[[Request, Web], Response]:
    def page(request: Request, web: Web) -> Response:
        render: Callable[[], Page] = getattr(web.renderer, method)
        return page_response(web.cache.get(path, heavy(render) if gated else render), _is_md(request))

    return page


for _path, _md_path, _method, _gated in _FIXED_PAGES:
    _handler = _fixed_page(_path, _method, _gated)
    router.get(_path)(_handler)
    router.get(_md_path)(_handler)


@router.get("/hardware")
@router.get("/hardware.md")
def hardware_index(request: Request, web: Web) -> Response:
    p = request.query_params
    f = HardwareFilters(
        vendor=p.get("vendor") or None,
        cls=p.get("class") or None,
        min_memory_gb=number("min_memory_gb", p.get("min_memory_gb")),
        sort=_choice("sort", p.get("sort") or "name", list(Renderer.HARDWARE_SORTS)),
        model=web.get_model(p["model"]).id if p.get("model") else None,
    )
    return page_response(heavy(lambda: web.renderer.hardware_index(f))(), _is_md(request))


@router.get("/hardware/{ref}")
def hardware_page(ref: str, request: Request, web: Web) -> Response:
    """A hardware page; ``?model=`` chooses the model a system's layouts are shown for."""
    ref, markdown = split_md(ref)
    hw = web.get_hw(ref)
    model = request.query_params.get("model") or None
    if model is not None:
        model = web.get_model(model).id
    key = f"/hardware/{hw.id}" + ("" if model is None else f"?model={model}")
    return page_response(web.cache.get(key, heavy(lambda: web.renderer.hardware_page(hw, model))), markdown)


@router.get("/models")
@router.get("/models.md")
def models_index(request: Request, web: Web) -> Response:
    p = request.query_params
    fits = p.get("fits") or None
    if fits:
        fits = web.get_hw(fits).id
    f = ModelFilters(
        family=p.get("family") or None,
        min_params_b=number("min_params_b", p.get("min_params_b")),
        max_params_b=number("max_params_b", p.get("max_params_b")),
        fits=fits,
        sort=_choice("sort", p.get("sort") or "name", list(Renderer.MODEL_SORTS)),
    )
    return page_response(heavy(lambda: web.renderer.models_index(f))(), _is_md(request))


@router.get("/models/{ref}")
def model_page(ref: str, web: Web) -> Response:
    ref, markdown = split_md(ref)
    m = web.get_model(ref)
    return page_response(
        web.cache.get(f"/models/{m.id}", heavy(lambda: web.renderer.model_page(m))), markdown
    )


@router.get("/pair")
def pair_form(request: Request, web: Web) -> Response:
    p = dict(request.query_params)
    hw_ref, model_ref = p.pop("hardware", ""), p.pop("model", "")
    if not hw_ref:
        raise InputError("hardware", "choose a hardware row")
    if not model_ref:
        raise InputError("model", "choose a model")
    hw, m = web.get_hw(hw_ref), web.get_model(model_ref)
    return RedirectResponse(pair_path(hw.id, m.id, {k: v for k, v in p.items() if v}), status_code=303)


@router.get("/pair/{hw_ref}/{model_ref}")
def pair_page(request: Request, hw_ref: str, model_ref: str, web: Web) -> Response:
    model_ref, markdown = split_md(model_ref)
    hw, m = web.get_hw(hw_ref), web.get_model(model_ref)
    params = dict(request.query_params)
    if params.pop("maximize", None):
        params.pop("batch", None)
    query = parse_workload_query(params)

    draft = web.get_model(query.draft) if query.draft else None

    def build() -> Page:
        return web.renderer.pair_page(compute_pair(hw, m, query, draft=draft))

    build = heavy(build)
    page = web.cache.get(f"/pair/{hw.id}/{m.id}", build) if query.is_default else build()
    return page_response(page, markdown)


@router.get("/derivation")
@router.get("/derivation.md")
def derivation_page(request: Request, web: Web) -> Response:
    from servebound.web.derivation_toy import Toy, toy_from_query

    toy = toy_from_query(dict(request.query_params))
    if toy == Toy():
        return page_response(web.cache.get("/derivation", web.renderer.derivation), _is_md(request))
    return page_response(web.renderer.derivation(toy), _is_md(request))


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
