"""Rankings: which models a machine serves and how fast, which machines serve a model best.

Pure orchestration over the decode and prefill ceilings: records in, sorted rows out. A row also carries
its machine's class (``CatalogHardware.hardware_group``), the devices its numbers add up, its price per
hour as a pair page's cost section takes it (``servebound.inputs.pricing.resolve_price`` on the row's
``[price]``: on-demand rental where the row has one, else the owned cost of its purchase price) and the
USD per million output tokens that price buys at b*: the CLI's table and JSON, /api/rank and the pages'
class tables all read these from the row.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from servebound.catalog.engines import FormatSupport, format_support
from servebound.catalog.hardware import get_hardware
from servebound.catalog.hardware_names import HARDWARE_CLASSES
from servebound.core.advice import Note
from servebound.core.cost import usd_per_mtok_at_rate
from servebound.core.decode import VERDICT_ORDER, DecodeResult
from servebound.core.fields import documented, documented_property
from servebound.core.hardware import Hardware
from servebound.core.model import ModelAdapter
from servebound.core.prefill import PrefillResult, prefill
from servebound.errors import InputError
from servebound.inputs.declared import AnyWorkload, stated
from servebound.inputs.pricing import resolve_price
from servebound.inputs.resolve import CPU_ONLY_ID, _looks_like_file, hardware_ref, resolve_hardware
from servebound.inputs.scenario import Scenario, default_workload, load_hardware, load_model, resolve_scenario
from servebound.questions.absent import NO_PREFILL_WHY, NO_WAIT_WHY, missing_decode
from servebound.questions.decode import decode_answer
from servebound.questions.prefill import prefill_answer

if TYPE_CHECKING:
    from servebound.catalog.hardware import CatalogHardware

#: The prompt length whose first-token wait a ranking reports unless told otherwise.
DEFAULT_RANK_PROMPT_TOKENS = 8192

#: Orders of a ranking. Rows that serve at the floor always come first, then the other verdicts; within
#: a verdict: ``size`` the largest model (W_resident) first, the question "what is the best model this
#: machine serves"; ``useful`` the highest useful aggregate; ``single`` the fastest single session;
#: ``ttft`` the shortest first-token wait; ``per-dollar`` the most useful tok/s per 1,000 USD.
RankSort = Literal["size", "useful", "single", "ttft", "per-dollar"]
RANK_SORTS: tuple[RankSort, ...] = ("size", "useful", "single", "ttft", "per-dollar")


@dataclass(frozen=True)
class Machine:
    """A machine as a ranking takes it: the core record, its purchase price and, from its catalog row,
    its class (one of HARDWARE_CLASSES; None for a bare record), the devices its numbers add up and
    its price per hour with the basis and source of that price (None where the row has none)."""

    hardware: Hardware
    price_usd: float | None = None
    hardware_group: str | None = None
    devices: int = 1
    usd_per_hour: float | None = None
    price_basis: str | None = None
    price_source: str | None = None

    @classmethod
    def of(cls, row: CatalogHardware) -> Machine:
        """A catalog row (or a site's row: a user's file carries no price)."""
        return cls(row.hardware, **_row_facts(row))


def _row_facts(row: CatalogHardware) -> dict[str, Any]:
    """A row's class, devices and price per hour, as plain values (the CLI caches them)."""
    facts: dict[str, Any] = {
        "price_usd": row.price_usd,
        "hardware_group": row.hardware_group,
        "devices": row.devices,
    }
    try:
        price = None if getattr(row, "user_file", False) else resolve_price(row.hardware, row.price)
    except InputError:  # no rental and no purchase price: the row is unpriced
        price = None
    if price is not None:
        facts.update(usd_per_hour=price.usd_per_hour, price_basis=price.basis, price_source=price.source)
    return facts


