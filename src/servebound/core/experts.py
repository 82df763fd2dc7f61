"""Routed-expert traffic: the expected distinct experts an iteration touches, or its floor k."""

from __future__ import annotations

from enum import StrEnum

import numpy as np
from numpy.typing import ArrayLike, NDArray


class ExpertTraffic(StrEnum):
    """``expected``: m(n) under independent uniform routing (an estimate).
    ``minimum``: m(n) replaced by k, a guaranteed lower bound on traffic (a bound)."""

    EXPECTED = "expected"
    MINIMUM = "minimum"


def expected_distinct_experts(routings: ArrayLike, routed: int, per_token: int) -> NDArray[np.float64]:
    """m(n) = E (1 - (1 - k/E)^n), written with expm1/log1p so it stays exact for tiny k/E and huge n."""
    n = np.asarray(routings, dtype=np.float64)
    if per_token >= routed:
        return np.full_like(n, float(routed))
    touched: NDArray[np.float64] = -routed * np.expm1(n * np.log1p(-per_token / routed))
    return touched


def distinct_experts(
    routings: ArrayLike, routed: int, per_token: int, mode: ExpertTraffic
) -> NDArray[np.float64]:
    """m(n) in the chosen traffic mode."""
    if mode is ExpertTraffic.MINIMUM:
        return np.full_like(np.asarray(routings, dtype=np.float64), float(per_token))
    return expected_distinct_experts(routings, routed, per_token)
