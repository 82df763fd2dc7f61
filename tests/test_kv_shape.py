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
        assert kv.bytes_at(CONTEXT_CAP) <= budget or glob * CONTEXT_CAP < 2 * budget
        return
    if found < 0:
        assert kv.bytes_at(0) > budget
        return
    assert kv.bytes_at(found) <= budget
    assert kv.bytes_at(found + 1) > budget


def test_a_size_lost_in_rounding_next_to_the_state() -> None:
    # 1.1e-308 bytes per token next to 1 byte of state: K(L) == 1.0 in floating point for every L.
    kv = KVShape(0.0, 1.1125369292536007e-308, 1, 1.0)
    assert kv.max_context_within(1.0) is None


def test_vanishing_sizes_do_not_hang_or_overflow() -> None:
    assert KVShape(global_bytes_per_token=1e-12).max_context_within(1e9) is None
    assert KVShape(global_bytes_per_token=1e-300).max_context_within(1e9) is None
    assert memory_fit_batch(1e9, 1e-320) == (MAX_BATCH, True)
    assert memory_fit_batch(-1.0, 5.0) == (0, False)
    # hand-checked: 100 GB of room, 1.025 GB per session -> 97 sessions
    assert memory_fit_batch(100e9, 1.025e9) == (97, False)
