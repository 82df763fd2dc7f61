"""Every page of the site, as HTML and as its markdown mirror, built from one context each.

A page is a :class:`Page` (path, title, HTML, markdown). The served app and the static export call the
same builders, so the two sites cannot drift, and each mirror is generated from the same numbers as its
page. Names from the catalog are escaped everywhere: Jinja autoescapes HTML, :func:`md` escapes markdown.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar
from urllib.parse import quote, urlencode

from jinja2 import Environment, PackageLoader, select_autoescape
from markupsafe import Markup

from servebound.rank import rank_hardware, rank_models, rank_row_json
from servebound.report import fmt_gb, fmt_int, fmt_rate
from servebound.validation import ReportedRun, reported_run_json, validation_json
from servebound.web import figures
from servebound.web.mathml import mathml
from servebound.web.site import (
    GB,
    MAX_SITE_CONTEXT_TOKENS,
    Pair,
    SiteData,
    SiteHardware,
    SiteModel,
    WorkloadQuery,
    fmt_params,
    fmt_seconds,
)
from servebound.web.work import GATE_TEXT, Work, decode_work, prefill_work

LICENSE_NAME = "CC BY 4.0"
LICENSE_URL = "https://creativecommons.org/licenses/by/4.0/"
SITE_NAME = "servebound"

VERDICT_TEXT = {
    "floor_fit": "Fits, and a batch clears the floor",
    "no_floor": "Fits, but no batch clears the per-session floor",
    "no_session_fit": "The weights fit, but no session fits",
    "no_resident_fit": "Does not fit in memory",
}


@dataclass(frozen=True)
class Page:
    """One page: its canonical path, title, a one-line description, the HTML and the markdown mirror."""

    path: str
    title: str
    description: str
    html: str
    markdown: str


def mirror_path(path: str) -> str:
    """The markdown mirror of a page path: the same URL plus ``.md`` (``/`` is ``/index.md``)."""
    base, _, query = path.partition("?")
    base = "/index" if base in ("", "/") else base.rstrip("/")
    return f"{base}.md" + (f"?{query}" if query else "")


def md(text: object) -> str:
    """Text as markdown that renders as itself: markup and emphasis characters escaped."""
    out = str(text)
    for ch in "\\`*_[]<>|#":
        out = out.replace(ch, "\\" + ch)
    return out.replace("\n", " ")


def pair_path(hw_id: str, model_id: str, params: Mapping[str, str] | None = None) -> str:
    path = f"/pair/{quote(hw_id, safe='')}/{quote(model_id, safe='')}"
    return path + (f"?{urlencode(dict(params))}" if params else "")


def frontmatter(title: str, url: str, description: str) -> str:
    """The block every markdown document starts with: title, canonical URL, license."""
    return (
        "---\n"
        f"title: {json.dumps(title)}\n"
        f"url: {json.dumps(url)}\n"
        f"description: {json.dumps(description)}\n"
        f"license: {LICENSE_NAME} ({LICENSE_URL})\n"
        f"attribution: {SITE_NAME}\n"
        "---\n\n"
    )


class Renderer:
    """The Jinja environment and the page builders. ``mode`` is ``server`` or ``static``."""

    def __init__(
        self, site: SiteData, *, mode: str = "server", exported: Callable[[str, str], bool] | None = None
    ) -> None:
        self.site = site
        self.mode = mode
        self.exported = exported
        self.env = Environment(
            loader=PackageLoader("servebound.web", "templates"),
            autoescape=select_autoescape(["html"]),
            trim_blocks=False,
        )
        self.env.globals.update(
            fmt_gb=fmt_gb, fmt_int=fmt_int, fmt_rate=fmt_rate, fmt_params=fmt_params, fmt_seconds=fmt_seconds
        )

    # ---------------------------------------------------------------------------------------------

    def _html(
        self, template: str, path: str, title: str, description: str, *, script: bool = False, **ctx: Any
    ) -> str:
        return self.env.get_template(template).render(
            page_title=title,
            description=description,
            mirror=mirror_path(path),
            mode=self.mode,
            script=script,
            **ctx,
        )

    def _page(self, path: str, title: str, description: str, html: str, body_md: str) -> Page:
        return Page(path, title, description, html, frontmatter(title, path, description) + body_md)

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
        html = self._html(
            "home.html",
            "/",
            title,
            desc,
            hardware=site.hardware,
            models=site.models,
            default_hw=default_hw,
            default_model=None,
        )
        lines = [
            f"# {title}\n",
            "servebound computes serving ceilings from first principles. For a machine and a model it answers:\n",
            "1. Does it fit? (weights plus overhead against capacity)",
            "2. How fast is one session? (bandwidth over bytes read per token)",
            "3. What useful throughput across sessions? (the most tok/s with every session above a floor)",
            "4. How long is the wait for the first token? (prefill, memory or compute bound)\n",
            "Every pair has a page at `/pair/{hardware id}/{model id}`, with the workload as query parameters "
            "(`alloc_context`, `read_context`, `floor`, `overhead_gb`, `batch`, `prompt`, `expert_traffic`).\n",
            "## Browse\n",
            f"- [{len(site.hardware)} hardware rows](/hardware.md)",
            f"- [{len(site.models)} model profiles](/models.md)",
            "- [Methodology](/methodology.md)",
            "- [Validation: published runs against their ceilings](/validation.md)",
            "- [License](/license.md)",
            "- JSON API: `/api/decode`, `/api/prefill`, `/api/hardware`, `/api/models`, `/api/rank`, `/api/validation` "
            "(OpenAPI at `/openapi.json`, served sites only)",
        ]
        return self._page("/", title, desc, html, "\n".join(lines) + "\n")

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
        title = "Hardware"
        desc = "Hardware rows with sourced capacity, bandwidth and dense compute; sort and filter."
        html = self._html(
            "hardware_index.html",
            path,
            title,
            desc,
            rows=rows,
            total=len(self.site.hardware),
            f=f,
            vendors=sorted({h.vendor for h in self.site.hardware}),
            classes=sorted({h.device_class for h in self.site.hardware}),
            sorts=list(self.HARDWARE_SORTS),
        )
        lines = [
            f"# {title}\n",
            f"{len(rows)} of {len(self.site.hardware)} rows. Decimal GB and GB/s; dense TFLOPS.\n",
            "| Hardware | Vendor | Class | Memory (GB) | Bandwidth (GB/s) | BF16 (TFLOPS) | Year |",
            "| --- | --- | --- | ---: | ---: | ---: | ---: |",
        ]
        for h in rows:
            bf16 = h.compute_tflops.get("bf16")
            lines.append(
                f"| [{md(h.name)}](/hardware/{quote(h.id)}.md) | {md(h.vendor)} | {md(h.device_class)} | "
                f"{h.memory_gb:,.0f} | {h.bandwidth_gb_per_s:,.0f} | {'' if bf16 is None else f'{bf16:,.0f}'} | "
                f"{h.year or ''} |"
            )
        return self._page(path, title, desc, html, "\n".join(lines) + "\n")

    def hardware_page(self, hw: SiteHardware) -> Page:
        rows = rank_rows_for_hardware(self.site, hw, href=self.pair_href)
        path = f"/hardware/{quote(hw.id)}"
        title = hw.name
        desc = f"{hw.name}: {hw.memory_gb:,.0f} GB at {hw.bandwidth_gb_per_s:,.0f} GB/s; which models it serves and how fast."
        runs = self.run_displays(self.site.runs_on_hardware(hw.id))
        html = self._html("hardware.html", path, title, desc, hw=hw, rows=rows, runs=runs)
        lines = [
            f"# {md(hw.name)}\n",
            f"{md(hw.vendor)}, {md(hw.device_class)}{f', {hw.year}' if hw.year else ''}. Id `{hw.id}`.\n",
            "| Quantity | Value | Source |",
            "| --- | ---: | --- |",
            f"| Memory capacity C | {hw.memory_gb:,.1f} GB ({md(hw.memory_type)}) | {md(hw.sources.get('memory_gb', ''))} |",
            f"| Memory bandwidth R | {hw.bandwidth_gb_per_s:,.1f} GB/s ({hw.hardware.provenance}) | "
            f"{md(hw.sources.get('bandwidth_gb_per_s', ''))} |",
        ]
        for mode, rate in hw.compute_tflops.items():
            lines.append(
                f"| Dense {mode} | {rate:,.1f} {'TOPS' if mode == 'int8' else 'TFLOPS'} | {md(hw.sources.get(mode, ''))} |"
            )
        if hw.price_usd:
            lines.append(f"| Price | ${hw.price_usd:,.0f} | {md(hw.sources.get('price_usd', ''))} |")
        if hw.notes:
            lines.append(f"\nNotes: {md(hw.notes)}\n")
        lines += ["\n## Models on this hardware (default workload)\n", *rank_markdown(rows, "model")]
        if runs:
            lines += [
                "\n## Published runs on this hardware\n",
                f"{len(runs)} published measurements, each against the ceiling for its own setting "
                "(see [the validation page](/validation.md)). Runs on models without a profile here (a model "
                "file in the run catalog) are listed only on this page and the validation page.\n",
                *runs_markdown(runs, show_hardware=False),
            ]
        return self._page(path, title, desc, html, "\n".join(lines) + "\n")

    # --- models ----------------------------------------------------------------------------------

    MODEL_SORTS: ClassVar[dict[str, Callable[[ModelRow], Any]]] = {
        "name": lambda r: r.model.name.lower(),
        "size": lambda r: -(r.model.size_params or 0),
        "active": lambda r: -(r.model.active_params or r.model.published_active_params or 0),
        "weights": lambda r: -r.model.adapter.weights.resident,
        "aggregate": lambda r: -((r.decode.aggregate_tok_per_s or 0) if r.decode else 0),
    }

    def models_index(self, filters: ModelFilters | None = None) -> Page:
        f = filters or ModelFilters()
        fits_hw = self.site.get_hardware(f.fits) if f.fits else None
        rows: list[ModelRow] = []
        for m in self.site.models:
            if not f.keep(m):
                continue
            result = None
            if fits_hw is not None:
                from servebound.api import decode

                result = decode(fits_hw.hardware, m.adapter)
                if not result.fits:
                    continue
            href = self.pair_href(fits_hw.id, m.id) if fits_hw else f"/models/{quote(m.id)}"
            rows.append(ModelRow(m, result, href))
        rows.sort(key=self.MODEL_SORTS[f.sort])
        path = "/models" + (f"?{urlencode(f.params())}" if f.params() else "")
        title = "Models"
        desc = (
            "Audited model profiles: parameters, weights and cache per token; filter by family, size and fit."
        )
        html = self._html(
            "models_index.html",
            path,
            title,
            desc,
            rows=rows,
            total=len(self.site.models),
            f=f,
            fits_hw=fits_hw,
            hardware=self.site.hardware,
            families=sorted({m.family for m in self.site.models if m.family}),
            sorts=list(self.MODEL_SORTS),
        )
        lines = [
            f"# {title}\n",
            f"{len(rows)} of {len(self.site.models)} profiles"
            + (f" that fit on {md(fits_hw.name)} at the default workload" if fits_hw else "")
            + ".\n",
            "| Model | Family | Total params | Active params | Weights |",
            "| --- | --- | ---: | ---: | ---: |",
        ]
        for r in rows:
            m = r.model
            lines.append(
                f"| [{md(m.name)}](/models/{quote(m.id)}.md) | {md(m.family)} | {fmt_params(m.size_params)} | "
                f"{fmt_params(m.active_params)} | {fmt_gb(m.adapter.weights.resident)} |"
            )
        return self._page(path, title, desc, html, "\n".join(lines) + "\n")

    def model_page(self, m: SiteModel) -> Page:
        rows = rank_rows_for_model(self.site, m, href=self.pair_href)
        path = f"/models/{quote(m.id)}"
        a = m.adapter
        title = m.name
        desc = f"{m.name}: {fmt_gb(a.weights.resident)} of weights; which hardware serves it best."
        diff_total = diff_active = None
        if m.total_params and m.published_total_params:
            diff_total = m.total_params / m.published_total_params - 1
        if m.active_params and m.published_active_params:
            diff_active = m.active_params / m.published_active_params - 1
        html = self._html(
            "model.html",
            path,
            title,
            desc,
            m=m,
            a=a,
            rows=rows,
            diff_total=diff_total,
            diff_active=diff_active,
        )
        lines = [
            f"# {md(m.name)}\n",
            f"{md(m.family or 'model')}, {'mixture of experts' if m.is_moe else 'dense'}. Id `{m.id}`.\n",
            "## Profile\n",
            f"- Weights resident: {fmt_gb(a.weights.resident)} ({md(a.weight_precision or '')})",
            f"- Weights swept per token (W_active): {fmt_gb(a.weights.active)}",
            f"- KV cache per token (global layers): {a.kv_alloc.global_bytes_per_token:,.0f} bytes",
            f"- K_alloc at 100,000 tokens: {fmt_gb(a.kv_alloc.bytes_at(100_000))}",
        ]
        if a.weights.experts:
            lines.append(f"- Experts: {a.weights.experts.per_token} of {a.weights.experts.routed} per token")
        if a.context_limit_tokens:
            lines.append(f"- Context limit: {a.context_limit_tokens:,} tokens")
        lines += [
            "\n## Audit\n",
            f"- Total parameters (derived): {fmt_params(m.total_params)}; model card: {fmt_params(m.published_total_params)}",
            f"- Active parameters (derived): {fmt_params(m.active_params)}; model card: "
            f"{fmt_params(m.published_active_params)}",
            f"- Checkpoint bytes (exact): {f'{m.checkpoint_bytes:,.0f}' if m.checkpoint_bytes else 'not read'}",
        ]
        lines += [f"- Source, {md(k)}: {md(v)}" for k, v in m.source.items()]
        lines += [f"- {md(k)}: {md(v)}" for k, v in m.facts.items()]
        if m.steps:
            lines += ["\n### Derivation\n", "| Quantity | Value | Arithmetic |", "| --- | ---: | --- |"]
            lines += [f"| `{q}` | {v:,.6g} | {md(f)} |" for q, v, f in m.steps]
        lines += ["\n## Hardware for this model (default workload)\n", *rank_markdown(rows, "hardware")]
        return self._page(path, title, desc, html, "\n".join(lines) + "\n")

    # --- pair ------------------------------------------------------------------------------------

    def _pair_texts(self, pair: Pair) -> dict[str, Any]:
        """What a pair page's HTML and its mirror share: path, title, description, links and phrases."""
        hw, m, d, p = pair.hardware, pair.model, pair.decode, pair.prefill
        params = pair.query.params()
        single = fmt_rate(d["single_session_tok_s"])
        agg = fmt_rate(d["aggregate_tok_s"])
        api_decode = "/api/decode?" + urlencode({"hardware": hw.id, "model": m.id, **_api_params(pair.query)})
        api_prefill = None
        if p is not None:
            api_prefill = "/api/prefill?" + urlencode(
                {
                    "hardware": hw.id,
                    "model": m.id,
                    "prompt": str(pair.prompt_tokens),
                    **_api_params(pair.query, prefill=True),
                }
            )
        fits = d["verdict"] in ("floor_fit", "no_floor")
        return {
            "params": params,
            "path": pair_path(hw.id, m.id, params),
            "title": f"{m.name} on {hw.name}",
            "desc": f"{VERDICT_TEXT[d['verdict']]}. One session {single}; useful aggregate {agg}.",
            "single": single,
            "agg": agg,
            "api_decode": api_decode,
            "api_prefill": api_prefill,
            "fits_text": f"Yes: {fmt_int(d['batch_mem'])} sessions fit"
            if fits
            else VERDICT_TEXT[d["verdict"]],
        }

    def pair_page(self, pair: Pair) -> Page:
        hw, m, d, p = pair.hardware, pair.model, pair.decode, pair.prefill
        t = self._pair_texts(pair)
        path, title, desc = t["path"], t["title"], t["desc"]
        agg_chart, per_chart = figures.decode_charts(pair)
        pre_charts = figures.prefill_charts(pair)
        _, sessions = figures.memory_parts(pair)
        work = decode_work(pair) + prefill_work(pair)
        ranges = {
            "alloc_max": max(
                pair.query.alloc_context,
                min(MAX_SITE_CONTEXT_TOKENS, m.adapter.context_limit_tokens or 1_000_000),
            ),
            "overhead_max": max(64, math.ceil(pair.query.overhead_gb)),
            "batch_max": max(256, min(1_000_000, int((d["batch_mem"] or 0) * 2)), pair.query.batch or 1),
            "prompt_max": max(pair.prompt_tokens or 1, pair.query.alloc_context),
        }
        html = self._html(
            "pair.html",
            path,
            title,
            desc,
            script=True,
            hw=hw,
            m=m,
            d=d,
            p=p,
            q=pair.query,
            prefill_error=pair.prefill_error,
            verdict_text=VERDICT_TEXT[d["verdict"]],
            fits_text=t["fits_text"],
            overhead_bytes=pair.workload.overhead_bytes,
            capacity_bytes=hw.hardware.memory_bytes,
            floor=pair.workload.floor_tok_per_s,
            membar=figures.memory_bar(pair),
            sessions=sessions,
            fig_aggregate=figures.render_chart(agg_chart),
            fig_per_session=figures.render_chart(per_chart),
            fig_prefill_rate=figures.render_chart(pre_charts[0]) if pre_charts else None,
            fig_prefill_time=figures.render_chart(pre_charts[1]) if pre_charts else None,
            work=work,
            assumptions=_flat(d["assumptions"]),
            query_string=urlencode(t["params"]),
            api_decode=t["api_decode"],
            api_prefill=t["api_prefill"],
            ranges=ranges,
            prompt_tokens=pair.prompt_tokens,
            pair_data=Markup(script_json(pair_data(pair))),
            runs=self.run_displays(self.site.runs_for_pair(hw.id, m.id)),
        )
        return Page(path, title, desc, html, self.pair_markdown(pair, work))

    def pair_markdown(self, pair: Pair, work: list[Work] | None = None) -> str:
        """The pair page's markdown mirror alone (frontmatter included), without its HTML.

        :meth:`pair_page` takes its mirror from here, so the mirror and llms-full.txt (which calls this
        directly, skipping the figures and the MathML) carry the same text.
        """
        hw, m, d, p = pair.hardware, pair.model, pair.decode, pair.prefill
        t = self._pair_texts(pair)
        if work is None:
            work = decode_work(pair) + prefill_work(pair)
        api_decode, api_prefill = t["api_decode"], t["api_prefill"]
        lines = [
            f"# {md(m.name)} on {md(hw.name)}\n",
            f"**{VERDICT_TEXT[d['verdict']]}.** Workload: "
            + ", ".join(f"{k}={v}" for k, v in _workload_text(pair).items())
            + ".\n",
            "## The four questions\n",
            f"- Does it fit? {t['fits_text']}. Weights {fmt_gb(d['resident_bytes'])}, overhead "
            f"{fmt_gb(pair.workload.overhead_bytes)}, capacity {fmt_gb(hw.hardware.memory_bytes)}, margin "
            f"{fmt_gb(d['resident_margin_bytes'])}; b_mem = {fmt_int(d['batch_mem'])} sessions of "
            f"{fmt_gb(d['kv_alloc_bytes'])}.",
            f"- One session: {t['single']} (context read per token {fmt_gb(d['kv_read_bytes'])}).",
            f"- Useful throughput across sessions: {t['agg']} at b* = {fmt_int(d['batch_star'])}, each session "
            f"{fmt_rate(d['per_session_tok_s'])} (floor {pair.workload.floor_tok_per_s:g} tok/s).",
        ]
        if d["forced"]:
            f = d["forced"]
            lines.append(
                f"- At batch {f['batch']:,}: {fmt_rate(f['aggregate_tok_s'])} aggregate, "
                f"{fmt_rate(f['per_session_tok_s'])} per session."
            )
        if p is not None:
            cross = p.get("crossover_tokens")
            lines.append(
                f"- First-token wait: {fmt_seconds(p['time_s'])} for a {p['prompt_tokens']:,}-token prompt at batch 1 "
                f"({fmt_rate(p['tok_s'])}, bound by {p['bound_by']})"
                + (f"; crossover S* = {cross:,.0f} tokens" if cross else "")
                + "."
            )
        else:
            lines.append(f"- First-token wait: {md(pair.prefill_error)}")
        runs = self.run_displays(self.site.runs_for_pair(hw.id, m.id))
        lines += ["", *pair_runs_markdown(runs)]
        lines += ["\n## Show the work\n"]
        for w in work:
            lines += [f"### {md(w.title)}\n", f"$$ {w.tex} $$\n", f"Gate: {md(w.gate)}\n"]
        lines += ["## Notes\n", *[f"- {md(n)}" for n in d["notes"]], "\n## Assumptions\n"]
        lines += [f"- {md(k)}: {md(v)}" for k, v in _flat(d["assumptions"])]
        lines += [
            "\n## Figures (data)\n",
            "The HTML page draws these as SVG; here are the points at a few batches.\n",
            *figure_table(pair),
            f"\nJSON: [{api_decode}]({api_decode})"
            + (f", [{api_prefill}]({api_prefill})" if api_prefill else ""),
        ]
        return frontmatter(t["title"], t["path"], t["desc"]) + "\n".join(lines) + "\n"

    # --- reported runs ---------------------------------------------------------------------------

    def run_displays(self, runs: Sequence[ReportedRun]) -> list[RunDisplay]:
        """Reported runs as the pages show them, numbers from ``reported_run_json`` (the CLI's view)."""
        return [run_display(run, self.site, self.pair_href) for run in runs]

    def validation_page(self) -> Page:
        summary = self.site.validation()
        data = validation_json(summary)
        runs = self.run_displays(summary.runs)
        above = [r for r in runs if r.above]
        path = "/validation"
        title = "Validation: published runs against their ceilings"
        rate = f"{100 * data['at_or_below_rate']:.0f} %"
        desc = (
            f"{data['total']} published measurements checked against the ceiling for their own setting: "
            f"{data['at_or_below']} at or below it ({rate})."
        )
        groups = stats_rows(data)
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
        html = self._html(
            "validation.html",
            path,
            title,
            desc,
            data=data,
            rate=rate,
            groups=groups,
            runs=runs,
            above=above,
            figs=figs,
        )
        lines = [
            f"# {title}\n",
            f"{data['total']} published runs; **{data['at_or_below']} sit at or below their ceiling** ({rate}). "
            "Efficiency is the measured figure over the ceiling servebound computes for the run's own setting "
            "(hardware, model profile, engine's quantization, concurrency, context, prompt). A run above 100 % "
            "means the inputs do not describe the run; each is investigated and explained below, never hidden. "
            "The same numbers: `servebound validate --json`"
            + (" and [/api/validation](/api/validation)" if self.mode == "server" else "")
            + ".\n",
            "## Efficiency distribution\n",
            "| Group | Runs | At or below | Min | p25 | Median | p75 | Max |",
            "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
            *[
                f"| {md(g.label)} | {g.count} | {g.at_or_below} | {g.min} | {g.p25} | {g.median} | {g.p75} | {g.max} |"
                for g in groups
            ],
            "\nThe HTML page draws each run's efficiency as a dot on a 0 to max axis with the 100 % line, by "
            "phase and by hardware family; the table of runs below holds every value.\n",
            "## Above the ceiling (investigated)\n",
        ]
        if above:
            lines += [
                f"- **{md(r.id)}** ({md(r.hardware_name)}, {md(r.model_label)}): {r.efficiency}. "
                f"{md(r.data['explanation'])}"
                for r in above
            ]
        else:
            lines.append("Every run sits at or below its ceiling.")
        lines += ["\n## Every run\n", *runs_markdown(runs, show_hardware=True)]
        return self._page(path, title, desc, html, "\n".join(lines) + "\n")

    # --- prose -----------------------------------------------------------------------------------

    def methodology(self) -> Page:
        from servebound.web.methodology import SECTIONS

        title = "Methodology: how servebound computes its ceilings"
        desc = "The decode and prefill ceilings, the gates that bind them and the assumptions they rest on."
        html_parts = [f"<h1>{Markup.escape(title)}</h1>"]
        md_parts = [f"# {title}\n"]
        for heading, paragraphs, formulas in SECTIONS:
            html_parts.append(f"<h2>{Markup.escape(heading)}</h2>")
            md_parts.append(f"## {heading}\n")
            for para in paragraphs:
                html_parts.append(f"<p>{Markup.escape(para)}</p>")
                md_parts.append(f"{para}\n")
            for tex in formulas:
                html_parts.append(str(mathml(tex, block=True)))
                md_parts.append(f"$$ {tex} $$\n")
        html = self._html("prose.html", "/methodology", title, desc, body=Markup("\n".join(html_parts)))
        return self._page("/methodology", title, desc, html, "\n".join(md_parts))

    def license(self) -> Page:
        title = "License"
        desc = f"The catalog content and pages are {LICENSE_NAME}; the code is Apache-2.0."
        text = [
            f"The catalog content of this site (hardware rows, model profiles, computed pages, their markdown "
            f"mirrors, llms.txt and llms-full.txt) is licensed under the Creative Commons Attribution 4.0 "
            f"International license ({LICENSE_NAME}, {LICENSE_URL}).",
            "You may share and adapt it, including for training models, for any purpose, as long as you credit "
            "servebound as the source. Each hardware number carries its own source: credit those too.",
            "The servebound code is licensed under Apache-2.0.",
        ]
        body = Markup("<h1>License</h1>") + Markup("").join(Markup("<p>{}</p>").format(t) for t in text)
        html = self._html("prose.html", "/license", title, desc, body=body)
        return self._page("/license", title, desc, html, "# License\n\n" + "\n\n".join(text) + "\n")

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


