"""Rankings: which models a machine serves and how fast, which machines serve a model best.

Pure orchestration over the decode and prefill ceilings: records in, sorted rows out.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Literal

from servebound.api import default_workload
from servebound.core.decode import VERDICT_ORDER, DecodeResult, decode
from servebound.core.engines import FormatSupport, format_support
from servebound.core.hardware import Hardware
from servebound.core.model import ModelAdapter
from servebound.core.prefill import PrefillResult, prefill
from servebound.core.workload import Workload
from servebound.errors import InputError

#: The prompt length whose first-token wait a ranking reports unless told otherwise.
DEFAULT_RANK_PROMPT_TOKENS = 8192

#: Orders of a ranking. Rows that serve at the floor always come first, then the other verdicts; within
#: a verdict: ``size`` the largest model (W_resident) first, the question "what is the best model this
#: machine serves"; ``useful`` the highest useful aggregate; ``single`` the fastest single session;
#: ``ttft`` the shortest first-token wait; ``per-dollar`` the most useful tok/s per 1,000 USD.
RankSort = Literal["size", "useful", "single", "ttft", "per-dollar"]
RANK_SORTS: tuple[RankSort, ...] = ("size", "useful", "single", "ttft", "per-dollar")


@dataclass(frozen=True)
class RankRow:
    """One (hardware, model) pair in a ranking: the decode result and, where it can be computed,
    the one-shot prefill wait for the stated prompt at batch 1."""

    hardware: Hardware
    model: ModelAdapter
    decode: DecodeResult
    prefill: PrefillResult | None
    price_usd: float | None = None
    #: The prompt asked for; None where the caller did not say.
    prompt_tokens: int | None = None

    @property
    def prompt_beyond_context(self) -> bool:
        """The prompt asked for is longer than the model's context: no wait is reported for it."""
        limit = self.model.context_limit_tokens
        return self.prompt_tokens is not None and limit is not None and self.prompt_tokens > limit

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
    hw: Hardware, model: ModelAdapter, workload: Workload, prompt_tokens: int, fits: bool
) -> PrefillResult | None:
    """The wait for exactly ``prompt_tokens``, or None: where the pair does not fit there is no wait,
    and a prompt past the model's context (or the workload's allocation) is not shortened to fit."""
    if model.prefill is None or not fits:
        return None
    limit = min(model.context_limit_tokens or prompt_tokens, workload.alloc_context_tokens)
    if prompt_tokens > limit:
        return None
    try:
        return prefill(hw, model, prompt_tokens, workload=workload)
    except InputError:
        return None


def evaluate_row(
    hw: Hardware, model: ModelAdapter, workload: Workload, prompt_tokens: int, price: float | None
) -> RankRow:
    """One ranking row, computed: the decode result and the wait for ``prompt_tokens``."""
    result = decode(hw, model, workload)
    wait = _prefill_or_none(hw, model, workload, prompt_tokens, result.fits)
    return RankRow(hw, model, result, wait, price, prompt_tokens)


#: How a ranking evaluates one row: ``(hardware, model, workload, prompt_tokens, price) -> RankRow``.
#: The default computes it; a caller that ranks the same pairs many times (the static export's
#: hardware and model pages) passes one that keeps the rows it has computed.
RowFn = Callable[[Hardware, ModelAdapter, Workload, int, "float | None"], RankRow]


def _order(row: RankRow) -> tuple[int, float, float]:
    return (
        VERDICT_ORDER[row.decode.verdict],
        -row.useful_tok_per_s,
        -(row.decode.single_session_tok_per_s or 0.0),
    )


_SORT_KEYS: dict[str, Callable[[RankRow], tuple[Any, ...]]] = {
    "useful": _order,
    "size": lambda r: (VERDICT_ORDER[r.decode.verdict], -r.model.weights.resident, *_order(r)[1:]),
    "single": lambda r: (VERDICT_ORDER[r.decode.verdict], -(r.decode.single_session_tok_per_s or 0.0)),
    "ttft": lambda r: (VERDICT_ORDER[r.decode.verdict], r.ttft_s is None, r.ttft_s or 0.0),
    "per-dollar": lambda r: (
        VERDICT_ORDER[r.decode.verdict],
        r.tok_per_s_per_kusd is None,
        -(r.tok_per_s_per_kusd or 0.0),
    ),
}


