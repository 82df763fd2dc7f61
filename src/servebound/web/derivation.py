"""The derivation as a page: the source text parsed into blocks, every display formula numbered, the
worked examples recomputed from the shipped example files, and the text's figures drawn on the server.

The text is ``content/roofline-derivation.md`` (the project's source for every formula): plain paragraphs,
one-line headings, ``$$...$$`` display math, ``$...$`` inline math, tab-separated tables and bullet or
numbered lists. Rendering turns the math into MathML (no script), numbers the display formulas
(1), (2), ... with anchors ``#eq-N`` that result pages link to, replaces the printed worked-example
tables with the same tables computed live, and places each figure after the paragraph that describes it.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Literal

from markupsafe import Markup, escape

from servebound.core.decode import DecodeResult, decode
from servebound.core.hardware import Hardware
from servebound.core.model import ModelAdapter
from servebound.core.units import GB
from servebound.core.workload import Workload
from servebound.resolve import resolve_hardware, resolve_model
from servebound.web.derivation_toy import (
    TOY_BANDWIDTH_GB_PER_S,
    TOY_CAPACITY_GB,
    TOY_FIELDS,
    TOY_INTEGERS,
    TOY_KV_GB_PER_1K,
    TOY_LIMITS,
    TOY_OVERHEAD_GB,
    TOY_READ_FRACTION,
    TOY_RESERVED,
    TOY_UNREAD_CAP,
    TOY_WEIGHTS_GB,
    Boards,
    ReservationSweep,
    Toy,
    boards,
    query_number,
    read_following,
    reservation_sweep,
    toy_description,
    toy_from_query,
    toy_query,
)

#: The top-level sections of the text; every other one-line heading is a subsection.
SECTIONS = (
    "Four questions",
    "Memory power",
    "A first decode bound",
    "Missing traffic",
    "KV-aware bound",
    "Prefill",
    "Model adapters",
    "Calculator procedure",
    "Worked examples",
    "Omitted rooflines",
    "Cheat sheet",
)

#: Results link to the formula they evaluate: a name, and a TeX fragment found in exactly that display
#: formula (the first display formula holding it).
EQUATION_KEYS: dict[str, str] = {
    "memory_power_scalar": r"D = C R .",
    "feasible_rectangle": r"\mu(F) = C R",
    "b_mem": r"b_{\mathrm{mem}}(L_{\mathrm{alloc}}) = \left\lfloor",
    "q_kv": r"q_{\mathrm{KV}}(b, L_{\mathrm{read}}) = \frac",
    "per_session": r"r(b, L_{\mathrm{read}}) = \frac{T(b, L_{\mathrm{read}})}{b}",
    "b_rate": r"b_{\mathrm{rate}}(L_{\mathrm{read}}, r_\star) = \left\lfloor",
    "kv_aware": r"T_{\max}(L_{\mathrm{alloc}}, L_{\mathrm{read}}, r_\star) \le \max_{b \in \mathcal{B}}",
    "memory_power": r"T_{\max} \le \frac{D}{K_{\mathrm{alloc}}(L_{\mathrm{alloc}})\,W_{\mathrm{active}}}\left(1",
    "large_memory": r"\text{large-memory limit}",
    "single_session": r"T_{1,\max} \le",
    "q_spec": r"q_{\mathrm{spec}}(b) = \frac",
    "expected_experts": r"m(n) = E\left(1",
    "w_batch": r"W_{\mathrm{batch}}(n) = e_w\big[",
    "kv_hybrid": r"K_{\mathrm{read}}(L) = \kappa_{\mathrm{global}}\, L + \kappa_{\mathrm{local}}",
    "prefill_time": r"t_{\mathrm{pf},\min}(b, L) = \max",
    "prefill_throughput": r"T_{\mathrm{pf}} = \frac{bL}{t_{\mathrm{pf}}}",
    "crossover": r"S^\star = \frac{W_{\mathrm{batch}}(S^\star)\, F}{2",
    "prefill_range": r"T_{\mathrm{pf,lo}} = \min",
}


# --- the text ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Block:
    """One block of the text. ``kind``: h1, h2, h3, p, eq (``number`` set), table (``rows``), ul, ol."""

    kind: Literal["h1", "h2", "h3", "p", "eq", "table", "ul", "ol"]
    text: str = ""
    number: int = 0
    rows: tuple[tuple[str, ...], ...] = ()
    items: tuple[str, ...] = ()

    @property
    def anchor(self) -> str:
        if self.kind == "eq":
            return f"eq-{self.number}"
        return "sec-" + re.sub(r"[^a-z0-9]+", "-", self.text.lower()).strip("-")


@dataclass(frozen=True)
class Derivation:
    blocks: tuple[Block, ...]
    equations: dict[str, int] = field(default_factory=dict)

    def equation(self, name: str) -> int:
        """The number of the formula a result named ``name`` evaluates (EQUATION_KEYS)."""
        return self.equations[name]


def source_text() -> str:
    return resources.files("servebound.web").joinpath("content", "roofline-derivation.md").read_text("utf-8")


def _is_heading(line: str) -> bool:
    words = line.split()
    return (
        len(line) < 70
        and "\t" not in line
        and "$" not in line
        and line[:1].isupper()
        and not re.search(r"[.:,;?)]$", line)
        and words[-1] not in {"is", "as", "to", "and", "of"}
    )


def parse(text: str) -> Derivation:
    """The text as blocks, display formulas numbered in order."""
    blocks: list[Block] = []
    number = 0
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        line = lines[i].rstrip()
        if not line.strip():
            i += 1
            continue
        if line.startswith("# "):
            blocks.append(Block("h1", line[2:].strip()))
            i += 1
        elif line.startswith("$$") and line.endswith("$$") and len(line) > 4:
            number += 1
            blocks.append(Block("eq", line[2:-2].strip(), number=number))
            i += 1
        elif "\t" in line:
            rows = []
            while i < len(lines) and "\t" in lines[i]:
                rows.append(tuple(cell.strip() for cell in lines[i].split("\t")))
                i += 1
            blocks.append(Block("table", rows=tuple(rows)))
        elif line.startswith("• "):
            items = []
            while i < len(lines) and lines[i].startswith("• "):
                items.append(lines[i][2:].strip())
                i += 1
            blocks.append(Block("ul", items=tuple(items)))
        elif re.match(r"\d+\. ", line):
            items = []
            while i < len(lines) and re.match(r"\d+\. ", lines[i]):
                items.append(re.sub(r"^\d+\. ", "", lines[i]).strip())
                i += 1
            blocks.append(Block("ol", items=tuple(items)))
        elif _is_heading(line):
            blocks.append(Block("h2" if line in SECTIONS else "h3", line))
            i += 1
        else:
            blocks.append(Block("p", line.strip()))
            i += 1
    equations: dict[str, int] = {}
    for name, fragment in EQUATION_KEYS.items():
        found = next((b.number for b in blocks if b.kind == "eq" and fragment in b.text), None)
        if found is None:
            raise ValueError(f"equation {name!r}: no display formula holds {fragment!r}")
        equations[name] = found
    return Derivation(tuple(blocks), equations)


@functools.cache
def derivation() -> Derivation:
    return parse(source_text())


# --- the worked examples --------------------------------------------------------------------------

EXAMPLE_MACHINES = ("dgx-spark.toml", "apple-m5-max-128gb.toml")
EXAMPLE_MODELS = ("qwen3.6-35b-a3b-nvfp4.toml", "gemma-4-26b-a4b-nvfp4.toml", "deepseek-v4-flash-q2.toml")
#: Printed names of the text's tables for the example files.
EXAMPLE_NAMES = {
    "dgx-spark.toml": "DGX Spark",
    "apple-m5-max-128gb.toml": "Apple M5 Max 128GB",
    "qwen3.6-35b-a3b-nvfp4.toml": "Qwen3.6-35B-A3B",
    "gemma-4-26b-a4b-nvfp4.toml": "Gemma 4 26B-A4B-it",
    "deepseek-v4-flash-q2.toml": "DeepSeek V4 Flash (Q2)",
}
FORCED_BATCHES = (1, 4, 8, 16, 32, 64)


def examples_dir() -> Path:
    """The worked examples' files as the package ships them (web/examples: byte-identical copies of the
    repository's examples/, which a test checks, so an installed site has them too)."""
    return Path(str(resources.files("servebound.web").joinpath("examples")))