# --------------------------------------------------------------------------------------------------
# Filters and ranking rows
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class HardwareFilters:
    vendor: str | None = None
    cls: str | None = None
    min_memory_gb: float | None = None
    sort: str = "name"

    def keep(self, h: SiteHardware) -> bool:
        if self.vendor and h.vendor.lower() != self.vendor.lower():
            return False
        if self.cls and h.device_class.lower() != self.cls.lower():
            return False
        return not (self.min_memory_gb is not None and h.memory_gb < self.min_memory_gb)

    def params(self) -> dict[str, str]:
        out = {}
        if self.vendor:
            out["vendor"] = self.vendor
        if self.cls:
            out["class"] = self.cls
        if self.min_memory_gb is not None:
            out["min_memory_gb"] = f"{self.min_memory_gb:g}"
        if self.sort != "name":
            out["sort"] = self.sort
        return out


@dataclass(frozen=True)
class ModelFilters:
    family: str | None = None
    min_params_b: float | None = None
    max_params_b: float | None = None
    fits: str | None = None
    sort: str = "name"

    def keep(self, m: SiteModel) -> bool:
        if self.family and m.family.lower() != self.family.lower():
            return False
        size = (m.size_params or 0) / 1e9
        if self.min_params_b is not None and size < self.min_params_b:
            return False
        return not (self.max_params_b is not None and size > self.max_params_b)

    def params(self) -> dict[str, str]:
        out = {}
        if self.family:
            out["family"] = self.family
        if self.min_params_b is not None:
            out["min_params_b"] = f"{self.min_params_b:g}"
        if self.max_params_b is not None:
            out["max_params_b"] = f"{self.max_params_b:g}"
        if self.fits:
            out["fits"] = self.fits
        if self.sort != "name":
            out["sort"] = self.sort
        return out


