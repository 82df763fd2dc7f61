"""The KV cache and prefill quantities of a model, summed over its blocks.

Cache terms are elements per token (times the KV element width) and state bytes; windowed terms with
different windows fold into one window (:func:`fold`). Prefill: the linear parameters one token
multiplies, attention FLOPs per query-key pair (full and windowed), recurrent-state FLOPs and the
cache bytes one prompt token writes.
"""

from __future__ import annotations

from collections import Counter

from servebound.core.kv import KVShape
from servebound.core.model import PrefillShape
from servebound.core.steps import Step
from servebound.importers.hf.blocks import Block


def fold(terms: list[tuple[float, int]], what: str, steps: list[Step]) -> tuple[float, int]:
    """Window-capped terms (coefficient, window) as one coefficient at one window.

    One window: the terms add. Windows that differ: the largest window W is kept and a term capped at
    w < W enters as coefficient x w / W. Since min(L, w) >= (w / W) min(L, W) for every L, the folded
    term never exceeds the true one (traffic and FLOPs stay lower bounds) and equals it for L >= W.
    """
    live = [(value, window) for value, window in terms if value]
    widest = max((window for _, window in live), default=0)
    if len({window for _, window in live}) > 1:
        narrow: dict[int, float] = {}
        for value, window in live:
            if window != widest:
                narrow[window] = narrow.get(window, 0.0) + value
        parts = ", ".join(f"{value:g} x {window}/{widest}" for window, value in sorted(narrow.items()))
        steps.append(
            Step(
                "assumption",
                0.0,
                f"{what} windows differ {sorted({w for _, w in live})}: kept at the largest, {widest}; "
                f"narrower terms scaled by window / {widest} ({parts}), a lower bound exact from "
                f"{widest} tokens on",
            )
        )
    total = sum(value * (window / widest if widest else 1.0) for value, window in live)
    return total, widest


def _n(value: float) -> str:
    """A count as written in the audit: integers without a decimal point."""
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


def kv_shapes(blocks: list[Block], e_kv: float, precision: str) -> tuple[KVShape, KVShape, list[Step]]:
    """Sum per-layer cache terms; one window per cache (windows that differ are folded, see fold)."""
    steps: list[Step] = []
    alloc_global = sum(b.kv_global_elements for b in blocks)
    read_global = sum(
        b.kv_global_elements if b.read_global_elements is None else b.read_global_elements for b in blocks
    )
    alloc_local, alloc_window = fold([(b.kv_local_elements, b.window_tokens) for b in blocks], "cache", steps)
    read_terms = [
        (
            b.kv_local_elements if b.read_local_elements is None else b.read_local_elements,
            b.window_tokens if b.read_window_tokens is None else b.read_window_tokens,
        )
        for b in blocks
    ]
    read_terms += [(term.elements, term.window_tokens) for b in blocks for term in b.extra_local]
    read_local, read_window = fold(read_terms, "read", steps)
    state = sum(b.state_bytes for b in blocks)
    read_state = sum(b.state_bytes if b.read_state_bytes is None else b.read_state_bytes for b in blocks)
    for kv_formula, n in Counter(b.kv_formula for b in blocks if b.kv_formula).items():
        per = next(b for b in blocks if b.kv_formula == kv_formula)
        elements = per.kv_global_elements + per.kv_local_elements
        if elements and per.state_bytes:
            value = n * elements * e_kv
            arithmetic = f"{n} layers x {_n(elements)} elements x {e_kv:g} B ({precision})"
            unit = f"bytes per token (the window part up to its window) + {n} x {per.state_bytes:g} B state"
        elif per.state_bytes:
            value, unit = n * per.state_bytes, "bytes per session"
            arithmetic = f"{n} layers x {per.state_bytes:g}"
        else:
            value, unit = n * elements * e_kv, "bytes per token"
            arithmetic = f"{n} layers x {kv_formula} x {e_kv:g} B ({precision})"
        steps.append(Step(f"kv.{per.label}", value, f"{arithmetic} = {value:g} {unit}; {kv_formula}"))
    alloc = KVShape(alloc_global * e_kv, alloc_local * e_kv, alloc_window, state)
    read = KVShape(read_global * e_kv, read_local * e_kv, read_window, read_state)
    steps.append(
        Step(
            "kv.alloc.global_bytes_per_token",
            alloc.global_bytes_per_token,
            f"{_n(alloc_global)} elements x {e_kv:g} B",
        )
    )
    steps.append(
        Step(
            "kv.alloc.local_bytes_per_token",
            alloc.local_bytes_per_token,
            f"{_n(alloc_local)} elements x {e_kv:g} B, window {alloc_window}",
        )
    )
    steps.append(
        Step("kv.alloc.state_bytes", state, "recurrent, convolution and compressor state at the state dtype")
    )
    if read != alloc:
        steps.append(
            Step(
                "kv.read.global_bytes_per_token",
                read.global_bytes_per_token,
                f"{_n(read_global)} elements x {e_kv:g} B",
            )
        )
        steps.append(
            Step(
                "kv.read.local_bytes_per_token",
                read.local_bytes_per_token,
                f"{_n(read_local)} elements x {e_kv:g} B, window {read_window}",
            )
        )
        if read_state != state:
            steps.append(
                Step("kv.read.state_bytes", read_state, "state bytes one decode step reads (per block)")
            )
    return alloc, read, steps