@functools.cache
def example_machine(name: str) -> Hardware:
    return resolve_hardware(str(examples_dir() / name))


@functools.cache
def example_model(name: str) -> ModelAdapter:
    return resolve_model(str(examples_dir() / name))


def example_result(machine: str, model: str, batch: int | None = None) -> DecodeResult:
    """The derivation's defaults: L_alloc 100,000, L_read 32,000, r* 20, O 8 GB, rho 1."""
    return decode(example_machine(machine), example_model(model), Workload(forced_batch=batch))


def fmt_tok(value: float | None) -> str:
    return "n/a" if value is None else f"{round(value):,} tok/s"


def fmt_k(value: float | None) -> str:
    return "n/a" if value is None else f"{value / 1000:.1f}k tok/s"


def machines_table() -> tuple[tuple[str, ...], ...]:
    """The text's "Two machines" table, computed: C, R and D = C R."""
    rows: list[tuple[str, ...]] = [("Hardware", "$C$", "$R$", r"$D = CR$")]
    for m in EXAMPLE_MACHINES:
        hw = example_machine(m)
        rows.append(
            (
                EXAMPLE_NAMES[m],
                f"{hw.memory_bytes / GB:,.0f} GB",
                f"{hw.bandwidth_bytes_per_s / GB:,.0f} GB/s",
                f"{hw.memory_power_bytes2_per_s / GB**2:,.0f} " + r"$\mathrm{GB}^2/\mathrm{s}$",
            )
        )
    return tuple(rows)


