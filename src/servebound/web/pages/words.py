"""Words for people on the site's pages: plurals, facts without reprs, assumptions with labels, and
notes (``servebound.core.advice``) as words with links that set the pair page's form: a page renders
the same note records the terminal spells as flags and the API as parameters, and never tells anyone
to pass a flag.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from markupsafe import Markup, escape

from servebound.catalog.engines import engines
from servebound.core.advice import Note, Setting, shown_value
from servebound.core.formats import format_words
from servebound.core.workload import MAX_BATCH
from servebound.inputs.workload import BY_NAME
from servebound.questions.absent import NO_FLOOR_WHY, NO_WAIT_WHY, NOTHING_FITS_WHY
from servebound.views.report import fmt_gb, fmt_int, fmt_params, fmt_rate, fmt_seconds
from servebound.web.pages.classes import CLASS_COLUMNS, RANK_COLUMNS
from servebound.web.pages.text import VERDICT_FILTERS, md, md_url, mirror_path, pair_path


def why_marks(rows: Sequence[Any], keys: Sequence[str]) -> dict[str, int]:
    """The reasons of a table's "n/a" cells (each row's ``why`` of the columns ``keys`` the table
    shows), numbered in the order they first appear: the table's notes, each cell marked with its
    reason's number."""
    marks: dict[str, int] = {}
    for row in rows:
        for key in keys:
            if key in row.why:
                marks.setdefault(row.why[key], len(marks) + 1)
    return marks


def plural(n: int | float | None, one: str, many: str | None = None) -> str:
    """``1 session``, ``2 sessions``, ``1,024 sessions`` (thousands separators)."""
    if n is None:
        return f"no {many or one + 's'}"
    count = f"{n:,}" if isinstance(n, int) else f"{n:,g}"
    return f"{count} {one if n == 1 else (many or one + 's')}"


def number(value: Any) -> str:
    """A quantity as people read it: integers with thousands separators, other numbers to six figures
    without an exponent (9.26679e+08 reads 926,679,040; 1.5e-3 reads 0.0015)."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            return "unbounded" if value > 0 else "n/a"
        if abs(value) >= 1000 or float(value).is_integer():
            return f"{value:,.0f}"
        return f"{value:,.6g}" if abs(value) >= 1e-4 else f"{value:.3g}"
    return str(value)


def fact_value(value: Any) -> str:
    """A model fact's value without a Python repr: dicts as ``name count`` lists, booleans as yes/no,
    empty collections as an empty string (the row is then left out)."""
    if isinstance(value, Mapping):
        return ", ".join(f"{k} x {number(v)}" for k, v in value.items())
    if isinstance(value, list | tuple | set | frozenset):
        return "; ".join(fact_value(v) for v in value)
    if value is None:
        return ""
    return number(value)


#: The facts that hold a config's ``model_type``, as the pages label them (their values read as names:
#: ``catalog.architectures``).
ARCHITECTURE_FACTS: dict[str, str] = {
    "model_type": "architecture",
    "language_model_type": "language model architecture",
}


def fact_label(key: str) -> str:
    """``tie_word_embeddings`` reads ``tie word embeddings``."""
    return key.replace("_", " ")


#: The result's assumption names as the page labels them.
ASSUMPTION_LABELS: dict[str, str] = {
    "overhead_gb": "Runtime overhead (GB)",
    "overhead_source": "Runtime overhead: where it comes from",
    "alloc_context_tokens": "Reserved context per session (tokens)",
    "read_context_tokens": "Context read per token (tokens)",
    "kv_allocation": "Cache allocation",
    "engine": "Engine",
    "floor_tok_s": "Per-session floor (tok/s)",
    "tokens_per_step": "Tokens per decode step",
    "weight_precision": "Weight format",
    "kv_precision": "KV cache format",
    "expert_traffic": "Expert traffic",
    "memory_only": "Memory roofline only (compute ignored)",
    "prefix_sharing": "Prefix sharing",
    "max_batch_searched": "Largest batch searched",
    "memory_gb": "Memory capacity (GB)",
    "bandwidth_gb_per_s": "Memory bandwidth (GB/s)",
    "bandwidth_source": "Bandwidth figure",
    "decode_compute": "Decode compute time",
    "reading": "Reading of the ceiling",
    "reading_why": "Why this reading",
    "draft": "Draft model",
    "draft_tokens": "Draft tokens per step",
    "draft_resident_gb": "Draft weights resident (GB)",
    "acceptance": "Draft acceptance",
    "kv_precision_source": "KV cache format: where it comes from",
    "forced_batch": "Batch (as asked)",
}


#: The values of the assumptions whose JSON holds a name (an enum's, a format id), as a page says them.
ASSUMPTION_WORDS: dict[str, dict[str, str]] = {
    "kv_allocation": {
        "reserved": "reserved up front: each session holds the cache of its whole reserved context",
        "paged": "paged: the cache grows on demand, each session holding what it has read",
    },
    "expert_traffic": {
        "expected": "expected: the distinct experts a batch routes to, m(n), under uniform routing",
        "minimum": "minimum: k experts per token, a guaranteed lower bound on the traffic",
    },
    "reading": {"bound": "a bound: no run can exceed it", "estimate": "an estimate, not a bound"},
    "bandwidth_source": {"peak": "the vendor's peak figure", "measured": "a measured sustained figure"},
    "engine": {"None": "none named: the hardware row's overhead and a reserved cache"},
    "kv_precision": {"None": "the model's own"},
    "max_batch_searched": {
        f"{MAX_BATCH:,}": "no batch limit beyond memory: the search runs to the largest batch that fits"
    },
}


def assumption_rows(flat: Sequence[tuple[str, str]]) -> list[tuple[str, str]]:
    """The pair page's assumption rows with labels for people and words for names: none/true/false,
    an enum's value as what it means, a format id as people write it, an engine by its name."""
    plain = {"None": "none stated", "True": "yes", "False": "no"}
    out = []
    for key, value in flat:
        said = ASSUMPTION_WORDS.get(key, {}).get(value)
        if said is None and key in ("weight_precision", "kv_precision") and value != "None":
            said = format_words(value)
        if said is None and key == "engine" and value in engines():
            said = engines()[value].name
        out.append((ASSUMPTION_LABELS.get(key, fact_label(key)), said or plain.get(value, value)))
    return out


