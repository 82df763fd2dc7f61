"""Bisection over a monotone predicate: the one search behind b* (decode) and the largest batch (prefill)."""

from __future__ import annotations

from collections.abc import Callable


def largest_true(ok: Callable[[int], bool], lo: int, hi: int) -> int:
    """Largest b in [lo, hi] with ok(b), given ok(lo) holds and ok is monotone (true then false)."""
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if ok(mid):
            lo = mid
        else:
            hi = mid - 1
    return lo
