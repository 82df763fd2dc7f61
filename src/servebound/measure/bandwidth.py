"""Sustained memory bandwidth, STREAM-style: copy (c = a) and triad (a = b + s c).

Bytes are counted as STREAM counts them: copy moves 2 arrays per run (one read, one write), triad
3 (two reads, one write); write-allocate traffic is not counted. Arrays are far larger than the
last-level cache so every run streams from memory.

On the CPU numpy's kernels are single-threaded, so the arrays are split into one slice per thread
and a thread pool runs the slices at once (numpy releases the GIL inside ``copyto``, ``multiply``
and ``add``). Triad runs in cache-sized chunks, ``a[chunk] = s c[chunk]`` then ``a[chunk] += b[chunk]``,
so the intermediate stays in cache and memory sees the three streams (plus the write-allocate read
of ``a`` that STREAM does not count; large ``copyto`` calls use streaming stores and avoid it, so on
the CPU triad typically lands near 3/4 of copy). On a GPU (torch) each
kernel is one device call: ``dst.copy_(src)`` and ``torch.add(b, c, alpha=s, out=a)``.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np

from servebound.errors import InputError
from servebound.measure.detect import detect_last_level_cache_bytes, usable_cpu_count

#: ``progress(label, fraction)``: a label for the step under way and the fraction done, 0 to 1.
Progress = Callable[[str, float], None]

#: STREAM's scalar for triad; below 1 so repeated copy/triad rounds converge instead of growing.
TRIAD_SCALAR = 0.5

#: Floors for the default array size: each array is at least this, or 4x the last-level cache.
DEFAULT_CPU_ARRAY_BYTES = 512 * 2**20
DEFAULT_GPU_ARRAY_BYTES = 2**30
_MIN_ARRAY_BYTES = 2**16
#: Triad chunk per array: the intermediate ``s c[chunk]`` must stay in cache until the add reads it,
#: yet each chunk costs two Python-level calls under the GIL, so chunks must not be tiny either.
DEFAULT_TRIAD_CHUNK_BYTES = 2**20
_PAGE_ELEMENTS = 512  # slice boundaries on 4 KiB pages of float64


def spread_fraction(rates: Sequence[float]) -> float:
    """Run-to-run spread: (best - worst) / best over the timed runs, a fraction in [0, 1)."""
    best = max(rates)
    return (best - min(rates)) / best


@dataclass(frozen=True)
class KernelBandwidth:
    """One STREAM kernel: ``arrays`` arrays of ``array_bytes`` each, STREAM-counted per run."""

    kernel: str
    array_bytes: int
    arrays: int
    rates_bytes_per_s: tuple[float, ...]

    @property
    def best_bytes_per_s(self) -> float:
        return max(self.rates_bytes_per_s)

    @property
    def median_bytes_per_s(self) -> float:
        return statistics.median(self.rates_bytes_per_s)

    @property
    def spread_fraction(self) -> float:
        return spread_fraction(self.rates_bytes_per_s)


@dataclass(frozen=True)
class BandwidthMeasurement:
    """Copy and triad on one device. ``backend`` names what ran them (``numpy``, ``torch-cuda`` ...)."""

    device: str
    backend: str
    threads: int
    dtype: str
    copy: KernelBandwidth
    triad: KernelBandwidth

    @property
    def best(self) -> KernelBandwidth:
        """The kernel with the higher best rate: the machine's sustained bandwidth R."""
        return max((self.copy, self.triad), key=lambda kernel: kernel.best_bytes_per_s)


