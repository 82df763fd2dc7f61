"""The derivation as a page: the text parsed into blocks, every display formula numbered, the
worked examples computed from the shipped example files, and the text's figures drawn on the server.

The text is ``content/roofline-derivation.md``, servebound's own account of the derivation it follows
(credited at the top of the page and in the mirror's frontmatter): plain paragraphs, one-line headings,
``$$...$$`` display math, ``$...$`` inline math, tab-separated tables, bullet or numbered lists, and
three kinds of marker line: ``[[table:NAME]]`` (a worked table, computed: derivation_live.TABLES),
``[[figure:NAME]]`` (a figure drawn from the toy setup) and ``[[credit]]``. ``[[NAME]]`` inside a
sentence or formula is a quoted figure, computed (derivation_live.figures). Rendering turns the math
into MathML (no script) and numbers the display formulas (1), (2), ... with anchors ``#eq-N`` that
result pages link to.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import resources
from typing import Literal

from markupsafe import Markup, escape

from servebound.core.units import GB
from servebound.web.figures import derivation as f
from servebound.web.figures.mathml import mathml_trusted
from servebound.web.pages.derivation_live import TABLES, fill
from servebound.web.pages.derivation_toy import (
    TOY_FIELDS,
    TOY_INTEGERS,
    TOY_LIMITS,
    Boards,
    Toy,
    boards,
    query_number,
    toy_description,
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
    """One block of the text. ``kind``: h1, h2, h3, p, eq (``number`` set), table (``rows``), ul, ol,
    live (a computed table: ``text`` names it in derivation_live.TABLES), figure (``text`` names it),
    credit."""

    kind: Literal["h1", "h2", "h3", "p", "eq", "table", "ul", "ol", "live", "figure", "credit"]
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


@functools.cache
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


_MARKER = re.compile(r"\[\[(table|figure):([a-z0-9_]+)\]\]|\[\[(credit)\]\]")
_NUMBERED = re.compile(r"\d+\. ")


def parse(text: str) -> Derivation:
    """The text as blocks, display formulas numbered in order, quoted figures filled in (``[[NAME]]``)."""
    blocks: list[Block] = []
    number = 0
    lines = text.split("\n")
    i = 0

    def run(match: Callable[[str], object]) -> list[str]:  # the line read and those after it that match
        nonlocal i
        start = i - 1
        while i < len(lines) and match(lines[i]):
            i += 1
        return lines[start:i]

    while i < len(lines):
        line = lines[i].rstrip()
        i += 1
        if not line.strip():
            continue
        marker = _MARKER.fullmatch(line.strip())
        if marker:
            kind, name, credit = marker.groups()
            if kind == "table" and name not in TABLES:
                raise ValueError(f"[[table:{name}]]: no computed table of that name")
            blocks.append(Block("credit") if credit else Block("live" if kind == "table" else "figure", name))
        elif line.startswith("# "):
            blocks.append(Block("h1", line[2:].strip()))
        elif line.startswith("$$") and line.endswith("$$") and len(line) > 4:
            number += 1
            blocks.append(Block("eq", fill(line[2:-2].strip()), number=number))
        elif "\t" in line:
            rows = [tuple(cell.strip() for cell in row.split("\t")) for row in run(lambda t: "\t" in t)]
            blocks.append(Block("table", rows=tuple(rows)))
        elif line.startswith("• "):
            items = [fill(item[2:].strip()) for item in run(lambda t: t.startswith("• "))]
            blocks.append(Block("ul", items=tuple(items)))
        elif _NUMBERED.match(line):
            items = [fill(_NUMBERED.sub("", item, count=1).strip()) for item in run(_NUMBERED.match)]
            blocks.append(Block("ol", items=tuple(items)))
        elif _is_heading(line):
            blocks.append(Block("h2" if line in SECTIONS else "h3", line))
        else:
            blocks.append(Block("p", fill(line.strip())))
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


# --- the credit ------------------------------------------------------------------------------------

#: Where the derivation this page follows was published (the "Our Models" post).
CREDIT_URL = "https://solmaz.io/"
CREDIT_FOLLOWS = "the derivation published with Our Models (solmaz.io)"
#: What servebound adds to or changes in that derivation, one clause each.
CREDIT_CHANGES = (
    "the runtime overhead O is set per device, from the hardware row (the operating system's share of "
    "unified memory, a GPU runtime's context), 8 GB only where the row states none",
    "decode gets a compute roof beside the memory roof wherever the hardware publishes the arithmetic "
    "rates the model uses, so a step takes at least the longer of its memory and compute times",
    "capacities are the bytes a device reports (nvidia-smi, vendor system files) where a source gives "
    "them, not the marketed label",
)


def credit_text() -> str:
    """The credit as one plain line (the markdown mirror's frontmatter and body)."""
    return (
        f"Credit: this page follows {CREDIT_FOLLOWS}, {CREDIT_URL}: its structure, formulas, equation "
        "numbering, toy setup and worked examples; the explanations are servebound's own. servebound adds "
        "or changes: " + "; ".join(CREDIT_CHANGES) + "."
    )


def _credit_html() -> str:
    changes = "".join(f"<li>{escape(c)}</li>" for c in CREDIT_CHANGES)
    return (
        '<aside class="credit" id="credit"><p><strong>Credit.</strong> This page follows the derivation '
        f'published with Our Models, at <a href="{CREDIT_URL}">solmaz.io</a>: its structure, formulas, '
        "equation numbering, toy setup and worked examples. The explanations are servebound's own. "
        f"What servebound adds or changes:</p><ul>{changes}</ul></aside>"
    )


# --- rendering helpers ------------------------------------------------------------------------------


def inline_math(text: str) -> Markup:
    """A line of the text with ``$...$`` turned into inline MathML and everything else escaped."""
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
    return {
        "feasibility": f.feasibility_svg(toy.capacity_gb, toy.bandwidth_gb_per_s),
        "boards": f.boards_svg(boards(toy)),
        "read_context": f.read_context_chart(toy),
        "model_size": f.model_size_chart(toy),
        "containers": f.reservation_chart(toy),
    }


def _boards_text(b: Boards) -> str:
    mp = "undefined" if b.memory_power_tok_s is None else f"{b.memory_power_tok_s:,.0f} tok/s"
    return (
        f"Figure (the two boards, toy setup, reserved {b.toy.reserved:,} tokens, read {b.toy.read:,}, batch "
        f"{b.batch:,}): memory-power accounting {b.left_tok_s:,.0f} tok/s ({b.left_bytes / GB:,.1f} GB per "
        f"iteration), KV-aware {b.right_tok_s:,.0f} tok/s ({b.right_bytes / GB:,.1f} GB per iteration); "
        f"memory-power bound at b_mem = {b.batch_mem:,}: {mp}."
    )


def _after(block: Block) -> tuple[str, ...]:
    """Figures placed after a block: a marker line names its figure; the feasibility rectangle follows
    the formula that defines it."""
    if block.kind == "figure":
        return (block.text,)
    if block.kind == "eq" and block.number == derivation().equation("feasible_rectangle"):
        return ("feasibility",)
    return ()


_LIVE_NOTE = (
    '<p class="note">Computed from the shipped example files (examples/) by the same functions as '
    "<code>servebound decode</code> and <code>servebound prefill</code>.</p>"
)


def render_html(toy: Toy | None = None) -> Markup:
    """The derivation's body as HTML: headings with anchors, MathML, numbered formulas, live tables and
    figures."""
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
        elif block.kind == "credit":
            out.append(_credit_html())
        elif block.kind == "eq":
            out.append(
                f'<div class="eq" id="{block.anchor}">{mathml_trusted(block.text, block=True)}'
                f'<a class="eqno" href="#{block.anchor}">({block.number})</a></div>'
            )
        elif block.kind == "live":
            css = "live forced" if block.text == "forced" else "live"
            out.append(f'<div class="table-wrap scroll" id="table-{block.text}">')
            out.append(_table_html(TABLES[block.text](), css) + "</div>" + _LIVE_NOTE)
        elif block.kind == "table":
            out.append('<div class="scroll">' + _table_html(block.rows) + "</div>")
        elif block.kind in ("ul", "ol"):
            out.append(f"<{block.kind}>" + "".join(f"<li>{inline_math(i)}</li>" for i in block.items))
            out.append(f"</{block.kind}>")
        for name in _after(block):
            extra = _controls_html(toy) if name == "boards" else ""
            out.append(f'<figure class="derivation-figure" id="figure-{name}">{figs[name]}{extra}</figure>')
    return Markup("".join(out))


def render_markdown(toy: Toy | None = None) -> str:
    """The markdown mirror: the same text, TeX kept, formulas tagged with their numbers, live tables."""
    toy = toy or Toy()
    out: list[str] = []
    for block in derivation().blocks:
        if block.kind == "h1":
            continue
        if block.kind in ("h2", "h3"):
            out.append("#" * int(block.kind[1]) + " " + block.text)
        elif block.kind == "p":
            out.append(block.text)
        elif block.kind == "credit":
            out.append(credit_text())
        elif block.kind == "eq":
            out.append(f"$$ {block.text} \\tag{{{block.number}}} $$")
        elif block.kind == "live":
            out.append(_table_md(TABLES[block.text]()))
        elif block.kind == "table":
            out.append(_table_md(block.rows))
        elif block.kind == "ul":
            out.append("\n".join(f"- {i}" for i in block.items))
        elif block.kind == "ol":
            out.append("\n".join(f"{n}. {i}" for n, i in enumerate(block.items, 1)))
        for name in _after(block):
            if name == "boards":
                out.append(_boards_text(boards(toy)))
            else:
                out.append(f"(Figure: {name.replace('_', ' ')}, drawn on the HTML page.)")
    return "\n\n".join(out) + "\n"
