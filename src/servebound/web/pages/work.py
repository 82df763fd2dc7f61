"""Show the work: each result's formula with its numbers substituted, and the gate that bound it.

The numbers come from the decode and prefill result records, the ones the CLI's JSON views render (and
the core's W_batch for the one term they do not carry); formulas are rendered to MathML on the server (``mathml.py``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from markupsafe import Markup

from servebound.core.decode import DecodeResult
from servebound.core.units import GB
from servebound.web.figures.mathml import check_tex, mathml, tex_number
from servebound.web.pages.derivation import derivation
from servebound.web.pages.site import Pair

GATE_TEXT = {
    "floor_fit": "every gate passes: the weights fit, sessions fit, and a batch clears the floor",
    "no_floor": "the weights and sessions fit, but no batch satisfies the floor",
    "no_session_fit": "the weights fit, but one session's reserved cache does not",
    "no_resident_fit": "the weights plus overhead exceed capacity",
}


@dataclass(frozen=True)
class Work:
    """One shown result: what it answers, its formula (TeX; MathML on demand) and a sentence on its gate.

    The MathML is converted only when an HTML page asks for it (``math``): the markdown mirror and
    llms-full.txt carry the TeX, so they skip the converter, the costliest step of a pair page.
    """

    key: str
    title: str
    tex: str
    gate: str
    #: The derivation formula this result evaluates (a key of derivation.EQUATION_KEYS).
    equation: str | None = None

    @property
    def math(self) -> Markup:
        return mathml(self.tex, block=True)

    @property
    def equation_number(self) -> int | None:
        """The formula's number on /derivation (its anchor is ``#eq-N``)."""
        if self.equation is None:
            return None

        return derivation().equation(self.equation)


def _gb(value: float | None) -> str:
    return r"\text{n/a}" if value is None else rf"{tex_number(value / GB)}\ \mathrm{{GB}}"


def _rate(value: float | None, unit: str = "tok/s") -> str:
    return r"\text{n/a}" if value is None else rf"{tex_number(value)}\ \mathrm{{{unit}}}"


def _s(value: float | None) -> str:
    return r"\text{n/a}" if value is None else rf"{tex_number(value)}\ \mathrm{{s}}"


def _mode(name: str) -> str:
    """An arithmetic mode name as TeX-safe text (modes are slugs; anything else is dropped)."""
    return re.sub(r"[^A-Za-z0-9]", "", name) or "mode"


#: Which derivation formula each shown result evaluates.
EQUATION_OF = {
    "resident_margin_bytes": "b_mem",
    "batch_mem": "b_mem",
    "single_session_tok_s": "single_session",
    "aggregate_tok_s": "kv_aware",
    "per_session_tok_s": "per_session",
    "memory_power_tok_s": "memory_power",
    "large_memory_limit_tok_s": "large_memory",
    "forced": "q_kv",
    "time_s": "prefill_time",
    "tok_s": "prefill_throughput",
    "crossover_tokens": "crossover",
}


def _work(key: str, title: str, tex: str, gate: str) -> Work:
    return Work(key, title, check_tex(tex), gate, EQUATION_OF.get(key))


def _gate(ok: bool, passes: str, fails: str) -> str:
    """A gate's sentence: ``passes: ...`` or ``fails: ...``."""
    return f"passes: {passes}" if ok else f"fails: {fails}"


def _d_over_kw_numbers(d: DecodeResult, C: float, R: float) -> str:
    """D / (K W) with the numbers in: the memory-power ceiling's first factor and the whole
    large-memory limit."""
    return (
        rf"\frac{{{_gb(C)} \times {_rate(R / GB, 'GB/s')}}}{{{_gb(d.kv_alloc_bytes)} \times "
        rf"{_gb(d.weight_active_bytes)}}}"
    )


