"""The served site: HTML pages, their markdown mirrors, the machine files and the JSON API.

``create_app()`` builds a FastAPI app over the packaged catalogs (tests inject their own lists) and
adds the routes of ``servebound.web.routes`` (pages, machine files, the JSON API, the API reference)
to the app itself, all of them at once; the handlers receive the site through ``app.state.web``
(:class:`servebound.web.app.state.WebState`). ``serve()`` imports the rest of what a request can reach
once the server listens (:func:`import_served`), so replacing or removing the installed package under a
running server (a reinstall, an upgrade) leaves every page and API route answering.
Every 4xx, from any route, answers ``{"error": {"status", "field", "message"}}`` on ``/api/`` and a
readable HTML page elsewhere (plain text for ``.md`` and machine files).

llms-full.txt is the site's prose pages and the catalog's two tables as text, one markdown
document each (every hardware, model and pair page is one ``.md`` away, listed in llms.txt). Two
choices keep a crawler from waiting on it:

* the body is built once per app (its frontmatter carries site-relative paths; only the header
  names the base URL), nothing kept between starts;
* a background build: ``serve()`` starts that build in a daemon thread as the server starts (a first
  request starts it otherwise), and a request that arrives while it runs is answered at once: the
  header, then every document done so far, then each one as the build finishes it (the same bytes as
  the finished file, gzip-compressed on the way where asked). Once built, the file is encoded and
  compressed once and served from that copy. ``create_app()`` starts no thread until the first
  request (tests stay quick and deterministic). ``app.state.llms_full`` is the builder
  (:class:`servebound.web.app.state.FullTextBuilder`); ``bench/bench_web.py`` times it.
"""

from __future__ import annotations

import gc
import importlib
import logging
import pkgutil
import sys
import threading
import time
from collections.abc import Iterable
from typing import Any

from fastapi import FastAPI
from fastapi.responses import Response

import servebound
from servebound.catalog import names, snapshot
from servebound.catalog.engines import engine_table
from servebound.catalog.hosts import host_rows
from servebound.catalog.published import published_table
from servebound.errors import shown
from servebound.runs import reported_runs_text
from servebound.runs.band_table import fitted_groups
from servebound.web.app.errors import install_error_handlers
from servebound.web.app.http_layers import install_http_layers
from servebound.web.app.lane import HEAVY_PATHS, HeavyLane, Lane
from servebound.web.app.packaged import packaged_static
from servebound.web.app.state import FullTextBuilder, NotFoundError, WebState
from servebound.web.export import build as export
from servebound.web.pages import derivation, derivation_live, manual
from servebound.web.pages.renderer import Renderer
from servebound.web.pages.site import SiteData, default_site_data
from servebound.web.routes import api, economics, machine, pages, reference

DESCRIPTION = (
    "Serving ceilings for LLMs from first principles. The decode and prefill objects carry the same "
    "fields as `servebound decode --json` and `servebound prefill --json`. Every 4xx answers "
    '`{"error": {"status", "field", "message"}}`. Catalog content: CC BY 4.0.'
)


def _site_data(hardware: Iterable[Any] | None, models: Iterable[Any] | None) -> SiteData:
    if hardware is None and models is None:
        return default_site_data()
    default = default_site_data() if hardware is None else None
    return SiteData(
        default.hardware if default is not None else hardware or [],
        models or [],
        catalog=getattr(default, "_catalog", None),
    )


def create_app(
    hardware: Iterable[Any] | None = None,
    models: Iterable[Any] | None = None,
    *,
    base_url: str = "",
) -> FastAPI:
    """The site and its JSON API as a FastAPI app.

    ``hardware`` and ``models`` default to the packaged catalogs; tests pass their own records
    (catalog rows, ``Hardware`` or ``ModelAdapter`` objects). ``base_url`` prefixes absolute URLs in
    robots.txt, llms.txt and the sitemap (default ``http://localhost:8000``); the request's Host header
    never does. Templates, assets and the pages' packaged data are read here, once.
    """
    _preload()  # first: the site's records below are then cut from the snapshot read whole
    site = _site_data(hardware, models)
    renderer = Renderer(site, mode="server", base_url=base_url)

    full = FullTextBuilder(
        lambda: export.iter_markdown(renderer, site),
        lambda: len(export.full_text_documents(site)),
    )
    app = FastAPI(
        title="servebound",
        version="0.1.0",
        description=DESCRIPTION,
        docs_url=None,
        redoc_url=None,
        redirect_slashes=False,  # a missing slash is redirected relatively (``errors.slash_twin``)
    )
    app.state.web = WebState(site, renderer, full, base_url)
    app.state.site = site
    app.state.renderer = renderer
    app.state.llms_full = full
    _serve_static(app)
    install_error_handlers(app, busy_paths=HEAVY_PATHS)
    for module in (pages, machine, api, economics, reference):
        module.routes.install(app)  # on the app itself: each route analysed once (``web.routes.Routes``)
    install_http_layers(app)
    app.state.lane = Lane()
    app.add_middleware(HeavyLane, lane=app.state.lane)  # outermost: a refused request costs nothing more
    return app


