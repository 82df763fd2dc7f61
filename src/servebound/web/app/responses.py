"""The JSON API's response class: every answer of the API routes passes through ``clean_json`` as it
is rendered, so a non-finite float (an infinite ceiling, NaN) is served as null, never as NaN or
Infinity, without each route cleaning its own object. The body is written by pydantic's JSON writer,
as FastAPI writes a plain ``JSONResponse`` route's declared return type (floats as ``2.5e-6``, not
Python's ``2.5e-06``), so the bytes are those of a route that cleans its own object. Error responses
are built directly as ``JSONResponse`` (``servebound.web.app.errors``) and carry no floats."""

from __future__ import annotations

from typing import Any

from fastapi.responses import JSONResponse
from pydantic_core import to_json

from servebound.core.fields import clean_json


class StrictJSONResponse(JSONResponse):
    """A JSON response whose content has every non-finite float replaced by null."""

    def render(self, content: Any) -> bytes:
        return to_json(clean_json(content))
