"""Machine files: robots.txt, llms.txt, llms-full.txt (see ``servebound.web.app``) and sitemap.xml."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import PlainTextResponse, Response

from servebound.web import export as site_export
from servebound.web.machine import absolute_canonicals, llms_full_header, llms_txt, robots_txt, sitemap_xml
from servebound.web.state import MARKDOWN, Web

router = APIRouter(include_in_schema=False)


@router.get("/robots.txt")
def robots(request: Request, web: Web) -> Response:
    return PlainTextResponse(robots_txt(web.base(request)))


@router.get("/llms.txt")
def llms(request: Request, web: Web) -> Response:
    return Response(
        llms_txt(site_export.documents(web.site), web.base(request), web.renderer.date), media_type=MARKDOWN
    )


@router.get("/llms-full.txt")
def llms_full(request: Request, web: Web) -> Response:
    full = web.full
    body = full.body()
    if body is None:
        wait = full.retry_after_s()
        return PlainTextResponse(
            f"503 llms-full.txt: the whole site as text is being built ({full.done:,} of "
            f"{full.total:,} pages); retry in {wait} s\n",
            status_code=503,
            headers={"Retry-After": str(wait)},
        )
    url = web.base(request)
    text = web.full_text.get(url)
    if text is None:
        text = llms_full_header(url) + absolute_canonicals(body, url)
        web.full_text.clear()  # one base URL in practice; keep one copy of a large file
        web.full_text[url] = text
    return PlainTextResponse(text)


@router.get("/conformance.json")
def conformance() -> Response:
    """Conformance vectors: inputs and the core's outputs, for any reimplementation of the math."""
    from servebound.conformance import conformance_text

    return Response(conformance_text(), media_type="application/json")


@router.get("/sitemap.xml")
def sitemap(request: Request, web: Web) -> Response:
    paths = [d.path for d in site_export.documents(web.site)]
    return Response(sitemap_xml(paths, web.base(request)), media_type="application/xml")
