"""The web site and JSON API: server-rendered pages, markdown mirrors, machine files, static export.

from servebound.web.app import create_app, serve
from servebound.web.export import build_site
app = create_app()                      # FastAPI app over the packaged catalogs
report = build_site(Path("site"))       # the same site as static files
"""
