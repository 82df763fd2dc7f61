"""A plain bisection's answer with a handful of evaluations: the sign change is first narrowed by the
Illinois rule (false position that halves the stale end), then the bisection is replayed step for
step, each midpoint decided by a point already evaluated where one lies on its side.

For a function whose sign changes once on [lo, hi], every midpoint below a point found on the low side
is on the low side too (and above a point on the high side, on the high side), so the replay takes the
same steps as the bisection and returns the same float; only midpoints between the two closest points
known are evaluated. The callers' bisections (the prefill crossovers, the decode balance batch) keep
their stopping rules and their results to the last bit.
"""

from __future__ import annotations

import math
from collections.abc import Callable

__all__ = ["replayed_bisection"]


def replayed_bisection(
    f: Callable[[float], float],
    lo: float,
    hi: float,
    f_lo: float,
    f_hi: float,
    *,
    relative_width: float,
    zero_is_high: bool,
    steps: int = 200,
) -> float:
    """The ``hi`` that bisecting [lo, hi] returns: a midpoint m goes high when f(m) > 0 (or f(m) >= 0
    with ``zero_is_high``), low otherwise, until hi - lo <= ``relative_width`` * hi or after ``steps``
    halvings. ``f_lo`` and ``f_hi`` are f at the ends (the low end on the low side, the high end on the
    high side)."""

    def high(value: float) -> bool:
        return value >= 0.0 if zero_is_high else value > 0.0

    # Narrow [a, c], a on the low side and c on the high side, to well under the bisection's last width.
    a, fa, c, fc = lo, f_lo, hi, f_hi
    target = relative_width * 0.25
    last = 0
    for _ in range(60):
        if c - a <= target * c:
            break
        if a > 0.0 and c > 8.0 * a:
            x = math.sqrt(a * c)  # a bracket over decades: halve it in the logarithm first
        else:
            x = (a * fc - c * fa) / (fc - fa) if fc != fa else 0.5 * (a + c)
            if x >= c:  # a zero at the high end: probe just below it
                x = c - 0.5 * target * c
            elif x <= a:
                x = a + 0.5 * target * c
        fx = f(x)
        if high(fx):
            c, fc = x, fx
            if last == 1:
                fa *= 0.5
            last = 1
        else:
            a, fa = x, fx
            if last == -1:
                fc *= 0.5
            last = -1

    # Replay the bisection.
    for _ in range(steps):
        mid = (lo + hi) / 2.0
        if mid <= a:
            lo = mid
        elif mid >= c:
            hi = mid
        elif high(f(mid)):
            hi = c = mid
        else:
            lo = a = mid
        if hi - lo <= relative_width * hi:
            break
    return hi
