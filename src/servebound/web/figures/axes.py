"""A chart's axes: tick steps and positions, the axis labels' short numbers, and the scale from a value
to its place on the drawing (one value, or a series in one pass with the same arithmetic)."""

from __future__ import annotations

import math
from collections.abc import Sequence

from servebound.core.arith import np  # numpy on first use: a server starts without it

__all__ = ["Scale", "floats", "nice_step", "short_number", "ticks"]


def nice_step(span: float) -> float:
    raw = span / 7  # five to seven labelled ticks
    mag = 10.0 ** math.floor(math.log10(raw))
    for m in (1.0, 2.0, 5.0, 10.0):  # no 2.5: a batch or stage axis never shows 2.5 or 7.5
        if raw <= m * mag:
            return float(m * mag)
    return float(10 * mag)


def ticks(lo: float, hi: float, log: bool) -> list[float]:
    if log:
        first, last = math.floor(math.log10(lo)), math.ceil(math.log10(hi))
        stride = max(1, math.ceil((last - first) / 8))
        if last - first > 3:  # many decades: a label per decade (or every few)
            return [10.0**e for e in range(first, last + 1, stride) if lo <= 10.0**e <= hi * 1.0001]
        # a few decades: 1, 2 and 5 of each, so the axis never shows just one or two labels
        out = [m * 10.0**e for e in range(first, last + 1) for m in (1.0, 2.0, 5.0)]
        out = [t for t in out if lo <= t <= hi * 1.0001]
        if len(out) >= 3:
            return out
    step = nice_step(hi - lo) if hi > lo else 1.0
    start = math.ceil(lo / step) * step
    return [start + i * step for i in range(int((hi - start) / step + 1e-9) + 1)]


def short_number(value: float) -> str:
    """Axis labels: 1.5k, 20M, 0.25."""
    a = abs(value)
    for div, suffix in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if a >= div:
            return f"{value / div:g}{suffix}"
    if a >= 1 or a == 0:
        return f"{value:g}"
    return f"{value:.3g}"


class Scale:
    def __init__(self, lo: float, hi: float, log: bool, a: float, b: float) -> None:
        if log:
            lo, hi = max(lo, 1e-12), max(hi, lo * 10 if hi <= lo else hi)
        elif hi <= lo:
            hi = lo + 1.0
        self.lo, self.hi, self.log, self.a, self.b = lo, hi, log, a, b

    def __call__(self, v: float) -> float:
        return self.many([v])[0]

    def many(self, values: Sequence[float]) -> list[float]:
        """``self(v)`` for each value, with the same arithmetic (so the same floats) in one pass."""
        a, span = self.a, self.b - self.a
        if self.log:
            log10, l0 = math.log10, math.log10(self.lo)
            width = math.log10(self.hi) - l0
            return [a + (log10(max(v, 1e-300)) - l0) / width * span for v in values]
        lo, width = self.lo, self.hi - self.lo
        return [a + (v - lo) / width * span for v in values]


def floats(values: Sequence[float]) -> list[float]:
    """A series' values as Python floats (an array's in one call)."""
    if isinstance(values, np.ndarray):
        floats: list[float] = values.astype(np.float64, copy=False).tolist()
        return floats
    return [float(v) for v in values]