def default_cpu_array_bytes(
    last_level_cache_bytes: int | None, available_bytes: int, floor_bytes: int = DEFAULT_CPU_ARRAY_BYTES
) -> int:
    """max(4 x last-level cache, floor) per array, capped so the 3 arrays take at most half of
    ``available_bytes`` (never below 64 KiB)."""
    wanted = max(4 * (last_level_cache_bytes or 0), floor_bytes)
    return max(_MIN_ARRAY_BYTES, min(wanted, available_bytes // 6))


def _report(progress: Progress | None, label: str, fraction: float) -> None:
    if progress is not None:
        progress(label, min(1.0, max(0.0, fraction)))


def _slices(length: int, parts: int) -> list[slice]:
    """``parts`` contiguous slices covering [0, length), boundaries on 4 KiB pages."""
    step = -(-length // parts)
    step = -(-step // _PAGE_ELEMENTS) * _PAGE_ELEMENTS
    return [slice(start, min(start + step, length)) for start in range(0, length, step)]


def _chunks(part: slice, elements: int) -> list[slice]:
    return [slice(lo, min(lo + elements, part.stop)) for lo in range(part.start, part.stop, elements)]


def measure_cpu_bandwidth(
    *,
    array_bytes: int | None = None,
    threads: int | None = None,
    runs: int = 10,
    triad_chunk_bytes: int = DEFAULT_TRIAD_CHUNK_BYTES,
    progress: Progress | None = None,
) -> BandwidthMeasurement:
    """STREAM-style copy and triad over float64 arrays with numpy on ``threads`` threads.

    ``array_bytes`` per array defaults to :func:`default_cpu_array_bytes` for this machine;
    ``threads`` to the CPUs this process may use. Triad runs in chunks of ``triad_chunk_bytes`` per
    array (see :data:`DEFAULT_TRIAD_CHUNK_BYTES`). One warm-up round is excluded; each of ``runs``
    rounds times one copy and one triad. Raises ValueError when the triad's result is wrong.
    """
    import psutil

    if runs < 1:
        raise ValueError("runs must be at least 1")
    if array_bytes is None:
        array_bytes = default_cpu_array_bytes(
            detect_last_level_cache_bytes(), int(psutil.virtual_memory().available)
        )
    else:
        available = int(psutil.virtual_memory().available)
        if 3 * array_bytes > available:
            raise InputError(
                "array_mb",
                f"three arrays of {array_bytes / 1e6:,.0f} MB need {3 * array_bytes / 1e9:,.3g} GB; this machine "
                f"has {available / 1e9:,.3g} GB available: give at most {available / 3e6 * 0.8:,.0f} MB",
            )
    threads = threads or usable_cpu_count()
    length = max(_PAGE_ELEMENTS, array_bytes // 8)
    array_bytes = length * 8
    parts = _slices(length, threads)
    _report(progress, "allocating bandwidth arrays", 0.0)
    a = np.empty(length)
    b = np.empty(length)
    c = np.empty(length)
    chunk_elements = max(_PAGE_ELEMENTS, triad_chunk_bytes // 8)
    triad_views = [
        [(a[chunk], b[chunk], c[chunk]) for chunk in _chunks(part, chunk_elements)] for part in parts
    ]
    copy_rates: list[float] = []
    triad_rates: list[float] = []
    with ThreadPoolExecutor(max_workers=len(parts)) as pool:

        def run_parallel(work: Callable[[int], Any]) -> float:
            began = time.perf_counter()
            for future in [pool.submit(work, index) for index in range(len(parts))]:
                future.result()
            return time.perf_counter() - began

        def first_touch(index: int) -> None:  # each thread touches its own pages first
            part = parts[index]
            a[part].fill(1.0)
            b[part].fill(2.0)
            c[part].fill(0.0)

        def copy(index: int) -> None:
            np.copyto(c[parts[index]], a[parts[index]])

        def triad(index: int) -> None:
            for a_chunk, b_chunk, c_chunk in triad_views[index]:
                np.multiply(c_chunk, TRIAD_SCALAR, out=a_chunk)
                np.add(a_chunk, b_chunk, out=a_chunk)

        run_parallel(first_touch)
        expected = 1.0
        for round_index in range(runs + 1):  # round 0 is the warm-up
            copy_s = run_parallel(copy)
            triad_s = run_parallel(triad)
            expected = 2.0 + TRIAD_SCALAR * expected
            if round_index > 0:
                copy_rates.append(2 * array_bytes / copy_s)
                triad_rates.append(3 * array_bytes / triad_s)
            _report(progress, "memory bandwidth (CPU)", (round_index + 1) / (runs + 1))
    if not (np.isclose(a[0], expected) and np.isclose(a[-1], expected)):
        raise ValueError(f"triad produced {a[0]!r}, expected {expected!r}: the kernel is broken")
    return BandwidthMeasurement(
        device="cpu",
        backend=f"numpy {np.__version__}",
        threads=len(parts),
        dtype="float64",
        copy=KernelBandwidth("copy", array_bytes, 2, tuple(copy_rates)),
        triad=KernelBandwidth("triad", array_bytes, 3, tuple(triad_rates)),
    )


def synchronizer(torch: Any, device: str) -> Callable[[], None]:
    """A function that waits for all queued work on a torch device."""
    if device.startswith("cuda"):
        index = int(device.partition(":")[2] or 0)
        return lambda: torch.cuda.synchronize(index)
    if device.startswith("xpu"):
        xpu_index = int(device.partition(":")[2] or 0)
        return lambda: torch.xpu.synchronize(xpu_index)
    if device == "mps":
        return lambda: torch.mps.synchronize()
    return lambda: None


def time_per_call(
    call: Callable[[], object], sync: Callable[[], None], runs: int, sample_s: float
) -> list[float]:
    """Seconds per call for ``runs`` timed samples after one warm-up call.

    Each sample repeats ``call`` enough times to last about ``sample_s`` (measured from the
    warm-up), so launch and synchronisation overheads stay small against the work.
    """
    sync()
    began = time.perf_counter()
    call()
    sync()
    once_s = max(time.perf_counter() - began, 1e-9)
    repeats = max(1, round(sample_s / once_s))
    seconds = []
    for _ in range(runs):
        sync()
        began = time.perf_counter()
        for _ in range(repeats):
            call()
        sync()
        seconds.append((time.perf_counter() - began) / repeats)
    return seconds


def measure_torch_bandwidth(
    device: str,
    *,
    array_bytes: int | None = None,
    runs: int = 10,
    sample_s: float = 0.05,
    progress: Progress | None = None,
) -> BandwidthMeasurement:
    """Copy and triad over float32 tensors on a torch device (``cuda:0``, ``mps``).

    ``array_bytes`` defaults to max(1 GiB, 4 x the device's L2 where torch reports it), capped at
    a sixth of the device's free memory. Needs torch; raises ImportError without it.
    """
    import torch  # type: ignore[import-not-found, unused-ignore]

    sync = synchronizer(torch, device)
    if array_bytes is None:
        wanted = DEFAULT_GPU_ARRAY_BYTES
        free_bytes: int | None = None
        if device.startswith("cuda"):
            props = torch.cuda.get_device_properties(device)
            wanted = max(wanted, 4 * int(getattr(props, "L2_cache_size", 0) or 0))
            free_bytes = int(torch.cuda.mem_get_info(device)[0])
        elif device == "mps":
            free_bytes = (
                int(torch.mps.recommended_max_memory())
                if hasattr(torch.mps, "recommended_max_memory")
                else None
            )
        array_bytes = wanted if free_bytes is None else min(wanted, free_bytes // 6)
    length = max(1024, array_bytes // 4)
    array_bytes = length * 4
    _report(progress, f"allocating bandwidth arrays on {device}", 0.0)
    a = torch.full((length,), 1.0, dtype=torch.float32, device=device)
    b = torch.full((length,), 2.0, dtype=torch.float32, device=device)
    c = torch.zeros(length, dtype=torch.float32, device=device)
    copy_s = time_per_call(lambda: c.copy_(a), sync, runs, sample_s)
    _report(progress, f"memory bandwidth ({device})", 0.5)
    triad_s = time_per_call(lambda: torch.add(b, c, alpha=TRIAD_SCALAR, out=a), sync, runs, sample_s)
    _report(progress, f"memory bandwidth ({device})", 1.0)
    return BandwidthMeasurement(
        device=device,
        backend=f"torch {torch.__version__}",
        threads=1,
        dtype="float32",
        copy=KernelBandwidth("copy", array_bytes, 2, tuple(2 * array_bytes / s for s in copy_s)),
        triad=KernelBandwidth("triad", array_bytes, 3, tuple(3 * array_bytes / s for s in triad_s)),
    )
