"""One comparison for a figure drawn twice: by the server (derivation_figures) and by the page's script
(static/derivation.js), used by the Node test and the browser test."""

from __future__ import annotations

import html
import json
import re

import numpy as np

_NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:e[+-]\d+)?")
_DESC = re.compile(r'<desc class="series-data">(.*?)</desc>', re.S)


def same_figure(drawn: str, served: str) -> int:
    """The script's SVG and the server's, as the browser parsed both: the same elements, attributes and
    text; numbers printed with decimals may differ by one unit in their last place (0.1 px: the two
    sides round the same pixel position from floats that can differ in their last bits), the series
    data (JSON in <desc>) to 1e-9 relative, like the conformance vectors."""
    d_desc, s_desc = _DESC.findall(drawn), _DESC.findall(served)
    assert len(d_desc) == len(s_desc)
    for a, b in zip(d_desc, s_desc, strict=True):
        ja, jb = json.loads(html.unescape(a)), json.loads(html.unescape(b))
        assert [(s["name"], s["css"], s["unit"], len(s["x"])) for s in ja] == [
            (s["name"], s["css"], s["unit"], len(s["x"])) for s in jb
        ]
        for sa, sb in zip(ja, jb, strict=True):
            for key in ("x", "y"):
                assert np.allclose(sa[key], sb[key], rtol=1e-9, atol=0), (sa["name"], key)
    d_rest, s_rest = _DESC.sub("", drawn), _DESC.sub("", served)
    assert _NUMBER.sub("#", d_rest) == _NUMBER.sub("#", s_rest), "the figures' structure or words differ"
    off = 0
    for a, b in zip(_NUMBER.findall(d_rest), _NUMBER.findall(s_rest), strict=True):
        if a != b:
            assert "." in a and "." in b and abs(float(a) - float(b)) <= 0.1 + 1e-9, (a, b)
            off += 1
    return off  # how many printed numbers differed in their last place
