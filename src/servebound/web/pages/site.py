"""What the site shows: its hardware and model lists, workload parsing, and the computed pair.

Every number comes from the same API and JSON views the CLI uses (``servebound.questions.decode``,
``servebound.views.report.decode_json``, the core prefill procedures); this module only gathers them and
formats them for display. User input never reaches a file loader: ids are looked up in the site's own
lists, so a query cannot name a path.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from functools import cached_property
from typing import TYPE_CHECKING, Any

from servebound.catalog.architectures import CUSTOM, architecture_name
from servebound.catalog.hardware import CatalogHardware, DevicePrice, load_hardware_catalog
from servebound.catalog.models import list_models
from servebound.catalog.names import profile_id_for
from servebound.core.decode import DecodeResult
from servebound.core.formats import format_words
from servebound.core.hardware import Hardware
from servebound.core.model import ModelAdapter
from servebound.core.prefill import PrefillRange, PrefillResult, prefill, prefill_range
from servebound.core.system import System
from servebound.core.units import TFLOPS
from servebound.core.workload import Workload
from servebound.errors import MAX_ID_CHARS, InputError, check_id_length
from servebound.questions.absent import NO_PREFILL_WHY
from servebound.questions.decode import decode_answer
from servebound.questions.prefill import prefill_answer
from servebound.questions.rank import DEFAULT_RANK_PROMPT_TOKENS
from servebound.runs.band import with_band
from servebound.runs.evaluated import ReportedRun, evaluate_reported_runs
from servebound.runs.reported import load_reported_runs
from servebound.runs.validation import ValidationSummary, reported_runs_for, validation_summary
from servebound.views.report import decode_json, prefill_json
from servebound.web.app.query import WorkloadQuery
from servebound.web.pages.words import ARCHITECTURE_FACTS, fact_label, fact_value, page_text

if TYPE_CHECKING:
    from servebound.catalog.models import CatalogModel

#: The default prompt of a pair page (cut to the reserved context and the model's limit).
DEFAULT_PROMPT_TOKENS = DEFAULT_RANK_PROMPT_TOKENS


# --------------------------------------------------------------------------------------------------
# The site's records
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SiteHardware(CatalogHardware):
    """A hardware row as the site lists it: a catalog row (a bare Hardware record, in tests or from a
    user's file, becomes a row of vendor "(user file)"), with the site's views of its system."""

    #: The row is a user's hardware file, not a catalog row: it carries no [price] figures.
    user_file: bool = False

    @property
    def row_price(self) -> DevicePrice | None:
        """The row's [price] figures (rental, purchase, board power); None for a user's file."""
        return None if self.user_file else self.price

    @property
    def compute_tflops(self) -> dict[str, float]:
        """Dense rates in TFLOPS per mode, in the order the row states them (a user's file keeps its own)."""
        return {mode: rate / TFLOPS for mode, rate in self.hardware.compute_flop_per_s.items()}

    @property
    def system_label(self) -> str | None:
        """What a multi-device system is made of (``8 x nvidia-h100-sxm``); None for a single device."""
        return None if self.system is None else f"{self.system.count} x {self.system.member_id}"

    @cached_property
    def parallel(self) -> System | None:
        """For a multi-device system: its devices and link (the core view parallel layouts use)."""
        return None if self.system is None else self.system.parallel_system()

    @property
    def link_sources(self) -> Mapping[str, str]:
        """The sources of a system's link numbers (empty for a single device)."""
        return {} if self.system is None else dict(self.system.interconnect_sources)

    @property
    def machine_sources(self) -> dict[str, str]:
        """The per-number sources as machine-readable copies state them: quoted passages replaced by
        their attribution and link (``without_quotes``); the HTML page keeps the words."""
        return {key: without_quotes(text) for key, text in self.sources.items()}

    @property
    def machine_notes(self) -> str:
        """The row's notes as machine-readable copies state them (``without_quotes``)."""
        return without_quotes(self.notes)


@dataclass(frozen=True)
class SiteModel:
    """A model profile: the adapter plus, for catalog models, its audit (source and derivation)."""

    id: str
    name: str
    family: str
    adapter: ModelAdapter
    total_params: float | None = None
    active_params: float | None = None
    published_total_params: float | None = None
    published_active_params: float | None = None
    published_source: str | None = None
    total_params_difference: float | None = None
    active_params_difference: float | None = None
    checkpoint_bytes: float | None = None
    source: Mapping[str, str] = field(default_factory=dict)
    steps: tuple[tuple[str, float, str], ...] = ()
    facts: Mapping[str, str] = field(default_factory=dict)
    native: bool = True
    base_id: str = ""

    @property
    def family_name(self) -> str:
        """The family as people write it (``Qwen3 MoE``, not the config's ``qwen3_moe``)."""
        return architecture_name(self.family)

    @property
    def shown_facts(self) -> dict[str, str]:
        """The import's facts as the pages show them: labels in words, an architecture by its name (the
        language model's only where it differs from the model's)."""
        same = self.facts.get("language_model_type") == self.facts.get("model_type")
        return {
            ARCHITECTURE_FACTS.get(k, fact_label(k)): architecture_name(v) if k in ARCHITECTURE_FACTS else v
            for k, v in self.facts.items()
            if not (same and k == "language_model_type")
        }

    @property
    def format_in_name(self) -> bool:
        """The name already says the weight format (a catalog profile's ``Qwen3-8B (BF16)``)."""
        fmt = self.adapter.weight_precision
        return not fmt or f"({format_words(fmt)})" in self.name

    @property
    def size_params(self) -> float | None:
        """Total parameters: the importer's count, else the published one."""
        return self.total_params if self.total_params is not None else self.published_total_params

    @property
    def machine_source(self) -> dict[str, str]:
        """The sources as machine-readable copies state them: a model card's quoted words replaced by
        the card's link and an attribution (others' words stay on the HTML page only)."""
        repository = self.source.get("repository")
        card = f"https://huggingface.co/{repository}" if repository else None
        return {key: without_quotes(text, card) for key, text in self.source.items()}

    @property
    def is_moe(self) -> bool:
        return self.adapter.weights.experts is not None


def site_hardware(entry: Hardware | CatalogHardware) -> SiteHardware:
    """A catalog row or a bare Hardware record, as the site lists it."""
    if isinstance(entry, SiteHardware):
        return entry
    if isinstance(entry, Hardware):
        return SiteHardware(
            id=entry.id,
            name=entry.name,
            vendor="(user file)",
            device_class="custom",
            year=None,
            memory_type="",
            price_usd=None,
            hardware=entry,
            sources=dict(entry.sources),
            user_file=True,
        )
    return SiteHardware(**{f.name: getattr(entry, f.name) for f in fields(CatalogHardware)})


def without_quotes(source: str, link: str | None = None) -> str:
    """A source string as every machine-readable copy states it: each quoted passage (others' words,
    ``'...'`` holding at least two words) replaced by an attribution and its link, the HTML page alone
    keeping the words. The link is the reference of the passage's own clause (``<where>: '<words>'``
    first, else the one after it), else the nearest in the string, else ``link`` (a model card's page)."""
    out, at = [], 0
    for start, end in quoted_passages(source):
        where = _passage_link(source, start, end) or link
        lead = source[at:start]
        lead = lead[:-2] + " " if lead.endswith(": ") else lead
        told = f"words quoted at {where}" if where else "a quotation"
        out.append(f"{lead}({told}, not reproduced here)")
        at = end
    return "".join(out) + source[at:]


def quoted_passages(text: str) -> list[tuple[int, int]]:
    """Where a string quotes others' words: (start, end) of each ``'...'`` of two words or more. An
    opening mark follows a space, a bracket or a colon; a closing one is not followed by a letter (so
    ``vLLM's`` is not a mark); single quoted tokens (``'auto'``) are names, not passages."""
    found, i = [], 0
    while (i := text.find("'", i)) >= 0:
        opens = (i == 0 or text[i - 1] in " ([{:,;=") and text[i + 1 : i + 2] not in ("", " ")
        close = i + 1
        while opens and (close := text.find("'", close)) >= 0:
            if text[close - 1] != " " and not text[close + 1 : close + 2].isalnum():
                break
            close += 1
        if not opens or close < 0:
            i += 1
            continue
        if " " in text[i + 1 : close].strip():
            found.append((i, close + 1))
        i = close + 1
    return found


def _passage_link(text: str, start: int, end: int) -> str | None:
    """The reference a quoted passage comes from: in its clause (between semicolons), the last one
    before it, else the first after it; else the nearest anywhere in the string."""
    refs = [(m.start(), m.end(), _as_url(m.group())) for m in _REFERENCE.finditer(text)]
    refs = [(a, b, url) for a, b, url in refs if b <= start or a >= end]
    left, right = text.rfind(";", 0, start) + 1, text.find(";", end) % (len(text) + 1)
    before = [url for a, b, url in refs if a >= left and b <= start]
    after = [url for a, b, url in refs if a >= end and b <= right]
    if before or after:
        return before[-1] if before else after[0]
    near = sorted(refs, key=lambda r: min(abs(r[0] - end), abs(start - r[1])))
    return near[0][2] if near else None


#: A reference in a source string: a web address, a github.com path, or ``github:owner/repo[@commit]``.
_REFERENCE = re.compile(
    r"https?://[^\s;,)']+|(?<![/\w])github\.com/[^\s;,)']+|github:[\w.-]+/[\w.-]+(?:@\w+)?"
)


def _as_url(ref: str) -> str:
    ref = ref.rstrip(".:")
    if ref.startswith("github.com/"):
        return f"https://{ref}"
    if ref.startswith("github:"):
        repo, _, commit = ref.removeprefix("github:").partition("@")
        return f"https://github.com/{repo}" + (f"/tree/{commit}" if commit else "")
    return ref


def site_model(entry: SiteModel | ModelAdapter | CatalogModel) -> SiteModel:
    """A catalog profile, with its audit, or a bare ModelAdapter (a user's file, a test's record)."""
    if isinstance(entry, SiteModel):
        return entry
    if isinstance(entry, ModelAdapter):
        return SiteModel(id=entry.id, name=entry.name, family=CUSTOM, adapter=entry, source=entry.sources)
    imported, row = entry.imported, entry.entry
    named = {
        "repository": row.hf_id,
        "revision": row.hf_revision,
        "config": row.config,
        "weight format": entry.weight_format,
        "copied from": row.copied_from,
        "sha256": row.sha256,
    }
    source = {key: str(value) for key, value in named.items() if value}
    if not source and imported.source:
        source = {"source": str(imported.source)}
    # The model card's figures: total, active, their source (and what they count), or None.
    card = entry.published or {}
    if card.get("source"):
        source.setdefault("published counts", str(card["source"]))
    diff_total, diff_active = entry.published_difference()
    return SiteModel(
        id=entry.id,
        name=entry.name,
        family=entry.family,
        adapter=entry.adapter,
        total_params=imported.total_params,
        active_params=imported.active_params,
        published_total_params=card.get("total"),
        published_active_params=card.get("active"),
        published_source=str(card["source"]) if card.get("source") else None,
        total_params_difference=diff_total,
        active_params_difference=diff_active,
        checkpoint_bytes=imported.checkpoint_bytes,
        source=source,
        steps=tuple((s.quantity, float(s.value), s.formula) for s in imported.steps),
        # In words (no reprs): a dict of block counts reads "MoE x 48", a flag "yes", an empty tuple nothing.
        facts={str(k): text for k, v in dict(imported.facts).items() if (text := fact_value(v))},
        native=entry.native,
        base_id=entry.base_id or entry.id,
    )


class SiteData:
    """The hardware and models a site shows, with lookups that suggest close ids for unknown ones.

    ``runs`` are the reported runs the site shows (evaluated ``servebound.runs.validation`` runs); by
    default the shipped ones, evaluated on first use (``validation()``), once per site.
    """

    def __init__(
        self,
        hardware: Iterable[Any],
        models: Iterable[Any],
        *,
        catalog: Any = None,
        runs: Sequence[ReportedRun] | None = None,
    ) -> None:
        self.hardware: list[SiteHardware] = [site_hardware(h) for h in hardware]
        self.models: list[SiteModel] = [site_model(m) for m in models]
        self.hardware_by_id = {h.id: h for h in self.hardware}
        self.models_by_id = {m.id: m for m in self.models}
        #: The listed rows by the names their pages and pickers show (trimmed, lower case): a form
        #: sent without script carries the name, not the id.
        self._by_name = {
            "hardware": {h.name.strip().lower(): h.id for h in self.hardware},
            "model": {m.name.strip().lower(): m.id for m in self.models},
        }
        self._catalog = catalog
        self._runs = None if runs is None else tuple(runs)
        self._validation: ValidationSummary | None = None
        self._runs_lock = threading.Lock()
        #: Ranking rows already computed, by (hardware id, model id, workload, prompt), or None (the
        #: default: nothing kept). The static export turns it on, so that the hardware pages and the
        #: model pages, which rank the same pairs, compute each row once.
        self.row_cache: dict[tuple[str, str, Any, int], Any] | None = None

    def validation(self) -> ValidationSummary:
        """The reported runs checked against their ceilings and summarised (``servebound validate``)."""
        with self._runs_lock:
            if self._validation is None:
                self._validation = validation_summary(self._runs)
            return self._validation

    def runs_for_pair(self, hardware_id: str, model_id: str) -> list[ReportedRun]:
        """The reported runs of one pair (exact ids), in the file's order. Until every shipped run has
        been checked (``validation()``), only this pair's are: the same records, without a pair page
        waiting for the checks of every other pair's runs."""
        with self._runs_lock:
            checked = self._runs is not None or self._validation is not None
        if checked:
            return list(reported_runs_for(hardware_id, model_id, self.validation().runs))
        entries = load_reported_runs()
        return list(
            evaluate_reported_runs(e for e in entries if (e.hardware, e.model) == (hardware_id, model_id))
        )

    def runs_on_hardware(self, hardware_id: str) -> list[ReportedRun]:
        """Every reported run on one hardware row, whatever its model."""
        return [r for r in self.validation().runs if r.entry.hardware == hardware_id]

    def has_pair(self, hardware_id: str, model_id: str) -> bool:
        """Whether the site lists both ids, so the pair has a page."""
        return hardware_id in self.hardware_by_id and model_id in self.models_by_id

    def get_hardware(self, ref: str) -> SiteHardware:
        """A listed row by id or name; with the packaged catalog also aliases and ``Nx-<device>``
        systems."""
        check_id_length(ref, "hardware")
        if ref not in self.hardware_by_id:
            ref = self._by_name["hardware"].get(ref.strip().lower(), ref)
        if ref in self.hardware_by_id:
            return self.hardware_by_id[ref]
        if self._catalog is not None:
            try:
                return site_hardware(self._catalog.get(ref))
            except InputError:
                pass
        raise InputError("hardware", f"'{ref}' is not a hardware id on this site")

    @property
    def serves_catalog(self) -> bool:
        """Whether the site serves the packaged catalog (every name people type for a profile)."""
        return self._catalog is not None

    def get_model(self, ref: str) -> SiteModel:
        check_id_length(ref, "model")
        if ref not in self.models_by_id:
            ref = self._by_name["model"].get(ref.strip().lower(), ref)
        if ref in self.models_by_id:
            return self.models_by_id[ref]
        if self._catalog is not None:  # the packaged catalog: any name people type for a profile
            found = profile_id_for(ref)
            if found in self.models_by_id:
                return self.models_by_id[found]
        raise InputError("model", f"'{ref}' is not a model id on this site")

    def suggest_hardware(self, ref: str, limit: int = 5) -> list[SiteHardware]:
        return [self.hardware_by_id[i] for i in _closest(ref, list(self.hardware_by_id), limit)]

    def suggest_models(self, ref: str, limit: int = 5) -> list[SiteModel]:
        return [self.models_by_id[i] for i in _closest(ref, list(self.models_by_id), limit)]


def _closest(ref: str, choices: Sequence[str], limit: int) -> list[str]:
    if len(ref) > MAX_ID_CHARS:  # fuzzy matching costs time in the id's length: no suggestion past it
        return []
    from rapidfuzz import fuzz, process, utils

    found = process.extract(ref, choices, scorer=fuzz.WRatio, processor=utils.default_process, limit=limit)
    return [name for name, score, _ in found if score >= 50]


def default_site_data() -> SiteData:
    """The packaged hardware and model catalogs."""
    catalog = load_hardware_catalog()
    return SiteData(catalog.entries, [site_model(entry) for entry in list_models()], catalog=catalog)


# --------------------------------------------------------------------------------------------------
# One pair, computed
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Pair:
    """Everything a pair page shows: decode and prefill results and their JSON views."""

    hardware: SiteHardware
    model: SiteModel
    query: WorkloadQuery
    workload: Workload
    decode_result: DecodeResult
    decode: dict[str, Any]
    prefill_result: PrefillResult | None
    prefill_range: PrefillRange | None
    prefill: dict[str, Any] | None
    prefill_error: str | None
    prompt_tokens: int | None
    #: The query as asked, before default contexts followed the model's limit: the page's own path
    #: carries only what was asked, so a default page has a clean path on every model.
    requested: WorkloadQuery | None = None

    @property
    def path_params(self) -> dict[str, str]:
        return (self.requested or self.query).params()


def default_prompt(model: ModelAdapter, query: WorkloadQuery) -> int:
    """The prompt a pair page evaluates when none is given: 8,192 tokens, cut to what the model allows."""
    limit = min(DEFAULT_PROMPT_TOKENS, query.alloc_context)
    if model.context_limit_tokens is not None:
        limit = min(limit, model.context_limit_tokens)
    return max(1, limit)


def compute_pair(
    hw: SiteHardware,
    model: SiteModel,
    query: WorkloadQuery,
    *,
    with_range: bool = True,
    draft: SiteModel | None = None,
) -> Pair:
    """Decode (as ``servebound decode --json``) and prefill (as ``servebound prefill --json --range``).

    ``with_range=False`` leaves out the prompt-length range (half the cost of a pair), which only the
    HTML page shows: the markdown mirror is the same either way (llms-full.txt computes without it).
    """
    requested = query
    # the row, not its record: a system answers at its layout, as on every other surface
    scenario = query.scenario(hw, model.adapter, draft.adapter if draft is not None else None)
    model = replace(model, adapter=scenario.model)  # at the query's cache precision (--kv-precision)
    workload = scenario.workload
    result = decode_answer(scenario)[0]
    decoded = decode_json(result)
    # Default contexts follow the model's limit: show the contexts actually used.
    used = result.workload
    query = replace(query, alloc_context=used.alloc_context_tokens, read_context=used.read_context_tokens)
    prompt = query.prompt if query.prompt is not None else default_prompt(model.adapter, query)
    pre = rng = pre_json = error = None
    if model.adapter.prefill is None:
        error = NO_PREFILL_WHY
    else:
        try:
            if scenario.layout is not None:  # a system prefills on a replica of its layout (no range)
                pre, rng = prefill_answer(scenario, prompt)
            else:
                pre, rng = _prefill_cached(hw.hardware, model.adapter, prompt, workload, with_range)
            assert pre is not None
            pre_json = prefill_json(pre, rng)
        except InputError as exc:
            if query.prompt is not None:
                raise
            error = f"{exc.field}: {page_text(exc.note)}"
    return Pair(hw, model, query, workload, result, decoded, pre, rng, pre_json, error, prompt, requested)


def _prefill_cached(
    hardware: Hardware, model: ModelAdapter, prompt: int, workload: Workload, with_range: bool = True
) -> tuple[PrefillResult, PrefillRange | None]:
    # prefill ignores forced batches: the page's prefill is batch 1, one-shot (the CLI's default). The
    # decode-only settings (batch, speculation, memory-only, contexts already capped) are dropped.
    base = replace(
        workload, forced_batch=None, speculation=None, memory_only=False, contexts_capped_from=None
    )
    result = with_band(prefill(hardware, model, prompt, workload=base))  # its band, as prefill_answer's
    return result, prefill_range(hardware, model, workload=base) if with_range else None
