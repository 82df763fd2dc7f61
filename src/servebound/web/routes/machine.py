"""Machine files: robots.txt, llms.txt, llms-full.txt (see ``servebound.web.app.server``) and sitemap.xml."""

from __future__ import annotations

import gzip
import itertools
import zlib
from collections.abc import AsyncIterator, Iterator
from typing import Any

from fastapi import Request
from fastapi.responses import PlainTextResponse, Response, StreamingResponse

from servebound.views.conformance import conformance_text
from servebound.web.app.http_layers import accepts_gzip
from servebound.web.app.state import MARKDOWN, FullTextBuilder, Web
from servebound.web.export import build as site_export
from servebound.web.pages.machine_files import (
    absolute_canonicals,
    llms_full_header,
    llms_txt,
    robots_txt,
    sitemap_xml,
)
from servebound.web.routes import Routes

routes = Routes(include_in_schema=False)


@routes.get("/robots.txt")
def robots(request: Request, web: Web) -> Response:
    return PlainTextResponse(robots_txt(web.base(request)))


@routes.get("/llms.txt")
def llms(request: Request, web: Web) -> Response:
    return Response(
        llms_txt(site_export.documents(web.site), web.base(request), web.renderer.date), media_type=MARKDOWN
    )


@routes.get("/llms-full.txt")
def llms_full(request: Request, web: Web) -> Response:
    full = web.full
    body = full.body()
    url = web.base(request)
    takes_gzip = accepts_gzip(request.headers.get("accept-encoding", ""))
    headers = {"Vary": "Accept-Encoding", **({"Content-Encoding": "gzip"} if takes_gzip else {})}
    if body is None:  # the build runs (started here if need be): the documents stream as they are done
        return StreamingResponse(
            _progressive(full, _header(web, url), url, takes_gzip),
            media_type="text/plain; charset=utf-8",
            headers=headers,
        )
    with web.full_text_lock:  # encoded and compressed once, not per request (RSS grew with clients)
        encoded = web.full_text.get(url)
        if encoded is None:
            raw = (_header(web, url) + absolute_canonicals(body, url)).encode("utf-8")
            encoded = (raw, gzip.compress(raw, compresslevel=6, mtime=0))
            web.full_text.clear()  # one base URL in practice; keep one copy of a large file
            web.full_text[url] = encoded
    body_bytes = encoded[1] if takes_gzip else encoded[0]
    headers["Content-Length"] = str(len(body_bytes))
    # Streamed in slices of the one stored copy: a whole-body send is copied into the connection's
    # write buffer, one 70 MB copy per slow reader; slices wait for the reader (flow control).
    return StreamingResponse(_slices(body_bytes), media_type="text/plain; charset=utf-8", headers=headers)


def _header(web: Any, url: str) -> str:
    """llms-full.txt's header, naming the documents it holds."""
    return llms_full_header(url, site_export.full_text_documents(web.site))


def _progressive(full: FullTextBuilder, header: str, url: str, packed: bool) -> Iterator[bytes]:
    """llms-full.txt while it is built: the header, then the documents as the build gives them (the
    same bytes as the finished file; gzip-compressed on the way where the client takes gzip). A sync
    iterator: Starlette runs it in its thread pool, so waiting for the next document blocks no request."""
    pack = zlib.compressobj(6, zlib.DEFLATED, 16 + zlib.MAX_WBITS) if packed else None
    # Each piece is the delimiter and one whole document, so no "canonical:" line is split.
    pieces = (absolute_canonicals(piece, url) for piece in full.stream())
    for piece in itertools.chain([header], pieces):
        data = piece.encode("utf-8")
        if pack is not None:
            data = pack.compress(data)
        if data:
            yield data
    if pack is not None:
        yield pack.flush()


#: Bytes per slice of a streamed llms-full.txt.
STREAM_SLICE_BYTES = 256 * 1024


async def _slices(data: bytes) -> AsyncIterator[bytes]:
    view = memoryview(data)
    for start in range(0, len(view), STREAM_SLICE_BYTES):
        yield bytes(view[start : start + STREAM_SLICE_BYTES])


@routes.get("/conformance.json")
def conformance() -> Response:
    """Conformance vectors: inputs and the core's outputs, for any reimplementation of the math."""
    return Response(conformance_text(), media_type="application/json")


@routes.get("/sitemap.xml")
def sitemap(request: Request, web: Web) -> Response:
    paths = [d.path for d in site_export.documents(web.site)]
    return Response(sitemap_xml(paths, web.base(request)), media_type="application/xml")
