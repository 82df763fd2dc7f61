"""What the routes share, held on ``app.state.web``: the site, its renderer, the page cache and the
llms-full.txt builder; route handlers receive it through the :data:`Web` dependency."""

from __future__ import annotations

import functools
import gzip
import inspect
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Annotated, Any, ParamSpec, TypeVar, cast

from fastapi import Depends, Request
from fastapi.responses import HTMLResponse, Response

from servebound.catalog.names import NameChoiceError
from servebound.core.model import ModelAdapter
from servebound.errors import MAX_ID_CHARS, InputError, shown
from servebound.inputs.engine_formats import names_a_format
from servebound.web.app.http_layers import accepts_gzip
from servebound.web.app.responses import StrictJSONResponse
from servebound.web.pages.contexts import NotFoundError as NotFoundError
from servebound.web.pages.contexts import Page
from servebound.web.pages.machine_files import DELIMITER, llms_full_body
from servebound.web.pages.renderer import Renderer
from servebound.web.pages.site import SiteData, SiteHardware, SiteModel

MARKDOWN = "text/markdown; charset=utf-8"
#: Where a server configured with no base URL says it is (``servebound serve``'s own address by default).
DEFAULT_BASE_URL = "http://localhost:8000"


class PageCache:
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
    """llms-full.txt's body (every mirror, delimited), built once, in a background thread after
    :meth:`start`. While it builds, :meth:`stream` gives the documents done so far and then each one as
    it is done, so a request is answered at once, never told to come back later. Thread-safe."""

    def __init__(
        self,
        markdowns: Callable[[], Iterator[str]],
        count: Callable[[], int],
    ) -> None:
        self._markdowns = markdowns
        self._count = count
        self._build_lock = threading.Lock()
        #: Guards what follows (a reentrant lock) and wakes the streams waiting for the next document.
        self._grown = threading.Condition()
        self._texts: list[str] = []
        self._failed: BaseException | None = None
        self._body: str | None = None
        self._thread: threading.Thread | None = None
        self.done = 0
        self.total = 0
        #: Requests being answered from the build as it runs.
        self.streams = 0

    def start(self, gate: threading.Event | None = None) -> threading.Thread | None:
        """Build in a daemon thread (``serve()`` calls this at startup, a first request otherwise); a
        no-op once started or built.

        ``gate``, when given, holds the build until it is set (a test sees a request answered while
        the build runs). Returns the thread (None when the body is already built).
        """
        with self._grown:
            if self._body is None and self._thread is None:
                self._thread = threading.Thread(target=self._run, args=(gate,), name="llms-full", daemon=True)
                self._thread.start()
            return self._thread

    def _run(self, gate: threading.Event | None) -> None:
        if gate is not None:
            gate.wait()
        try:
            self._build()
        except Exception as error:  # the streams waiting on it end with the error
            with self._grown:
                self._failed = error
                self._grown.notify_all()
        finally:
            with self._grown:
                # on failure a later request builds again
                self._thread = None

    def _build(self) -> str:
        with self._build_lock:
            if self._body is None:
                self.total = self._count()
                with self._grown:
                    self._texts, self._failed, self.done = [], None, 0
                for text in self._markdowns():
                    with self._grown:
                        self._texts.append(text)
                        self.done += 1
                        self._grown.notify_all()
                body = llms_full_body(self._texts)
                with self._grown:
                    self._body = body
                    self._grown.notify_all()
            return self._body

    @property
    def building(self) -> bool:
        """Whether a background build is running now."""
        with self._grown:
            return self._body is None and self._thread is not None

    def body(self) -> str | None:
        """The body once built; None before (see :meth:`stream`)."""
        with self._grown:
            return self._body

    def stream(self) -> Iterator[str]:
        """The body in pieces, the same text as :meth:`body` gives when built: the documents done so far
        at once, then each as the build finishes it (started here if it is not running)."""
        self.start()
        with self._grown:
            self.streams += 1
        try:
            yield from self._pieces()
        finally:
            with self._grown:
                self.streams -= 1

    def _pieces(self) -> Iterator[str]:
        at = 0
        while True:
            with self._grown:
                while at >= len(self._texts) and self.body() is None and self._failed is None:
                    self._grown.wait(1.0)
                new = self._texts[at:]
                finished = self.body() is not None and at + len(new) >= len(self._texts)
                failed = self._failed
            for text in new:  # DELIMITER + DELIMITER.join(texts) is DELIMITER + each text in turn
                yield DELIMITER + text.rstrip() + "\n"
            at += len(new)
            if failed is not None:
                raise RuntimeError("llms-full.txt: the build failed") from failed
            if finished:
                if at == 0:  # no document streamed: an empty build, or a body kept from an earlier one
                    yield self.body() or DELIMITER
                return


