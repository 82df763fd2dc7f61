"""Strict JSON for everything the project prints or serves: a non-finite float (NaN, an infinite
ceiling) becomes null, so the CLI's --json, the API and the static export never write NaN or Infinity."""

from __future__ import annotations

import math
from typing import Any


def clean_json(value: Any) -> Any:
    """``value`` with every non-finite float replaced by None, through dicts, lists and tuples."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: clean_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [clean_json(v) for v in value]
    return value
