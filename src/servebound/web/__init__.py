"""The web site and JSON API: server-rendered pages, markdown mirrors, machine files, static export.

from servebound.web.app.server import create_app, serve
from servebound.web.export.build import build_site
app = create_app()                      # FastAPI app over the packaged catalogs
report = build_site(Path("site"))       # the same site as static files

By job: ``app`` (the FastAPI app and its HTTP layers), ``routes`` (the handlers), ``pages`` (what the
pages show and how each is built), ``figures`` (server-drawn charts and formulas), ``export`` (the
static copy), with the packaged ``templates``, ``static``, ``content`` and ``examples``.
"""
