"""Dense matrix-product throughput per arithmetic mode: n x n times n x n, 2 n^3 FLOP per product.

The matrix size is picked per mode: probes from a small size up give a rate, and n becomes the largest
multiple of 256 (up to ``max_n``) whose product takes about ``call_s``. That keeps slow modes (fp16 on
a CPU without fast half-precision kernels) from running for minutes and fast ones from being
launch-bound. One warm-up product is excluded; the figure is the best of ``runs`` timed samples.

Without torch, the CPU is measured through numpy in fp32 only: numpy has no bf16 type and its
float16 and integer products are not BLAS kernels, so those modes are reported unavailable, never
guessed. With torch, bf16, fp16 and int8 (``torch._int_mm``) are measured where the backend runs
them, and fp8 (``torch._scaled_mm``) on GPUs that support it.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import numpy as np

from servebound.measure.bandwidth import Progress, spread_fraction, synchronizer, time_per_call

#: Modes a torch backend is asked for, in the order they are measured.
TORCH_MODES: tuple[str, ...] = ("fp32", "bf16", "fp16", "int8", "fp8")

_SIZE_STEP = 256

_NUMPY_UNAVAILABLE = {
    "bf16": "numpy has no bf16 type; install torch to measure bf16",
    "fp16": "numpy's float16 product is not a BLAS kernel (no fast path); install torch to measure fp16",
    "int8": "numpy's integer product is not a BLAS kernel; install torch to measure int8 (torch._int_mm)",
    "fp8": "fp8 products need torch._scaled_mm on a GPU with fp8 support",
}


@dataclass(frozen=True)
class MatmulRate:
    """One arithmetic mode: ``n`` x ``n`` products in ``dtype``, FLOP/s (OP/s for int8) of each sample."""

    mode: str
    dtype: str
    n: int
    rates_flop_per_s: tuple[float, ...]

    @property
    def best_flop_per_s(self) -> float:
        return max(self.rates_flop_per_s)

    @property
    def median_flop_per_s(self) -> float:
        return statistics.median(self.rates_flop_per_s)

    @property
    def spread_fraction(self) -> float:
        return spread_fraction(self.rates_flop_per_s)


@dataclass(frozen=True)
class MatmulMeasurement:
    """Measured modes on one device, and each mode not measured with the reason."""

    device: str
    backend: str
    rates: tuple[MatmulRate, ...]
    unavailable: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "unavailable", MappingProxyType(dict(self.unavailable)))

    def rate(self, mode: str) -> MatmulRate | None:
        """The measured rate for ``mode``, or None when it was not measured."""
        return next((rate for rate in self.rates if rate.mode == mode), None)


def matmul_flops(n: int) -> int:
    """FLOP of one dense n x n by n x n product: n^2 outputs, each n multiplies and n adds."""
    return 2 * n**3


def choose_n(rate_flop_per_s: float, call_s: float, min_n: int, max_n: int) -> int:
    """The largest multiple of 256 in [min_n, max_n] whose product takes about ``call_s`` at
    ``rate_flop_per_s`` (n = (rate * call_s / 2)^(1/3), rounded down)."""
    n = int((rate_flop_per_s * call_s / 2) ** (1 / 3)) // _SIZE_STEP * _SIZE_STEP
    return max(min_n, min(max_n, n))


def _measure_mode(
    make: Callable[[int], Callable[[], object]],
    sync: Callable[[], None],
    *,
    probe_n: int,
    max_n: int,
    runs: int,
    call_s: float,
) -> tuple[int, tuple[float, ...]]:
    # Grow n until one product takes a quarter of call_s: each step jumps to the size the rate seen
    # so far suggests, and at least doubles, so a probe slowed by a busy machine cannot pin n small.
    n = probe_n
    while True:
        product = make(n)
        once_s = min(time_per_call(product, sync, 2, 0.0))
        if n >= max_n or once_s >= call_s / 4:
            break
        n = max(choose_n(matmul_flops(n) / once_s, call_s, n, max_n), min(2 * n, max_n))
    seconds = time_per_call(product, sync, runs, call_s)
    return n, tuple(matmul_flops(n) / s for s in seconds)


def measure_numpy_matmul(
    *,
    runs: int = 5,
    call_s: float = 0.1,
    max_n: int = 4096,
    progress: Progress | None = None,
) -> MatmulMeasurement:
    """fp32 products through numpy's BLAS on all its threads; bf16, fp16, int8, fp8 reported unavailable."""
    rng = np.random.default_rng(0)

    def make(n: int) -> Callable[[], object]:
        a = rng.standard_normal((n, n), dtype=np.float32)
        b = rng.standard_normal((n, n), dtype=np.float32)
        out = np.empty((n, n), dtype=np.float32)
        return lambda: np.matmul(a, b, out=out)

    if progress is not None:
        progress("matmul fp32 (numpy)", 0.0)
    n, rates = _measure_mode(make, lambda: None, probe_n=256, max_n=max_n, runs=runs, call_s=call_s)
    if progress is not None:
        progress("matmul fp32 (numpy)", 1.0)
    return MatmulMeasurement(
        device="cpu",
        backend=f"numpy {np.__version__}",
        rates=(MatmulRate("fp32", "float32", n, rates),),
        unavailable=_NUMPY_UNAVAILABLE,
    )


