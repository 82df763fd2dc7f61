"""The served site: HTML pages, their markdown mirrors, the machine files and the JSON API.

``create_app()`` builds a FastAPI app over the packaged catalogs (tests inject their own lists).
Every 4xx, from any route, answers ``{"error": {"status", "field", "message"}}`` on ``/api/`` and a
readable HTML page elsewhere (plain text for ``.md`` and machine files).

llms-full.txt is the whole site as text: every page's markdown mirror, about 3,800 documents over the
packaged catalogs, nearly all of them pair pages. Two choices keep a crawler from waiting on it:

* a cheaper path: pair pages enter it through ``Renderer.pair_markdown`` (the mirror's own text,
  without the HTML, the SVG figures and the MathML, the costliest parts of a page), and the body is
  built once per app (its frontmatter carries site-relative paths; only the header names the base URL);
* a background build: ``serve()`` starts that build in a daemon thread as the server starts, and a
  request that arrives while it runs is answered ``503`` with ``Retry-After`` (seconds, estimated
  from the pages done so far) instead of being held open. ``create_app()`` starts no thread (tests
  stay quick and deterministic): without a background build the first request builds it in the
  foreground, once, and later requests reuse it. ``app.state.llms_full`` is the builder
  (:class:`FullTextBuilder`); ``bench/bench_web.py`` times it.
"""

from __future__ import annotations

import math
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator
from importlib import resources
from typing import Annotated, Any, Literal

from fastapi import FastAPI, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse, PlainTextResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel
from starlette.exceptions import HTTPException as StarletteHTTPException

from servebound.core.hardware import ARITHMETIC_MODES
from servebound.core.prefill import prefill, prefill_range
from servebound.core.workload import MAX_BATCH
from servebound.errors import InputError
from servebound.files import model_to_mapping
from servebound.report import decode_json, hardware_json, range_json
from servebound.validation import validation_json
from servebound.web import export as site_export
from servebound.web.machine import llms_full_body, llms_full_header, llms_txt, robots_txt, sitemap_xml
from servebound.web.pages import (
    HardwareFilters,
    ModelFilters,
    Page,
    Renderer,
    pair_path,
    rank_rows_for_hardware,
    rank_rows_for_model,
)
from servebound.web.site import (
    GB,
    MAX_SITE_CONTEXT_TOKENS,
    SiteData,
    clean_json,
    compute_pair,
    default_site_data,
    parse_workload_query,
    prefill_json,
)

MARKDOWN = "text/markdown; charset=utf-8"


class NotFoundError(Exception):
    """An unknown id: the field, a message, and (href, label) suggestions."""

    def __init__(self, field: str, message: str, suggestions: list[tuple[str, str]] | None = None) -> None:
        super().__init__(message)
        self.field = field
        self.message = message
        self.suggestions = suggestions or []


class ErrorDetail(BaseModel):
    status: int
    field: str
    message: str


class ErrorBody(BaseModel):
    """The one error shape of every 4xx answer."""

    error: ErrorDetail


ERRORS: dict[int | str, dict[str, Any]] = {
    400: {"model": ErrorBody, "description": "A bad query value: the field and the problem."},
    404: {"model": ErrorBody, "description": "An unknown hardware or model id."},
}

CTX = MAX_SITE_CONTEXT_TOKENS
OverheadQ = Annotated[
    float | None, Query(ge=0, allow_inf_nan=False, description="O: runtime overhead in GB (8)")
]
AllocQ = Annotated[
    int | None, Query(ge=1, le=CTX, description="L_alloc: tokens reserved per session (100,000)")
]
ReadQ = Annotated[
    int | None, Query(ge=1, le=CTX, description="L_read: tokens read per step, <= L_alloc (32,000)")
]
FloorQ = Annotated[float | None, Query(ge=0, allow_inf_nan=False, description="r*: tok/s per session (20)")]
TrafficParam = Annotated[
    Literal["expected", "minimum"], Query(description="expected: m(n); minimum: k experts")
]


def error_json(status: int, field: str, message: str) -> JSONResponse:
    return JSONResponse({"error": {"status": status, "field": field, "message": message}}, status_code=status)


