"""The methodology page's text: (heading, paragraphs, formulas in TeX) per section."""

from __future__ import annotations

SECTIONS: tuple[tuple[str, tuple[str, ...], tuple[str, ...]], ...] = (
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
        (
            "Four numbers move every decode result: the runtime overhead O held once, the tokens of cache "
            "each session reserves (L_alloc), the tokens of context each new token reads (L_read), and the "
            "slowest per-session rate worth serving, the floor r*. The defaults are O = 8 GB, L_alloc = "
            "100,000, L_read = 32,000 and r* = 20 tok/s. A pair page takes each as a query parameter.",
        ),
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
            "functions: a pair page's numbers equal `servebound decode --json` and `servebound prefill --json` "
            "for the same inputs. On the static copy of the site, the calculator recomputes in the browser "
            "with calc.js, the one JavaScript port of the core, which reproduces every conformance vector the "
            "core publishes at /conformance.json to 1e-9. The whole derivation, formula by formula, is at "
            "/derivation.",
        ),
        (),
    ),
)
