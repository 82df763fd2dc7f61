"""Formulas as MathML, rendered on the server with latex2mathml and cached.

A reader with JavaScript off, or a crawler, gets real math markup. Only the site's own formula text and
numbers it formatted itself reach the converter: latex2mathml does not escape ``\\text{...}`` content,
so raw ``<`` and ``&`` are refused here rather than trusted.
"""

from __future__ import annotations

import functools

from latex2mathml.converter import convert
from markupsafe import Markup


@functools.lru_cache(maxsize=4096)
def _convert(latex: str, display: str) -> str:
    return str(convert(latex, display=display))


def check_tex(latex: str) -> str:
    """``latex`` itself, refused (ValueError) when it holds raw ``<``, ``>`` or ``&``."""
    if "<" in latex or "&" in latex or ">" in latex:
        raise ValueError("formula text must not contain raw <, > or &: use \\lt, \\gt")
    return latex


def mathml(latex: str, *, block: bool = False) -> Markup:
    """The MathML element for ``latex`` (inline, or a display block), cached by its text."""
    return Markup(_convert(check_tex(latex), "block" if block else "inline"))


def mathml_trusted(latex: str, *, block: bool = False) -> Markup:
    """MathML for the project's own derivation text, which may use raw ``<``, ``>`` (as relations) and
    ``&`` (alignment in ``aligned``) but holds no ``\\text{...}`` with markup characters."""
    return Markup(_convert(latex.replace("<", r"\lt ").replace(">", r"\gt "), "block" if block else "inline"))


def tex_number(value: float | int | None, digits: int = 4) -> str:
    """A number as TeX: thousands grouped with {,} and at most ``digits`` significant digits."""
    if value is None:
        return r"\text{n/a}"
    if isinstance(value, int) or (abs(value) >= 10 ** (digits - 1) and abs(value) < 1e15):
        text = f"{round(value):,}"
    elif value != 0 and (abs(value) < 1e-3 or abs(value) >= 1e15):
        mantissa, exponent = f"{value:.{digits - 1}e}".split("e")
        return rf"{mantissa} \times 10^{{{int(exponent)}}}"
    else:
        text = f"{value:,.{digits}g}"
    return text.replace(",", "{,}")


def cache_info() -> str:
    """How the formula cache is doing (for the benchmark)."""
    return str(_convert.cache_info())
