"""Arithmetic over one value or an array of values alike, so each formula is written once.

The core's formulas take a float or a numpy array: one evaluation (a decode, one row of a table) passes
floats and never imports numpy, which is a fifth of a command's start-up; a curve or a sweep passes an
array and gets numpy's vectorized result from the same lines. The helpers below pick the scalar
(``math``) or the array (numpy) operation from the argument; ``np`` is numpy itself for type checkers
and is imported on first use at run time.
"""

from __future__ import annotations

import importlib
import math
from typing import TYPE_CHECKING, Any, TypeVar, overload

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import ArrayLike, NDArray

    Floats = NDArray[np.float64]
else:

    class _NumpyOnFirstUse:
        """Stands for the numpy module until an attribute is read, then copies numpy's names in."""

        def __getattr__(self, name: str) -> Any:
            module = importlib.import_module("numpy")
            self.__dict__.update(vars(module))
            return getattr(module, name)

    np = _NumpyOnFirstUse()

__all__ = [
    "Floats",
    "Values",
    "as_values",
    "clip",
    "expm1",
    "filled",
    "maximum",
    "minimum",
    "np",
]

#: What counts as one number (numpy's float64 scalars are floats).
_NUMBER = (int, float)

#: A float or an array of float64, the same kind in as out.
Values = TypeVar("Values", float, "Floats")


@overload
def as_values(value: float) -> float: ...
@overload
def as_values(value: ArrayLike) -> Floats: ...
def as_values(value: Any) -> Any:
    """A float for a plain number, else a float64 array."""
    return float(value) if isinstance(value, _NUMBER) else np.asarray(value, dtype=np.float64)


@overload
def maximum(a: float, b: float) -> float: ...
@overload
def maximum(a: Floats, b: float | Floats) -> Floats: ...
@overload
def maximum(a: float | Floats, b: Floats) -> Floats: ...
def maximum(a: Any, b: Any) -> Any:
    """Elementwise max."""
    if isinstance(a, _NUMBER) and isinstance(
        b, _NUMBER
    ):  # plain numbers (numpy's float64 scalars count), inline: the hot case
        return float(a if a >= b else b)
    return np.maximum(a, b)


@overload
def minimum(a: float, b: float) -> float: ...
@overload
def minimum(a: Floats, b: float | Floats) -> Floats: ...
@overload
def minimum(a: float | Floats, b: Floats) -> Floats: ...
def minimum(a: Any, b: Any) -> Any:
    """Elementwise min."""
    if isinstance(a, _NUMBER) and isinstance(b, _NUMBER):
        return float(a if a <= b else b)
    return np.minimum(a, b)


def clip(value: Values, low: float, high: Values) -> Values:
    """min(max(value, low), high), elementwise."""
    return minimum(maximum(value, low), high)


@overload
def expm1(value: float) -> float: ...
@overload
def expm1(value: Floats) -> Floats: ...
def expm1(value: Any) -> Any:
    """e^x - 1, exact for tiny x."""
    return math.expm1(value) if isinstance(value, _NUMBER) else np.expm1(value)


@overload
def filled(like: float, fill: float) -> float: ...
@overload
def filled(like: Floats, fill: float) -> Floats: ...
def filled(like: Any, fill: float) -> Any:
    """``fill`` in the shape of ``like``."""
    return float(fill) if isinstance(like, _NUMBER) else np.full_like(like, fill)
