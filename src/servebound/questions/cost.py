"""`servebound cost`: the cost curve over batch for one (hardware, model, workload), priced.

Orchestration over the core (decode for b_mem, b* and the balance batch; the cost curve; prefill for
input tokens) and the pricing edge; on a system, ``questions.system_cost``. The view is
``views.cost_view.cost_json``. The same record serves the CLI, /api/cost and the pair pages.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from servebound.core.advice import Note, Setting
from servebound.core.cost import CostCurve, batch_grid, cost_curve, usd_per_mtok
from servebound.core.decode import DecodeResult, decode
from servebound.core.fields import ResultRecord
from servebound.core.hardware import Hardware
from servebound.core.model import ModelAdapter
from servebound.core.prefill import PrefillResult, prefill
from servebound.core.workload import MAX_BATCH, Workload
from servebound.errors import InputError
from servebound.inputs.pricing import OwnedInputs, ResolvedPrice, catalog_price, resolve_price
from servebound.inputs.scenario import Scenario, resolve_scenario
from servebound.inputs.workload import WorkloadInputs
from servebound.questions.system_cost import LayoutCost, layout_cost

#: The prompt length whose input tokens are priced unless told otherwise.
DEFAULT_COST_PROMPT_TOKENS = 8192


def parse_batches(text: str | None) -> list[int] | None:
    """``1,8,64`` -> [1, 8, 64]; a bad entry is an error naming the flag."""
    if text is None:
        return None
    out: list[int] = []
    for part in text.split(","):
        part = part.strip()
        if not part.isdigit():
            raise InputError("batches", f"give whole numbers separated by commas, e.g. 1,8,64 (got {part!r})")
        out.append(int(part))
    return out


#: Batches on the default log grid (b* and the balance batch are added).
GRID_POINTS = 24
MAX_GIVEN_BATCHES = 200


@dataclass(frozen=True)
class Trade:
    """What paying more buys: between a fast (small) and a slow (economical) batch, the per-session
    speed ratio and the price ratio per output token."""

    fast_batch: int
    slow_batch: int
    speed_ratio: float
    price_ratio: float


@dataclass(frozen=True, repr=False)
class CostReport(ResultRecord):
    """The priced cost curve of one (hardware, model, workload): ``servebound cost``."""

    __repr_fields__ = ("usd_per_hour", "usd_per_mtok_input")

    hardware: Hardware
    model: ModelAdapter
    workload: Workload
    price: ResolvedPrice
    decode: DecodeResult
    curve: CostCurve | None
    prompt_tokens: int
    prefill: PrefillResult | None
    usd_per_mtok_input: float | None
    input_note: str | None
    trade: Trade | None
    notes: tuple[str, ...]

    @property
    def usd_per_hour(self) -> float:
        return self.price.usd_per_hour


def _given_batches(batches: list[int]) -> list[int]:
    if not batches:
        raise InputError(
            "batches", Note.of("give at least one batch (e.g. ", Setting("batches", "1,8,64"), ")")
        )
    if len(batches) > MAX_GIVEN_BATCHES:
        raise InputError("batches", f"at most {MAX_GIVEN_BATCHES} batches (got {len(batches)})")
    for b in batches:
        if isinstance(b, bool) or not isinstance(b, int) or b < 1:
            raise InputError("batches", f"each batch must be a whole number >= 1 (got {b!r})")
        if b > MAX_BATCH:
            raise InputError("batches", f"{b:.3g} is beyond any real batch; at most {MAX_BATCH:,}")
    return sorted(set(batches))


def cost_report(
    hardware: Hardware,
    model: ModelAdapter,
    workload: Workload,
    price: ResolvedPrice,
    *,
    batches: list[int] | None = None,
    prompt_tokens: int = DEFAULT_COST_PROMPT_TOKENS,
) -> CostReport:
    """The priced cost curve: points over batches (given, or a log grid 1..b_mem plus b* and the
    balance batch), input tokens priced at the prefill ceiling for ``prompt_tokens`` (largest fitting
    batch, one-shot), the fast/slow trade between batch 1 and b*, and the floors."""
    result = decode(hardware, model, workload)
    notes: list[str] = []
    if batches is not None:
        grid = _given_batches(batches)
    else:
        grid = [
            int(b)
            for b in batch_grid(result.batch_mem or 0, GRID_POINTS, (result.batch_star, result.balance_batch))
        ]
    if not grid:
        notes.append(f"No batch fits in memory ({result.verdict.value}): nothing to price.")
    curve = cost_curve(hardware, model, workload, grid, price.usd_per_hour) if grid else None
    if curve is not None and result.batch_mem is not None and grid[-1] > result.batch_mem:
        notes.append(
            f"Batches above b_mem = {result.batch_mem:,} do not fit in memory (marked 'does not fit'); "
            "priced as asked."
        )

    usable = min(prompt_tokens, model.context_limit_tokens or prompt_tokens, workload.alloc_context_tokens)
    pf: PrefillResult | None = None
    input_cost: float | None = None
    input_note: str | None = None
    if model.prefill is None:
        input_note = "input tokens not priced: the model has no [prefill] fields"
    elif not result.fits:
        input_note = "input tokens not priced: no session fits"
    else:
        pf = prefill(hardware, model, usable, workload=workload, batch="max")
        input_cost = float(usd_per_mtok(price.usd_per_hour, pf.time_s, pf.batch * pf.prompt_tokens))
        notes_in = []
        if usable < prompt_tokens:
            notes_in.append(f"prompt capped at {usable:,} tokens (the model's context or the alloc context)")
        if pf.compute_note:
            notes_in.append(f"prefill {pf.compute_note}")
        input_note = "; ".join(notes_in) or None

    trade: Trade | None = None
    star = result.batch_star
    if star is not None and star > 1:
        both = cost_curve(hardware, model, workload, [1, star], price.usd_per_hour)
        r = both.steps.per_session_tok_s
        c = both.usd_per_mtok_output
        trade = Trade(1, star, float(r[0] / r[1]), float(c[0] / c[1]))
    return CostReport(
        hardware=hardware,
        model=model,
        workload=workload,
        price=price,
        decode=result,
        curve=curve,
        prompt_tokens=usable,
        prefill=pf,
        usd_per_mtok_input=input_cost,
        input_note=input_note,
        trade=trade,
        notes=tuple(notes),
    )


def cost(
    hardware: str | Hardware,
    model: str | ModelAdapter,
    workload: Workload | WorkloadInputs | None = None,
    *,
    usd_per_hour: float | None = None,
    pricing: str = "auto",
    owned: OwnedInputs | None = None,
    batches: list[int] | None = None,
    prompt_tokens: int | None = None,
    kv_precision: str | None = None,
    **workload_keywords: Any,
) -> CostReport | LayoutCost:
    """The cost curve over batch, as ``servebound cost`` (priced from the catalog row, or
    ``usd_per_hour`` for the whole system; ``pricing`` auto, rental or owned). On a system, over the
    micro-batch of its layout (``layout="tp=8"``, else the best valid one)."""
    scenario = resolve_scenario(
        workload, hardware=hardware, model=model, kv_precision=kv_precision, **workload_keywords
    )
    return cost_answer(
        scenario,
        hardware,
        usd_per_hour=usd_per_hour,
        pricing=pricing,
        owned=owned,
        batches=batches,
        prompt_tokens=prompt_tokens,
    )


def cost_answer(
    scenario: Scenario,
    price_ref: str | Hardware,
    *,
    usd_per_hour: float | None = None,
    pricing: str = "auto",
    owned: OwnedInputs | None = None,
    batches: list[int] | None = None,
    prompt_tokens: int | None = None,
) -> CostReport | LayoutCost:
    """What `servebound cost`, ``cost()`` and /api/cost answer for a scenario: priced from ``price_ref``'s
    catalog row (or ``usd_per_hour``); on a system, over the micro-batch of the scenario's layout."""
    hw = scenario.hardware
    price = resolve_price(
        hw, catalog_price(price_ref), usd_per_hour=usd_per_hour, pricing=pricing, owned=owned
    )
    if scenario.layout is not None:  # a system prices the tokens of the layout it answers at
        return layout_cost(scenario.layout, scenario.model, scenario.workload, price, batches)
    prompt = DEFAULT_COST_PROMPT_TOKENS if prompt_tokens is None else prompt_tokens
    return cost_report(hw, scenario.model, scenario.workload, price, batches=batches, prompt_tokens=prompt)
