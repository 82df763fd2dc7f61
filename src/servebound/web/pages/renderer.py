"""Every page of the site, as HTML and as its markdown mirror, rendered from one typed context each.

A page builder gathers one context (a frozen dataclass of typed records) and renders it through two
templates of the same name: ``templates/<page>.html`` and ``templates/<page>.md``. The served app and
the static export call the same builders, so the two sites cannot drift, and each mirror shows the
same numbers as its page. Names from the catalog are escaped everywhere: Jinja autoescapes HTML, the
markdown templates' ``md`` filter escapes markdown.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import fields
from functools import partial
from typing import Any, ClassVar
from urllib.parse import quote, urlencode

from jinja2 import DictLoader, Environment, select_autoescape
from markupsafe import Markup

from servebound.catalog.hosts import cpu_rows, host_rows
from servebound.core.advice import Note
from servebound.inputs.workload import BY_NAME as DECLARED_INPUTS
from servebound.questions.economics import LECTURE_BLACKWELL
from servebound.runs.evaluated import ReportedRun
from servebound.runs.validation import validation_json
from servebound.views.band_view import BAND_TEXT
from servebound.views.notes import decode_notes
from servebound.views.report import fmt_gb, fmt_rate, workload_assumptions
from servebound.views.terminal import visible_value
from servebound.web.app.packaged import packaged_templates
from servebound.web.figures import charts as figures
from servebound.web.figures.mathml import mathml
from servebound.web.pages import derivation as dv
from servebound.web.pages import derivation_toy as dt
from servebound.web.pages.classes import class_tables, listing_groups, listing_row
from servebound.web.pages.contexts import (
    DerivationContext,
    HardwareContext,
    HardwareIndexContext,
    HomeContext,
    ModelContext,
    ModelsIndexContext,
    Page,
    PairContext,
    PairFigures,
    ProseContext,
    ValidationContext,
)
from servebound.web.pages.cost import economics_context
from servebound.web.pages.derivation import derivation
from servebound.web.pages.derivation_live import derivation_notes
from servebound.web.pages.layouts import layout_model, system_layouts
from servebound.web.pages.manual import doc_page, index_page
from servebound.web.pages.methodology import sections
from servebound.web.pages.nearby import Sideways, format_answers, sideways
from servebound.web.pages.pair_records import (
    ALL,
    SECTIONS,
    PairRecords,
    RecentRecords,
    answer_regions,
    slider_ranges,
)
from servebound.web.pages.pairdata import (
    PrefillView,
    api_params,
    flat_assumptions,
    pair_data,
    script_json,
    workload_text,
)
from servebound.web.pages.records import (
    HardwareFilters,
    ModelFilters,
    ModelRow,
    RunDisplay,
    family_choices,
    rank_rows_for_hardware,
    rank_rows_for_model,
    run_display,
    stats_rows,
)
from servebound.web.pages.registry import nav as site_nav
from servebound.web.pages.search_page import DESCRIPTION as SEARCH_DESCRIPTION
from servebound.web.pages.search_page import TITLE as SEARCH_TITLE
from servebound.web.pages.search_page import search_context
from servebound.web.pages.site import Pair, SiteData, SiteHardware, SiteModel, without_quotes
from servebound.web.pages.text import (
    LICENSE_NAME,
    LICENSE_URL,
    SITE_NAME,
    VERDICT_TEXT,
    md,
    md_url,
    mirror_path,
    pair_path,
    site_date,
)
from servebound.web.pages.this_machine import machine_fit, on_site
from servebound.web.pages.words import (
    TEMPLATE_HELPERS,
    assumption_rows,
    fact_label,
    fact_value,
    linked_md,
    linkify,
    number,
    page_note,
    plural,
    remedies,
    source_notes,
)
from servebound.web.pages.work import Work, decode_work, prefill_work


def _equations() -> dict[str, int]:
    return dict(derivation().equations)


def _fields(*contexts: Any) -> dict[str, Any]:
    """A context's fields by name, unconverted (``dataclasses.asdict`` would copy nested records)."""
    return {f.name: getattr(c, f.name) for c in contexts for f in fields(c)}