def prefill_shape(
    blocks: list[Block], kv_alloc: KVShape, mode: str, kv_precision: str
) -> tuple[PrefillShape, list[Step]]:
    """Prefill quantities summed over blocks; ``mode`` prices the linear FLOPs (see storage)."""
    linear = sum(b.linear_active_params for b in blocks)
    global_flops = sum(b.global_flops_per_pair for b in blocks)
    fold_steps: list[Step] = []
    local_terms = [
        (b.local_flops_per_pair, b.window_tokens if b.read_window_tokens is None else b.read_window_tokens)
        for b in blocks
    ]
    local_terms += [(term.flops_per_pair, term.window_tokens) for b in blocks for term in b.extra_local]
    local_flops, window = fold(local_terms, "attention FLOP", fold_steps)
    state_flops = sum(b.state_flops_per_token for b in blocks)
    write = kv_alloc.global_bytes_per_token + kv_alloc.local_bytes_per_token
    attention_mode = kv_precision if kv_precision in {"fp32", "bf16", "fp16", "fp8"} else "bf16"
    prefill = PrefillShape(
        linear_active_params=float(linear),
        attention_global_flops_per_pair=float(global_flops),
        attention_local_flops_per_pair=float(local_flops),
        attention_window_tokens=window,
        attention_state_flops_per_token=float(state_flops),
        kv_write_bytes_per_token=write,
        linear_mode=mode,
        attention_mode=attention_mode,
    )

    def grouped(part: str) -> str:
        counts = Counter(b.flops_formula for b in blocks if getattr(b, part))
        return "; ".join(f"{n} layers x {formula}" for formula, n in counts.items()) or "none"

    steps = [
        Step(
            "prefill.linear_active_params",
            float(linear),
            "attention/mixer projections + dense and shared MLPs + routers + k routed experts per layer; "
            "no embedding lookup, no output head",
        ),
        Step(
            "prefill.attention_global_flops_per_pair", float(global_flops), grouped("global_flops_per_pair")
        ),
        *fold_steps,
        Step(
            "prefill.attention_local_flops_per_pair",
            float(local_flops),
            f"{grouped('local_flops_per_pair')}; window {window}",
        ),
        Step("prefill.attention_state_flops_per_token", float(state_flops), grouped("state_flops_per_token")),
        Step("prefill.kv_write_bytes_per_token", write, "global + local allocation bytes per token"),
    ]
    return prefill, steps
