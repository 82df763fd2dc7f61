"""The page records: ``Page`` (one rendered page and its markdown mirror) and one typed context per
page, shared by the page's HTML and markdown templates (``web.pages.renderer`` builds and renders them)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from markupsafe import Markup

from servebound.core.decode import DecodeResult
from servebound.core.formats import KV_FORMATS, format_words
from servebound.core.model import ModelAdapter
from servebound.web.app.query import WorkloadQuery
from servebound.web.pages.classes import OWNED_TERMS, ClassTable, ListingGroup
from servebound.web.pages.layouts import SystemLayouts
from servebound.web.pages.nearby import FormatAnswer, Sideways
from servebound.web.pages.pair_records import PairRecords, Section
from servebound.web.pages.pairdata import PrefillView
from servebound.web.pages.records import (
    HardwareFilters,
    ModelFilters,
    ModelRow,
    RankDisplay,
    RunDisplay,
    StatsRow,
)
from servebound.web.pages.site import SiteHardware, SiteModel
from servebound.web.pages.this_machine import MachineFit
from servebound.web.pages.words import Remedy
from servebound.web.pages.work import Work


class NotFoundError(Exception):
    """An unknown id: the field, a message, and (href, label) suggestions."""

    def __init__(self, field: str, message: str, suggestions: list[tuple[str, str]] | None = None) -> None:
        super().__init__(message)
        self.field = field
        self.message = message
        self.suggestions = suggestions or []


@dataclass(frozen=True)
class Page:
    """One page: its canonical path, title, a one-line description, the HTML and the markdown mirror.

    The mirror may be given as a function that renders it, called the first time ``markdown`` is read
    (a computed pair page answers its HTML without rendering the mirror nobody asked for);
    :meth:`resolved` renders it at once (what a cache keeps holds text, not the context behind it)."""

    path: str
    title: str
    description: str
    html: str
    mirror: str | Callable[[], str] = field(repr=False)

    @property
    def markdown(self) -> str:
        if callable(self.mirror):
            object.__setattr__(self, "mirror", self.mirror())
        assert isinstance(self.mirror, str)
        return self.mirror

    def resolved(self) -> Page:
        """The page with its mirror rendered."""
        _ = self.markdown
        return self


# --- the page contexts: one per page, shared by its HTML and its markdown template -------------------


@dataclass(frozen=True)
class HomeContext:
    hardware: Sequence[SiteHardware]
    models: Sequence[SiteModel]
    default_hw: str | None
    default_model: str | None
    machine: MachineFit | None = None  # served site only: what fits the machine it runs on


@dataclass(frozen=True)
class HardwareIndexContext:
    rows: Sequence[SiteHardware]
    total: int
    f: HardwareFilters
    vendors: Sequence[str]
    classes: Sequence[str]
    sorts: Sequence[str]
    #: The rows by class (``web.pages.classes``), with the chosen model's ranking columns where one is chosen.
    groups: Sequence[ListingGroup] = ()
    model: SiteModel | None = None
    models: Sequence[SiteModel] = ()
    owned_terms: str = OWNED_TERMS


@dataclass(frozen=True)
class HardwareContext:
    hw: SiteHardware
    rows: Sequence[RankDisplay]
    runs: Sequence[RunDisplay]
    layouts: SystemLayouts | None = None
    owned_terms: str = OWNED_TERMS


@dataclass(frozen=True)
class ModelsIndexContext:
    rows: Sequence[ModelRow]
    total: int
    f: ModelFilters
    fits_hw: SiteHardware | None
    hardware: Sequence[SiteHardware]
    #: (``model_type``, its name) of every family, by name: the filter's values and words.
    families: Sequence[tuple[str, str]]
    sorts: Sequence[str]


@dataclass(frozen=True)
class ModelContext:
    m: SiteModel
    a: ModelAdapter
    rows: Sequence[RankDisplay]
    diff_total: float | None
    diff_active: float | None
    #: The rows by class, each with its best row (``web.pages.classes``).
    classes: Sequence[ClassTable] = ()
    owned_terms: str = OWNED_TERMS


@dataclass(frozen=True)
class PairContext:
    """What a pair page's HTML and its mirror share (the mirror needs nothing more)."""

    hw: SiteHardware
    m: SiteModel
    #: The decode result record the CLI's --json renders (its JSON names are attributes too).
    d: DecodeResult
    #: The notes, each as its words and links that set the form (``words.page_note``).
    notes: Sequence[Sequence[Remedy]]
    #: The remedies for a failed gate as links that set the form (empty where every gate passes).
    remedies: Sequence[Remedy]
    #: Other formats of this model on this machine; this model on nearby machines.
    sideways: Sideways
    #: The other formats answered at this page's workload (``nearby.format_answers``).
    formats: Sequence[FormatAnswer]
    p: PrefillView | None
    q: WorkloadQuery
    prefill_error: str | None
    verdict_text: str
    fits_text: str
    single: str
    agg: str
    workload: dict[str, str]
    overhead_bytes: float
    capacity_bytes: float
    floor: float
    work: Sequence[Work]
    assumptions: Sequence[tuple[str, str]]
    query_string: str
    api_decode: str
    api_prefill: str | None
    prompt_tokens: int | None
    runs: Sequence[RunDisplay]
    #: The curves, figures and cost section, computed where a template reads them (``pair_records``).
    records: PairRecords
    #: Derivation formula numbers by EQUATION_KEYS name (links into /derivation).
    eq: dict[str, int]


@dataclass(frozen=True)
class PairFigures:
    """What only a pair page's HTML draws: the memory bar, the sliders' ranges, the script's data, and
    whether the heavy sections are folded (each then a link to its fragment; ``pair_records.SECTIONS``)."""

    membar: Any
    sessions: Any
    ranges: dict[str, int]
    pair_data: Markup
    folded: bool = False
    sections: Mapping[str, Section] = field(default_factory=dict)
    #: Each section's fragment URL (the page's workload plus ``section=NAME``).
    fold_hrefs: Mapping[str, str] = field(default_factory=dict)
    #: The page with every section inline (``section=all``): the no-script reader's link.
    all_href: str = ""
    #: The KV precision select's rows (``core.formats.KV_FORMATS``: id and the bytes per element).
    kv_precisions: list[dict[str, str]] = field(default_factory=lambda: kv_precision_rows())


@dataclass(frozen=True)
class ValidationContext:
    data: dict[str, Any]
    rate: str
    groups: Sequence[StatsRow]
    runs: Sequence[RunDisplay]
    above: Sequence[RunDisplay]
    figs: dict[str, Any]


@dataclass(frozen=True)
class ProseContext:
    """A page of prose: sections of (heading, paragraphs, display formulas in TeX)."""

    heading: str
    sections: Sequence[tuple[str | None, Sequence[str], Sequence[str]]]


@dataclass(frozen=True)
class DerivationContext:
    """The derivation: its table of contents, the HTML body and the markdown body (same blocks)."""

    heading: str
    toc: Sequence[tuple[str, str]]
    body: Markup
    markdown_body: str
    #: The credit: the derivation followed, where, and the whole credit line (the mirror's frontmatter).
    credit_follows: str = ""
    credit_url: str = ""
    credit: str = ""


def kv_precision_rows() -> list[dict[str, str]]:
    """The KV precision select's rows: each cache format a runtime stores and its bytes per element."""
    return [
        {"id": name, "name": f"{format_words(name)} ({layout.bytes_per_element:g} bytes per element)"}
        for name, layout in KV_FORMATS.items()
    ]