def machine(ref: str) -> Machine:
    """The machine a hardware reference names (a catalog id or alias, an NxID system, ``auto``, a
    hardware file): a catalog row with its class, devices and price, a file as class ``files``."""
    hw = resolve_hardware(ref)
    ref = hardware_ref(ref)
    if _looks_like_file(ref) or ref == CPU_ONLY_ID:  # a file, or this machine's CPU: no catalog row
        return Machine(hw, hardware_group="files")

    return Machine(hw, **_row_facts(get_hardware(ref)))


def _as_machine(
    entry: str | Machine | CatalogHardware | Hardware | tuple[Hardware, float | None],
) -> Machine:
    """A machine from any of its forms: an id or file (a catalog row brings its class and price), a
    record, or a record with its price."""
    if isinstance(entry, str):
        try:
            return Machine.of(get_hardware(entry))
        except InputError:
            return Machine(load_hardware(entry))  # a file or NxID; an unknown id's error names it
    if isinstance(entry, Machine):
        return entry
    if isinstance(entry, Hardware):
        return Machine(entry)
    if isinstance(entry, tuple):
        return Machine(*entry)
    return Machine.of(entry)


def check_hardware_group(value: str | None, field: str = "hardware_group") -> str | None:
    """A class filter's value (None: every class); InputError naming the choices for another."""
    if value is None or value in HARDWARE_CLASSES:
        return value
    raise InputError(field, f"unknown class {value!r}; use one of {', '.join(HARDWARE_CLASSES)}")


@dataclass(frozen=True)
class RankRow:
    """One (hardware, model) pair in a ranking: the decode result and, where it can be computed,
    the one-shot prefill wait for the stated prompt at batch 1, with the machine's class, device count
    and price per hour."""

    hardware: Hardware
    model: ModelAdapter
    decode: DecodeResult
    prefill: PrefillResult | None
    price_usd: float | None = documented(
        "the machine's purchase price from the catalog (all its devices; null where unknown)",
        "USD",
        default=None,
    )
    prompt_tokens: int | None = documented(
        "the prompt asked for (null where the caller did not say)", "tokens", json=None, default=None
    )
    hardware_group: str | None = documented(
        "the machine's class: consumer, workstation, apple, datacenter (one device), systems (several "
        "devices) or files (a hardware file); null for a bare record",
        default=None,
    )
    devices: int = documented("the devices the machine's numbers add up (1 for one device)", default=1)
    usd_per_hour: float | None = documented(
        "the machine's price per hour as `cost` takes it by default: on-demand rental where the catalog "
        "has one, else the owned cost of its purchase price (null where it has neither)",
        "USD/h",
        default=None,
    )
    price_basis: str | None = documented("where usd_per_hour comes from: rental or owned", default=None)
    price_source: str | None = documented("the source of usd_per_hour, as `cost` states it", default=None)
    #: Why ``prefill`` is None (None where there is a wait): the row's reason, as its pages say it.
    prefill_why: Note | None = None

    def missing(self) -> dict[str, Note]:
        """Why each absent figure of the row is absent, by its JSON name (``single_session_tok_s``,
        ``aggregate_tok_s``, ``batch_star``, ``ttft_s``): the words a table's "n/a" carries."""
        found = missing_decode(self.decode)
        if self.prefill is None:
            found["ttft_s"] = self.prefill_why or Note.of("no wait was computed")
        return found

    @property
    def prompt_beyond_context(self) -> bool:
        """The prompt asked for is longer than the model's context: no wait is reported for it."""
        limit = self.model.context_limit_tokens
        return self.prompt_tokens is not None and limit is not None and self.prompt_tokens > limit

    @documented_property(
        "t_pf,min: the one-shot wait for the first token of prefill_prompt_tokens at batch 1 (null where "
        "the pair does not fit or the prompt is past the context)",
        "s",
    )
    def ttft_s(self) -> float | None:
        return None if self.prefill is None else self.prefill.time_s

    @property
    def useful_tok_per_s(self) -> float:
        """The KV-aware aggregate at b*, 0 when no batch clears the floor."""
        return self.decode.aggregate_tok_s or 0.0

    @documented_property(
        "useful aggregate per 1,000 USD of purchase price (null where no price is known)",
        "tok/s per kUSD",
    )
    def tok_s_per_kusd(self) -> float | None:
        if not self.price_usd:
            return None
        return self.useful_tok_per_s / (self.price_usd / 1000.0)

    @documented_property(
        "aggregate_tok_s over devices: the useful aggregate at b* per device (null where no batch clears "
        "the floor)",
        "tok/s",
    )
    def aggregate_tok_s_per_device(self) -> float | None:
        aggregate = self.decode.aggregate_tok_s
        return aggregate / self.devices if aggregate else None

    @documented_property(
        "usd_per_hour over the useful aggregate at b*: USD per million output tokens (null where the "
        "machine has no price or no batch clears the floor)",
        "USD/Mtok",
    )
    def usd_per_mtok_output(self) -> float | None:
        aggregate = self.decode.aggregate_tok_s
        if self.usd_per_hour is None or not aggregate:
            return None
        return usd_per_mtok_at_rate(self.usd_per_hour, aggregate)


