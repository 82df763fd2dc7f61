"""The edge units, defined once: the contract speaks decimal GB and TFLOPS; the core speaks bytes and FLOP/s."""

from __future__ import annotations

#: Bytes in one decimal gigabyte (the contract's ``_gb`` fields; never GiB).
GB = 1e9
#: FLOP/s in one TFLOPS (the contract's ``compute_tflops`` rates).
TFLOPS = 1e12
