"""The typed records the page templates show: filters, ranking rows, reported runs and the validation
page's distribution rows, each with its figures formatted once for both the HTML and the markdown."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, fields
from typing import Any
from urllib.parse import quote

from servebound.catalog.architectures import architecture_name
from servebound.catalog.engines import FormatSupport
from servebound.core.decode import DecodeResult
from servebound.inputs.scenario import default_workload
from servebound.questions.decode import decode
from servebound.questions.fit import usual_profile_ids
from servebound.questions.rank import (
    Machine,
    RankRow,
    RowFn,
    evaluate_row,
    rank_hardware,
    rank_models,
    with_machine,
)
from servebound.runs.evaluated import ReportedRun
from servebound.runs.validation import reported_run_json
from servebound.views.band_view import band_cell, band_line
from servebound.views.notes import VERDICT_WORDS
from servebound.views.report import fmt_int, fmt_rate, fmt_seconds
from servebound.views.rows import rank_row_json
from servebound.web.figures import charts as figures
from servebound.web.pages.classes import PerDevice, per_device
from servebound.web.pages.site import SiteData, SiteHardware, SiteModel
from servebound.web.pages.text import VERDICT_GROUP, VERDICT_TEXT, pair_path, percent
from servebound.web.pages.words import page_text, plural


def _same(wanted: str | None, value: str) -> bool:
    """A text filter: unset (None or empty) keeps every row; else the same text, case aside."""
    return not wanted or value.lower() == wanted.lower()


def _within(value: float, low: float | None, high: float | None) -> bool:
    """A number filter: below ``low`` or above ``high`` (each optional) drops the row."""
    return not (low is not None and value < low) and not (high is not None and value > high)


@dataclass(frozen=True)
class BrowseFilters:
    """A browse page's filters (a subclass's fields, in query-string order)."""

    def params(self) -> dict[str, str]:
        """The filters set, as the query string carries them: texts as they are, numbers as ``:g``;
        unset (None or an empty text) and default values (the name sort) are left out, a zero is not."""
        out = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if value not in (None, "", f.default):
                out[f.metadata.get("query", f.name)] = value if isinstance(value, str) else f"{value:g}"
        return out


@dataclass(frozen=True)
class HardwareFilters(BrowseFilters):
    vendor: str | None = None
    cls: str | None = field(default=None, metadata={"query": "class"})
    min_memory_gb: float | None = None
    sort: str = "name"
    #: A model id: the listing adds its ranking columns (verdict, aggregate, per device, per dollar).
    model: str | None = None

    def keep(self, h: SiteHardware) -> bool:
        return (
            _same(self.vendor, h.vendor)
            and _same(self.cls, h.device_class)
            and _within(h.memory_gb, self.min_memory_gb, None)
        )


def family_choices(models: Iterable[SiteModel]) -> list[tuple[str, str]]:
    """The family filter's choices: each family's ``model_type`` (the value a link carries) and its
    name as people write it (``catalog.architectures``), by name."""
    return sorted({(m.family, m.family_name) for m in models if m.family}, key=lambda c: c[1].lower())


@dataclass(frozen=True)
class ModelFilters(BrowseFilters):
    family: str | None = None
    min_params_b: float | None = None
    max_params_b: float | None = None
    fits: str | None = None
    sort: str = "name"

    def keep(self, m: SiteModel) -> bool:
        size = (m.size_params or 0) / 1e9
        named = _same(self.family, m.family) or _same(self.family, m.family_name)
        return named and _within(size, self.min_params_b, self.max_params_b)

    def select(
        self, models: Iterable[SiteModel], fits_hw: SiteHardware | None
    ) -> list[tuple[SiteModel, DecodeResult | None]]:
        """The models these filters keep, in their order, each with its default decode on ``fits_hw``;
        with ``fits_hw`` (the ``fits`` id, looked up by the caller) only those that fit and whose weight
        format the device runs (as the hardware page's table and rank list them), without it every kept
        model with None."""
        out: list[tuple[SiteModel, DecodeResult | None]] = []
        for m in models:
            if not self.keep(m):
                continue
            result = None
            if fits_hw is not None:
                result = decode(fits_hw, m.adapter)  # the row: a system answers at its layout
                if not result.fits or result.format_support is FormatSupport.UNSUPPORTED:
                    continue
            out.append((m, result))
        return out


@dataclass(frozen=True)
class ModelRow:
    model: SiteModel
    decode: DecodeResult | None
    href: str


@dataclass(frozen=True)
class RankDisplay:
    href: str
    label: str
    verdict: str
    verdict_text: str
    single: str
    aggregate: str
    batch_star: str
    ttft: str
    json: dict[str, Any]
    #: The machine's class, per-device and per-dollar figures (the ranking row's, as ``web.classes`` words them).
    cls: PerDevice
    #: Why each "n/a" of the row is one, by column key (``RankRow.missing``, in the pair page's words).
    why: Mapping[str, str] = field(default_factory=dict)

    #: The row's band (its decode record's ``expected``): the "expected tok/s" cell, p10-p90 or ``-``,
    #: and the line that says what it is (an estimate from N runs of ENGINE on CLASS, or why none).
    expected: str = "-"
    expected_why: str = ""

    @property
    def verdict_words(self) -> str:
        """The verdict in a table's cell: a few words (``notes.VERDICT_WORDS``), capitalised."""
        words = VERDICT_WORDS[self.verdict]
        return words[:1].upper() + words[1:]

    @property
    def verdict_group(self) -> str:
        """The verdict filter the row falls under (``VERDICT_FILTERS``)."""
        return VERDICT_GROUP[self.verdict]

    # The class figures under the keys the columns name (``CLASS_COLUMNS``).
    @property
    def devices(self) -> int:
        return self.cls.devices

    @property
    def per_device(self) -> str:
        return self.cls.per_device

    @property
    def rented(self) -> str:
        return self.cls.rented

    @property
    def owned(self) -> str:
        return self.cls.owned

    @property
    def usd_per_mtok(self) -> str:
        return self.cls.usd_per_mtok


#: Which RankRow figure (``RankRow.missing``'s JSON name) each column shows, where it can be absent.
_FIGURE_OF = {
    "single": "single_session_tok_s",
    "aggregate": "aggregate_tok_s",
    "per_device": "aggregate_tok_s",
    "batch_star": "batch_star",
    "ttft": "ttft_s",
}


def _rank_display(row: RankRow, href: str, label: str) -> RankDisplay:
    d = row.decode
    ttft = row.ttft_s
    support = d.format_support.value
    missing = {name: page_text(note) for name, note in row.missing().items()}
    return RankDisplay(
        href=href,
        label=label if support == "native" else f"{label} ({support})",
        verdict=d.verdict.value,
        verdict_text=VERDICT_TEXT[d.verdict.value],
        single=fmt_rate(d.single_session_tok_s),
        aggregate=fmt_rate(d.aggregate_tok_s),
        batch_star=fmt_int(d.batch_star),
        ttft=fmt_seconds(ttft),
        json=rank_row_json(row),
        cls=per_device(row),
        why={key: missing[name] for key, name in _FIGURE_OF.items() if name in missing},
        expected=band_cell(d.expected),
        expected_why=band_line(d.expected, d.expected_from),
    )


def _row_fn(site: SiteData) -> RowFn:
    """How the site's rankings evaluate a row: computed each time, or once per pair where the site
    keeps a row cache (``SiteData.row_cache``; the row's machine, with its class and prices, is the
    caller's)."""
    cache = site.row_cache
    if cache is None:
        return evaluate_row

    def row(one: Machine, model: Any, workload: Any, prompt_tokens: int) -> RankRow:
        key = (one.hardware.id, model.id, workload, prompt_tokens)
        found = cache.get(key)
        if found is None:
            found = cache[key] = evaluate_row(one, model, workload, prompt_tokens)
        return with_machine(found, one)

    return row


def rank_rows_for_hardware(
    site: SiteData,
    hw: SiteHardware,
    workload: Any = None,
    href: Callable[[str, str], str] = pair_path,
    *,
    native_only: bool = False,
    runnable_only: bool = True,
) -> list[RankDisplay]:
    """Every model on this machine, those that serve at the floor first, the largest first
    (``servebound.questions.rank.rank_models``, as `servebound rank --hardware`): formats the device cannot run
    left out unless ``runnable_only`` is False."""
    models = [m for m in site.models if m.native or not native_only]
    if native_only:  # where the device's usual engine is known, the formats it runs (as the CLI's rank)
        found = usual_profile_ids(hw.hardware, workload or default_workload())
        if found is not None:
            models = [m for m in site.models if m.id in found[1]]
    by_adapter = {id(m.adapter): m for m in models}
    rows = rank_models(
        hw, [m.adapter for m in models], workload, runnable_only=runnable_only, row=_row_fn(site)
    )
    return [
        _rank_display(r, href(hw.id, by_adapter[id(r.model)].id), by_adapter[id(r.model)].name) for r in rows
    ]


def rank_rows_for_model(
    site: SiteData,
    m: SiteModel,
    workload: Any = None,
    href: Callable[[str, str], str] = pair_path,
    *,
    runnable_only: bool = True,
    hardware_group: str | None = None,
) -> list[RankDisplay]:
    """Every machine for this model, best useful throughput first (``servebound.questions.rank.rank_hardware``),
    machines that cannot run its weight format left out unless ``runnable_only`` is False, and with
    ``hardware_group`` only the machines of that class."""
    by_hw = {id(h.hardware): h for h in site.hardware}
    rows = rank_hardware(
        m.adapter,
        site.hardware,
        workload,
        runnable_only=runnable_only,
        row=_row_fn(site),
        hardware_group=hardware_group,
    )
    return [_rank_display(r, href(by_hw[id(r.hardware)].id, m.id), by_hw[id(r.hardware)].name) for r in rows]


@dataclass(frozen=True)
class RunDisplay:
    """One reported run as a page shows it: ``data`` is ``reported_run_json`` (the CLI's numbers)."""

    id: str
    data: dict[str, Any]
    hardware_name: str
    hardware_href: str | None
    model_label: str
    pair_href: str | None
    measured: str
    ceiling: str
    efficiency: str
    setting: str
    source_href: str | None
    above: bool

    @property
    def anchor(self) -> str:
        return f"run-{self.id}"

    @property
    def dot(self) -> figures.StripDot:
        return figures.StripDot(
            self.anchor,
            self.data["efficiency"],
            self.above,
            f"{self.id}: {self.efficiency} of the ceiling ({self.measured} against {self.ceiling})",
        )


def run_display(run: ReportedRun, site: SiteData, href: Callable[[str, str], str] = pair_path) -> RunDisplay:
    """A reported run with its figures formatted and its links on this site (None where no page is)."""
    data = reported_run_json(run)
    entry = run.entry
    hw = site.hardware_by_id.get(entry.hardware)
    model = site.models_by_id.get(entry.model)
    metric = data["metric"]
    if metric == "ttft_s":
        measured = f"TTFT {fmt_seconds(data['measured'])} ({fmt_rate(data['measured_tok_s'])} prefill)"
        shortest = data["prompt_tokens"] / data["ceiling_tok_s"] if data["ceiling_tok_s"] else None
        ceiling = f"{fmt_rate(data['ceiling_tok_s'])} prefill (TTFT at least {fmt_seconds(shortest)})"
    else:
        what = {
            "per_session_tok_s": "per session",
            "aggregate_tok_s": "aggregate",
            "prefill_tok_s": "prefill",
        }[metric]
        measured = f"{fmt_rate(data['measured'])} {what}"
        ceiling = f"{fmt_rate(data['ceiling_tok_s'])} {what}"
    if data["phase"] == "decode":
        setting = (
            f"{plural(data['concurrency'], 'session')}; reads "
            f"{plural(data['read_context_tokens'], 'token')} per step"
            + (
                f" of {data['alloc_context_tokens']:,} reserved"
                if data["alloc_context_tokens"] is not None
                else ""
            )
        )
    else:
        setting = f"prompt {data['prompt_tokens']:,} tokens" + (
            f" in chunks of {entry.chunk_tokens:,}" if entry.chunk_tokens else ", one shot"
        )
        setting += f"; batch {data['concurrency']:,}"
    url = data["source_url"]
    return RunDisplay(
        id=entry.id,
        data=data,
        hardware_name=hw.name if hw is not None else entry.hardware,
        hardware_href=f"/hardware/{quote(hw.id)}" if hw is not None else None,
        model_label=model.name if model is not None else f"{entry.model} (no page on this site)",
        pair_href=href(entry.hardware, entry.model) if hw is not None and model is not None else None,
        measured=measured,
        ceiling=ceiling,
        efficiency=percent(data["efficiency"]),
        setting=setting,
        source_href=url if url.startswith(("https://", "http://")) else None,
        above=not data["at_or_below"],
    )


@dataclass(frozen=True)
class StatsRow:
    """One row of the validation page's distribution table (percentages formatted)."""

    label: str
    count: int
    at_or_below: int
    min: str
    p25: str
    median: str
    p75: str
    max: str


def stats_rows(data: Mapping[str, Any]) -> list[StatsRow]:
    """All runs, then by engine, hardware family and phase, from ``validation_json``."""

    def row(label: str, s: Mapping[str, Any]) -> StatsRow:
        return StatsRow(
            label,
            s["count"],
            s["at_or_below"],
            *(percent(s[k]) for k in ("min", "p25", "median", "p75", "max")),
        )

    rows = [row("All runs", data["efficiency"])]
    for key, label in (
        ("by_engine", "Engine"),
        ("by_hardware_family", "Hardware family"),
        ("by_phase", "Phase"),
        ("by_model_family", "Model family"),
    ):
        # A model family is the config's model_type in the JSON; the page writes its name.
        named = architecture_name if key == "by_model_family" else str
        rows += [row(f"{label}: {named(name)}", s) for name, s in data[key].items()]
    return rows
