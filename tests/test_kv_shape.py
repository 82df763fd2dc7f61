"""K(L) = global L + local min(L, w) + state, and its closed-form inverse."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from servebound.core.kv import CONTEXT_CAP, KVShape
from servebound.core.workload import MAX_BATCH, memory_fit_batch


@given(
    st.floats(0, 1e7),
    st.floats(0, 1e7),
    st.integers(0, 1_000_000),
    st.floats(0, 1e9),
    st.floats(0, 1e13),
)
def test_inverse_is_the_largest_fitting_context(
    glob: float, local: float, window: int, state: float, budget: float
) -> None:
    kv = KVShape(glob, local, window, state)
    found = kv.max_context_within(budget)
    if found is None:  # K never exceeds the budget (or only past 2^53 tokens)
        assert kv.bytes_at(CONTEXT_CAP // 2) <= budget or not kv.grows_with_context or glob < 1e-3
        return
    if found < 0:
        assert kv.bytes_at(0) > budget
        return
    assert kv.bytes_at(found) <= budget
    assert kv.bytes_at(found + 1) > budget


def test_vanishing_sizes_do_not_hang_or_overflow() -> None:
    assert KVShape(global_bytes_per_token=1e-12).max_context_within(1e9) is None
    assert KVShape(global_bytes_per_token=1e-300).max_context_within(1e9) is None
    assert memory_fit_batch(1e9, 1e-320) == (MAX_BATCH, True)
    assert memory_fit_batch(-1.0, 5.0) == (0, False)
    # hand-checked: 100 GB of room, 1.025 GB per session -> 97 sessions
    assert memory_fit_batch(100e9, 1.025e9) == (97, False)
