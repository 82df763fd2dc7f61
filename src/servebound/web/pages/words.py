"""Words for people on the site's pages: plurals, facts without reprs, assumptions with labels, and the
CLI's remedies as links that set the pair page's form (a web page never tells anyone to pass a flag).

The CLI keeps its own sentences (``servebound.views.report``); this module only rewrites them for the pages.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from markupsafe import Markup, escape

from servebound.core.decode import DecodeResult, Verdict
from servebound.core.units import GB
from servebound.web.pages.text import pair_path


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
}


def assumption_rows(flat: Sequence[tuple[str, str]]) -> list[tuple[str, str]]:
    """The pair page's assumption rows with labels for people and words for none/true/false."""
    words = {"None": "none stated", "True": "yes", "False": "no"}
    return [(ASSUMPTION_LABELS.get(k, fact_label(k)), web_sentence(words.get(v, v))) for k, v in flat]


#: A CLI flag in a sentence the CLI prints, and the pair-page form field it stands for.
FLAG_FIELDS: dict[str, str] = {
    "--alloc-context": "the reserved context",
    "--read-context": "the read context",
    "--overhead-gb": "the runtime overhead",
    "--kv-precision": "the KV cache format",
    "--floor": "the floor",
    "--prompt": "the prompt length",
}
#: CLI price options, which the pair page's form does not carry: the cost API's parameters instead.
PRICE_FLAGS: dict[str, str] = {
    "--usd-per-hour X": "a price per hour (the cost API's usd_per_hour)",
    "--purchase-usd P": "a purchase price",
    "--pricing owned": "the owned cost",
}
_FLAG_IN_PARENS = re.compile(r"\s*\((--[a-z-]+)\)")
_SET_FLAG = re.compile(r"\((?:set|pass) (--[a-z-]+)(?: to override)?\)")
_PASS_FLAG = re.compile(r"\b(?:pass|set|give) (--[a-z-]+)")


def web_sentence(text: str) -> str:
    """A CLI sentence for a web page: remedies name the form's field instead of a flag."""
    for flag, words in PRICE_FLAGS.items():
        text = text.replace(flag, words)
    text = text.replace("give a price per hour", "give it a price per hour")
    text = _FLAG_IN_PARENS.sub("", text)
    text = _SET_FLAG.sub(
        lambda m: f"(change {FLAG_FIELDS.get(m.group(1), 'the workload')} in the form to override)", text
    )
    return _PASS_FLAG.sub(lambda m: f"change {FLAG_FIELDS.get(m.group(1), 'the workload')} in the form", text)


@dataclass(frozen=True)
class Remedy:
    """A change that would pass a failed gate, as a link to the same pair with the form set."""

    text: str
    href: str | None = None


def remedies(d: DecodeResult, hw_id: str, model_id: str, params: Mapping[str, str]) -> list[Remedy]:
    """The decode result's remedies as links to the pair page with the field changed."""
    rem = d.remedies
    base = dict(params)

    def link(text: str, **change: str) -> Remedy:
        return Remedy(text, pair_path(hw_id, model_id, {**base, **change}))

    out: list[Remedy] = []
    if d.verdict is Verdict.NO_SESSION_FIT:
        if rem.max_alloc_context_tokens:
            top = rem.max_alloc_context_tokens
            read = min(top, d.workload.read_context_tokens)
            out.append(
                link(f"Reserve {top:,} tokens per session", alloc_context=str(top), read_context=str(read))
            )
        if rem.max_overhead_bytes is not None and rem.max_overhead_bytes >= 0:
            gb = int(rem.max_overhead_bytes / GB * 10) / 10
            out.append(link(f"Set the runtime overhead to {gb:g} GB", overhead_gb=f"{gb:g}"))
        if rem.kv_precisions_that_fit:
            out.append(Remedy(f"A KV cache in {' or '.join(rem.kv_precisions_that_fit)} would fit"))
    elif d.verdict is Verdict.NO_FLOOR:
        if rem.max_read_context_tokens:
            top = rem.max_read_context_tokens
            out.append(link(f"Read {top:,} tokens of context", read_context=str(top)))
        if rem.batch1_tok_per_s:
            floor = int(rem.batch1_tok_per_s)
            if floor >= 1:
                out.append(link(f"Lower the floor to {floor:,} tok/s", floor=str(floor)))
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