class _PageCache:
    """Rendered default-workload pages, by path (bounded, thread-safe)."""

    def __init__(self, size: int = 512) -> None:
        self._items: OrderedDict[str, Page] = OrderedDict()
        self._size = size
        self._lock = threading.Lock()

    def get(self, key: str, build: Callable[[], Page]) -> Page:
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
                return self._items[key]
        page = build()
        with self._lock:
            self._items[key] = page
            while len(self._items) > self._size:
                self._items.popitem(last=False)
        return page


class FullTextBuilder:
    """llms-full.txt's body (every mirror, delimited), built once: in a background thread after
    :meth:`start`, else in the foreground by the first :meth:`body` call. Thread-safe."""

    def __init__(self, markdowns: Callable[[], Iterator[str]], count: Callable[[], int]) -> None:
        self._markdowns = markdowns
        self._count = count
        self._lock = threading.Lock()
        self._build_lock = threading.Lock()
        self._body: str | None = None
        self._thread: threading.Thread | None = None
        self.done = 0
        self.total = 0
        self._started_s: float | None = None
        self.seconds: float | None = None

    def start(self, gate: threading.Event | None = None) -> threading.Thread | None:
        """Build in a daemon thread (``serve()`` calls this at startup); a no-op once started or built.

        ``gate``, when given, holds the build until it is set (a test sees the 503 deterministically).
        Returns the thread (None when the body is already built).
        """
        with self._lock:
            if self._body is None and self._thread is None:
                self._thread = threading.Thread(target=self._run, args=(gate,), name="llms-full", daemon=True)
                self._thread.start()
            return self._thread

    def _run(self, gate: threading.Event | None) -> None:
        if gate is not None:
            gate.wait()
        try:
            self._build()
        finally:
            with self._lock:
                # on failure a later request builds in the foreground and shows the error
                self._thread = None

    def _build(self) -> str:
        with self._build_lock:
            if self._body is None:
                start = time.perf_counter()
                self.total = self._count()
                self.done = 0
                self._started_s = start
                parts = []
                for text in self._markdowns():
                    parts.append(text)
                    self.done += 1
                body = llms_full_body(parts)
                self.seconds = time.perf_counter() - start
                with self._lock:
                    self._body = body
            return self._body

    @property
    def building(self) -> bool:
        """Whether a background build is running now."""
        with self._lock:
            return self._body is None and self._thread is not None

    def body(self) -> str | None:
        """The body; None while a background build runs; with none running, built here (once)."""
        with self._lock:
            if self._body is not None:
                return self._body
            if self._thread is not None:
                return None
        return self._build()

    def retry_after_s(self) -> int:
        """Seconds until the background build should be done: the pages left at the rate so far,
        between 1 and 30 (the first pages, hardware and model rankings, are the slow ones, so the
        early rate overstates the rest; the whole build takes seconds, bench/bench_web.py)."""
        if self._started_s is None or self.done == 0 or self.total == 0:
            return 5
        elapsed = time.perf_counter() - self._started_s
        return min(30, max(1, math.ceil(elapsed / self.done * (self.total - self.done))))