def decode_work(pair: Pair) -> list[Work]:
    """Resident fit, b_mem, single session, aggregate and per session at b*, memory power."""
    d = pair.decode_result
    w = d.workload  # as decode resolved it: the O and contexts the numbers were computed with
    hw = pair.hardware.hardware
    model = pair.model.adapter
    C, R, O = hw.memory_bytes, hw.bandwidth_bytes_per_s, w.overhead_bytes  # noqa: E741 (the derivation's names)
    out = [
        _work(
            "resident_margin_bytes",
            "Does it fit?",
            rf"C - W_{{\mathrm{{resident}}}} - O = {_gb(C)} - {_gb(d.resident_bytes)} - {_gb(O)}"
            rf" = {_gb(d.resident_margin_bytes)}",
            _gate(
                d.resident_margin_bytes >= 0,
                "the weights and overhead fit",
                "the weights and overhead exceed capacity",
            ),
        )
    ]
    if d.batch_mem is not None:
        out.append(
            _work(
                "batch_mem",
                "How many sessions fit?",
                rf"b_{{\mathrm{{mem}}}} = \left\lfloor \frac{{C - W_{{\mathrm{{resident}}}} - O}}"
                rf"{{K_{{\mathrm{{alloc}}}}({tex_number(w.alloc_context_tokens)})}} \right\rfloor"
                rf" = \left\lfloor \frac{{{_gb(d.resident_margin_bytes)}}}{{{_gb(d.kv_alloc_bytes)}}} \right\rfloor"
                rf" = {tex_number(d.batch_mem)}",
                _gate(
                    d.batch_mem >= 1,
                    "at least one session fits",
                    "one session's reserved cache does not fit",
                ),
            )
        )
    if d.single_session_tok_s is not None:
        w1 = float(model.weights.batch(1, w.expert_traffic))
        ok = d.single_session_tok_s >= w.floor_tok_s
        out.append(
            _work(
                "single_session_tok_s",
                "How fast is one session?",
                rf"r(1) = \frac{{R}}{{W_{{\mathrm{{batch}}}}(1) + K_{{\mathrm{{read}}}}({tex_number(w.read_context_tokens)})}}"
                rf" = \frac{{{_rate(R / GB, 'GB/s')}}}{{{_gb(w1)} + {_gb(d.kv_read_bytes)}}}"
                rf" = {_rate(d.single_session_tok_s)}",
                f"{'clears' if ok else 'is below'} the floor r* = {w.floor_tok_s:g} tok/s",
            )
        )
    if d.batch_star is not None:
        b = d.batch_star
        by = d.batch_limited_by
        gate = {
            "memory": "memory bounds the batch: b* = b_mem, and every fitting batch clears the floor",
            "floor": f"the floor bounds the batch: r(b*+1) would fall below {w.floor_tok_s:g} tok/s",
            "search_cap": "the search cap bounds the batch: the cache does not grow with context",
            "compute": "compute bounds the batch: past the balance batch the step time grows with b, "
            "so b* is the smallest batch reaching the compute ceiling",
        }.get(by or "", "")
        memory_line = (
            rf"\frac{{R}}{{W_{{\mathrm{{batch}}}}(b^*)/b^* + K_{{\mathrm{{read}}}}}}"
            rf" = \frac{{{_rate(R / GB, 'GB/s')}}}{{{_gb(d.bytes_per_token_at_star)}}}"
        )
        if d.bound_by == "compute" and d.compute_tok_s_at_star is not None:
            tex = (
                rf"T(b^*) = \min\left(\frac{{R}}{{q(b^*)}}, \frac{{b^*}}{{t_{{\mathrm{{cmp}}}}(b^*)}}\right)"
                rf" = \min\left({_rate(d.memory_tok_s_at_star)}, {_rate(d.compute_tok_s_at_star)}\right)"
                rf" = {_rate(d.aggregate_tok_s)},\quad b^* = {tex_number(b)}"
            )
        else:
            tex = rf"T(b^*) = {memory_line} = {_rate(d.aggregate_tok_s)},\quad b^* = {tex_number(b)}"
        out.append(_work("aggregate_tok_s", "Useful throughput across sessions", tex, gate))
        out.append(
            _work(
                "per_session_tok_s",
                "Each session at b*",
                rf"r(b^*) = \frac{{T(b^*)}}{{b^*}} = \frac{{{_rate(d.aggregate_tok_s)}}}{{{tex_number(b)}}}"
                rf" = {_rate(d.per_session_tok_s)} \geq r^* = {tex_number(w.floor_tok_s)}",
                "the floor holds at b*",
            )
        )
    d_over_kw = r"\frac{CR}{K_{\mathrm{alloc}} W_{\mathrm{active}}}"
    d_over_kw_numbers = _d_over_kw_numbers(d, C, R)
    if d.memory_power_tok_s is not None:
        out.append(
            _work(
                "memory_power_tok_s",
                "Memory-power ceiling (the loose orientation line)",
                rf"{d_over_kw}\left(1 - \frac{{W_{{\mathrm{{resident}}}} + O}}{{C}}\right)"
                rf" = {d_over_kw_numbers}\left(1 - \frac{{{_gb(d.resident_bytes)} + {_gb(O)}}}{{{_gb(C)}}}\right)"
                rf" = {_rate(d.memory_power_tok_s)}",
                "ignores per-session context reads, so it sits above the KV-aware ceiling",
            )
        )
    if d.large_memory_limit_tok_s is not None:
        out.append(
            _work(
                "large_memory_limit_tok_s",
                "Large-memory limit (the loosest line)",
                rf"{d_over_kw} = {d_over_kw_numbers} = {_rate(d.large_memory_limit_tok_s)}",
                "drops the resident model and overhead as well: the simplified D/(KW)",
            )
        )
    if d.forced is not None:
        f = d.forced
        out.append(
            _work(
                "forced",
                f"At the batch you chose ({f.batch:,})",
                rf"T({tex_number(f.batch)}) = {_rate(f.aggregate_tok_s)},\quad "
                rf"r({tex_number(f.batch)}) = {_rate(f.per_session_tok_s)}",
                ("clears" if f.clears_floor else "does not clear")
                + " the floor"
                + ("" if f.fits_memory else "; this batch does not fit in memory"),
            )
        )
    return out