@dataclass
class WebState:
    """The served site's shared state (one per app)."""

    site: SiteData
    renderer: Renderer
    full: FullTextBuilder
    base_url: str = ""
    cache: PageCache = field(default_factory=PageCache)
    #: llms-full.txt per base URL, encoded once: (UTF-8 bytes, their gzip). One base URL in practice.
    full_text: dict[str, tuple[bytes, bytes]] = field(default_factory=dict)
    #: Guards full_text, so concurrent first requests encode and compress it once.
    full_text_lock: threading.Lock = field(default_factory=threading.Lock)

    def base(self, request: Request) -> str:
        """The base of absolute URLs: the app's configured ``base_url``, never the request's Host
        header (a client could write any host into robots.txt and the sitemap)."""
        return self.base_url or DEFAULT_BASE_URL

    def get_hw(self, ref: str) -> SiteHardware:
        return _lookup(
            "hardware", ref, self.site.get_hardware, self.site.suggest_hardware, "/hardware", "row"
        )

    def get_model(self, ref: str) -> SiteModel:
        return _lookup("model", ref, self.site.get_model, self.site.suggest_models, "/models", "profile")

    def scenario_model(self, ref: str, model: SiteModel) -> str | ModelAdapter:
        """What a route hands ``resolve_scenario`` for the model a query named (``ref``, found as
        ``model``): a catalog profile's id where the name states no format, so that a bare name under an
        engine is answered for that engine's format as on the CLI; else the site's record as found."""
        if self.site.serves_catalog and not names_a_format(ref):
            return model.id
        return model.adapter


_Row = TypeVar("_Row", SiteHardware, SiteModel)


def _lookup(
    kind: str,
    ref: str,
    get: Callable[[str], _Row],
    suggest: Callable[[str], Sequence[_Row]],
    index: str,
    every: str,
) -> _Row:
    """A hardware row or model by id; an unknown id is a 404 naming the closest ids, an overlong one a
    404 that neither looks it up nor echoes it whole."""
    if len(ref) > MAX_ID_CHARS:  # no lookup, no fuzzy match, no echo of the whole id
        raise NotFoundError(
            kind,
            f"'{shown(ref)}' is longer than any {kind} id ({MAX_ID_CHARS} characters at most); "
            f"see {index} for every {every}",
            [],
        )
    try:
        return get(ref)
    except InputError as error:
        close = suggest(ref)
        why = f" ({error.problem})" if isinstance(error, NameChoiceError) else ""
        raise NotFoundError(
            kind,
            f"'{ref}' is not a {kind} id here{why}; see {index} for every {every}",
            [(f"{index}/{row.id}", row.name) for row in close],
        ) from None


def web_state(request: Request) -> WebState:
    """The dependency that hands a route its app's :class:`WebState`."""
    state: WebState = request.app.state.web
    return state


Web = Annotated[WebState, Depends(web_state)]


def page_response(page: Page, markdown: bool) -> Response:
    if markdown:
        return Response(page.markdown, media_type=MARKDOWN)
    return HTMLResponse(page.html)


def split_md(ref: str) -> tuple[str, bool]:
    return (ref[:-3], True) if ref.endswith(".md") else (ref, False)


T = TypeVar("T")
P = ParamSpec("P")