def results_table() -> tuple[tuple[str, ...], ...]:
    """The text's "Results" table, computed for both machines and all three models."""
    rows: list[tuple[str, ...]] = [
        (
            "Hardware",
            "Model",
            "Single-session estimate",
            r"$b^\star$",
            "KV-aware aggregate estimate",
            "Memory-power estimate",
        )
    ]
    for machine in EXAMPLE_MACHINES:
        for model in EXAMPLE_MODELS:
            r = example_result(machine, model)
            rows.append(
                (
                    EXAMPLE_NAMES[machine],
                    EXAMPLE_NAMES[model],
                    fmt_tok(r.single_session_tok_per_s),
                    "n/a" if r.batch_star is None else f"{r.batch_star:,}",
                    fmt_tok(r.aggregate_tok_per_s),
                    fmt_k(r.memory_power_tok_per_s),
                )
            )
    return tuple(rows)


def forced_table() -> tuple[tuple[str, ...], ...]:
    """Forced concurrency: each model on each machine at fixed batches, with whether the batch fits
    and clears the floor."""
    rows: list[tuple[str, ...]] = [
        ("Hardware", "Model", "Batch $b$", "Aggregate", "Per session", "Clears $r_\\star$", "Fits")
    ]
    for machine in EXAMPLE_MACHINES:
        for model in EXAMPLE_MODELS:
            for b in FORCED_BATCHES:
                f = example_result(machine, model, b).forced
                assert f is not None
                rows.append(
                    (
                        EXAMPLE_NAMES[machine],
                        EXAMPLE_NAMES[model],
                        f"{b:,}",
                        fmt_tok(f.aggregate_tok_per_s),
                        f"{f.per_session_tok_per_s:,.1f} tok/s",
                        "yes" if f.clears_floor else "no",
                        "yes" if f.fits_memory else "no",
                    )
                )
    return tuple(rows)


def sanity_check() -> tuple[float, float, float]:
    """Gemma at concurrency 16 on DGX Spark: the KV-aware aggregate and the reported run's share of it
    (16 x 16 and 16 x 18 tok/s), against the aggregate rounded to whole tok/s as the text divides."""
    f = example_result("dgx-spark.toml", "gemma-4-26b-a4b-nvfp4.toml", 16).forced
    assert f is not None
    shown = round(f.aggregate_tok_per_s)
    return f.aggregate_tok_per_s, 256 / shown, 288 / shown


#: Printed tables replaced by their live counterparts: the first cell of the printed header row.
LIVE_TABLES = {"Hardware\t$C$": machines_table, "Hardware\tModel": results_table}


def live_table_for(block: Block) -> tuple[tuple[str, ...], ...] | None:
    if block.kind != "table" or not block.rows:
        return None
    head = "\t".join(block.rows[0][:2])
    for key, make in LIVE_TABLES.items():
        if head == key:
            return make()
    return None


def printed_tables() -> Iterator[tuple[Block, tuple[tuple[str, ...], ...]]]:
    """Each printed worked-example table with its live counterpart (for the tests and the page)."""
    for block in derivation().blocks:
        live = live_table_for(block)
        if live is not None:
            yield block, live


# --- rendering helpers ------------------------------------------------------------------------------


def inline_math(text: str) -> Markup:
    """A line of the text with ``$...$`` turned into inline MathML and everything else escaped."""
    from servebound.web.mathml import mathml_trusted

    parts = re.split(r"(\$[^$]+\$)", text)
    out: list[str] = []
    for part in parts:
        if len(part) > 2 and part.startswith("$") and part.endswith("$"):
            out.append(str(mathml_trusted(part[1:-1])))
        else:
            out.append(str(escape(part)))
    return Markup("".join(out))


