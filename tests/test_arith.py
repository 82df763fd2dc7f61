"""One formula for a float and for an array (servebound.core.arith): the float path and the numpy path
give the same numbers, exactly where only +, -, *, / and min/max are involved, to the last bit or so
where a transcendental function is (the C library's expm1 and numpy's vectorized one may differ there).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from servebound.core.arith import as_values, clip, expm1, filled, maximum, minimum
from servebound.core.experts import ExpertTraffic, expected_distinct_experts
from servebound.core.kv import KVShape
from servebound.core.model import Experts, Weights

finite = st.floats(-1e12, 1e12, allow_nan=False)


@given(finite, finite, finite)
def test_the_float_path_is_numpy_elementwise(a: float, b: float, c: float) -> None:
    high = max(b, c)
    arrays = np.asarray([a]), np.asarray([b]), np.asarray([high])
    assert maximum(a, b) == np.maximum(*arrays[:2])[0]
    assert minimum(a, b) == np.minimum(*arrays[:2])[0]
    assert clip(a, b, high) == np.minimum(np.maximum(arrays[0], b), arrays[2])[0]
    assert isinstance(maximum(a, b), float) and isinstance(clip(a, b, high), float)
    assert filled(a, 3.0) == 3.0 and filled(np.zeros(4), 3.0).tolist() == [3.0] * 4


def test_floats_stay_floats_and_arrays_stay_arrays() -> None:
    assert as_values(3) == 3.0 and isinstance(as_values(3), float)
    assert isinstance(as_values(np.float64(2.5)), float)  # numpy's float64 scalar is a float
    assert as_values([1, 2]).dtype == np.float64
    assert isinstance(maximum(np.asarray([1.0]), 2.0), np.ndarray)
    assert expm1(1e-20) == 1e-20  # exact for tiny x: why m(n) is written with expm1 and log1p
    assert expm1(np.asarray([1e-20]))[0] == 1e-20


@given(
    st.floats(0, 1e7),
    st.floats(0, 1e7),
    st.integers(0, 1_000_000),
    st.floats(0, 1e9),
    st.lists(st.integers(0, 10**9), min_size=1, max_size=8),
)
def test_kv_bytes_at_a_float_equal_the_array_entries(
    glob: float, local: float, window: int, state: float, contexts: list[int]
) -> None:
    kv = KVShape(glob, local, window, state)
    over = kv.bytes_over(contexts)
    assert [kv.bytes_at(c) for c in contexts] == over.tolist()


@given(
    st.integers(2, 512),
    st.integers(1, 64),
    st.lists(st.integers(1, 10**9), min_size=1, max_size=8),
    st.sampled_from(list(ExpertTraffic)),
)
@example(routed=64, per_token=8, routings=[2253], mode=ExpertTraffic.EXPECTED)
def test_expert_traffic_of_a_float_matches_the_array_to_the_last_bits(
    routed: int, per_token: int, routings: list[int], mode: ExpertTraffic
) -> None:
    per_token = min(per_token, routed)
    weights = Weights(
        embedding_bytes=1e9, always_on_bytes=3e9, expert_bytes=2e7, experts=Experts(routed, per_token)
    )
    vector = weights.batch(np.asarray(routings, dtype=np.float64), mode).tolist()
    scalar = [weights.batch(float(n), mode) for n in routings]
    assert all(isinstance(v, float) for v in scalar)
    assert scalar == pytest.approx(vector, rel=1e-15, abs=0.0)
    m = [expected_distinct_experts(float(n), routed, per_token) for n in routings]
    assert all(
        0.0 <= x <= routed and (n > 1 or math.isclose(x, per_token, rel_tol=1e-12))
        for x, n in zip(m, routings, strict=True)
    )
