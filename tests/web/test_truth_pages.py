"""Issue 36: where a page says what the code does, it says what the code does (computed, not prose)."""

from __future__ import annotations

import html

from fastapi.testclient import TestClient

from servebound.catalog.hardware import get_hardware
from servebound.core.rates import MISSING_RATE_RULE
from servebound.core.units import GB
from servebound.inputs.files import load_model_file
from tests.conftest import resolved
from tests.web.conftest import CATALOG_HW, MOE_FILE


def test_methodology_states_each_machines_own_overhead(client: TestClient) -> None:
    """/methodology said "The defaults are O = 8 GB" while the code takes each machine's own overhead:
    the page now names the overhead the code charges on the site's rows, computed from the catalog."""
    model = load_model_file(MOE_FILE)
    for path in ("/methodology", "/methodology.md"):
        text = html.unescape(client.get(path).text)
        assert "O = 8 GB" not in text
        for ref in ("nvidia-rtx-4090", "nvidia-h100-sxm"):
            assert ref in CATALOG_HW
            row = get_hardware(ref)
            charged = resolved(row.hardware, model).overhead_bytes
            assert f"{charged / GB:.1f} GB on the {row.name}" in text, (path, ref)
        assert MISSING_RATE_RULE.split(":")[0] in text


def test_derivation_states_the_missing_rate_departure(client: TestClient) -> None:
    """A missing mode rate is charged at a fallback (the fastest published) where the derivation reports
    compute unavailable: /derivation, /methodology and the result's assumptions state the departure."""
    for path in ("/derivation", "/derivation.md"):
        assert MISSING_RATE_RULE in html.unescape(client.get(path).text), path
    from servebound.catalog.models import get_model
    from servebound.core.prefill import prefill
    from servebound.views.report import prefill_assumptions

    # A result that charges a fallback names the rule in its assumptions; one that needs none does not.
    model = get_model("llama-3.1-8b").adapter
    for ref in ("nvidia-dgx-spark", "nvidia-h100-sxm"):
        hw = get_hardware(ref).hardware
        r = prefill(hw, model, 4096, workload=resolved(hw, model))
        stated = prefill_assumptions(r)["missing_rate_rule"]
        assert (stated == MISSING_RATE_RULE) is bool(r.assumptions.missing_modes), ref
        assert stated is None or r.assumptions.linear_charge_reason or r.assumptions.attention_charge_reason
