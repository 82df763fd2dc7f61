"""Strict JSON for everything the project prints or serves: a non-finite float (NaN, an infinite
ceiling) becomes null (the function lives with the core's result records, which use it too)."""

from __future__ import annotations

from servebound.core.fields import clean_json as clean_json
