"""One error shape for every 4xx: ``{"error": {"status", "field", "message"}}`` on ``/api/``, a readable
HTML page elsewhere, plain text for ``.md`` and machine files. A path that misses only by its trailing
slash is redirected to the one that answers, by a relative address: no request header (Host, X-Forwarded-*)
ever reaches a ``Location``."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse, PlainTextResponse, RedirectResponse, Response
from pydantic import BaseModel
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import Match

from servebound.errors import MAX_ID_CHARS, InputError, shown
from servebound.views.schemas import output_model
from servebound.web.app.state import NotFoundError, WebState


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


BUSY_DESCRIPTION = (
    "Busy: heavy requests run one at a time and a few may wait; this one found the queue full or waited "
    "too long, before any of its work. Ask again after Retry-After seconds."
)

#: The longest error message sent back; longer ones are cut (their length is said).
MAX_MESSAGE_CHARS = 2_000


def error_response(
    request: Request, status: int, field: str, message: str, suggestions: Any = None
) -> Response:
    # An error never echoes a hostile input whole (a 100 kB id came back as 200 kB).
    field, message = shown(field, MAX_ID_CHARS), shown(message, MAX_MESSAGE_CHARS)
    path = request.url.path
    if path.startswith("/api/") or path == "/openapi.json":
        body = {"error": {"status": status, "field": field, "message": message}}
        return JSONResponse(body, status_code=status)
    if path.endswith((".md", ".txt", ".xml")):
        return PlainTextResponse(f"{status} {field}: {message}\n", status_code=status)
    state: WebState = request.app.state.web
    return HTMLResponse(state.renderer.error(status, field, message, suggestions), status_code=status)


async def _input_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, InputError)
    # its remedy spelt as the query parameters a page or the API takes, never as the CLI's flags
    return error_response(request, 400, exc.field, exc.note.api)


async def _not_found(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, NotFoundError)
    return error_response(request, 404, exc.field, exc.message, exc.suggestions)


async def _validation(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, RequestValidationError)
    errors = exc.errors()
    first = errors[0] if errors else {"loc": ("query",), "msg": "invalid request"}
    loc = [str(p) for p in first.get("loc", ()) if p not in ("query", "path", "body")]
    field = ".".join(loc) or "query"
    message = str(first.get("msg", "invalid value"))
    if "input" in first and first.get("type") != "missing":
        message += f" (got {first['input']!r})"
    return error_response(request, 400, field, message)


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, StarletteHTTPException)
    if exc.status_code == 404:
        twin = slash_twin(request)
        if twin is not None:
            return RedirectResponse(twin, status_code=307)
        return error_response(request, 404, "path", f"no page at {shown(request.url.path)}")
    if exc.status_code == 405:
        response = error_response(request, 405, "method", f"{request.method} is not allowed here; use GET")
        if exc.headers:
            response.headers.update(exc.headers)
        return response
    return error_response(request, exc.status_code, "request", str(exc.detail))


def slash_twin(request: Request) -> str | None:
    """Where a path that no route answers is answered with its trailing slash dropped (``/hardware/``)
    or added: that path and the request's query, relative to the site's root (the app is built with
    ``redirect_slashes=False``: Starlette's own redirect is absolute, its host the request's Host
    header); None when neither answers, or the twin would start ``//`` (another host to a browser)."""
    path = request.scope["path"]
    if path == "/":
        return None
    twin = path.rstrip("/") or "/" if path.endswith("/") else path + "/"
    if twin.startswith("//"):
        return None
    scope = {**request.scope, "path": twin}
    if not any(route.matches(scope)[0] is not Match.NONE for route in request.app.router.routes):
        return None
    query = request.scope.get("query_string", b"").decode("latin-1")
    return quote(twin) + (f"?{query}" if query else "")


def install_error_handlers(app: FastAPI, busy_paths: frozenset[str] = frozenset()) -> None:
    """Answer every error raised by a route in the one shape above, and document exactly that (with the
    503 of ``busy_paths``, the heavy lane's, ``servebound.web.app.lane``)."""
    app.add_exception_handler(InputError, _input_error)
    app.add_exception_handler(NotFoundError, _not_found)
    app.add_exception_handler(RequestValidationError, _validation)
    app.add_exception_handler(StarletteHTTPException, _http_error)
    build = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            app.openapi_schema = as_answered(build(), busy_paths)
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]


def as_answered(document: dict[str, Any], busy_paths: frozenset[str] = frozenset()) -> dict[str, Any]:
    """The OpenAPI document as the server answers: a bad value is a 400 in the one error shape (the
    framework's 422 and its validation-error schemas are never sent, so they are not declared); a heavy
    path (``busy_paths``) may answer 503 with Retry-After."""
    for path, operations in document.get("paths", {}).items():
        for operation in operations.values():
            responses = operation.get("responses", {})
            responses.pop("422", None)
            for status in ("400", "404"):
                responses.setdefault(status, _documented(ERRORS[int(status)]))
            if path in busy_paths:
                busy = _documented({"description": BUSY_DESCRIPTION})
                busy["headers"] = {"Retry-After": {"description": "seconds", "schema": {"type": "integer"}}}
                responses.setdefault("503", busy)
    schemas = document.get("components", {}).get("schemas", {})
    for unused in ("HTTPValidationError", "ValidationError"):
        schemas.pop(unused, None)
    return document


def _documented(answer: dict[str, Any]) -> dict[str, Any]:
    return {
        "description": answer["description"],
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorBody"}}},
    }


def answers(command: str) -> dict[int | str, dict[str, Any]]:
    """An endpoint's documented answers: the errors, and its 200 typed by the model of the command whose
    --json it returns (``servebound.views.schemas``; documented only, the response itself is not re-validated)."""
    return {
        200: {"model": output_model(command), "description": f"as `servebound {command} --json`"},
        **ERRORS,
    }