def create_app(
    hardware: Iterable[Any] | None = None,
    models: Iterable[Any] | None = None,
    *,
    base_url: str = "",
) -> FastAPI:
    """The site and its JSON API as a FastAPI app.

    ``hardware`` and ``models`` default to the packaged catalogs; tests pass their own records
    (catalog rows, ``Hardware`` or ``ModelAdapter`` objects). ``base_url`` prefixes absolute URLs in
    robots.txt, llms.txt and the sitemap (default: the request's own base URL).
    """
    if hardware is None and models is None:
        site = default_site_data()
    else:
        default = default_site_data() if hardware is None else None
        site = SiteData(
            default.hardware if default is not None else hardware or [],
            models or [],
            catalog=getattr(default, "_catalog", None),
        )
    renderer = Renderer(site, mode="server")
    cache = _PageCache()
    full = FullTextBuilder(
        lambda: site_export.iter_markdown(renderer, site), lambda: len(site_export.documents(site))
    )
    full_text: dict[str, str] = {}

    app = FastAPI(
        title="servebound",
        version="0.1.0",
        description=(
            "Serving ceilings for LLMs from first principles. The decode and prefill objects carry the same "
            "fields as `servebound decode --json` and `servebound prefill --json`. Every 4xx answers "
            '`{"error": {"status", "field", "message"}}`. Catalog content: CC BY 4.0.'
        ),
        docs_url=None,
        redoc_url=None,
    )
    app.state.site = site
    app.state.renderer = renderer
    app.state.llms_full = full
    static_dir = resources.files("servebound.web").joinpath("static")
    app.mount("/static", StaticFiles(directory=str(static_dir)), name="static")

    def base(request: Request) -> str:
        return base_url or str(request.base_url).rstrip("/")

    # --- errors ----------------------------------------------------------------------------------

    def wants_json(request: Request) -> bool:
        return request.url.path.startswith("/api/") or request.url.path == "/openapi.json"

    def wants_text(request: Request) -> bool:
        return request.url.path.endswith((".md", ".txt", ".xml"))

    def error_response(
        request: Request, status: int, field: str, message: str, suggestions: Any = None
    ) -> Response:
        if wants_json(request):
            return error_json(status, field, message)
        if wants_text(request):
            return PlainTextResponse(f"{status} {field}: {message}\n", status_code=status)
        return HTMLResponse(renderer.error(status, field, message, suggestions), status_code=status)

    @app.exception_handler(InputError)
    async def _input_error(request: Request, exc: InputError) -> Response:
        return error_response(request, 400, exc.field, exc.problem)

    @app.exception_handler(NotFoundError)
    async def _not_found(request: Request, exc: NotFoundError) -> Response:
        return error_response(request, 404, exc.field, exc.message, exc.suggestions)

    @app.exception_handler(RequestValidationError)
    async def _validation(request: Request, exc: RequestValidationError) -> Response:
        errors = exc.errors()
        first = errors[0] if errors else {"loc": ("query",), "msg": "invalid request"}
        loc = [str(p) for p in first.get("loc", ()) if p not in ("query", "path", "body")]
        field = ".".join(loc) or "query"
        message = str(first.get("msg", "invalid value"))
        if "input" in first and first.get("type") != "missing":
            message += f" (got {first['input']!r})"
        return error_response(request, 400, field, message)

    @app.exception_handler(StarletteHTTPException)
    async def _http_error(request: Request, exc: StarletteHTTPException) -> Response:
        if exc.status_code == 404:
            return error_response(request, 404, "path", f"no page at {request.url.path}")
        if exc.status_code == 405:
            response = error_response(
                request, 405, "method", f"{request.method} is not allowed here; use GET"
            )
            if exc.headers:
                response.headers.update(exc.headers)
            return response
        return error_response(request, exc.status_code, "request", str(exc.detail))

    # --- lookups ---------------------------------------------------------------------------------

    def get_hw(ref: str) -> Any:
        try:
            return site.get_hardware(ref)
        except InputError:
            close = site.suggest_hardware(ref)
            raise NotFoundError(
                "hardware",
                f"'{ref}' is not a hardware id here; see /hardware for every row",
                [(f"/hardware/{h.id}", h.name) for h in close],
            ) from None

    def get_model(ref: str) -> Any:
        try:
            return site.get_model(ref)
        except InputError:
            close = site.suggest_models(ref)
            raise NotFoundError(
                "model",
                f"'{ref}' is not a model id here; see /models for every profile",
                [(f"/models/{m.id}", m.name) for m in close],
            ) from None

    def page_response(page: Page, markdown: bool) -> Response:
        if markdown:
            return Response(page.markdown, media_type=MARKDOWN)
        return HTMLResponse(page.html)

    def split_md(ref: str) -> tuple[str, bool]:
        return (ref[:-3], True) if ref.endswith(".md") else (ref, False)

    # --- pages -----------------------------------------------------------------------------------

    @app.get("/", include_in_schema=False)
    @app.get("/index.md", include_in_schema=False)
    def home(request: Request) -> Response:
        return page_response(cache.get("/", renderer.home), request.url.path.endswith(".md"))

    @app.get("/hardware", include_in_schema=False)
    @app.get("/hardware.md", include_in_schema=False)
    def hardware_index(request: Request) -> Response:
        p = request.query_params
        f = HardwareFilters(
            vendor=p.get("vendor") or None,
            cls=p.get("class") or None,
            min_memory_gb=_number("min_memory_gb", p.get("min_memory_gb")),
            sort=_choice("sort", p.get("sort") or "name", list(Renderer.HARDWARE_SORTS)),
        )
        return page_response(renderer.hardware_index(f), request.url.path.endswith(".md"))

    @app.get("/hardware/{ref}", include_in_schema=False)
    def hardware_page(ref: str) -> Response:
        ref, markdown = split_md(ref)
        hw = get_hw(ref)
        return page_response(cache.get(f"/hardware/{hw.id}", lambda: renderer.hardware_page(hw)), markdown)

    @app.get("/models", include_in_schema=False)
    @app.get("/models.md", include_in_schema=False)
    def models_index(request: Request) -> Response:
        p = request.query_params
        fits = p.get("fits") or None
        if fits:
            fits = get_hw(fits).id
        f = ModelFilters(
            family=p.get("family") or None,
            min_params_b=_number("min_params_b", p.get("min_params_b")),
            max_params_b=_number("max_params_b", p.get("max_params_b")),
            fits=fits,
            sort=_choice("sort", p.get("sort") or "name", list(Renderer.MODEL_SORTS)),
        )
        return page_response(renderer.models_index(f), request.url.path.endswith(".md"))

    @app.get("/models/{ref}", include_in_schema=False)
    def model_page(ref: str) -> Response:
        ref, markdown = split_md(ref)
        m = get_model(ref)
        return page_response(cache.get(f"/models/{m.id}", lambda: renderer.model_page(m)), markdown)

    @app.get("/pair", include_in_schema=False)
    def pair_form(request: Request) -> Response:
        p = dict(request.query_params)
        hw_ref, model_ref = p.pop("hardware", ""), p.pop("model", "")
        if not hw_ref:
            raise InputError("hardware", "choose a hardware row")
        if not model_ref:
            raise InputError("model", "choose a model")
        hw, m = get_hw(hw_ref), get_model(model_ref)
        return RedirectResponse(pair_path(hw.id, m.id, {k: v for k, v in p.items() if v}), status_code=303)

    @app.get("/pair/{hw_ref}/{model_ref}", include_in_schema=False)
    def pair_page(request: Request, hw_ref: str, model_ref: str) -> Response:
        model_ref, markdown = split_md(model_ref)
        hw, m = get_hw(hw_ref), get_model(model_ref)
        params = dict(request.query_params)
        if params.pop("maximize", None):
            params.pop("batch", None)
        query = parse_workload_query(params)

        def build() -> Page:
            return renderer.pair_page(compute_pair(hw, m, query))

        page = cache.get(f"/pair/{hw.id}/{m.id}", build) if query.is_default else build()
        return page_response(page, markdown)

    @app.get("/methodology", include_in_schema=False)
    @app.get("/methodology.md", include_in_schema=False)
    def methodology(request: Request) -> Response:
        return page_response(
            cache.get("/methodology", renderer.methodology), request.url.path.endswith(".md")
        )

    @app.get("/validation", include_in_schema=False)
    @app.get("/validation.md", include_in_schema=False)
    def validation_page(request: Request) -> Response:
        return page_response(
            cache.get("/validation", renderer.validation_page), request.url.path.endswith(".md")
        )

    @app.get("/license", include_in_schema=False)
    @app.get("/license.md", include_in_schema=False)
    def license_page(request: Request) -> Response:
        return page_response(cache.get("/license", renderer.license), request.url.path.endswith(".md"))

    # --- machine files ---------------------------------------------------------------------------

    @app.get("/robots.txt", include_in_schema=False)
    def robots(request: Request) -> Response:
        return PlainTextResponse(robots_txt(base(request)))

    @app.get("/llms.txt", include_in_schema=False)
    def llms(request: Request) -> Response:
        return Response(llms_txt(site_export.documents(site), base(request)), media_type=MARKDOWN)

    @app.get("/llms-full.txt", include_in_schema=False)
    def llms_full(request: Request) -> Response:
        body = full.body()
        if body is None:
            wait = full.retry_after_s()
            return PlainTextResponse(
                f"503 llms-full.txt: the whole site as text is being built ({full.done:,} of "
                f"{full.total:,} pages); retry in {wait} s\n",
                status_code=503,
                headers={"Retry-After": str(wait)},
            )
        url = base(request)
        text = full_text.get(url)
        if text is None:
            text = llms_full_header(url) + body
            full_text.clear()  # one base URL in practice; keep one copy of a large file
            full_text[url] = text
        return PlainTextResponse(text)

    @app.get("/sitemap.xml", include_in_schema=False)
    def sitemap(request: Request) -> Response:
        paths = [d.path for d in site_export.documents(site)]
        return Response(sitemap_xml(paths, base(request)), media_type="application/xml")

    # --- the JSON API ----------------------------------------------------------------------------

    def workload_params(**values: Any) -> dict[str, str]:
        return {k: (f"{v!r}" if isinstance(v, float) else str(v)) for k, v in values.items() if v is not None}

    @app.get("/api/decode", tags=["ceilings"], responses=ERRORS)
    def api_decode(
        hardware: Annotated[str, Query(description="hardware id (see /api/hardware)")],
        model: Annotated[str, Query(description="model id (see /api/models)")],
        overhead_gb: OverheadQ = None,
        alloc_context: AllocQ = None,
        read_context: ReadQ = None,
        floor: FloorQ = None,
        batch: Annotated[
            int | None, Query(ge=1, le=MAX_BATCH, description="force the batch to B sessions")
        ] = None,
        expert_traffic: TrafficParam = "expected",
    ) -> dict[str, Any]:
        """The decode ceilings: the same object as `servebound decode --json`."""
        hw, m = get_hw(hardware), get_model(model)
        query = parse_workload_query(
            workload_params(
                overhead_gb=overhead_gb,
                alloc_context=alloc_context,
                read_context=read_context,
                floor=floor,
                batch=batch,
                expert_traffic=expert_traffic,
            )
        )
        from servebound.api import decode

        return clean_json(  # type: ignore[no-any-return]
            decode_json(decode(hw.hardware, m.adapter, query.workload()))
        )

    @app.get("/api/prefill", tags=["ceilings"], responses=ERRORS)
    def api_prefill(
        hardware: Annotated[str, Query(description="hardware id")],
        model: Annotated[str, Query(description="model id")],
        prompt: Annotated[
            int | None,
            Query(ge=1, le=CTX, description="L: prompt tokens, <= alloc_context (optional with range)"),
        ] = None,
        chunk: Annotated[int | None, Query(ge=1, description="chunk tokens (default: one shot)")] = None,
        batch: Annotated[str, Query(pattern=r"^(max|[0-9]{1,10})$", description="B, or max")] = "1",
        linear_mode: Annotated[Literal["fp4", "fp8", "int8", "bf16", "fp16", "fp32"] | None, Query()] = None,
        attention_mode: Annotated[
            Literal["fp4", "fp8", "int8", "bf16", "fp16", "fp32"] | None, Query()
        ] = None,
        ttft_budget: Annotated[
            float | None, Query(gt=0, allow_inf_nan=False, description="TTFT budget in seconds")
        ] = None,
        overhead_gb: OverheadQ = None,
        alloc_context: AllocQ = None,
        read_context: ReadQ = None,
        floor: FloorQ = None,
        expert_traffic: TrafficParam = "expected",
        include_range: Annotated[
            bool, Query(alias="range", description="add the prompt-length range")
        ] = False,
    ) -> dict[str, Any]:
        """The prefill ceiling: the same object as `servebound prefill --json` (with `range` when asked)."""
        hw, m = get_hw(hardware), get_model(model)
        query = parse_workload_query(
            workload_params(
                overhead_gb=overhead_gb,
                alloc_context=alloc_context,
                read_context=read_context,
                floor=floor,
                expert_traffic=expert_traffic,
                prompt=prompt,
            )
        )
        workload = query.workload()
        if m.adapter.prefill is None:
            raise InputError("model", f"model '{m.id}' has no prefill fields, so no prefill ceiling")
        size: int | Literal["max"] = "max" if batch == "max" else int(batch)
        if size != "max" and size < 1:
            raise InputError("batch", f"must be >= 1 or 'max' (got {batch})")
        if ttft_budget is not None and not (ttft_budget > 0 and ttft_budget < float("inf")):
            raise InputError("ttft_budget", f"must be a positive number of seconds (got {ttft_budget!r})")
        if chunk is not None and chunk < 1:
            raise InputError("chunk", f"must be a whole number of tokens >= 1 (got {chunk})")
        if prompt is None and not include_range:
            raise InputError("prompt", "give prompt= (or range=true for every prompt length)")
        if prompt is None:  # as `servebound prefill --range` without --prompt
            only = prefill_range(
                hw.hardware,
                m.adapter,
                workload=workload,
                batch=1 if size == "max" else size,
                linear_mode=linear_mode,
                attention_mode=attention_mode,
            )
            return clean_json({"range": range_json(only)})  # type: ignore[no-any-return]
        result = prefill(
            hw.hardware,
            m.adapter,
            prompt,
            workload=workload,
            batch=size,
            chunk_tokens=chunk,
            ttft_budget_s=ttft_budget,
            linear_mode=linear_mode,
            attention_mode=attention_mode,
        )
        rng = None
        if include_range:
            rng = prefill_range(
                hw.hardware,
                m.adapter,
                workload=workload,
                batch=1 if size == "max" else size,
                linear_mode=linear_mode,
                attention_mode=attention_mode,
            )
        return clean_json(  # type: ignore[no-any-return]
            prefill_json(result, rng)
        )

    @app.get("/api/hardware", tags=["catalog"], responses=ERRORS)
    def api_hardware_list(
        vendor: Annotated[str | None, Query()] = None,
        min_memory_gb: Annotated[float | None, Query(allow_inf_nan=False)] = None,
    ) -> dict[str, Any]:
        """Every hardware row (optionally filtered), in the contract's hardware-file units."""
        if min_memory_gb is not None:
            _number("min_memory_gb", repr(min_memory_gb))
        f = HardwareFilters(vendor=vendor or None, min_memory_gb=min_memory_gb)
        rows = [_hardware_json(h) for h in site.hardware if f.keep(h)]
        return {"count": len(rows), "hardware": rows, "license": "CC BY 4.0"}

    @app.get("/api/hardware/{hardware_id}", tags=["catalog"], responses=ERRORS)
    def api_hardware_one(hardware_id: str) -> dict[str, Any]:
        """One hardware row with its sources."""
        return _hardware_json(get_hw(hardware_id), full=True)

    @app.get("/api/models", tags=["catalog"], responses=ERRORS)
    def api_models_list(
        family: Annotated[str | None, Query()] = None,
        fits: Annotated[str | None, Query(description="only models that fit on this hardware id")] = None,
    ) -> dict[str, Any]:
        """Every model profile (optionally filtered), with its adapter quantities."""
        fits_hw = get_hw(fits) if fits else None
        rows = []
        for m in site.models:
            if family and m.family.lower() != family.lower():
                continue
            if fits_hw is not None:
                from servebound.api import decode

                if not decode(fits_hw.hardware, m.adapter).fits:
                    continue
            rows.append(_model_json(m))
        return {"count": len(rows), "models": rows, "license": "CC BY 4.0"}

    @app.get("/api/models/{model_id}", tags=["catalog"], responses=ERRORS)
    def api_models_one(model_id: str) -> dict[str, Any]:
        """One model profile with its audit."""
        return _model_json(get_model(model_id), full=True)

    @app.get("/api/validation", tags=["validation"], responses=ERRORS)
    def api_validation() -> dict[str, Any]:
        """Published runs against their ceilings: the same object as `servebound validate --json`
        (total, at_or_below, the efficiency distribution by engine, hardware family and phase, every run)."""
        return clean_json(  # type: ignore[no-any-return]
            validation_json(site.validation())
        )

    @app.get("/api/rank", tags=["ceilings"], responses=ERRORS)
    def api_rank(
        hardware: Annotated[str | None, Query(description="rank every model on this hardware")] = None,
        model: Annotated[str | None, Query(description="rank every hardware row for this model")] = None,
        overhead_gb: OverheadQ = None,
        alloc_context: AllocQ = None,
        read_context: ReadQ = None,
        floor: FloorQ = None,
        expert_traffic: TrafficParam = "expected",
        all_formats: Annotated[
            bool, Query(description="with hardware=: every weight format, not only each model's native one")
        ] = False,
    ) -> dict[str, Any]:
        """Which models fit on a machine and how fast, or which machines serve a model best.

        The rows are `servebound rank --json`'s; like the CLI, hardware= ranks native formats unless
        all_formats=true."""
        if (hardware is None) == (model is None):
            raise InputError("hardware", "give exactly one of hardware= or model=")
        query = parse_workload_query(
            workload_params(
                overhead_gb=overhead_gb,
                alloc_context=alloc_context,
                read_context=read_context,
                floor=floor,
                expert_traffic=expert_traffic,
            )
        )
        workload = query.workload()
        if hardware is not None:
            hw = get_hw(hardware)
            rows = rank_rows_for_hardware(site, hw, workload, native_only=not all_formats)
            return clean_json(  # type: ignore[no-any-return]
                {"hardware": {"id": hw.id, "name": hw.name}, "rows": [r.json for r in rows]}
            )
        assert model is not None
        m = get_model(model)
        rows = rank_rows_for_model(site, m, workload)
        return clean_json(  # type: ignore[no-any-return]
            {"model": {"id": m.id, "name": m.name}, "rows": [r.json for r in rows]}
        )

    return app


