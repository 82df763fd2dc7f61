"""The methodology page's text: (heading, paragraphs, formulas in TeX) per section.

The sentences that state what the code does with a default are computed from the catalog and the core's
own constants (:func:`sections`), so the page cannot say one thing while the code does another.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from servebound.core.rates import MISSING_RATE_RULE
from servebound.core.units import GB
from servebound.core.workload import (
    DEFAULT_ALLOC_CONTEXT_TOKENS,
    DEFAULT_FLOOR_TOK_PER_S,
    DEFAULT_OVERHEAD_BYTES,
    DEFAULT_READ_CONTEXT_TOKENS,
)

Section = tuple[str, tuple[str, ...], tuple[str, ...]]

#: Rows the workload paragraph names as examples of a machine's own overhead, where the catalog has them.
OVERHEAD_EXAMPLES = ("nvidia-rtx-4090", "nvidia-dgx-spark", "nvidia-h100-sxm", "apple-m5-max-128gb")


def _gb(value_bytes: float) -> str:
    return f"{value_bytes / GB:.1f} GB"


def overhead_sentence(hardware: Sequence[Any]) -> str:
    """How O is chosen, as the code chooses it (``DeclaredWorkload.with_overhead``), with the catalog's figures:
    how many single devices state their own overhead, the smallest and largest, and named examples (a
    multi-device system holds N times its member's)."""
    devices = [h for h in hardware if getattr(h, "system", None) is None]
    stated = [
        (h.hardware.runtime_overhead_bytes, h)
        for h in devices
        if h.hardware.runtime_overhead_bytes is not None
    ]
    text = (
        "The runtime overhead O is each machine's own: its hardware row states it (the operating system's "
        "share of unified memory, or a card's runtime context and buffers; a multi-device system holds its "
        "member's once per device). "
    )
    if stated:
        low = min(stated, key=lambda pair: pair[0])
        high = max(stated, key=lambda pair: pair[0])
        by_id = {h.id: (value, h.name) for value, h in stated}
        examples = [f"{_gb(by_id[i][0])} on the {by_id[i][1]}" for i in OVERHEAD_EXAMPLES if i in by_id]
        text += (
            f"{len(stated):,} of the catalog's {len(devices):,} single devices state one, from "
            f"{_gb(low[0])} on the {low[1].name} to {_gb(high[0])} on the {high[1].name}"
            + (f"; for example {', '.join(examples)}" if examples else "")
            + ". "
        )
    return text + (
        f"A row that states none is charged {DEFAULT_OVERHEAD_BYTES / GB:g} GB, the value of the derivation's "
        "worked examples. Choosing a serving engine replaces the row's figure with the engine's own "
        "convention, and the runtime overhead control of a pair page with any figure."
    )


def workload_paragraph(hardware: Sequence[Any]) -> str:
    return (
        "Four numbers move every decode result: the runtime overhead O held once, the tokens of cache "
        "each session reserves (L_alloc), the tokens of context each new token reads (L_read), and the "
        "slowest per-session rate worth serving, the floor r*. "
        + overhead_sentence(hardware)
        + f" The other defaults are L_alloc = {DEFAULT_ALLOC_CONTEXT_TOKENS:,} (capped at the model's "
        f"context limit), L_read = {DEFAULT_READ_CONTEXT_TOKENS:,} and r* = {DEFAULT_FLOOR_TOK_PER_S:g} "
        "tok/s. A pair page takes each as a query parameter."
    )


def sections(hardware: Sequence[Any]) -> tuple[Section, ...]:
    """The page's sections, the workload's defaults and the missing-rate rule as the code applies them."""
    out: list[Section] = []
    for heading, paragraphs, formulas in SECTIONS:
        if heading == "The workload":
            paragraphs = (workload_paragraph(hardware),)
        elif heading == "First-token wait: prefill":
            paragraphs = (*paragraphs, MISSING_RATE_RULE)
        out.append((heading, paragraphs, formulas))
    return tuple(out)


#: The page's fixed text; :func:`sections` fills in the paragraphs computed from the catalog.
SECTIONS: tuple[Section, ...] = (
    (
        "What the numbers are",
        (
            "Every figure on this site is a ceiling: the most a machine can do for a model under the stated "
            "workload, given its memory capacity C, memory bandwidth R and dense compute rates F. Real "
            "servers land below it because of kernels, scheduling, quantization overhead, interconnects and "
            "heat, none of which the bound models.",
            "With vendor peak rates and the minimum expert traffic a result is a bound. With the expected "
            "expert traffic of a mixture-of-experts model, or measured sustained rates, it is an estimate; "
            "each result's assumptions say which.",
        ),
        (),
    ),
    (
        "The workload",
        ("(computed from the catalog: see workload_paragraph)",),
        (),
    ),
    (
        "Gate 1: does it fit?",
        (
            "The weights held in memory plus the overhead must fit in capacity; the rest holds session caches.",
        ),
        (
            r"C - W_{\mathrm{resident}} - O \geq 0",
            r"b_{\mathrm{mem}} = \left\lfloor \frac{C - W_{\mathrm{resident}} - O}{K_{\mathrm{alloc}}(L_{\mathrm{alloc}})} \right\rfloor",
        ),
    ),
    (
        "One session",
        (
            "Generating a token sweeps the weights a token touches and reads that session's context. Only "
            "bandwidth matters here; capacity is a gate.",
        ),
        (r"r(1) = \frac{R}{W_{\mathrm{batch}}(1) + K_{\mathrm{read}}(L_{\mathrm{read}})}",),
    ),
    (
        "Useful throughput across sessions",
        (
            "A batch of b sessions shares one weight sweep per step but each reads its own context. The "
            "aggregate T(b) never falls as b grows and the per-session rate r(b) never rises, so the usable "
            "batch b* is the largest that fits in memory and keeps every session at or above the floor. "
            "Either memory (b* = b_mem) or the floor bounds it; the page names which.",
            "For a mixture-of-experts model the weights swept per step grow with the batch: n routings touch "
            "m(n) = E(1 - (1 - k/E)^n) distinct experts on average under uniform routing.",
        ),
        (
            r"q(b) = \frac{W_{\mathrm{batch}}(b)}{b} + K_{\mathrm{read}}(L_{\mathrm{read}}),\qquad T(b) = \frac{R}{q(b)},\qquad r(b) = \frac{T(b)}{b}",
            r"b^* = \max\{\, b \le b_{\mathrm{mem}} : r(b) \geq r^* \,\}",
        ),
    ),
    (
        "The memory-power line",
        (
            "Dropping the private context reads and using every fitting session gives a looser ceiling "
            "built from the product D = CR. The site shows it for orientation: it always sits above the "
            "KV-aware aggregate.",
        ),
        (
            r"T_{\mathrm{mp}} = \frac{CR}{K_{\mathrm{alloc}} W_{\mathrm{active}}}\left(1 - \frac{W_{\mathrm{resident}} + O}{C}\right)",
        ),
    ),
    (
        "First-token wait: prefill",
        (
            "Processing a prompt of L tokens moves the weights (once per chunk), writes the new cache and "
            "does the linear and attention arithmetic. The time is at least the larger of the memory time "
            "and the compute time. Short prompts are memory bound; past the crossover S*, where the sweep "
            "time equals the linear arithmetic time, compute takes over.",
            "Pair pages evaluate one prompt at batch 1 in one shot, the CLI's default, and also scan every "
            "prompt length that fits for the lowest and highest prefill throughput.",
        ),
        (
            r"t_{\mathrm{pf,min}} = \max\left(\frac{Q_{\mathrm{pf}}}{R},\ \frac{A_{\mathrm{linear}}}{F_{\mathrm{linear}}} + \frac{A_{\mathrm{attn}}}{F_{\mathrm{attn}}}\right),\qquad T_{\mathrm{pf}} = \frac{bL}{t_{\mathrm{pf,min}}}",
            r"S^* = \frac{W_{\mathrm{batch}}(S^*)\, F_{\mathrm{linear}}}{2 P_{\mathrm{lin,active}} R}",
        ),
    ),
    (
        "Same numbers everywhere",
        (
            "The pages, their markdown mirrors, the JSON API and the command line all call the same "
            "functions: a pair page's numbers equal what the servebound decode and prefill commands print "
            "for the same inputs. On the static copy of the site, the calculator recomputes in the browser "
            "with calc.js, the one JavaScript port of the core, which reproduces every conformance vector the "
            "core publishes at /conformance.json to within one part in a billion. The whole derivation, formula by formula, is at "
            "/derivation.",
        ),
        (),
    ),
)
