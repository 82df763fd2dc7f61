"""Ranking and fit rows as each surface writes them: the JSON of `servebound rank`, `/api/rank` and
`servebound fit`, and the words a table says about the engines its formats were kept for."""

from __future__ import annotations

from typing import Any

from servebound.core.decode import DecodeResult
from servebound.core.fields import documented_json
from servebound.questions.fit import FitRow
from servebound.questions.rank import RankRow


def said_engines(engines: tuple[str, ...]) -> str:
    """How a table names the engines its formats were kept for."""
    if not engines:
        return "any engine of the table"
    return " or ".join("llama.cpp (and Ollama, LM Studio)" if e == "llama.cpp" else e for e in engines)


def fit_row_json(row: FitRow) -> dict[str, Any]:
    """One row of `servebound fit --json` (its band as decode's: ``expected``, ``expected_from``)."""
    d = row.decode
    return {
        "model": {"id": row.profile.base_id, "name": row.profile.name},
        "profile": row.profile.id,
        "weight_format": row.profile.weight_format,
        "engine": row.engine,
        "total_params": row.profile.total_params,
        "resident_gb": row.profile.adapter.weights.resident / 1e9,
        "single_session_tok_s": d.single_session_tok_s,
        "aggregate_tok_s": d.aggregate_tok_s,
        "batch_star": d.batch_star,
        "expected": None if d.expected is None else documented_json(d.expected),
        "expected_from": None if d.expected_from is None else documented_json(d.expected_from),
    }


def rank_row_json(row: RankRow) -> dict[str, Any]:
    """One ranking row as JSON: the same fields from `servebound rank --json` and `/api/rank`."""
    d = row.decode
    return {
        "hardware": {"id": row.hardware.id, "name": row.hardware.name},
        "model": {"id": row.model.id, "name": row.model.name},
        "resident_gb": row.model.weights.resident / 1e9,
        "verdict": d.verdict.value,
        "single_session_tok_s": d.single_session_tok_s,
        "aggregate_tok_s": d.aggregate_tok_s,
        "per_session_tok_s": d.per_session_tok_s,
        "batch_star": d.batch_star,
        "batch_mem": d.batch_mem,
        "overhead_gb": d.workload.overhead_bytes / 1e9,
        "alloc_context_tokens": d.workload.alloc_context_tokens,
        "read_context_tokens": d.workload.read_context_tokens,
        "prefill_prompt_tokens": None if row.prefill is None else row.prefill.prompt_tokens,
        "format_support": d.format_support.value,
        "format_support_why": d.format_support_why,
        "layout": _layout_label(d),
        "expected": None if d.expected is None else documented_json(d.expected),
        "expected_aggregate": None if d.expected_aggregate is None else documented_json(d.expected_aggregate),
        "expected_from": None if d.expected_from is None else documented_json(d.expected_from),
        **documented_json(row),  # the row's own fields (RankRow's documentation): ttft_s, prices, class
    }


def _layout_label(result: DecodeResult) -> dict[str, str] | None:
    """On a system, the layout its row answers at (``{label, source}``); None on one device."""
    choice = getattr(result, "layout", None)  # a system's answer (questions.system_decode)
    return None if choice is None else {"label": choice.label, "source": choice.source}
