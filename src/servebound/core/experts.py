"""Routed-expert traffic: the expected distinct experts an iteration touches, or its floor k."""

from __future__ import annotations

import math
from collections.abc import Callable
from enum import StrEnum

from servebound.core.arith import Values, as_values, expm1, filled


class ExpertTraffic(StrEnum):
    """``expected``: m(n) under independent uniform routing (an estimate).
    ``minimum``: m(n) replaced by k, a guaranteed lower bound on traffic (a bound)."""

    EXPECTED = "expected"
    MINIMUM = "minimum"


def expected_distinct_experts(routings: Values, routed: int, per_token: int) -> Values:
    """m(n) = E (1 - (1 - k/E)^n), written with expm1/log1p so it stays exact for tiny k/E and huge n.

    ``routings`` is one count (a float back) or an array of counts (an array back)."""
    n = as_values(routings)
    if per_token >= routed:
        return filled(n, float(routed))
    return -routed * expm1(n * math.log1p(-per_token / routed))


def distinct_experts(routings: Values, routed: int, per_token: int, mode: ExpertTraffic) -> Values:
    """m(n) in the chosen traffic mode."""
    if mode is ExpertTraffic.MINIMUM:
        return filled(as_values(routings), float(per_token))
    return expected_distinct_experts(routings, routed, per_token)


def touched_at(routed: int, per_token: int, mode: ExpertTraffic) -> Callable[[float], float]:
    """``distinct_experts`` for one float count, its constant parts computed once: the same float, for
    searches that ask it thousands of times."""
    if mode is ExpertTraffic.MINIMUM or per_token >= routed:
        constant = float(per_token if mode is ExpertTraffic.MINIMUM else routed)
        return lambda _: constant
    log_miss = math.log1p(-per_token / routed)
    return lambda n: -routed * math.expm1(n * log_miss)
