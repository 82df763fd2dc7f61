"""The static copy's calculator: one page that answers any pair of the catalog in the browser.

The export writes a page for the pairs people look for (``export.pairs``); ``/pair/?hardware=H&model=M``
answers every other one. Its script reads the two ids from the address (or the picker), sends a pair
with a page of its own to that page, and otherwise loads ``data/hardware/H.json`` and
``data/models/M.json`` and computes the four answers and the figures with ``static/calc.js``, the port
of the core checked against the conformance vectors. The frame around the answers is a pair page
rendered for a reference pair and kept hidden until the script has filled it in; without script the
page says where the answer is (the CLI command, a served site's ``.md``).
"""

from __future__ import annotations

import json
from typing import Any

from servebound.inputs.scenario import hardware_overhead_bytes
from servebound.web.app.query import WorkloadQuery
from servebound.web.pages.pairdata import hardware_data
from servebound.web.pages.renderer import Renderer
from servebound.web.pages.site import DEFAULT_PROMPT_TOKENS, SiteData, SiteHardware, compute_pair


def calculator_hardware(h: SiteHardware) -> dict[str, Any]:
    """``data/hardware/H.json``: the row's quantities and the overhead its pairs take by default."""
    overhead = hardware_overhead_bytes(h.hardware)
    return {**hardware_data(h), "overhead_gb": overhead / 1e9}


def calculator_page(renderer: Renderer, site: SiteData, pages: int) -> str:
    """The calculator's HTML (``pair/index.html``); ``pages``: how many pairs have a page."""
    query = WorkloadQuery()
    reference = None
    for m in site.models:
        if m.native and m.adapter.prefill is not None:
            for h in site.hardware:
                pair = compute_pair(h, m, query)
                if pair.decode_result.batch_mem:
                    reference = pair
                    break
        if reference is not None:
            break
    if reference is None:
        reference = compute_pair(site.hardware[0], site.models[0], query)
    page = renderer.pair_page(
        reference,
        template="calculator.html",
        at="/pair/",
        calc_pages=pages,
        calc_defaults=json.dumps(
            {
                "alloc_context": query.alloc_context,
                "read_context": query.read_context,
                "prompt": DEFAULT_PROMPT_TOKENS,
            }
        ),
    )
    return page.html