def sort_rows(rows: Iterable[RankRow], sort: RankSort) -> list[RankRow]:
    """Rows in one of RANK_SORTS; the verdict (floor first) always leads."""
    if sort not in _SORT_KEYS:
        raise InputError("sort", f"unknown order {sort!r}; use one of {', '.join(RANK_SORTS)}")
    return sorted(rows, key=_SORT_KEYS[sort])


def rank_models(
    hardware: Hardware,
    models: Iterable[ModelAdapter],
    workload: Workload | None = None,
    *,
    prompt_tokens: int = DEFAULT_RANK_PROMPT_TOKENS,
    sort: RankSort = "size",
    runnable_only: bool = True,
    row: RowFn = evaluate_row,
) -> list[RankRow]:
    """Every model on one machine, those that serve at the floor first, in ``sort`` order (by default
    the largest model first: the best model the machine serves at the floor heads the list).

    ``row`` evaluates each row (:data:`RowFn`; by default :func:`evaluate_row`).
    ``runnable_only`` (the default) leaves out weight formats the device cannot run (``format_support``
    ``unsupported``: NVFP4 or MLX profiles on a GeForce 4090, say); every row says its support."""
    workload = workload or default_workload()
    kept = (m for m in models if not runnable_only or _runnable(hardware, m, workload))
    return sort_rows((row(hardware, m, workload, prompt_tokens, None) for m in kept), sort)


def _runnable(hardware: Hardware, model: ModelAdapter, workload: Workload) -> bool:
    support = format_support(hardware.id, model.weight_precision, workload.engine)[0]
    return support is not FormatSupport.UNSUPPORTED


def rank_hardware(
    model: ModelAdapter,
    machines: Iterable[tuple[Hardware, float | None]],
    workload: Workload | None = None,
    *,
    prompt_tokens: int = DEFAULT_RANK_PROMPT_TOKENS,
    per_dollar: bool = False,
    sort: RankSort | None = None,
    runnable_only: bool = True,
    row: RowFn = evaluate_row,
) -> list[RankRow]:
    """Every machine (with its price, or None) for one model: by useful aggregate, or per dollar
    (machines that cannot run the model's weight format left out unless ``runnable_only`` is False)."""
    workload = workload or default_workload()
    kept = ((hw, price) for hw, price in machines if not runnable_only or _runnable(hw, model, workload))
    rows = (row(hw, model, workload, prompt_tokens, price) for hw, price in kept)
    return sort_rows(rows, sort or ("per-dollar" if per_dollar else "useful"))


def rank_row_json(row: RankRow) -> dict[str, Any]:
    """One ranking row as JSON: the same fields from `servebound rank --json` and `/api/rank`."""
    d = row.decode
    return {
        "hardware": {"id": row.hardware.id, "name": row.hardware.name},
        "model": {"id": row.model.id, "name": row.model.name},
        "resident_gb": row.model.weights.resident / 1e9,
        "verdict": d.verdict.value,
        "single_session_tok_s": d.single_session_tok_per_s,
        "aggregate_tok_s": d.aggregate_tok_per_s,
        "per_session_tok_s": d.per_session_tok_per_s,
        "batch_star": d.batch_star,
        "batch_mem": d.batch_mem,
        "overhead_gb": d.workload.overhead_bytes / 1e9,
        "alloc_context_tokens": d.workload.alloc_context_tokens,
        "read_context_tokens": d.workload.read_context_tokens,
        "ttft_s": row.ttft_s,
        "prefill_prompt_tokens": None if row.prefill is None else row.prefill.prompt_tokens,
        "price_usd": row.price_usd,
        "tok_s_per_kusd": row.tok_per_s_per_kusd,
        "format_support": d.format_support.value,
        "format_support_why": d.format_support_why,
    }
