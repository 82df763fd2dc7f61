"""Bounds every result-file reader applies to the records it reads."""

from __future__ import annotations

#: The most tokens a result file's prompt or generation may count (a billion: past any model's context).
MAX_RECORD_TOKENS = 10**9