def _prefill_or_none(
    scenario: Scenario, prompt_tokens: int, fits: bool
) -> tuple[PrefillResult | None, Note | None]:
    """The wait for exactly ``prompt_tokens``, or None and why: where the pair does not fit there is no
    wait, and a prompt past the model's context (or the workload's allocation) is not shortened to fit
    (the pair page, which shortens it, reports the wait of the shorter prompt). A system waits on a
    replica of its layout, as prefill answers it."""
    model, workload = scenario.model, scenario.workload
    if model.prefill is None:
        return None, Note.of(NO_PREFILL_WHY)
    if not fits:
        return None, Note.of(NO_WAIT_WHY)
    limit = model.context_limit_tokens
    if limit is not None and prompt_tokens > limit:
        return None, Note.of(
            f"the {prompt_tokens:,}-token prompt is longer than the model's context of {limit:,} tokens "
            f"(its pair page reports the wait for a {min(limit, workload.alloc_context_tokens):,}-token prompt)"
        )
    if prompt_tokens > workload.alloc_context_tokens:
        return None, Note.of(
            f"the {prompt_tokens:,}-token prompt is longer than the {workload.alloc_context_tokens:,} "
            "tokens reserved per session (its pair page reports the wait for a "
            f"{workload.alloc_context_tokens:,}-token prompt)"
        )
    try:
        if scenario.layout is not None:
            return prefill_answer(scenario, prompt_tokens)[0], None
        return prefill(scenario.hardware, model, prompt_tokens, workload=workload), None
    except InputError as exc:
        return None, exc.note


def evaluate_row(one: Machine, model: ModelAdapter, workload: AnyWorkload, prompt_tokens: int) -> RankRow:
    """One ranking row, computed: the decode result and the wait for ``prompt_tokens`` on the machine,
    with the machine's class, devices and prices."""
    hw = one.hardware
    # the row's O, the model's cap; a system (by its catalog id) answers at its layout, as decode does
    scenario = resolve_scenario(workload, hardware=hw.id if one.devices > 1 else hw, model=model)
    result = decode_answer(scenario)[0]  # with the band beside the row's ceilings, as decode gives it
    wait, why = _prefill_or_none(scenario, prompt_tokens, result.fits)
    return RankRow(hw, model, result, wait, prompt_tokens=prompt_tokens, prefill_why=why, **_facts(one))


#: A machine's fields a ranking row carries (all but its core record).
_FACTS = tuple(f.name for f in dataclasses.fields(Machine) if f.name != "hardware")


def _facts(one: Machine | RankRow) -> dict[str, Any]:
    return {name: getattr(one, name) for name in _FACTS}


def with_machine(row: RankRow, one: Machine) -> RankRow:
    """The row with ``one``'s class, devices and prices (itself where they are already its own)."""
    facts = _facts(one)
    return row if row.hardware == one.hardware and _facts(row) == facts else dataclasses.replace(row, **facts)


