"""The benchmarks' one timer: wall times of repeated in-process calls, by time.perf_counter.

The bench scripts run as `python bench/<script>.py`, which puts this folder first on the import path.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable


def timed_runs(fn: Callable[[], object], repeat: int, *, warm: bool = False) -> list[float]:
    """Seconds taken by each of `repeat` calls of fn, after one untimed call when `warm`."""
    if warm:
        fn()
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return samples


def median_s(fn: Callable[[], object], repeat: int, *, warm: bool = False) -> float:
    """The median of timed_runs, in seconds."""
    return statistics.median(timed_runs(fn, repeat, warm=warm))