@dataclass(frozen=True)
class ModelRow:
    model: SiteModel
    decode: Any
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


def _rank_display(row: Any, href: str, label: str) -> RankDisplay:
    d = row.decode
    ttft = row.ttft_s
    return RankDisplay(
        href=href,
        label=label,
        verdict=d.verdict.value,
        verdict_text=VERDICT_TEXT[d.verdict.value],
        single=fmt_rate(d.single_session_tok_per_s),
        aggregate=fmt_rate(d.aggregate_tok_per_s),
        batch_star=fmt_int(d.batch_star),
        ttft=fmt_seconds(ttft),
        json=rank_row_json(row),
    )


def rank_rows_for_hardware(
    site: SiteData,
    hw: SiteHardware,
    workload: Any = None,
    href: Callable[[str, str], str] = pair_path,
    *,
    native_only: bool = False,
) -> list[RankDisplay]:
    """Every model on this machine, best useful throughput first (``servebound.rank.rank_models``)."""
    models = [m for m in site.models if m.native or not native_only]
    by_adapter = {id(m.adapter): m for m in models}
    rows = rank_models(hw.hardware, [m.adapter for m in models], workload)
    out = []
    for row in rows:
        m = by_adapter[id(row.model)]
        out.append(_rank_display(row, href(hw.id, m.id), m.name))
    return out


