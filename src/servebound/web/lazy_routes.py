"""The JSON API's routers, imported on first use: the first ``/api/...`` request or the first schema.

Importing them is most of what the server's start would spend on its own modules: every API route's
query parameters and typed answers become pydantic validators as the route is declared. A server is
asked for its home page first, so ``create_app`` puts one :class:`LazyRoutes` where those routers go.
The first request under ``/api/`` (or the first ``app.openapi()``: /openapi.json, /api) imports
them and includes them in its place, in the same order, so that from then on the app's routes are
exactly what an eager ``include_router`` makes (the schema, the 404s and the strict-parameter 400s
included); that first request is answered through the routers just included.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any

from fastapi import APIRouter, FastAPI
from starlette.routing import BaseRoute, Match, NoMatchFound
from starlette.types import Receive, Scope, Send

#: The scope key that carries the route an unloaded placeholder matched to its ``handle``.
_MATCHED = "servebound.lazy_route"


class LazyRoutes(BaseRoute):
    """A place in ``app.router.routes`` for routers imported on first use (``routers()`` imports them)."""

    def __init__(self, app: FastAPI, prefix: str, routers: Callable[[], Sequence[APIRouter]]) -> None:
        self.app = app
        self.prefix = prefix
        self._routers = routers
        self._lock = threading.Lock()
        self._included: list[BaseRoute] | None = None
        self._openapi = app.openapi

        def openapi() -> dict[str, Any]:
            self.load()
            return self._openapi()

        app.openapi = openapi  # type: ignore[method-assign]

    def load(self) -> list[BaseRoute]:
        """Import and include the routers (once) in this placeholder's place; the routes included."""
        with self._lock:
            if self._included is None:
                routes = self.app.router.routes
                before = len(routes)
                for router in self._routers():
                    self.app.include_router(router)
                included = routes[before:]
                del routes[before:]
                at = routes.index(self) if self in routes else len(routes)
                routes[at : at + 1] = included
                self.app.openapi_schema = None  # a schema built before the routers came is rebuilt
                self._included = included
            return self._included

    def matches(self, scope: Scope) -> tuple[Match, Scope]:
        path = scope.get("path", "")
        if scope.get("type") != "http" or not path.startswith(self.prefix):
            return Match.NONE, {}
        partial: tuple[Match, Scope] = (Match.NONE, {})
        for route in self.load():
            match, child = route.matches(scope)
            if match == Match.FULL:
                return match, {**child, _MATCHED: route}
            if match == Match.PARTIAL and partial[0] == Match.NONE:
                partial = (match, {**child, _MATCHED: route})
        return partial

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        route: BaseRoute = scope.pop(_MATCHED)
        await route.handle(scope, receive, send)

    def url_path_for(self, name: str, /, **path_params: Any) -> Any:
        for route in self.load():
            try:
                return route.url_path_for(name, **path_params)
            except NoMatchFound:
                pass
        raise NoMatchFound(name, path_params)


def api_routers() -> list[APIRouter]:
    """The JSON API's routers, in the order the app includes them."""
    from servebound.web.routes import api, economics

    return [api.router, economics.router]