#: How a page names an input in a sentence: the form's field it sets (other inputs read as their names).
INPUT_WORDS: dict[str, str] = {
    "alloc_context": "the reserved context",
    "read_context": "the read context",
    "overhead_gb": "the runtime overhead",
    "kv_precision": "the KV cache format",
    "floor": "the floor",
    "prompt": "the prompt length",
    "cpu_moe": "every routed expert on the host",
    "n_cpu_moe": "the MoE layers on the host",
    "gpu_layers": "the layers on the device",
    "model": "the model",
    "host": "a host memory row",
    "host_memory_gb": "the host RAM",
    "host_bandwidth_gb_per_s": "the host bandwidth",
    "host_cpu": "a host CPU",
    "host_tflops": "the host CPU's peak",
    "usd_per_hour": "a price per hour (the cost API's usd_per_hour)",
    "purchase_usd": "a purchase price",
    "power_w": "a board power",
    "pricing": "the pricing basis",
}


#: The inputs whose value is a format id: a sentence says the format as people write it (FP8).
FORMAT_INPUTS = frozenset({"kv_precision", "weight_precision", "linear_mode", "attention_mode"})


@dataclass(frozen=True)
class Remedy:
    """A piece of a sentence on a page: words, and where they set inputs, a link to the same pair with
    the form set to them."""

    text: str
    href: str | None = None


def setting_words(setting: Setting) -> str:
    """A setting as a page says it: ``set the reserved context to 94,978 tokens`` (and its companions);
    an input named without a value is its words alone, as the sentence around it uses them."""
    out = []
    each = list(setting.each())
    for i, s in enumerate(each):
        words = INPUT_WORDS.get(s.input, s.input.replace("_", " "))
        if s.value is None:
            out.append(f"give {words}" if len(each) > 1 else words)
        elif s.value is True:
            out.append(f"tick {words}")
        else:
            spec = BY_NAME.get(s.input)
            unit = f" {spec.unit}" if spec is not None and spec.unit else ""
            verb = "" if i and out[-1].startswith("set ") else "set "
            said = (
                format_words(s.value)
                if s.input in FORMAT_INPUTS and isinstance(s.value, str)
                else number(s.value)
            )
            out.append(f"{verb}{words} to {said}{unit}")
    return " and ".join(out)


def page_text(note: Note) -> str:
    """A note as a page's plain words (an error's message, a reason)."""
    return note.render(setting_words)


