"""The site's routes as module-level handlers, one module per job: ``pages`` (HTML pages and their
markdown mirrors), ``machine`` (robots.txt, llms.txt, llms-full.txt, sitemap.xml) and ``api`` (the
JSON API). Each handler receives the app's :class:`servebound.web.app.state.WebState` as a dependency.

Each module declares its routes on a :class:`Routes` table, which ``create_app`` adds to the app."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from fastapi import FastAPI
from fastapi.responses import Response
from fastapi.routing import APIRoute

Handler = TypeVar("Handler", bound=Callable[..., Any])


class Routes:
    """A module's GET routes as declared: path, handler and FastAPI's route options, made into routes
    on the app by :meth:`install`, as ``app.get`` makes them.

    FastAPI analyses a route's parameters when it makes the route. An ``APIRouter`` makes its routes
    where they are declared, and an app that includes it makes them again, with the app's settings,
    on the first request that reaches the router (the parameters analysed twice: tens of milliseconds
    of a server's first ``/api/`` answer). Made on the app itself, each route is analysed once, in
    ``create_app``, with the app's dependency overrides, body limit and OpenAPI document as before.
    ``route_class``, ``response_class`` and ``include_in_schema`` apply to every route of the table,
    as an ``APIRouter``'s ``route_class``, ``default_response_class`` and ``include_in_schema`` do."""

    def __init__(
        self,
        *,
        route_class: type[APIRoute] = APIRoute,
        response_class: type[Response] | None = None,
        include_in_schema: bool = True,
    ) -> None:
        self.route_class = route_class
        self.response_class = response_class
        self.include_in_schema = include_in_schema
        self.declared: list[tuple[str, Callable[..., Any], dict[str, Any]]] = []

    def get(self, path: str, **options: Any) -> Callable[[Handler], Handler]:
        """Declare ``handler`` as the GET route of ``path`` (``options``: ``APIRouter.get``'s)."""

        def declare(handler: Handler) -> Handler:
            self.declared.append((path, handler, options))
            return handler

        return declare

    def install(self, app: FastAPI) -> None:
        """Make every declared route on ``app``, in the order declared."""
        for path, handler, options in self.declared:
            settings = dict(options)
            settings["include_in_schema"] = self.include_in_schema and settings.get("include_in_schema", True)
            if self.response_class is not None and "response_class" not in settings:
                settings["response_class"] = self.response_class
            app.router.add_api_route(
                path, handler, methods=["GET"], route_class_override=self.route_class, **settings
            )