def _number(field: str, text: str | None) -> float | None:
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


def _hardware_json(h: Any, *, full: bool = False) -> dict[str, Any]:
    out = {
        **hardware_json(h.hardware),
        "vendor": h.vendor,
        "class": h.device_class,
        "year": h.year,
        "memory_type": h.memory_type,
        "price_usd": h.price_usd,
        "system": h.system,
    }
    if full:
        out["sources"] = dict(h.sources)
        out["notes"] = h.notes
        out["sparse_halved"] = list(h.sparse_halved)
        out["modes"] = [m for m in ARITHMETIC_MODES if m in h.hardware.compute_flop_per_s]
    return out


def _model_json(m: Any, *, full: bool = False) -> dict[str, Any]:
    a = m.adapter
    # The contract's model form, from the one function that writes it (servebound.files).
    mapping = model_to_mapping(a)
    out: dict[str, Any] = {
        "id": m.id,
        "name": m.name,
        "family": m.family,
        "total_params": m.total_params,
        "active_params": m.active_params,
        "resident_gb": a.weights.resident / GB,
        "weights": mapping["weights"],
        "experts": mapping.get("experts"),
        "kv": mapping["kv"],
        "context_limit": a.context_limit_tokens,
    }
    if full:
        out["prefill"] = mapping.get("prefill")
        out["audit"] = {
            "published_total_params": m.published_total_params,
            "published_active_params": m.published_active_params,
            "checkpoint_bytes": m.checkpoint_bytes,
            "source": dict(m.source),
            "facts": dict(m.facts),
            "steps": [{"quantity": q, "value": v, "formula": f} for q, v, f in m.steps],
        }
    return out


def serve(host: str = "127.0.0.1", port: int = 8000) -> None:
    """Run the site with uvicorn on ``host:port`` (localhost by default); llms-full.txt is built in a
    background thread from the start (503 with Retry-After until it is ready)."""
    import uvicorn

    app = create_app()
    app.state.llms_full.start()  # llms-full.txt builds while the server starts (see the module docstring)
    uvicorn.run(app, host=host, port=port, log_level="info")