def page_note(
    note: Note, hw_id: str, model_id: str, params: Mapping[str, str], pair_href: PairHref = None
) -> list[Remedy]:
    """A note as a page shows it: its words, and each setting as a link to this pair with the form set
    to it (words alone where the note leaves a value to the reader). Another format of the model links
    to that pair through ``pair_href`` (a static copy without that page: its calculator)."""
    out: list[Remedy] = []
    for part in note.parts:
        if isinstance(part, str):
            out.append(Remedy(part))
            continue
        values = {s.input: s.value for s in part.each()}
        href = None
        if all(v is not None for v in values.values()):
            change = {k: shown_value(v, grouped=False) for k, v in values.items() if v is not None}
            model = change.pop("model", model_id)  # another format of the model: that pair's page
            base = pair_path(hw_id, model) if pair_href is None else pair_href(hw_id, model)
            href = _with_query(base, {**params, **change})
        out.append(Remedy(setting_words(part), href))
    return out


#: How a page links to a pair (``Renderer.pair_href``: its page, or the calculator on a static copy
#: without it); None: the pair's page.
PairHref = Callable[[str, str], str] | None


def _with_query(href: str, query: Mapping[str, str]) -> str:
    """``href`` with ``query`` added (after its own query, where it has one)."""
    if not query:
        return href
    return href + ("&" if "?" in href else "?") + urlencode(dict(query))


def linked_md(parts: Sequence[Remedy] | Remedy) -> str:
    """A note's parts (or one remedy) as a mirror's markdown: words escaped, links to the linked page's
    mirror."""
    out = []
    for part in [parts] if isinstance(parts, Remedy) else parts:
        text = md(part.text)
        out.append(text if part.href is None else f"[{text}]({md_url(mirror_path(part.href))})")
    return "".join(out)


def remedies(
    notes: Sequence[Note], hw_id: str, model_id: str, params: Mapping[str, str], pair_href: PairHref = None
) -> list[Remedy]:
    """The notes that would pass a failed gate (those with an effect) as links that set the form: what
    to change, then what it would do."""
    out = []
    for note in notes:
        for setting in note.settings if note.effect else ():
            text = setting_words(setting)
            linked = page_note(Note((setting,)), hw_id, model_id, params, pair_href)[0]
            out.append(Remedy(f"{text[:1].upper()}{text[1:]}: {note.effect}", linked.href))
    return out


_URL = re.compile(r"https?://[^\s;,)\"']+[^\s;,.)\"']")
_GITHUB = re.compile(r"github:([A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+)(?:@([0-9a-f]{7,40}))?(?: ([\w./*-]+))?")


def linkify(text: str) -> Markup:
    """A provenance note with its URLs and ``github:owner/repo@commit path`` references as links."""
    out: list[str] = []
    pos = 0
    spans = [(m.start(), m.end(), m.group(0), m.group(0)) for m in _URL.finditer(text)]
    for m in _GITHUB.finditer(text):
        repo, commit, path = m.group(1), m.group(2), m.group(3)
        href = f"https://github.com/{repo}"
        if commit:
            href += f"/tree/{commit}" + (f"/{path}" if path and "*" not in path else "")
        spans.append((m.start(), m.end(), href, m.group(0)))
    spans.sort()
    for start, end, href, shown in spans:
        if start < pos:
            continue
        out.append(str(escape(text[pos:start])))
        out.append(f'<a href="{escape(href)}" rel="nofollow">{escape(shown)}</a>')
        pos = end
    out.append(str(escape(text[pos:])))
    return Markup("".join(out))


@dataclass(frozen=True)
class SourceNotes:
    """A page's provenance without repeats: each distinct note once, numbered; each key its number."""

    number: Mapping[str, int]
    notes: Sequence[Markup]


def source_notes(sources: Mapping[str, str]) -> SourceNotes:
    seen: dict[str, int] = {}
    number: dict[str, int] = {}
    for key, text in sources.items():
        if not text:
            continue
        number[key] = seen.setdefault(text, len(seen) + 1)
    return SourceNotes(number=number, notes=[linkify(t) for t in seen])


#: What every template may call beside its context: the CLI's number formats, and the words of an absent
#: figure (``servebound.views.notes``), so a pair page's "none" and a table's "n/a" say the same.
TEMPLATE_HELPERS: dict[str, Any] = {
    "fmt_gb": fmt_gb,
    "fmt_int": fmt_int,
    "fmt_rate": fmt_rate,
    "fmt_params": fmt_params,
    "fmt_seconds": fmt_seconds,
    "why": {"nothing_fits": NOTHING_FITS_WHY, "no_floor": NO_FLOOR_WHY, "no_wait": NO_WAIT_WHY},
    "rank_columns": RANK_COLUMNS,
    "class_columns": CLASS_COLUMNS,
    "verdict_filters": VERDICT_FILTERS,
    "why_marks": why_marks,
    "format_words": format_words,
    # the engine select's rows: each engine's id and its name as people write it
    "engine_rows": tuple({"id": e.id, "name": e.name} for e in engines().values()),
}