def rank_rows_for_model(
    site: SiteData, m: SiteModel, workload: Any = None, href: Callable[[str, str], str] = pair_path
) -> list[RankDisplay]:
    """Every machine for this model, best useful throughput first (``servebound.rank.rank_hardware``)."""
    by_hw = {id(h.hardware): h for h in site.hardware}
    rows = rank_hardware(m.adapter, [(h.hardware, h.price_usd) for h in site.hardware], workload)
    out = []
    for row in rows:
        h = by_hw[id(row.hardware)]
        out.append(_rank_display(row, href(h.id, m.id), h.name))
    return out


def rank_markdown(rows: list[RankDisplay], kind: str) -> list[str]:
    head = "Model" if kind == "model" else "Hardware"
    lines = [
        f"| {head} | Verdict | One session | Useful aggregate | b* | First token (8k) |",
        "| --- | --- | ---: | ---: | ---: | ---: |",
    ]
    for r in rows:
        lines.append(
            f"| [{md(r.label)}]({mirror_path(r.href)}) | {r.verdict_text} | {r.single} | {r.aggregate} | "
            f"{r.batch_star} | {r.ttft} |"
        )
    return lines


# --------------------------------------------------------------------------------------------------
# Pair helpers
# --------------------------------------------------------------------------------------------------