# --- the page: HTML body and markdown mirror --------------------------------------------------------


def _table_html(rows: tuple[tuple[str, ...], ...], css: str = "") -> str:
    head, *body = rows
    cls = f' class="{css}"' if css else ""
    out = [f"<table{cls}><thead><tr>"]
    out += [f"<th>{inline_math(c)}</th>" for c in head]
    out.append("</tr></thead><tbody>")
    for row in body:
        out.append("<tr>" + "".join(f"<td>{inline_math(c)}</td>" for c in row) + "</tr>")
    out.append("</tbody></table>")
    return "".join(out)


def _table_md(rows: tuple[tuple[str, ...], ...]) -> str:
    head, *body = rows
    lines = ["| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
    lines += ["| " + " | ".join(r) + " |" for r in body]
    return "\n".join(lines)


def _controls_html(toy: Toy) -> str:
    """The toy's controls as a GET form: the page without script redraws through the server; the
    script (static/derivation.js) turns them into live controls that redraw in place."""
    fields = []
    for name, label, step, _ in TOY_FIELDS:
        value = getattr(toy, name)
        shown = "" if value is None else (str(value) if name in TOY_INTEGERS else query_number(value))
        lo, hi = TOY_LIMITS[name]
        fields.append(
            f'<label>{escape(label)} <input type="number" name="{name}" min="{lo:g}" max="{hi:g}" '
            f'step="{step}" value="{shown}"></label> '
        )
    checked = " checked" if toy.batch is None else ""
    data = escape(json.dumps(toy_description(toy), allow_nan=False))
    return (
        f'<form class="toy-controls" id="toy-controls" method="get" action="/derivation#fig-boards" data-toy="{data}">'
        "<details><summary>Advanced: the toy's controls</summary>"
        + "".join(fields)
        + f'<label><input type="checkbox" name="maximize" value="1"{checked}> maximize batch</label> '
        '<button type="submit">Redraw</button></details></form>'
    )


def figures_for(toy: Toy) -> dict[str, Markup]:
    from servebound.web import derivation_figures as f

    return {
        "feasibility": f.feasibility_svg(toy.capacity_gb, toy.bandwidth_gb_per_s),
        "boards": f.boards_svg(boards(toy)),
        "read_context": f.read_context_chart(toy),
        "model_size": f.model_size_chart(toy),
        "containers": f.reservation_chart(toy),
    }


#: Where figures and live tables go: after the block whose text starts with the key.
_AFTER_PARAGRAPH = {
    "Each decode iteration must move every byte": ("boards",),
    "The sliders show the two context lengths": ("read_context", "model_size"),
    "The full memory-power bound goes one step further": ("containers",),
}


def _figure_html(name: str, svg: Markup, toy: Toy) -> str:
    extra = _controls_html(toy) if name == "boards" else ""
    return f'<figure class="derivation-figure" id="figure-{name}">{svg}{extra}</figure>'


def _boards_text(b: Boards) -> str:
    mp = "undefined" if b.memory_power_tok_s is None else f"{b.memory_power_tok_s:,.0f} tok/s"
    return (
        f"Figure (the two boards, toy setup, reserved {b.toy.reserved:,} tokens, read {b.toy.read:,}, batch "
        f"{b.batch:,}): memory-power accounting {b.left_tok_s:,.0f} tok/s ({b.left_bytes / GB:,.1f} GB per "
        f"iteration), KV-aware {b.right_tok_s:,.0f} tok/s ({b.right_bytes / GB:,.1f} GB per iteration); "
        f"memory-power bound at b_mem = {b.batch_mem:,}: {mp}."
    )


def _after(block: Block) -> tuple[str, ...]:
    if block.kind == "eq" and block.number == derivation().equation("feasible_rectangle"):
        return ("feasibility",)
    if block.kind != "p":
        return ()
    for start, names in _AFTER_PARAGRAPH.items():
        if block.text.startswith(start):
            return names
    return ()


def _is_forced_paragraph(block: Block) -> bool:
    return block.kind == "p" and block.text.startswith("What if concurrency is fixed by policy")


def _is_sanity_paragraph(block: Block) -> bool:
    return block.kind == "p" and block.text.startswith("A reported but unverified DGX Spark run")


def _sanity_text() -> str:
    agg, lo, hi = sanity_check()
    return (
        f"Computed from the shipped example files: the KV-aware aggregate for Gemma at batch 16 on DGX Spark is "
        f"{agg:,.1f} tok/s ({round(agg):,} shown), so the reported run reaches {lo:.0%} to {hi:.0%} of it."
    )


def render_html(toy: Toy | None = None) -> Markup:
    """The derivation's body as HTML: headings with anchors, MathML, numbered formulas, live tables and
    figures."""
    from servebound.web.mathml import mathml_trusted

    toy = toy or Toy()
    figs = figures_for(toy)
    out: list[str] = []
    for block in derivation().blocks:
        if block.kind == "h1":
            continue
        if block.kind in ("h2", "h3"):
            out.append(f'<{block.kind} id="{block.anchor}">{escape(block.text)}</{block.kind}>')
        elif block.kind == "p":
            out.append(f"<p>{inline_math(block.text)}</p>")
        elif block.kind == "eq":
            out.append(
                f'<div class="eq" id="{block.anchor}">{mathml_trusted(block.text, block=True)}'
                f'<a class="eqno" href="#{block.anchor}">({block.number})</a></div>'
            )
        elif block.kind == "table":
            live = live_table_for(block)
            if live is not None:
                out.append(_table_html(live, "live"))
                out.append(
                    '<p class="note">Computed live from the shipped example files (examples/); the printed '
                    "text's rows are reproduced exactly.</p>"
                )
            else:
                out.append(_table_html(block.rows))
        elif block.kind in ("ul", "ol"):
            out.append(f"<{block.kind}>" + "".join(f"<li>{inline_math(i)}</li>" for i in block.items))
            out.append(f"</{block.kind}>")
        for name in _after(block):
            out.append(_figure_html(name, figs[name], toy))
        if _is_forced_paragraph(block):
            out.append(_table_html(forced_table(), "live forced"))
        if _is_sanity_paragraph(block):
            out.append(f'<p class="note live" id="sanity-live">{escape(_sanity_text())}</p>')
    return Markup("".join(out))


def render_markdown(toy: Toy | None = None) -> str:
    """The markdown mirror: the same text, TeX kept, formulas tagged with their numbers, live tables."""
    toy = toy or Toy()
    out: list[str] = []
    for block in derivation().blocks:
        if block.kind == "h1":
            continue
        if block.kind == "h2":
            out.append(f"## {block.text}")
        elif block.kind == "h3":
            out.append(f"### {block.text}")
        elif block.kind == "p":
            out.append(block.text)
        elif block.kind == "eq":
            out.append(f"$$ {block.text} \\tag{{{block.number}}} $$")
        elif block.kind == "table":
            live = live_table_for(block)
            out.append(_table_md(live if live is not None else block.rows))
        elif block.kind == "ul":
            out.append("\n".join(f"- {i}" for i in block.items))
        elif block.kind == "ol":
            out.append("\n".join(f"{n}. {i}" for n, i in enumerate(block.items, 1)))
        for name in _after(block):
            if name == "boards":
                out.append(_boards_text(boards(toy)))
            else:
                out.append(f"(Figure: {name.replace('_', ' ')}, drawn on the HTML page.)")
        if _is_forced_paragraph(block):
            out.append(_table_md(forced_table()))
        if _is_sanity_paragraph(block):
            out.append(_sanity_text())
    return "\n\n".join(out) + "\n"


__all__ = [
    "EQUATION_KEYS",
    "EXAMPLE_MACHINES",
    "EXAMPLE_MODELS",
    "EXAMPLE_NAMES",
    "FORCED_BATCHES",
    "LIVE_TABLES",
    "SECTIONS",
    "TOY_BANDWIDTH_GB_PER_S",
    "TOY_CAPACITY_GB",
    "TOY_FIELDS",
    "TOY_INTEGERS",
    "TOY_KV_GB_PER_1K",
    "TOY_LIMITS",
    "TOY_OVERHEAD_GB",
    "TOY_READ_FRACTION",
    "TOY_RESERVED",
    "TOY_UNREAD_CAP",
    "TOY_WEIGHTS_GB",
    "Block",
    "Boards",
    "Derivation",
    "ReservationSweep",
    "Toy",
    "boards",
    "derivation",
    "example_machine",
    "example_model",
    "example_result",
    "examples_dir",
    "figures_for",
    "fmt_k",
    "fmt_tok",
    "forced_table",
    "inline_math",
    "live_table_for",
    "machines_table",
    "parse",
    "printed_tables",
    "read_following",
    "render_html",
    "render_markdown",
    "reservation_sweep",
    "results_table",
    "sanity_check",
    "source_text",
    "toy_description",
    "toy_from_query",
    "toy_query",
]