#: How a ranking evaluates one row: ``(machine, model, workload, prompt_tokens) -> RankRow``. The
#: default computes it; a caller that ranks the same pairs many times (the static export's hardware and
#: model pages) passes one that keeps the rows it has computed (and gives each the caller's machine:
#: ``with_machine``).
RowFn = Callable[[Machine, ModelAdapter, AnyWorkload, int], RankRow]


def _useful(row: RankRow) -> tuple[float, float]:
    return -row.useful_tok_per_s, -(row.decode.single_session_tok_s or 0.0)


#: Each order's key within a verdict (the verdict, floor first, always leads).
_SORT_KEYS: dict[str, Callable[[RankRow], tuple[Any, ...]]] = {
    "useful": _useful,
    "size": lambda r: (-r.model.weights.resident, *_useful(r)),
    "single": lambda r: (-(r.decode.single_session_tok_s or 0.0),),
    "ttft": lambda r: (r.ttft_s is None, r.ttft_s or 0.0),
    "per-dollar": lambda r: (r.tok_s_per_kusd is None, -(r.tok_s_per_kusd or 0.0)),
}


def sort_rows(rows: Iterable[RankRow], sort: RankSort) -> list[RankRow]:
    """Rows in one of RANK_SORTS; the verdict (floor first) always leads."""
    if sort not in _SORT_KEYS:
        raise InputError("sort", f"unknown order {sort!r}; use one of {', '.join(RANK_SORTS)}")
    key = _SORT_KEYS[sort]
    return sorted(rows, key=lambda r: (VERDICT_ORDER[r.decode.verdict], *key(r)))


def rank_models(
    hardware: str | Machine | CatalogHardware | Hardware,
    models: Iterable[str | ModelAdapter],
    workload: AnyWorkload | None = None,
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
    ``unsupported``: NVFP4 or MLX profiles on a GeForce 4090, say); every row says its support. A
    catalog row (or a Machine) gives every row its class, devices and price; a bare record none.
    ``hardware`` and each of ``models`` may be an id (or a file) instead of a record."""
    workload = workload or default_workload()
    one = _as_machine(hardware)
    adapters = (load_model(m) if isinstance(m, str) else m for m in models)
    kept = (m for m in adapters if not runnable_only or _runnable(one.hardware, m, workload))
    return sort_rows((row(one, m, workload, prompt_tokens) for m in kept), sort)


def _runnable(hardware: Hardware, model: ModelAdapter, workload: AnyWorkload) -> bool:
    support = format_support(hardware.id, model.weight_precision, stated(workload).engine)[0]
    return support is not FormatSupport.UNSUPPORTED


def rank_hardware(
    model: str | ModelAdapter,
    machines: Iterable[str | Machine | CatalogHardware | Hardware | tuple[Hardware, float | None]],
    workload: AnyWorkload | None = None,
    *,
    prompt_tokens: int = DEFAULT_RANK_PROMPT_TOKENS,
    per_dollar: bool = False,
    sort: RankSort | None = None,
    runnable_only: bool = True,
    row: RowFn = evaluate_row,
    hardware_group: str | None = None,
) -> list[RankRow]:
    """Every machine for one model: by useful aggregate, or per dollar (machines that cannot run the
    model's weight format left out unless ``runnable_only`` is False; with ``hardware_group``, only the
    machines of that class). A machine is a catalog row (its class, devices and prices come with it), a
    Machine, or a core record with its purchase price (or None)."""
    workload = workload or default_workload()
    model = load_model(model) if isinstance(model, str) else model
    wanted = check_hardware_group(hardware_group)
    every = (_as_machine(entry) for entry in machines)
    kept = (
        one
        for one in every
        if (wanted is None or one.hardware_group == wanted)
        and (not runnable_only or _runnable(one.hardware, model, workload))
    )
    rows = (row(one, model, workload, prompt_tokens) for one in kept)
    return sort_rows(rows, sort or ("per-dollar" if per_dollar else "useful"))
