"""A page's formulas are converted to MathML from their shape (numbers swapped for placeholders, the
shape converted once, the numbers put back): the result must be the converter's own output, formula
for formula, over the catalog's pair pages and the cases where a number is not a token of its own."""

from __future__ import annotations

import pytest
from latex2mathml.converter import convert

from servebound.web.app.query import WorkloadQuery
from servebound.web.export.build import pairs
from servebound.web.figures import mathml
from servebound.web.pages.site import compute_pair, default_site_data
from servebound.web.pages.work import decode_work, prefill_work

EDGES = [
    r"x_12 + y^{34} = 5",  # a subscript takes one digit: the placeholder is split, the text converted itself
    r"r = \frac{273\ \mathrm{GB/s}}{3.751\ \mathrm{GB} + 2.147\ \mathrm{GB}} = 46.28\ \mathrm{tok/s}",
    r"3.5 \times 10^{-4} + 1{,}234{,}567",
    r"\text{at 4,096 tokens} = 0.5",
    r"\left\lfloor \frac{116.2}{2.147} \right\rfloor = 54",
    r"\mathrm{H100} \cdot 2",
    r"b = 9000019",  # a number shaped like a placeholder
    r"\text{n/a}",
]


@pytest.mark.parametrize("tex", EDGES)
@pytest.mark.parametrize("display", ["inline", "block"])
def test_edge_cases_equal_the_converter(tex: str, display: str) -> None:
    mathml._convert.cache_clear()
    assert mathml._convert(tex, display) == str(convert(tex, display=display))


def test_every_formula_of_sampled_pair_pages_equals_the_converter() -> None:
    site = default_site_data()
    chosen = pairs(site)[::150]  # about 35 pairs, every kind of machine and model in catalog order
    assert len(chosen) > 30
    texts = set()
    for hw, model in chosen:
        pair = compute_pair(site.hardware_by_id[hw], site.models_by_id[model], WorkloadQuery())
        texts |= {w.tex for w in decode_work(pair) + prefill_work(pair)}
    assert len(texts) > 200
    mathml._convert.cache_clear()
    mathml._convert_shape.cache_clear()
    for tex in sorted(texts):
        assert mathml._convert(tex, "block") == str(convert(tex, display="block")), tex
    # the shapes are few: the cost the cache saves
    assert mathml._convert_shape.cache_info().currsize < len(texts) / 3
