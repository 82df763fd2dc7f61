"""One calculator: the browser's calc.js reproduces the Python core on every conformance vector, under Node."""

from __future__ import annotations

import collections
import json
import shutil
import subprocess
from pathlib import Path

from fastapi.testclient import TestClient

from servebound.views.conformance import build_vectors

ROOT = Path(__file__).resolve().parents[2]
CALC = ROOT / "src" / "servebound" / "web" / "static" / "calc.js"
RUNNER = Path(__file__).with_name("run_conformance.js")


def node() -> str:
    found = shutil.which("node") or shutil.which("nodejs")
    assert found, "Node.js is needed for the conformance test (Debian: apt-get install nodejs; .ci/run does)"
    return found


def run_vectors(vectors: dict, tmp_path: Path, calc: Path = CALC) -> dict:
    path = tmp_path / "conformance.json"
    path.write_text(json.dumps(vectors, allow_nan=False))
    done = subprocess.run(
        [node(), str(RUNNER), str(path), str(calc)], capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, done.stderr
    result: dict = json.loads(done.stdout)
    return result


def test_calc_js_matches_the_core_on_every_vector(tmp_path: Path) -> None:
    vectors = build_vectors()
    kinds = collections.Counter(v["kind"] for v in vectors["vectors"])
    verdicts = {(v["kind"], v["expected"].get("verdict")) for v in vectors["vectors"]}
    assert vectors["count"] >= 2000
    assert set(kinds) == {"decode", "context_range", "prefill", "prefill_range", "kv_inverse"}
    for verdict in ("floor_fit", "no_floor", "no_session_fit", "no_resident_fit"):
        assert ("decode", verdict) in verdicts, verdict
    for verdict in ("fits", "over_budget", "no_batch_fit", "no_session_fit", "no_resident_fit"):
        assert ("prefill", verdict) in verdicts, verdict
    decode_inputs = [v for v in vectors["vectors"] if v["kind"] == "decode"]
    assert any(v["workload"]["speculation"] for v in decode_inputs)
    assert any(v["workload"]["batch"] and v["workload"]["batch"] > 1 for v in decode_inputs)
    assert any(
        v["model"]["kv_alloc"]["state"] > 0 and v["model"]["kv_alloc"]["global"] == 0 for v in decode_inputs
    )
    assert any(v["expected"]["batch_limited_by"] == "search_cap" for v in decode_inputs)
    # decode's compute roof: compute-bound b* (the balance batch), memory-only requests, a draft's compute
    assert any(v["expected"]["batch_limited_by"] == "compute" for v in decode_inputs)
    assert any(v["expected"]["bound_by"] == "compute" for v in decode_inputs)
    assert any(v["workload"]["memory_only"] for v in decode_inputs)
    assert any(
        v["workload"]["speculation"] and v["workload"]["speculation"]["draft"]["prefill"]
        for v in decode_inputs
    )
    assert any(v["prefill"]["chunk"] for v in vectors["vectors"] if v["kind"] == "prefill")
    # llama.cpp's F16 profiles on rows that publish fp16_acc16: the port must choose the engine's mode
    assert any(
        (v.get("model") or {}).get("prefill")
        and v["model"]["prefill"]["linear_mode_if_published"] == "fp16_acc16"
        and "fp16_acc16" in v["hardware"]["compute_flop_per_s"]
        for v in vectors["vectors"]
    )
    result = run_vectors(vectors, tmp_path)
    assert result["count"] == vectors["count"]
    assert result["checked_numbers"] > 20_000
    assert result["mismatch_count"] == 0, result["mismatches"][:5]


def test_the_runner_catches_a_drifted_port(tmp_path: Path) -> None:
    """The KV inverse without its bisection fallback, b_rate without the MAX_BATCH cap, and b* without
    the compute roof's balance batch: each drifted port fails."""
    vectors = build_vectors()
    source = CALC.read_text()
    for old, new in (
        ("if (!settled) {", "if (false) {"),
        (
            "brate = closed <= MAX_BATCH ? Math.max(0, Math.floor(closed)) : null;",
            "brate = Math.max(0, Math.floor(closed));",
        ),
        ('{ star = balance; by = "compute"; }', "{ }"),
    ):
        assert old in source
        drifted = tmp_path / "drifted.js"
        drifted.write_text(source.replace(old, new))
        assert run_vectors(vectors, tmp_path, drifted)["mismatch_count"] > 0


def test_site_publishes_the_vectors(client: TestClient) -> None:
    r = client.get("/conformance.json")
    assert r.status_code == 200 and r.headers["content-type"].startswith("application/json")
    assert r.json() == json.loads(json.dumps(build_vectors()))