# Heavy work -------------------------------------------------------------------------------------------

#: Requests that render a page, rank a catalog or scan every prompt length take tens to hundreds of
#: milliseconds of CPU under one GIL; they run one at a time, so a crowd of them (or an attacker's
#: loop) leaves the cheap requests (``/api/decode``, cached pages) their share of the process. The heavy
#: lane (``servebound.web.app.lane``) already admits heavy paths whole, one at a time, with a rest after
#: each; this gate also holds the first render of a page the lane does not take (a default page not yet
#: cached). ``bench/bench_load.py`` measures it.
HEAVY_CONCURRENCY = 1
_HEAVY = threading.BoundedSemaphore(HEAVY_CONCURRENCY)


def heavy(fn: Callable[[], T]) -> Callable[[], T]:
    """``fn`` run under the heavy-work gate (route level only: the gate is not reentrant)."""

    def run() -> T:
        with _HEAVY:
            return fn()

    return run


#: Answers of heavy JSON routes kept by their arguments, gzip-compressed as sent: the same search asked
#: again (three clients polling one 1,024-device layout: a search, 1.5 MB to encode, and its gzip on
#: the event loop for every answer) is sent from here, compressed once, in the worker thread, without
#: taking the gate again. Only the gzip is kept (134 kB for that 1.5 MB), so 64 answers hold about 9 MB;
#: a client that refuses gzip gets it decompressed.
HEAVY_ANSWERS_KEPT = 64
_ANSWERS: OrderedDict[str, bytes] = OrderedDict()
_ANSWERS_LOCK = threading.Lock()
_REQUEST = "heavy_route_request"


def heavy_route(handler: Callable[P, T]) -> Callable[P, T | Response]:
    """A route handler that runs under the heavy-work gate, its JSON answers kept, encoded, by its
    arguments (the last ``HEAVY_ANSWERS_KEPT``; an error is never kept); FastAPI reads its signature,
    with the request added (for its Accept-Encoding)."""

    @functools.wraps(handler)
    def run(*args: P.args, **kwargs: P.kwargs) -> T | Response:
        request = cast(Request, kwargs.pop(_REQUEST))
        given = sorted((k, _keyed(v)) for k, v in kwargs.items() if k != "web")
        key = f"{handler.__qualname__} {id(kwargs.get('web'))} {given!r}"  # one app's answers, not another's
        with _ANSWERS_LOCK:
            packed = _ANSWERS.get(key)
            if packed is not None:
                _ANSWERS.move_to_end(key)
        plain = None
        if packed is None:
            with _HEAVY:
                answer = handler(*args, **kwargs)
            if not isinstance(answer, dict):
                return answer
            plain = bytes(StrictJSONResponse(answer).body)
            packed = gzip.compress(plain, compresslevel=6, mtime=0)
            with _ANSWERS_LOCK:
                _ANSWERS[key] = packed
                while len(_ANSWERS) > HEAVY_ANSWERS_KEPT:
                    _ANSWERS.popitem(last=False)
        if accepts_gzip(request.headers.get("accept-encoding", "")):
            headers = {"Content-Encoding": "gzip", "Vary": "Accept-Encoding"}
            return Response(packed, media_type="application/json", headers=headers)
        return Response(gzip.decompress(packed) if plain is None else plain, media_type="application/json")

    signature = inspect.signature(handler)
    extra = inspect.Parameter(_REQUEST, inspect.Parameter.KEYWORD_ONLY, annotation=Request)
    run.__signature__ = signature.replace(parameters=[*signature.parameters.values(), extra])  # type: ignore[attr-defined]
    HEAVY_ROUTES.add(run)
    return run


#: Every ``heavy_route`` handler: their paths are the heavy lane's (``servebound.web.app.lane``).
HEAVY_ROUTES: set[Callable[..., Any]] = set()


def _keyed(value: Any) -> Any:
    """A route argument as part of a cache key: a dict (the declared inputs) by its sorted items."""
    return sorted(value.items()) if isinstance(value, dict) else value
