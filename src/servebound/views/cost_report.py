"""`servebound cost`: the cost curve over batch for one (hardware, model, workload), priced.

Orchestration over the core (decode for b_mem, b* and the balance batch; the cost curve; prefill for
input tokens) and the pricing edge; the view is :func:`cost_json`. The same object serves the CLI,
/api/cost and the pair pages.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from servebound.core.advice import Note, Setting
from servebound.core.cost import CostCurve, batch_grid, cost_curve, usd_per_mtok
from servebound.core.decode import DecodeResult, decode
from servebound.core.fields import ResultRecord, json_view
from servebound.core.hardware import Hardware
from servebound.core.model import ModelAdapter
from servebound.core.prefill import PrefillResult, prefill
from servebound.core.workload import MAX_BATCH, Workload
from servebound.errors import InputError
from servebound.inputs.pricing import OwnedInputs, ResolvedPrice, catalog_price, resolve_price
from servebound.inputs.scenario import Scenario, resolve_scenario
from servebound.inputs.workload import WorkloadInputs
from servebound.views.notes import decode_notes, notes_json
from servebound.views.report import hardware_json, workload_assumptions
from servebound.views.system_cost import LayoutCost, layout_cost

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
        r = both.steps.per_session_tok_per_s
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


def cost_notes(report: CostReport) -> list[Note]:
    """The cost report's notes, then decode's: records each surface spells its own way."""
    return [*(Note((text,)) for text in report.notes), *decode_notes(report.decode)]


def cost_json(report: CostReport) -> dict[str, Any]:
    """The contract's `servebound cost --json` object, plus our own extra fields."""
    r = report
    points: list[dict[str, Any]] = []
    curve = r.curve
    if curve is not None:
        steps = curve.steps
        compute = steps.compute_time_s
        for i, b in enumerate(steps.batch):
            bound = "compute" if compute is not None and compute[i] > steps.memory_time_s[i] else "memory"
            points.append(
                {
                    "batch": int(b),
                    "step_time_s": float(steps.step_time_s[i]),
                    "tok_s": float(steps.tok_per_s[i]),
                    "per_session_tok_s": float(steps.per_session_tok_per_s[i]),
                    "bound_by": bound,
                    "usd_per_mtok_output": float(curve.usd_per_mtok_output[i]),
                    # a batch past b_mem is priced as asked, marked: its sessions' caches do not fit
                    "fits_in_memory": r.decode.batch_mem is not None and int(b) <= r.decode.batch_mem,
                }
            )
    assumptions = workload_assumptions(
        r.workload, hardware=r.hardware, model=r.model, compute=r.decode.compute
    )
    assumptions.update(r.price.assumptions)
    assumptions["prompt_tokens"] = r.prompt_tokens
    assumptions["input_pricing"] = (
        "prefill ceiling at the prompt length, largest fitting batch, one-shot: p t_pf / (b L)"
    )
    assumptions["cost_per_token"] = "p t(b) / (b rho): a step costs the same whatever the batch"
    d = r.decode
    return {
        "hardware": hardware_json(r.hardware),
        "model": {"id": r.model.id, "name": r.model.name},
        "verdict": d.verdict.value,
        "points": points,
        "balance_batch": d.balance_batch,
        "batch_star": d.batch_star,
        "batch_mem": d.batch_mem,
        "usd_per_hour": r.price.usd_per_hour,
        "price_basis": r.price.basis,
        "price_source": r.price.source,
        "prompt_tokens": r.prompt_tokens,
        "usd_per_mtok_input": r.usd_per_mtok_input,
        "input_tok_s": None if r.prefill is None else r.prefill.tok_per_s,
        "input_note": r.input_note,
        "trade": None if r.trade is None else asdict(r.trade),
        "cost_floor": None
        if curve is None
        else {
            "usd_per_mtok": curve.floor_usd_per_mtok,
            "kv_s_per_token": curve.floor_kv_s_per_token,
            "compute_s_per_token": curve.floor_compute_s_per_token,
        },
        "latency_floor": None
        if curve is None
        else {
            "step_time_s": curve.latency_floor_s,
            "per_session_tok_s": 1.0 / curve.latency_floor_s if curve.latency_floor_s > 0 else None,
        },
        **notes_json(cost_notes(r)),
        "assumptions": assumptions,
    }


def fmt_money(value: float) -> str:
    """A USD figure: four significant digits below 1,000, whole dollars above."""
    return f"{value:,.4g}" if value < 1000 else f"{value:,.0f}"


def cost_summary(data: dict[str, Any]) -> list[str]:
    """The cost curve's findings as sentences, from its JSON object (``cost_json``): the CLI prints them
    as a list under its table, the pair page under its figures (one wording for both)."""
    lines = [
        f"b* = {data['batch_star'] or '-'}, balance batch = {data['balance_batch'] or 'none within b_mem'}, "
        f"b_mem = {data['batch_mem'] or '-'}."
    ]
    if data["usd_per_mtok_input"] is not None:
        lines.append(
            f"Input tokens: {fmt_money(data['usd_per_mtok_input'])} USD per million at the prefill ceiling for "
            f"{data['prompt_tokens']:,}-token prompts ({data['input_tok_s']:,.0f} tok/s)."
        )
    if data["input_note"]:
        lines.append(f"Input: {data['input_note']}.")
    if data["trade"]:
        t = data["trade"]
        lines.append(
            f"Fast against slow: batch {t['fast_batch']} runs {t['speed_ratio']:,.2f}x faster per session than "
            f"b* = {t['slow_batch']:,}, for {t['price_ratio']:,.2f}x the price per token."
        )
    if data["cost_floor"]:
        lines.append(
            f"Cost floor: {fmt_money(data['cost_floor']['usd_per_mtok'])} USD per million tokens (the KV read and "
            "compute of each token, which no batch amortizes)."
        )
    if data["latency_floor"]:
        lines.append(
            f"Latency floor: {data['latency_floor']['step_time_s'] * 1e3:,.3f} ms per step (the weight fetch "
            "W_batch(1) / R): no price buys a faster step on this row."
        )
    return lines


json_view(CostReport, cost_json)


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
