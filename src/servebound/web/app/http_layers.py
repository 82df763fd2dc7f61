"""The served site's HTTP layers: gzip, caching validators and CORS.

* gzip (Starlette's ``GZipMiddleware``) for every text response of 1 kB or more: HTML, markdown, JSON,
  SVG and the machine files. A response that is already encoded (llms-full.txt compresses once and
  sends the stored gzip) passes through unchanged.
* ``ETag`` and ``Cache-Control`` on GET pages, mirrors, machine files and API answers (not
  llms-full.txt, which streams as it is built): a page is a
  function of the catalog the process loaded and the query, so it does not change while the server
  runs. The tag is a hash of the body; a request that sends it back in ``If-None-Match`` gets ``304``
  with no body. Error answers and streamed bodies get neither.
* CORS: any origin may GET (the JSON API is public and read-only); other methods are not allowed.
"""

from __future__ import annotations

import hashlib

from fastapi import FastAPI
from starlette.middleware.cors import CORSMiddleware
from starlette.middleware.gzip import GZipMiddleware
from starlette.types import ASGIApp, Message, Receive, Scope, Send

#: How long a browser or proxy may reuse a page without asking (seconds); then it revalidates.
MAX_AGE_S = 300
#: Static assets (CSS, scripts, the icon) change only with a release.
STATIC_MAX_AGE_S = 3600
#: Bodies larger than this are not buffered for a tag (they stream).
TAG_LIMIT_BYTES = 8 * 1024 * 1024
GZIP_MINIMUM_BYTES = 1000
#: Paths that encode and stream themselves (llms-full.txt: its stored gzip, or the documents as the
#: build finishes them): neither compressed again nor buffered for a tag.
OWN_ENCODING = frozenset({"/llms-full.txt"})


class CacheValidators:
    """ETag and Cache-Control for GET 200 answers; 304 when the client's tag matches."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] not in ("GET", "HEAD"):
            await self.app(scope, receive, send)
            return
        path: str = scope.get("path", "")
        if path in OWN_ENCODING:  # streamed as it is built: never held back to be tagged
            await self.app(scope, receive, send)
            return
        if path.startswith("/static/"):
            await self.app(scope, receive, self._static(send))
            return
        client_tag = _header(scope, b"if-none-match")
        start: Message | None = None
        chunks: list[bytes] = []
        passthrough = False

        async def buffered(message: Message) -> None:
            nonlocal start, passthrough
            if passthrough:
                await send(message)
                return
            if message["type"] == "http.response.start":
                start = message
                names = {k.lower() for k, _ in message.get("headers", [])}
                if message["status"] != 200 or b"content-encoding" in names or b"etag" in names:
                    passthrough = True
                    await send(message)
                return
            if message["type"] != "http.response.body":
                await send(message)
                return
            chunks.append(message.get("body", b""))
            size = sum(len(c) for c in chunks)
            if message.get("more_body", False) and size <= TAG_LIMIT_BYTES:
                return
            assert start is not None
            body = b"".join(chunks)
            if message.get("more_body", False):  # too large to tag: stream the rest as it comes
                passthrough = True
                await send(start)
                await send({"type": "http.response.body", "body": body, "more_body": True})
                return
            tag = '"' + hashlib.blake2b(body, digest_size=12).hexdigest() + '"'
            headers: list[tuple[bytes, bytes]] = [
                (k, v) for k, v in start.get("headers", []) if k.lower() != b"cache-control"
            ]
            headers += [(b"etag", tag.encode()), (b"cache-control", f"public, max-age={MAX_AGE_S}".encode())]
            if client_tag is not None and tag in [t.strip() for t in client_tag.split(",")]:
                kept = [(k, v) for k, v in headers if k.lower() not in (b"content-length", b"content-type")]
                await send({"type": "http.response.start", "status": 304, "headers": kept})
                await send({"type": "http.response.body", "body": b""})
                return
            await send({**start, "headers": headers})
            await send({"type": "http.response.body", "body": body})

        await self.app(scope, receive, buffered)

    @staticmethod
    def _static(send: Send) -> Send:
        async def with_cache(message: Message) -> None:
            if message["type"] == "http.response.start" and message["status"] == 200:
                headers = list(message.get("headers", []))
                if any(k.lower() == b"cache-control" for k, _ in headers):
                    await send(message)
                    return
                headers.append((b"cache-control", f"public, max-age={STATIC_MAX_AGE_S}".encode()))
                message = {**message, "headers": headers}
            await send(message)

        return with_cache


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", []):
        if key.lower() == name:
            return bytes(value).decode("latin-1")
    return None


class StatedGZip(GZipMiddleware):
    """Starlette's gzip, except where the client refuses gzip by a q-value of 0 (``gzip;q=0``), which
    Starlette's substring test would still compress for."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and (
            scope.get("path") in OWN_ENCODING or not accepts_gzip(_header(scope, b"accept-encoding") or "")
        ):
            await self.app(scope, receive, send)
            return
        await super().__call__(scope, receive, send)


def accepts_gzip(header: str) -> bool:
    """Whether an Accept-Encoding header takes gzip (``gzip`` or ``*``, with a q-value above 0)."""
    for item in header.split(","):
        name, _, params = item.strip().partition(";")
        if name.strip().lower() in ("gzip", "*"):
            q = params.strip().removeprefix("q=").strip() if params.strip().startswith("q=") else "1"
            try:
                if float(q) > 0:
                    return True
            except ValueError:
                continue
    return False


class VaryOnce:
    """One ``Vary`` header, each name once (the route, gzip and CORS each add theirs)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def once(message: Message) -> None:
            if message["type"] == "http.response.start":
                names: list[str] = []
                rest = []
                for key, value in message.get("headers", []):
                    if key.lower() == b"vary":
                        for name in bytes(value).decode("latin-1").split(","):
                            if name.strip() and name.strip().lower() not in [n.lower() for n in names]:
                                names.append(name.strip())
                    else:
                        rest.append((key, value))
                if names:
                    rest.append((b"vary", ", ".join(names).encode("latin-1")))
                message = {**message, "headers": rest}
            await send(message)

        await self.app(scope, receive, once)


def install_http_layers(app: FastAPI) -> None:
    """Add the layers (outermost last): one Vary, CORS, gzip over the tagged body, the validators."""
    app.add_middleware(CacheValidators)
    app.add_middleware(StatedGZip, minimum_size=GZIP_MINIMUM_BYTES, compresslevel=6)
    app.add_middleware(CORSMiddleware, allow_origins=["*"], allow_methods=["GET"], allow_headers=["*"])
    app.add_middleware(VaryOnce)