def prefill_work(pair: Pair) -> list[Work]:
    """t_pf,min as the larger of the memory and compute times, the ceiling, and the crossover."""
    r = pair.prefill_result
    if r is None:
        return []
    hw = pair.hardware.hardware
    a = r.assumptions
    compute = (
        rf"\frac{{A_{{\mathrm{{linear}}}}}}{{F_{{\mathrm{{{_mode(a.linear_mode)}}}}}}} + "
        rf"\frac{{A_{{\mathrm{{attn}}}}}}{{F_{{\mathrm{{{_mode(a.attention_mode)}}}}}}}"
    )
    out = [
        _work(
            "time_s",
            "How long is the wait for the first token?",
            rf"t_{{\mathrm{{pf,min}}}} = \max\left(\frac{{Q_{{\mathrm{{pf}}}}}}{{R}},\ {compute}\right)"
            rf" = \max\left({_s(r.memory_time_s)},\ {_s(r.compute_time_s)}\right) = {_s(r.time_s)}",
            f"bound by {r.bound_by.value}"
            + (
                f" ({a.charge_note})"
                if a.charge_note and a.compute_available
                else ""
                if a.compute_available
                else f" (no {', '.join(a.missing_modes)} rate on this hardware: memory only)"
            ),
        ),
        _work(
            "tok_s",
            "Prefill throughput",
            rf"T_{{\mathrm{{pf}}}} = \frac{{bL}}{{t_{{\mathrm{{pf,min}}}}}} = "
            rf"\frac{{{tex_number(r.batch)} \times {tex_number(r.prompt_tokens)}}}{{{_s(r.time_s)}}}"
            rf" = {_rate(r.tok_s)}",
            f"batch {r.batch:,}, one shot; Q_pf = {r.traffic_bytes / GB:,.3f} GB moved",
        ),
    ]
    if r.crossover_tokens is not None and a.linear_flop_per_s is not None:
        out.append(
            _work(
                "crossover_tokens",
                "Where compute takes over",
                rf"S^* = \frac{{W_{{\mathrm{{batch}}}}(S^*)\, F_{{\mathrm{{{_mode(a.linear_mode)}}}}}}}"
                rf"{{2 P_{{\mathrm{{lin,active}}}} R}}"
                rf" = {tex_number(r.crossover_tokens)}\ \mathrm{{tokens}}",
                f"F = {a.linear_flop_per_s / 1e12:,.1f} TFLOP/s, R = {hw.bandwidth_bytes_per_s / GB:,.1f} GB/s; "
                "below S* tokens per weight sweep memory bounds prefill, above it compute does",
            )
        )
    return out