def _torch_maker(torch: Any, device: str, mode: str) -> Callable[[int], Callable[[], object]]:
    """A factory of zero-argument product calls for ``mode``; raises when the backend lacks it."""
    generator = torch.Generator(device="cpu").manual_seed(0)

    def randn(n: int) -> Any:
        return torch.randn((n, n), generator=generator).to(device)

    if mode in ("fp32", "bf16", "fp16"):
        dtype = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}[mode]

        def make_float(n: int) -> Callable[[], object]:
            a, b = randn(n).to(dtype), randn(n).to(dtype)
            out = torch.empty((n, n), dtype=dtype, device=device)
            return lambda: torch.matmul(a, b, out=out)

        return make_float
    if mode == "int8":
        if not hasattr(torch, "_int_mm"):
            raise RuntimeError(f"torch {torch.__version__} has no torch._int_mm")

        def make_int8(n: int) -> Callable[[], object]:
            a = torch.randint(-128, 128, (n, n), dtype=torch.int8, generator=generator).to(device)
            b = torch.randint(-128, 128, (n, n), dtype=torch.int8, generator=generator).to(device)
            return lambda: torch._int_mm(a, b)

        return make_int8
    if mode == "fp8":
        if not device.startswith("cuda") or not hasattr(torch, "_scaled_mm"):
            raise RuntimeError("fp8 products need torch._scaled_mm on a CUDA or ROCm GPU")
        fp8 = torch.float8_e4m3fnuz if getattr(torch.version, "hip", None) else torch.float8_e4m3fn

        def make_fp8(n: int) -> Callable[[], object]:
            a = randn(n).to(fp8)
            b = randn(n).to(fp8).t()  # column-major second operand, as the fp8 kernels require
            scale = torch.ones((), dtype=torch.float32, device=device)
            return lambda: torch._scaled_mm(a, b, scale_a=scale, scale_b=scale, out_dtype=torch.bfloat16)

        return make_fp8
    raise ValueError(f"unknown arithmetic mode {mode!r}")


_TORCH_DTYPE_NAMES = {
    "fp32": "float32",
    "bf16": "bfloat16",
    "fp16": "float16",
    "int8": "int8",
    "fp8": "float8_e4m3",
}


def measure_torch_matmul(
    device: str,
    *,
    modes: tuple[str, ...] = TORCH_MODES,
    runs: int = 5,
    call_s: float = 0.05,
    max_n: int = 8192,
    progress: Progress | None = None,
) -> MatmulMeasurement:
    """Products per mode on a torch device (``cpu``, ``cuda:0``, ``mps``); needs torch.

    fp32 is true fp32: TF32 is switched off while it runs and the previous setting restored.
    A mode the backend cannot run lands in ``unavailable`` with torch's own reason.
    """
    import torch  # type: ignore[import-not-found, unused-ignore]

    sync = synchronizer(torch, device)
    probe_n = 256 if device == "cpu" else 1024
    rates: list[MatmulRate] = []
    unavailable: dict[str, str] = {}
    for index, mode in enumerate(modes):
        if progress is not None:
            progress(f"matmul {mode} ({device})", index / len(modes))
        precision = torch.get_float32_matmul_precision()
        try:
            torch.set_float32_matmul_precision("highest")
            make = _torch_maker(torch, device, mode)
            n, samples = _measure_mode(make, sync, probe_n=probe_n, max_n=max_n, runs=runs, call_s=call_s)
            rates.append(MatmulRate(mode, _TORCH_DTYPE_NAMES[mode], n, samples))
        except (RuntimeError, TypeError, NotImplementedError, AttributeError) as error:
            reason = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
            unavailable[mode] = f"{device}: {reason[:200]}"
        finally:
            torch.set_float32_matmul_precision(precision)
    if progress is not None:
        progress(f"matmul ({device})", 1.0)
    return MatmulMeasurement(
        device=device, backend=f"torch {torch.__version__}", rates=tuple(rates), unavailable=unavailable
    )
