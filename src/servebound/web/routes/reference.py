"""The API reference for people (``/api``, rendered from ``/openapi.json``) and the icon. (``/docs`` is
the manual: ``web.pages.manual``.)"""

from __future__ import annotations

from importlib import resources

from fastapi import Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from servebound.web.app.state import MARKDOWN, Web
from servebound.web.pages.apidocs import operations
from servebound.web.pages.text import md
from servebound.web.routes import Routes

routes = Routes(include_in_schema=False)
TITLE = "The JSON API"
#: What /api is, for its page and its mirror's frontmatter.
DESCRIPTION = "Every endpoint of the JSON API, its parameters and an example, from /openapi.json."


@routes.get("/api")
def docs(request: Request, web: Web) -> Response:
    spec = request.app.openapi()
    html = web.renderer._html(
        "api_docs.html",
        "/api",
        TITLE,
        DESCRIPTION,
        ops=operations(spec),
        info=spec.get("info", {}),
        openapi_version=spec.get("openapi", ""),
    )
    return HTMLResponse(html)


@routes.get("/api.md")
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
    text = web.renderer._markdown("api_docs.md", "/api", TITLE, DESCRIPTION, body="\n".join(lines))
    return Response(text, media_type=MARKDOWN)


@routes.get("/api/")
def api_root() -> Response:
    return RedirectResponse("/api", status_code=307)


#: The icon, read as the routes are declared (a reinstall under a running server cannot fail it).
ICON = resources.files("servebound.web").joinpath("static", "favicon.svg").read_bytes()


@routes.get("/favicon.ico")
def favicon() -> Response:
    return Response(ICON, media_type="image/svg+xml")