def _serve_static(app: FastAPI) -> None:
    """``/static/NAME`` from the assets read at start (``packaged_static``), never from the disk."""
    assets = packaged_static()

    @app.get("/static/{name:path}", include_in_schema=False)
    def static(name: str) -> Response:
        if name not in assets:
            raise NotFoundError("static", f"no asset /static/{shown(name)}")
        data, media = assets[name]
        kind = (
            f"{media}; charset=utf-8" if media.startswith("text/") or media.endswith("javascript") else media
        )
        return Response(data, media_type=kind, headers={"Cache-Control": "public, max-age=3600"})


def _preload() -> None:
    """Read, once per process, every packaged file a page reads later (the derivation's text and its
    worked examples, the manual, the reported runs and the bands' fits, the host, engine and
    published-parameter tables, the catalog snapshot's rows and the names people type): a reinstall
    under a running server cannot fail a page. The derivation and the reported runs are read as text
    here and parsed on first use, or by :func:`import_served` once the server answers (their figures
    and checks are computed then, not at the start)."""
    derivation.source_text()
    for doc in manual.documents():  # the manual (docs/), its index read by documents()
        manual.source(doc.name)
    for name in derivation_live.EXAMPLE_MACHINES:
        derivation_live.example_machine(name)
    for name in derivation_live.EXAMPLE_MODELS:
        derivation_live.example_model(name)
    reported_runs_text()
    fitted_groups()  # the expected bands' fits: every decode and prefill reads its group's
    host_rows()
    published_table()
    engine_table()  # the engine table (format support, families): every decode reads it
    names.ollama_tags()  # the names people type: the Ollama table and the Hub ids
    names.hub_ids()
    for name in (snapshot.HARDWARE, snapshot.PROFILES, snapshot.AUDITS):
        snapshot.load(name)  # the catalog's rows, cut from memory from now on (never read again)


#: The GIL switch interval ``serve`` sets (CPython's default is 5 ms).
SWITCH_INTERVAL_S = 0.0005


def serve(host: str = "127.0.0.1", port: int = 8000, base_url: str | None = None) -> None:
    """Run the site with uvicorn on ``host:port`` (localhost by default); llms-full.txt is built in a
    background thread from the start (streamed as it is built to a request that comes meanwhile).
    ``base_url`` is where clients reach it (absolute URLs in robots.txt, llms.txt, the sitemap); default
    ``http://HOST:PORT`` (localhost for a wildcard host)."""

    import uvicorn

    # A heavy request (a page render, a ranking) holds the GIL for up to one switch interval at a time
    # while cheap requests wait for it: a shorter interval than CPython's 5 ms keeps their latency, and
    # so their share of the process, when both run (bench/bench_load.py measures it).
    sys.setswitchinterval(SWITCH_INTERVAL_S)
    if base_url is None:
        shown_host = "localhost" if host in ("0.0.0.0", "::", "") else host
        base_url = f"http://{f'[{shown_host}]' if ':' in shown_host else shown_host}:{port}"
    # The start builds tens of thousands of long-lived records (every profile's site model): the cyclic
    # collector would walk them again and again while they are made (a tenth of a second), and later
    # collections need not walk them at all (frozen).
    gc.disable()
    try:
        app = create_app(base_url=base_url.rstrip("/"))
    finally:
        gc.enable()
        gc.freeze()
    server = uvicorn.Server(uvicorn.Config(app, host=host, port=port, log_level="info"))
    # Once the server listens and has had IMPORT_AFTER_S to answer its first pages (so that neither
    # slows them): the modules a request can reach, then llms-full.txt's build (the module docstring).
    threading.Thread(target=_when_up, args=(server, app), name="served-start", daemon=True).start()
    server.run()


def _when_up(server: Any, app: FastAPI) -> None:
    while not server.started and not server.should_exit:
        time.sleep(0.01)
    time.sleep(IMPORT_AFTER_S)
    if server.should_exit:
        return
    count = import_served(app)
    logging.getLogger("uvicorn.error").info("Imported what it serves: %d modules and the API schema", count)
    app.state.llms_full.start()


#: Seconds from the server's start to its import of what it serves: its first pages (a person's browser
#: asks for the home page, its style sheet and scripts at once) do not share the process with it.
IMPORT_AFTER_S = 1.0

#: The parts of the package no request reaches: the command line.
NOT_SERVED = ("servebound.cli", "servebound.__main__")


def import_served(app: FastAPI) -> int:
    """Import every module of the package a request can reach (all but :data:`NOT_SERVED`), place the
    derivation's measured prefill run against its example files (they are read here, not at the start)
    and build the app's OpenAPI document; the number of modules. After this nothing a request needs is read from
    the installed files: a reinstall under the running server answers as before (the routes are all
    in the app from ``create_app``; templates, assets and data are read there too)."""
    count = 0
    for module in pkgutil.walk_packages(servebound.__path__, "servebound."):
        if not module.name.startswith(NOT_SERVED):
            importlib.import_module(module.name)
            count += 1
    derivation_live.measured_prefill_run()  # the GB10 run placed against the example files
    app.openapi()
    return count
