"""The precomputed band table (catalog/data/snapshot/bands.json) equals a refit of the reported runs, and
a band read from it equals the band of the live fit; a decode reads no run to give its band."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from servebound.catalog.snapshot_build import REBUILD
from servebound.core.band import BAND_MIN_RUNS, expected_band
from servebound.inputs import package_data
from servebound.runs.band import band_for
from servebound.runs.band_fit import band_group, band_model, band_table_text
from servebound.runs.band_table import TABLE, fitted_groups


@pytest.fixture(scope="module")
def refit() -> list[dict[str, object]]:
    groups: list[dict[str, object]] = json.loads(band_table_text())["groups"]
    return groups


def test_the_table_equals_a_refit(refit: list[dict[str, object]]) -> None:
    shipped = json.loads(package_data.read_text("servebound.catalog", *TABLE))["groups"]
    stale = f"catalog/data/snapshot/bands.json is not what the runs fit: run `{REBUILD}` and commit it"
    assert [(g["engine"], g["hardware_class"], g["phase"], g["regime"], g["run_ids"]) for g in shipped] == [
        (g["engine"], g["hardware_class"], g["phase"], g["regime"], g["run_ids"]) for g in refit
    ], stale
    for old, new in zip(shipped, refit, strict=True):
        if new["slope"] is None:
            assert old["slope"] is old["residuals"] is None, stale
            continue
        # the last bit of a logarithm may differ between machines
        assert (old["slope"], old["fixed_s"]) == pytest.approx((new["slope"], new["fixed_s"]), abs=1e-12), (
            stale
        )
        assert old["residuals"] == pytest.approx(new["residuals"], abs=1e-12), stale


def test_a_band_from_the_table_is_the_live_fits_band() -> None:
    assert len(fitted_groups()) >= 10
    for (engine, cls, phase, regime), group in fitted_groups().items():
        live = band_model(engine, cls, phase, regime)
        assert (group.model is None) == (live is None) == (group.runs < BAND_MIN_RUNS)
        assert group.run_ids == band_group(engine, cls, phase, regime).run_ids
        if live is None:
            continue
        hardware = {"consumer GPU": "nvidia-rtx-4090", "unified-memory SoC": "apple-m3-max-128gb"}.get(cls)
        if hardware is None:
            continue
        for ceiling in (5.0, 80.0, 1500.0):
            table = band_for(ceiling, engine, hardware, phase, regime=regime)
            fresh = expected_band(
                ceiling,
                live,
                engine=engine,
                hardware_class=cls,
                phase=phase,
                run_ids=group.run_ids,
                runs_url="/validation",
            )
            assert table is not None and fresh is not None
            assert (table.p10_tok_s, table.p50_tok_s, table.p90_tok_s) == pytest.approx(
                (fresh.p10_tok_s, fresh.p50_tok_s, fresh.p90_tok_s), rel=1e-9
            )


def test_a_decode_reads_no_run_for_its_band() -> None:
    code = (
        "import sys, json\n"
        "from servebound import api\n"
        "r = api.decode('nvidia-rtx-4090', 'llama-2-7b-q4_0')\n"
        "assert r.expected is not None and r.expected_from.engine_assumed\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith('servebound.runs'))))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = json.loads(done.stdout)
    assert "servebound.runs.reported" not in loaded and "servebound.runs.evaluated" not in loaded
