"""The replayed bisection returns a plain bisection's float, with fewer evaluations."""

from __future__ import annotations

import math
from collections.abc import Callable

from hypothesis import example, given
from hypothesis import strategies as st

from servebound.core.roots import replayed_bisection


def plain_bisection(
    f: Callable[[float], float], lo: float, hi: float, relative_width: float, zero_is_high: bool
) -> tuple[float, int]:
    calls = 0
    for _ in range(200):
        mid = (lo + hi) / 2.0
        value = f(mid)
        calls += 1
        if value >= 0.0 if zero_is_high else value > 0.0:
            hi = mid
        else:
            lo = mid
        if hi - lo <= relative_width * hi:
            break
    return hi, calls


def shapes(root: float, power: float, plateau: float) -> list[Callable[[float], float]]:
    """Rising functions with one sign change at ``root``: curved, flat below the root, and one whose
    zero spans the top of the interval (a saturated sweep)."""
    return [
        lambda x: x**power - root**power,
        lambda x: max(x - root, 0.0) ** power - plateau,
        lambda x: min(x - root, 0.0) * power,
        lambda x: math.log(x / root) if x > 0.0 else -1e300,
    ]


@given(
    st.floats(1.0, 1e6),
    st.floats(0.3, 4.0),
    st.floats(0.0, 1.0),
    st.sampled_from([1e-9, 1e-12]),
    st.booleans(),
)
@example(3959.9175340691954, 1.0, 0.0, 1e-12, True)
def test_the_same_float_as_bisection(
    root: float, power: float, plateau: float, relative_width: float, zero_is_high: bool
) -> None:
    lo, hi = 1e-3, 4.0 * root + 10.0
    for f in shapes(root, power, plateau):
        if (f(lo) >= 0.0 if zero_is_high else f(lo) > 0.0) or not (
            f(hi) >= 0.0 if zero_is_high else f(hi) > 0.0
        ):
            continue
        expected, _ = plain_bisection(f, lo, hi, relative_width, zero_is_high)
        got = replayed_bisection(
            f, lo, hi, f(lo), f(hi), relative_width=relative_width, zero_is_high=zero_is_high
        )
        assert got == expected


def test_fewer_evaluations_on_a_prefill_like_gap() -> None:
    # Compute rising quadratically in the prompt length against a flat sweep, over 1 .. 131,072.
    def gap(length: float) -> float:
        return 3e-9 * length * length + 2e-6 * length - 0.37

    calls: list[float] = []

    def counted(length: float) -> float:
        calls.append(length)
        return gap(length)

    expected, plain_calls = plain_bisection(gap, 1.0, 131072.0, 1e-9, False)
    got = replayed_bisection(
        counted, 1.0, 131072.0, gap(1.0), gap(131072.0), relative_width=1e-9, zero_is_high=False
    )
    assert got == expected
    assert len(calls) < plain_calls / 2