def _flat(assumptions: Mapping[str, Any]) -> list[tuple[str, str]]:
    out = []
    for key, value in assumptions.items():
        if isinstance(value, dict):
            value = ", ".join(f"{k}={v}" for k, v in value.items())
        elif isinstance(value, float):
            value = f"{value:,.6g}"
        elif isinstance(value, int) and not isinstance(value, bool):
            value = f"{value:,}"
        out.append((key, str(value)))
    return out


def _api_params(q: WorkloadQuery, *, prefill: bool = False) -> dict[str, str]:
    params = q.params()
    params.pop("prompt", None)
    if prefill:
        for key in ("read_context", "floor", "batch"):
            params.pop(key, None)
    return params


def _workload_text(pair: Pair) -> dict[str, str]:
    q = pair.query
    out = {
        "overhead_gb": f"{q.overhead_gb:g}",
        "alloc_context": f"{q.alloc_context:,}",
        "read_context": f"{q.read_context:,}",
        "floor": f"{q.floor:g} tok/s",
        "batch": "max (b*)" if q.batch is None else f"{q.batch:,}",
        "prompt": f"{pair.prompt_tokens:,}" if pair.prompt_tokens else "n/a",
    }
    return out


def figure_table(pair: Pair) -> list[str]:
    """A few points of each curve as a markdown table (the mirror's text form of the figures)."""
    batches = figures.decode_batches(pair)
    pick = sorted({int(b) for b in batches[:: max(1, len(batches) // 8)]} | {int(batches[-1])})
    from servebound.core.decode import curve

    agg, per = curve(pair.hardware.hardware, pair.model.adapter, pair.workload, pick)
    lines = ["| batch b | aggregate T(b) | per session r(b) |", "| ---: | ---: | ---: |"]
    lines += [
        f"| {b:,} | {fmt_rate(float(a))} | {fmt_rate(float(r))} |"
        for b, a, r in zip(pick, agg, per, strict=True)
    ]
    return lines


def _kv(shape: Any) -> dict[str, float]:
    return {
        "global": shape.global_bytes_per_token,
        "local": shape.local_bytes_per_token,
        "window": shape.window_tokens,
        "state": shape.state_bytes,
    }


def model_data(m: SiteModel) -> dict[str, Any]:
    """A model's adapter quantities for the in-browser calculator (bytes, FLOPs, tokens)."""
    a = m.adapter
    w = a.weights
    pre = a.prefill
    return {
        "id": m.id,
        "name": m.name,
        "native": m.native,
        "base_id": m.base_id or m.id,
        "embedding_bytes": w.embedding_bytes,
        "always_on_bytes": w.always_on_bytes,
        "expert_bytes": w.expert_bytes,
        "routed": w.experts.routed if w.experts else 0,
        "per_token": w.experts.per_token if w.experts else 0,
        "resident_bytes": w.resident,
        "kv_alloc": _kv(a.kv_alloc),
        "kv_read": _kv(a.kv_read),
        "context_limit": a.context_limit_tokens,
        "prefill": None
        if pre is None
        else {
            "linear_active_params": pre.linear_active_params,
            "global": pre.attention_global_flops_per_pair,
            "local": pre.attention_local_flops_per_pair,
            "window": pre.attention_window_tokens,
            "state": pre.attention_state_flops_per_token,
            "kv_write": pre.kv_write_bytes_per_token,
            "linear_mode": pre.linear_mode,
            "attention_mode": pre.attention_mode,
        },
    }


def pair_data(pair: Pair) -> dict[str, Any]:
    """What the page's script needs to recompute in the browser: the adapter and hardware quantities."""
    hw = pair.hardware.hardware
    return {
        "hardware": {
            "id": pair.hardware.id,
            "name": pair.hardware.name,
            "memory_bytes": hw.memory_bytes,
            "bandwidth_bytes_per_s": hw.bandwidth_bytes_per_s,
            "compute_flop_per_s": dict(hw.compute_flop_per_s),
            "provenance": hw.provenance,
        },
        "model": model_data(pair.model),
        "query": {
            "alloc_context": pair.query.alloc_context,
            "read_context": pair.query.read_context,
            "floor": pair.query.floor,
            "overhead_gb": pair.query.overhead_gb,
            "batch": pair.query.batch,
            "prompt": pair.prompt_tokens,
            "expert_traffic": pair.query.expert_traffic,
        },
        "max_batch": 1_000_000_000,
        "gb": GB,
        "gates": GATE_TEXT,
        "verdicts": VERDICT_TEXT,
    }


def script_json(data: Any) -> str:
    """JSON safe inside a <script> element: no ``</script>`` or comment openers can appear."""
    text = json.dumps(data, allow_nan=False, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


# --------------------------------------------------------------------------------------------------
# Reported runs
# --------------------------------------------------------------------------------------------------


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


def _percent(value: float) -> str:
    return f"{100 * value:.1f} %"


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
            f"{data['concurrency']:,} session{'s' if data['concurrency'] != 1 else ''}; reads "
            f"{data['read_context_tokens']:,} tokens per step"
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
        model_label=model.name if model is not None else f"{entry.model} (run model file)",
        pair_href=href(entry.hardware, entry.model) if hw is not None and model is not None else None,
        measured=measured,
        ceiling=ceiling,
        efficiency=_percent(data["efficiency"]),
        setting=setting,
        source_href=url if url.startswith(("https://", "http://")) else None,
        above=not data["at_or_below"],
    )


def _md_url(url: str) -> str:
    return quote(url, safe=":/?#&=%+,;@!$*'~.-_")


def _md_source(r: RunDisplay) -> str:
    if r.source_href:
        return f"[source]({_md_url(r.source_href)})"
    return md(r.data["source_url"])


def pair_runs_markdown(runs: Sequence[RunDisplay]) -> list[str]:
    """The pair mirror's "Measured next to the ceiling" section (one line when no run is published)."""
    lines = ["## Measured next to the ceiling\n"]
    if not runs:
        return [*lines, "No published runs for this pair yet ([every run](/validation.md))."]
    lines.append(
        "Published measurements of this pair, each against the ceiling for the run's own setting "
        "(its concurrency, context and prompt; not the workload above).\n"
    )
    for r in runs:
        d = r.data
        lines += [
            f"### {md(d['engine'])}: {md(d['engine_version'])}\n",
            f"- Measured: {r.measured}; ceiling for the same setting: {r.ceiling}; efficiency "
            f"**{r.efficiency}**" + (" (above the ceiling)" if r.above else ""),
            f"- Quantization: {md(d['quantization'])}",
            f"- Setting: {r.setting}",
            f"- Metric: {md(d['metric'])}: {md(d['metric_definition'])}",
            f"- Context: {md(d['context_definition'])}",
            f"- Source ({md(d['source_kind'])}): {_md_source(r)}: \u201c{md(d['source_quote'])}\u201d",
        ]
        if r.above:
            lines.append(f"- Why above the ceiling: {md(d['explanation'])}")
        if d["notes"]:
            lines.append(f"- Notes: {md(d['notes'])}")
        lines.append(f"- Run id: `{r.id}`\n")
    return lines


def runs_markdown(runs: Sequence[RunDisplay], *, show_hardware: bool) -> list[str]:
    """Reported runs as one markdown table, then every above-ceiling run with its explanation."""
    head = (
        "| Run | " + ("Hardware | " if show_hardware else "") + "Model | Engine | Quantization | Setting | "
    )
    head += "Measured | Ceiling | Efficiency | Source |"
    lines = [
        head,
        "| --- | "
        + ("--- | " if show_hardware else "")
        + "--- | --- | --- | --- | ---: | ---: | ---: | --- |",
    ]
    for r in runs:
        d = r.data
        model = f"[{md(r.model_label)}]({mirror_path(r.pair_href)})" if r.pair_href else md(r.model_label)
        hw = ""
        if show_hardware:
            hw = (
                f"[{md(r.hardware_name)}]({mirror_path(r.hardware_href)}) | "
                if r.hardware_href
                else f"{md(r.hardware_name)} | "
            )
        eff = f"**{r.efficiency}** (above)" if r.above else r.efficiency
        lines.append(
            f"| `{r.id}` | {hw}{model} | {md(d['engine'])} {md(d['engine_version'])} | {md(d['quantization'])} | "
            f"{r.setting} | {r.measured} | {r.ceiling} | {eff} | {_md_source(r)} |"
        )
    above = [r for r in runs if r.above]
    if above:
        lines.append("\nAbove the ceiling, investigated:\n")
        lines += [f"- `{r.id}` ({r.efficiency}): {md(r.data['explanation'])}" for r in above]
    return lines


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
            *(_percent(s[k]) for k in ("min", "p25", "median", "p75", "max")),
        )

    rows = [row("All runs", data["efficiency"])]
    for key, label in (
        ("by_engine", "Engine"),
        ("by_hardware_family", "Hardware family"),
        ("by_phase", "Phase"),
    ):
        rows += [row(f"{label}: {name}", s) for name, s in data[key].items()]
    return rows
