"""`servebound schema COMMAND`: each command's --json output validates against the schema it prints, the
schema fails an output that lacks or mistypes a field, and /openapi.json types the same answers."""

from __future__ import annotations

import jsonschema_rs
import pytest
from fastapi.testclient import TestClient

from servebound.cli import main
from servebound.web.app.server import create_app
from tests.conftest import run_json
from tests.web.conftest import site_lists

SYSTEM, BIG = "8x-nvidia-h100-sxm", "llama-3.3-70b-instruct-fp8"
RUNS = {
    "decode": [
        ["-H", "nvidia-rtx-4090", "-m", "qwen3-8b"],
        ["-H", "nvidia-rtx-4090", "-m", "qwen3-8b", "--batch", "4"],  # forced
        ["-H", "nvidia-rtx-4090", "-m", "deepseek-v2"],  # no_resident_fit: the nulls
    ],
    "prefill": [
        ["-H", "nvidia-rtx-4090", "-m", "qwen3-8b", "--prompt", "4096", "--range"],
        ["-H", "nvidia-rtx-4090", "-m", "deepseek-v2", "--prompt", "100"],  # nothing fits: null waits
    ],
    "cost": [["-H", "nvidia-rtx-4090", "-m", "qwen3-8b"]],
    "layout": [["-H", SYSTEM, "-m", BIG]],
    "plan": [["-H", SYSTEM, "-m", BIG, "--users", "50", "--prompt", "2000", "--output-tokens", "500"]],
}


@pytest.mark.parametrize("command", list(RUNS))
def test_each_output_validates_against_its_schema(capsys: pytest.CaptureFixture[str], command: str) -> None:
    schema = run_json(capsys, "schema", command)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    validator = jsonschema_rs.validator_for(schema)
    for args in RUNS[command]:
        out = run_json(capsys, command, *args, "--json")
        errors = [e.message for e in validator.iter_errors(out)]
        assert not errors, (args, errors[:3])


def test_the_schema_catches_a_broken_output(capsys: pytest.CaptureFixture[str]) -> None:
    validator = jsonschema_rs.validator_for(run_json(capsys, "schema", "decode"))
    out = run_json(capsys, "decode", "-H", "nvidia-rtx-4090", "-m", "qwen3-8b", "--json")
    assert validator.is_valid(out)
    assert not validator.is_valid({k: v for k, v in out.items() if k != "aggregate_tok_s"})
    assert not validator.is_valid({**out, "batch_star": "many"})
    assert not validator.is_valid({**out, "verdict": "fits"})
    described = run_json(capsys, "schema", "decode")["properties"]["single_session_tok_s"]  # type: ignore[index]
    assert described["description"] == "R / (W_batch(1) + K_read), one session alone (tok/s)"


def test_an_unknown_command_is_an_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["schema", "decoder"]) == 2
    assert (
        "command: no schema for 'decoder'; use one of decode, prefill, cost, layout, plan"
        in capsys.readouterr().err
    )


def test_openapi_types_the_answers_and_keeps_every_path() -> None:
    hardware, models = site_lists()
    spec = TestClient(create_app(hardware=hardware, models=models)).get("/openapi.json").json()
    for path, model in (
        ("/api/decode", "DecodeOutput"),
        ("/api/prefill", "PrefillOutput"),
        ("/api/cost", "CostOutput"),
        ("/api/layout", "LayoutOutput"),
        ("/api/plan", "PlanOutput"),
    ):
        answer = spec["paths"][path]["get"]["responses"]["200"]["content"]["application/json"]["schema"]
        assert answer == {"$ref": f"#/components/schemas/{model}"}, path
        assert model in spec["components"]["schemas"]
    for path in ("/api/rank", "/api/hardware", "/api/models", "/api/validation"):
        assert path in spec["paths"], path
    decode = {p["name"] for p in spec["paths"]["/api/decode"]["get"]["parameters"]}
    assert {"hardware", "model", "overhead_gb", "alloc_context", "read_context", "floor", "batch"} <= decode