class Renderer:
    """The two Jinja environments (HTML and markdown) and the page builders. ``mode`` is ``server`` or
    ``static``."""

    def __init__(
        self,
        site: SiteData,
        *,
        mode: str = "server",
        exported: Callable[[str, str], bool] | None = None,
        base_url: str = "",
    ) -> None:
        self.site = site
        self.mode = mode
        self.exported = exported
        #: Prefixes each page's canonical URL (rel="canonical", the mirrors' frontmatter) when given.
        self.base_url = base_url.rstrip("/")
        self.date = site_date()
        #: The records of the pairs served pages computed last (their fragments read them again).
        self.recent = RecentRecords()
        self._fixed: dict[tuple[str, str], tuple[Sideways, list[RunDisplay]]] = {}
        formats: dict[str, Any] = dict(TEMPLATE_HELPERS)
        formats.update(BAND_TEXT)  # the band's words (``views.band_view``), as the CLI's tables write them
        templates = DictLoader(packaged_templates())  # read once: a reinstall under a server is harmless
        self.env = Environment(
            loader=templates,
            autoescape=select_autoescape(["html"]),
            trim_blocks=False,
            finalize=visible_value,
        )
        self.env.globals.update(
            formats,
            mathml=mathml,
            inputs=DECLARED_INPUTS,
            hosts=tuple(host_rows().values()),
            cpus=tuple(cpu_rows().values()),
            plural=plural,
            linkify=linkify,
            source_notes=source_notes,
            nav=site_nav(mode),
        )
        self.env.filters.update(fact_value=fact_value, fact_label=fact_label, number=number)
        self.md_env = Environment(
            loader=templates,
            autoescape=False,
            trim_blocks=True,
            lstrip_blocks=True,
            keep_trailing_newline=True,
            finalize=visible_value,  # a name's escape sequences reach no terminal that prints a mirror
        )
        self.md_env.globals.update(
            formats, license_name=LICENSE_NAME, license_url=LICENSE_URL, site_name=SITE_NAME
        )
        self.md_env.globals.update(plural=plural)
        self.md_env.filters.update(fact_value=fact_value, fact_label=fact_label, number=number)
        self.md_env.filters.update(
            md=md, md_url=md_url, mirror=mirror_path, json=json.dumps, quote=quote, unquoted=without_quotes
        )
        self.md_env.filters.update(linked=linked_md)

    # ---------------------------------------------------------------------------------------------

    def _common(self, path: str, title: str, description: str, script: bool) -> dict[str, Any]:
        return {
            "page_title": title,
            "description": description,
            "path": path,
            "mirror": mirror_path(path),
            "mode": self.mode,
            "script": script,
            "canonical": self.base_url + path,
            "date": self.date,
        }

    def _html(self, template: str, path: str, title: str, description: str, **ctx: Any) -> str:
        script = bool(ctx.pop("script", False))
        return self.env.get_template(template).render(**self._common(path, title, description, script), **ctx)

    def _markdown(self, template: str, path: str, title: str, description: str, **ctx: Any) -> str:
        return self.md_env.get_template(template).render(
            **self._common(path, title, description, False), **ctx
        )

    def search_page(self, q: str = "") -> Page:
        """The search page (``web.pages.search_page``): the hits of ``q`` on a served site."""
        context = search_context(self.site, self.mode, q)
        return self._page("search", "/search", SEARCH_TITLE, SEARCH_DESCRIPTION, context)

    def _page(self, name: str, path: str, title: str, description: str, context: Any) -> Page:
        """Render one context through ``<name>.html`` and ``<name>.md``."""
        ctx = _fields(context)
        html = self._html(f"{name}.html", path, title, description, **ctx)
        return Page(
            path, title, description, html, self._markdown(f"{name}.md", path, title, description, **ctx)
        )

    def pair_href(self, hw_id: str, model_id: str) -> str:
        """A link to a pair: its page, or on a static copy without that page, the in-browser calculator."""
        if self.exported is None or self.exported(hw_id, model_id):
            return pair_path(hw_id, model_id)
        return "/pair/?" + urlencode({"hardware": hw_id, "model": model_id})

    # --- home ------------------------------------------------------------------------------------

    def home(self) -> Page:
        site = self.site
        title = "How fast can this machine serve this model?"
        desc = "Serving ceilings for LLMs from first principles: fit, one session, useful throughput, first token."
        default_hw = next((h.id for h in site.hardware if h.id == "nvidia-dgx-spark"), None)
        machine = None
        if self.mode == "server":  # a static export is not this machine
            machine = on_site(machine_fit(), site)
            if machine.hardware_id is not None and any(h.id == machine.hardware_id for h in site.hardware):
                default_hw = machine.hardware_id
        context = HomeContext(site.hardware, site.models, default_hw, None, machine)
        return self._page("home", "/", title, desc, context)

    # --- hardware --------------------------------------------------------------------------------

    HARDWARE_SORTS: ClassVar[dict[str, Callable[[SiteHardware], Any]]] = {
        "name": lambda h: h.name.lower(),
        "memory": lambda h: -h.memory_gb,
        "bandwidth": lambda h: -h.bandwidth_gb_per_s,
        "memory power": lambda h: -h.memory_gb * h.bandwidth_gb_per_s,
        "year": lambda h: -(h.year or 0),
        "price": lambda h: (h.price_usd is None, h.price_usd or 0),
    }

    def hardware_index(self, filters: HardwareFilters | None = None) -> Page:
        f = filters or HardwareFilters()
        rows = [h for h in self.site.hardware if f.keep(h)]
        rows.sort(key=self.HARDWARE_SORTS[f.sort])
        path = "/hardware" + (f"?{urlencode(f.params())}" if f.params() else "")
        desc = "Hardware rows with sourced capacity, bandwidth and dense compute; sort and filter."
        model = self.site.get_model(f.model) if f.model else None
        ranked = {}
        if model is not None:
            ranked = {
                r.json["hardware"]["id"]: r
                for r in rank_rows_for_model(self.site, model, href=self.pair_href)
            }
        context = HardwareIndexContext(
            rows=rows,
            groups=listing_groups([listing_row(h, ranked.get(h.id)) for h in rows]),
            model=model,
            models=[m for m in self.site.models if m.native],
            total=len(self.site.hardware),
            f=f,
            vendors=sorted({h.vendor for h in self.site.hardware}),
            classes=sorted({h.device_class for h in self.site.hardware}),
            sorts=list(self.HARDWARE_SORTS),
        )
        return self._page("hardware_index", path, "Hardware", desc, context)

    def hardware_page(self, hw: SiteHardware, layout_model_id: str | None = None) -> Page:
        """A device or system page; a system (more than one device) also shows its links and its parallel
        layouts for ``layout_model_id`` (default: the best-ranked model with a layer shape)."""
        rows = rank_rows_for_hardware(self.site, hw, href=self.pair_href)
        desc = f"{hw.name}: {hw.memory_gb:,.0f} GB at {hw.bandwidth_gb_per_s:,.0f} GB/s; which models it serves and how fast."
        runs = self.run_displays(self.site.runs_on_hardware(hw.id))
        layouts = None
        if hw.parallel is not None and hw.parallel.count > 1:
            natives = [m for m in self.site.models if m.native and m.adapter.shape is not None]
            if layout_model_id is not None:
                chosen: SiteModel | None = self.site.get_model(layout_model_id)
            else:
                by_name = {m.name: m.id for m in natives}
                chosen = layout_model(hw, natives, [by_name[r.label] for r in rows if r.label in by_name])
            if chosen is not None and chosen.adapter.shape is not None:
                layouts = system_layouts(hw, chosen, natives)
        return self._page(
            "hardware", f"/hardware/{quote(hw.id)}", hw.name, desc, HardwareContext(hw, rows, runs, layouts)
        )

    # --- models ----------------------------------------------------------------------------------

    MODEL_SORTS: ClassVar[dict[str, Callable[[ModelRow], Any]]] = {
        "name": lambda r: r.model.name.lower(),
        "size": lambda r: -(r.model.size_params or 0),
        "active": lambda r: -(r.model.active_params or r.model.published_active_params or 0),
        "weights": lambda r: -r.model.adapter.weights.resident,
        "aggregate": lambda r: -((r.decode.aggregate_tok_s or 0) if r.decode else 0),
    }

    def models_index(self, filters: ModelFilters | None = None) -> Page:
        f = filters or ModelFilters()
        fits_hw = self.site.get_hardware(f.fits) if f.fits else None
        rows = [
            ModelRow(m, result, self.pair_href(fits_hw.id, m.id) if fits_hw else f"/models/{quote(m.id)}")
            for m, result in f.select(self.site.models, fits_hw)
        ]
        rows.sort(key=self.MODEL_SORTS[f.sort])
        path = "/models" + (f"?{urlencode(f.params())}" if f.params() else "")
        desc = (
            "Audited model profiles: parameters, weights and cache per token; filter by family, size and fit."
        )
        context = ModelsIndexContext(
            rows=rows,
            total=len(self.site.models),
            f=f,
            fits_hw=fits_hw,
            hardware=self.site.hardware,
            families=family_choices(self.site.models),
            sorts=list(self.MODEL_SORTS),
        )
        return self._page("models_index", path, "Models", desc, context)

    def model_page(self, m: SiteModel) -> Page:
        rows = rank_rows_for_model(self.site, m, href=self.pair_href)
        a = m.adapter
        desc = f"{m.name}: {fmt_gb(a.weights.resident)} of weights; which hardware serves it best."
        # Like with like, as `models show` compares them (the card's MTP, embedding conventions).
        diff_total, diff_active = m.total_params_difference, m.active_params_difference
        if diff_total is None and m.total_params and m.published_total_params:
            diff_total = m.total_params / m.published_total_params - 1
        if diff_active is None and m.active_params and m.published_active_params:
            diff_active = m.active_params / m.published_active_params - 1
        context = ModelContext(m, a, rows, diff_total, diff_active, class_tables(rows))
        return self._page("model", f"/models/{quote(m.id)}", m.name, desc, context)

    # --- pair ------------------------------------------------------------------------------------

    def pair_context(
        self, pair: Pair, work: list[Work] | None = None, records: PairRecords | None = None
    ) -> tuple[str, str, str, PairContext]:
        """A pair page's path, title, description and the context its HTML and its mirror share; its
        curves come from ``records`` (one request's, computed on first use) or a fresh one."""
        hw, m = pair.hardware, pair.model
        d, p = pair.decode_result, PrefillView.of(pair.prefill_result, pair.prefill_range)
        params = pair.path_params
        single = fmt_rate(d.single_session_tok_s)
        agg = fmt_rate(d.aggregate_tok_s)
        api_decode = "/api/decode?" + urlencode({"hardware": hw.id, "model": m.id, **api_params(pair.query)})
        api_prefill = None
        if p is not None:
            api_prefill = "/api/prefill?" + urlencode(
                {
                    "hardware": hw.id,
                    "model": m.id,
                    "prompt": str(pair.prompt_tokens),
                    **api_params(pair.query, prefill=True),
                }
            )
        verdict = VERDICT_TEXT[d.verdict]
        notes = decode_notes(d)
        fits = d.verdict in ("floor_fit", "no_floor")

        differs = derivation_notes(hw.hardware, m.adapter, pair.workload)
        context = PairContext(
            hw=hw,
            m=m,
            d=d,
            notes=[page_note(n, hw.id, m.id, params, self.pair_href) for n in notes]
            + [page_note(Note.of(text), hw.id, m.id, params) for text in differs],
            remedies=remedies(notes, hw.id, m.id, params, self.pair_href),
            sideways=self._pair_fixed(hw, m)[0],
            formats=format_answers(pair, self._pair_fixed(hw, m)[0].formats, self.site),
            p=p,
            q=pair.query,
            prefill_error=pair.prefill_error,
            verdict_text=verdict,
            fits_text=f"Yes: {plural(d.batch_mem, 'session fits', 'sessions fit')}" if fits else verdict,
            single=single,
            agg=agg,
            workload=workload_text(pair),
            overhead_bytes=pair.workload.overhead_bytes,
            capacity_bytes=hw.hardware.memory_bytes,
            floor=pair.workload.floor_tok_s,
            work=decode_work(pair) + prefill_work(pair) if work is None else work,
            assumptions=assumption_rows(
                flat_assumptions(
                    workload_assumptions(d.workload, hardware=d.hardware, model=d.model, compute=d.compute)
                )
            ),
            query_string=urlencode(params),
            api_decode=api_decode,
            api_prefill=api_prefill,
            prompt_tokens=pair.prompt_tokens,
            runs=self._pair_fixed(hw, m)[1],
            records=records or PairRecords(pair),
            eq=_equations(),
        )
        title = f"{m.name} on {hw.name}"
        desc = f"{verdict}. One session {single}; useful aggregate {agg}."
        return pair_path(hw.id, m.id, params), title, desc, context

    def _pair_fixed(self, hw: SiteHardware, m: SiteModel) -> tuple[Sideways, list[RunDisplay]]:
        """What a pair page shows whatever its workload (its nearby pairs, its reported runs), built once
        per pair."""
        key = (hw.id, m.id)
        found = self._fixed.get(key)
        if found is None:
            found = (
                sideways(hw, m, self.site.hardware, self.site.models, self.pair_href),
                self.run_displays(self.site.runs_for_pair(hw.id, m.id)),
            )
            self._fixed[key] = found
        return found

    def pair_page(
        self,
        pair: Pair | PairRecords,
        *,
        folded: bool = False,
        template: str = "pair.html",
        at: str | None = None,
        answer: bool = False,
        **more: Any,
    ) -> Page:
        """A pair's page. ``folded`` (a served page computed for its workload) leaves the heavy sections
        (``pair_records.SECTIONS``) folded, each filled from its fragment (:meth:`pair_section`) when
        opened; ``template``, ``at`` (the page's own path) and ``more`` (its context) render the same
        page into another frame (the static copy's calculator, ``calculator.html``); ``answer``: only
        the page's answer regions (``?section=answer``: :func:`pair_records.answer_regions`)."""
        records = pair if isinstance(pair, PairRecords) else PairRecords(pair)
        pair = records.pair
        path, title, desc, context = self.pair_context(pair, records=records)
        path = at or path
        m = pair.model
        _, sessions = figures.memory_parts(pair)
        page_path = pair_path(pair.hardware.id, m.id, pair.path_params)
        joiner = "&" if "?" in page_path else "?"
        extra = PairFigures(
            membar=figures.memory_bar(pair),
            sessions=sessions,
            ranges=slider_ranges(pair),
            pair_data=Markup(script_json(pair_data(pair))),
            folded=folded,
            sections=SECTIONS,
            fold_hrefs={name: f"{page_path}{joiner}section={name}" for name in SECTIONS},
            all_href=f"{page_path}{joiner}section={ALL}",
        )
        if answer:  # the answer regions alone: the page's own blocks over the same context
            values = {**self._common(path, title, desc, True), **_fields(context, extra), **more}
            html = answer_regions(self.env.get_template(template), values)
        else:
            html = self._html(template, path, title, desc, script=True, **_fields(context, extra), **more)
        return Page(
            path, title, desc, html, partial(self._markdown, "pair.md", path, title, desc, **_fields(context))
        )

    def pair_section(self, records: Pair | PairRecords, name: str) -> str:
        """One foldable section of a pair page as an HTML fragment (``?section=NAME``): the template the
        full page includes inline, over the same records, so the fragment equals that part of the page."""
        records = records if isinstance(records, PairRecords) else PairRecords(records)
        pair = records.pair
        context = {
            "hw": pair.hardware,
            "m": pair.model,
            "d": pair.decode_result,
            "records": records,
            "mode": self.mode,
        }
        return self.env.get_template(f"pair_{SECTIONS[name].name}.html").render(**context)

    def pair_markdown(self, pair: Pair) -> str:
        """The pair page's markdown mirror alone (frontmatter included), without its HTML.

        The mirror of :meth:`pair_page` and llms-full.txt (which calls this directly, skipping the
        figures and the MathML) render the same context through the same template.
        """
        path, title, desc, context = self.pair_context(pair)
        return self._markdown("pair.md", path, title, desc, **_fields(context))

    # --- reported runs ---------------------------------------------------------------------------

    def run_displays(self, runs: Sequence[ReportedRun]) -> list[RunDisplay]:
        """Reported runs as the pages show them, numbers from ``reported_run_json`` (the CLI's view)."""
        return [run_display(run, self.site, self.pair_href) for run in runs]

    def validation_page(self) -> Page:
        summary = self.site.validation()
        data = validation_json(summary)
        runs = self.run_displays(summary.runs)
        title = "Validation: published runs against their ceilings"
        rate = f"{100 * data['at_or_below_rate']:.1f} %"
        desc = (
            f"{data['total']} published measurements checked against the ceiling for their own setting: "
            f"{data['at_or_below']} at or below it ({rate})."
        )
        figs = {
            "phase": figures.efficiency_strip(
                "fig-validation-phase",
                "Efficiency of every reported run, by phase",
                [(name, [r.dot for r in runs if r.data["phase"] == name]) for name in data["by_phase"]],
            ),
            "family": figures.efficiency_strip(
                "fig-validation-family",
                "Efficiency of every reported run, by hardware family",
                [
                    (name, [r.dot for r in runs if r.data["hardware_family"] == name])
                    for name in data["by_hardware_family"]
                ],
            ),
        }
        context = ValidationContext(data, rate, stats_rows(data), runs, [r for r in runs if r.above], figs)
        return self._page("validation", "/validation", title, desc, context)

    # --- prose -----------------------------------------------------------------------------------

    def economics_page(self) -> Page:
        """The serving-economics formulas, with the lecture's own numbers recomputed live."""
        blackwell = self.site.hardware_by_id.get(LECTURE_BLACKWELL) or self.site.hardware[0]
        title = "Economics: step time, balance batch and cost per token"
        desc = "The two-line roofline of a decode step, the balance batch, cost per token, and the lecture's numbers recomputed."
        return self._page("economics", "/economics", title, desc, economics_context(blackwell))

    def methodology(self) -> Page:
        title = "Methodology: how servebound computes its ceilings"
        desc = "The decode and prefill ceilings, the gates that bind them and the assumptions they rest on."
        context = ProseContext(title, sections(self.site.hardware))
        return self._page("prose", "/methodology", title, desc, context)

    def derivation(self, toy: Any = None) -> Page:
        """/derivation: the whole derivation, figures at the toy's controls (the text's defaults)."""
        toy = toy or dt.Toy()
        title = "The roofline derivation"
        desc = (
            "Memory power, the KV-aware decode bound, prefill, model adapters and worked examples, derived."
        )
        toc = [(b.anchor, b.text) for b in dv.derivation().blocks if b.kind == "h2"]
        context = DerivationContext(
            title,
            toc,
            dv.render_html(toy),
            dv.render_markdown(toy),
            credit_follows=dv.CREDIT_FOLLOWS,
            credit_url=dv.CREDIT_URL,
            credit=dv.credit_text(),
        )
        query = dt.toy_query(toy) if toy != dt.Toy() else {}
        path = "/derivation" + (f"?{urlencode(query)}" if query else "")
        return self._page("derivation", path, title, desc, context)

    def license(self) -> Page:
        desc = f"The catalog content and pages are {LICENSE_NAME}; the code is Apache-2.0."
        text = [
            f"The catalog content of this site (hardware rows, model profiles, computed pages, their markdown "
            f"mirrors, llms.txt and llms-full.txt) is licensed under the Creative Commons Attribution 4.0 "
            f"International license ({LICENSE_NAME}, {LICENSE_URL}).",
            "You may share and adapt it, including for training models, for any purpose, as long as you credit "
            "servebound as the source. Each hardware number carries its own source: credit those too.",
            "The servebound code is licensed under Apache-2.0.",
        ]
        return self._page("prose", "/license", "License", desc, ProseContext("License", [(None, text, [])]))

    # --- the manual (docs/, web.pages.manual) ---------------------------------------------------------------

    def docs_index(self) -> Page:
        return index_page(self)

    def doc_page(self, name: str) -> Page:
        return doc_page(self, name)

    def error(
        self, status: int, field: str, message: str, suggestions: list[tuple[str, str]] | None = None
    ) -> str:
        heading = {404: "Not found", 400: "That value cannot be used"}.get(status, "Error")
        return self._html(
            "error.html",
            "/",
            heading,
            message,
            heading=heading,
            field=field,
            message=message,
            suggestions=[{"href": h, "label": label} for h, label in (suggestions or [])],
        )
