"""The API reference for people (``/docs``, ``/api``, rendered from ``/openapi.json``) and the icon."""

from __future__ import annotations

from importlib import resources

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from servebound.web.apidocs import operations
from servebound.web.state import MARKDOWN, Web
from servebound.web.text import md

router = APIRouter(include_in_schema=False)
TITLE = "The JSON API"


@router.get("/docs")
def docs(request: Request, web: Web) -> Response:
    spec = request.app.openapi()
    html = web.renderer._html(
        "api_docs.html",
        "/docs",
        TITLE,
        DESCRIPTION,
        ops=operations(spec),
        info=spec.get("info", {}),
        openapi_version=spec.get("openapi", ""),
    )
    return HTMLResponse(html)


#: What /docs is, for its page and its mirror's frontmatter.
DESCRIPTION = "Every endpoint of the JSON API, its parameters and an example, from /openapi.json."


@router.get("/docs.md")
def docs_markdown(request: Request, web: Web) -> Response:
    """The reference as markdown, with the frontmatter every mirror carries (title, URL, date, license)."""
    spec = request.app.openapi()
    lines = [f"# {TITLE}", "", "The schema: /openapi.json.", ""]
    for op in operations(spec):
        lines += [f"## {op.method} {op.path}", "", md(op.summary or op.description), ""]
        lines += [
            f"- `{p.name}` ({p.where}, {p.kind}{', required' if p.required else ''}): {md(p.description)}"
            for p in op.params
        ]
        lines.append("")
    text = web.renderer._markdown("api_docs.md", "/docs", TITLE, DESCRIPTION, body="\n".join(lines))
    return Response(text, media_type=MARKDOWN)


@router.get("/api")
@router.get("/api/")
def api_root() -> Response:
    return RedirectResponse("/docs", status_code=307)


@router.get("/favicon.ico")
def favicon() -> Response:
    icon = resources.files("servebound.web").joinpath("static", "favicon.svg").read_bytes()
    return Response(icon, media_type="image/svg+xml")
