"""Rankings: which models a machine serves and how fast, which machines serve a model best.

Pure orchestration over the decode and prefill ceilings: records in, sorted rows out.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from servebound.core.decode import DecodeResult, Verdict, decode
from servebound.core.hardware import Hardware
from servebound.core.model import ModelAdapter
from servebound.core.prefill import PrefillResult, prefill
from servebound.core.workload import Workload
from servebound.errors import InputError

#: The prompt length whose first-token wait a ranking reports unless told otherwise.
DEFAULT_RANK_PROMPT_TOKENS = 8192


@dataclass(frozen=True)
class RankRow:
    """One (hardware, model) pair in a ranking: the decode result and, where it can be computed,
    the one-shot prefill wait for the stated prompt at batch 1."""

    hardware: Hardware
    model: ModelAdapter
    decode: DecodeResult
    prefill: PrefillResult | None
    price_usd: float | None = None

    @property
    def ttft_s(self) -> float | None:
        """t_pf,min for one prompt: the modeled wait for the first token."""
        return None if self.prefill is None else self.prefill.time_s

    @property
    def useful_tok_per_s(self) -> float:
        """The KV-aware aggregate at b*, 0 when no batch clears the floor."""
        return self.decode.aggregate_tok_per_s or 0.0

    @property
    def tok_per_s_per_kusd(self) -> float | None:
        """Useful aggregate tok/s per 1,000 USD of hardware, where a price is known."""
        if not self.price_usd:
            return None
        return self.useful_tok_per_s / (self.price_usd / 1000.0)


def _prefill_or_none(
    hw: Hardware, model: ModelAdapter, workload: Workload, prompt_tokens: int
) -> PrefillResult | None:
    if model.prefill is None:
        return None
    limit = min(model.context_limit_tokens or prompt_tokens, workload.alloc_context_tokens)
    try:
        return prefill(hw, model, min(prompt_tokens, limit), workload=workload)
    except InputError:
        return None


def _row(
    hw: Hardware, model: ModelAdapter, workload: Workload, prompt_tokens: int, price: float | None
) -> RankRow:
    result = decode(hw, model, workload)
    wait = _prefill_or_none(hw, model, workload, prompt_tokens) if result.fits else None
    return RankRow(hw, model, result, wait, price)


def _order(row: RankRow) -> tuple[int, float, float]:
    order = {Verdict.FLOOR_FIT: 0, Verdict.NO_FLOOR: 1, Verdict.NO_SESSION_FIT: 2, Verdict.NO_RESIDENT_FIT: 3}
    return (order[row.decode.verdict], -row.useful_tok_per_s, -(row.decode.single_session_tok_per_s or 0.0))


def rank_models(
    hardware: Hardware,
    models: Iterable[ModelAdapter],
    workload: Workload | None = None,
    *,
    prompt_tokens: int = DEFAULT_RANK_PROMPT_TOKENS,
) -> list[RankRow]:
    """Every model on one machine: those that serve usefully first, by useful aggregate, then single session."""
    workload = workload or Workload()
    rows = [
        RankRow(
            hardware, m, decode(hardware, m, workload), _prefill_or_none(hardware, m, workload, prompt_tokens)
        )
        for m in models
    ]
    return sorted(rows, key=_order)


def rank_hardware(
    model: ModelAdapter,
    machines: Iterable[tuple[Hardware, float | None]],
    workload: Workload | None = None,
    *,
    prompt_tokens: int = DEFAULT_RANK_PROMPT_TOKENS,
    per_dollar: bool = False,
) -> list[RankRow]:
    """Every machine (with its price, or None) for one model: by useful aggregate, or per dollar."""
    workload = workload or Workload()
    rows = [
        RankRow(
            hw,
            model,
            decode(hw, model, workload),
            _prefill_or_none(hw, model, workload, prompt_tokens),
            price,
        )
        for hw, price in machines
    ]
    if per_dollar:
        return sorted(
            rows, key=lambda r: (_order(r)[0], r.tok_per_s_per_kusd is None, -(r.tok_per_s_per_kusd or 0))
        )
    return sorted(rows, key=_order)


def rank_row_json(row: RankRow) -> dict[str, Any]:
    """One ranking row as JSON: the same fields from `servebound rank --json` and `/api/rank`."""
    d = row.decode
    return {
        "hardware": {"id": row.hardware.id, "name": row.hardware.name},
        "model": {"id": row.model.id, "name": row.model.name},
        "verdict": d.verdict.value,
        "single_session_tok_s": d.single_session_tok_per_s,
        "aggregate_tok_s": d.aggregate_tok_per_s,
        "per_session_tok_s": d.per_session_tok_per_s,
        "batch_star": d.batch_star,
        "batch_mem": d.batch_mem,
        "ttft_s": row.ttft_s,
        "prefill_prompt_tokens": None if row.prefill is None else row.prefill.prompt_tokens,
        "price_usd": row.price_usd,
        "tok_s_per_kusd": row.tok_per_s_per_kusd,
    }
