"""Formulas as MathML, rendered on the server with latex2mathml and cached.

A reader with JavaScript off, or a crawler, gets real math markup. Only the site's own formula text and
numbers it formatted itself reach the converter: latex2mathml does not escape ``\\text{...}`` content,
so raw ``<`` and ``&`` are refused here rather than trusted.
"""

from __future__ import annotations

import functools
import re

from markupsafe import Markup

#: A number as the formula text writes it (``116.2``, ``4``, the ``096`` of ``4{,}096``).
_NUMBER = re.compile(r"\d+(?:\.\d+)?")


_MARK = re.compile(r"9\d{5}9(?:\.9)?")


def convert(latex: str, display: str) -> str:
    """latex2mathml's converter, imported on the first formula (a page without one does not load it)."""
    from latex2mathml.converter import convert as latex_convert

    return str(latex_convert(latex, display=display))


def _placeholder(k: int, decimal: bool) -> str:
    """The k-th number of a formula's shape: a digit run no formula holds, decimal where it was."""
    return f"9{k:05d}9" + (".9" if decimal else "")


@functools.lru_cache(maxsize=1024)
def _convert_shape(shape: str, display: str) -> str:
    return str(convert(shape, display=display))


@functools.lru_cache(maxsize=4096)
def _convert(latex: str, display: str) -> str:
    """The converter's output for ``latex``, from its shape where that is exact.

    A page's formulas differ from pair to pair in their numbers only, and the converter is a page's
    costliest step: each number is swapped for a placeholder, the shape converted once, and the
    numbers put back into the output. Where a placeholder does not come back once and whole (a
    number split by the converter, a subscript's first digit), the text is converted itself.
    """
    numbers = _NUMBER.findall(latex)
    if not numbers:
        return str(convert(latex, display=display))
    marks = [_placeholder(k, "." in n) for k, n in enumerate(numbers)]
    it = iter(marks)
    shape = _NUMBER.sub(lambda _: next(it), latex)
    out = _convert_shape(shape, display)
    if any(out.count(mark) != 1 for mark in marks):
        return str(convert(latex, display=display))
    back = dict(zip(marks, numbers, strict=True))
    return _MARK.sub(lambda m: back.get(m.group(0), m.group(0)), out)


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
