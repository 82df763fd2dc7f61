"""A bare model name under an engine answers for the format that engine runs (issues 34 and 37): on the
command line, in Python and through the JSON API alike, with the choice and its reason stated; without an
engine (or where the engine runs the release) a bare release id stays the release."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient

import servebound
from servebound.catalog.hardware import get_hardware
from servebound.catalog.models import list_models
from servebound.inputs.scenario import resolve_scenario
from servebound.questions.fit import fit_models
from tests.conftest import run_json

SPARK = "nvidia-dgx-spark"
GGUF = "gpt-oss-120b-mxfp4_moe"


@pytest.fixture(scope="module")
def client() -> TestClient:
    from servebound.web.app.server import create_app

    return TestClient(create_app())


def _without_choice(answer: dict[str, Any]) -> dict[str, Any]:
    """An answer with the chosen format's statement taken out (the rest must equal the named format's)."""
    out = dict(answer)
    out["assumptions"] = {k: v for k, v in answer["assumptions"].items() if k != "weight_precision_source"}
    return out


@pytest.mark.parametrize("engine", ["llama.cpp", "ollama", "lm-studio"])
def test_a_gguf_engine_answers_for_the_gguf_on_every_surface(
    capsys: pytest.CaptureFixture[str], client: TestClient, engine: str
) -> None:
    cli = run_json(capsys, "decode", "-H", SPARK, "-m", "gpt-oss-120b", "--engine", engine, "--json")
    python = servebound.decode(SPARK, "gpt-oss-120b", engine=engine).to_dict()
    api = client.get("/api/decode", params={"hardware": SPARK, "model": "gpt-oss-120b", "engine": engine})
    assert api.status_code == 200
    assert cli == python == api.json()
    assert cli["model"]["id"] == GGUF
    why = cli["assumptions"]["weight_precision_source"]
    assert GGUF in why and engine in why and "bf16_mxfp4_experts" in why
    named = run_json(capsys, "decode", "-H", SPARK, "-m", GGUF, "--engine", engine, "--json")
    assert "weight_precision_source" not in named["assumptions"]
    assert _without_choice(cli) == named
    # the GGUF's ceiling, above the release's layout
    release = servebound.decode(SPARK, "gpt-oss-120b")
    assert release.model.id == "gpt-oss-120b"
    assert cli["single_session_tok_s"] > release.single_session_tok_s


def test_without_an_engine_or_where_it_runs_the_release_the_release_stays(client: TestClient) -> None:
    assert servebound.decode(SPARK, "gpt-oss-120b").model.id == "gpt-oss-120b"
    for engine in ("vllm", "sglang"):
        answer = client.get(
            "/api/decode", params={"hardware": SPARK, "model": "gpt-oss-120b", "engine": engine}
        )
        assert answer.json()["model"]["id"] == "gpt-oss-120b"
        assert "weight_precision_source" not in answer.json()["assumptions"]


def test_a_named_format_or_a_record_is_answered_as_given() -> None:
    # a format in the name, an Ollama tag (which names its quantization), a record: never replaced
    assert servebound.decode(SPARK, "gpt-oss-120b-bf16", engine="llama.cpp").model.id == "gpt-oss-120b-bf16"
    assert servebound.decode(SPARK, "gpt-oss:120b", engine="llama.cpp").model.id == GGUF
    release = servebound.decode(SPARK, "gpt-oss-120b").model
    scenario = resolve_scenario(hardware=SPARK, model=release, engine="llama.cpp")
    assert scenario.model.id == "gpt-oss-120b"
    assert "weight_format" not in scenario.sources


@pytest.mark.parametrize(
    ("hardware", "engine"),
    [("nvidia-rtx-4090", "llama.cpp"), ("apple-m4-max-128gb", "mlx"), (SPARK, "ollama")],
)
def test_the_choice_is_fits_choice(hardware: str, engine: str) -> None:
    """Each model's native name under the engine resolves to the format `fit --engine` keeps for it
    (where one clears the floor): one choice function for both."""
    hw = get_hardware(hardware)
    profiles = list_models()
    workload = resolve_scenario(hardware=hardware, model="qwen3-8b").declared
    rows, _ = fit_models(hw.hardware, hw.vendor, profiles, workload, engine=engine)
    kept = {row.profile.base_id: row.profile.id for row in rows}
    checked = 0
    for profile in profiles:
        if not profile.native or profile.base_id not in kept or checked >= 12:
            continue
        scenario = resolve_scenario(hardware=hardware, model=profile.id, engine=engine)
        if profile.weight_format == scenario.model.weight_precision:
            continue  # the engine runs the release: it stays
        assert scenario.model.id == kept[profile.base_id], profile.id
        assert engine in scenario.sources["weight_format"]
        checked += 1
    assert checked >= 1


def test_prefill_takes_the_same_choice(capsys: pytest.CaptureFixture[str], client: TestClient) -> None:
    cli = run_json(
        capsys,
        "prefill",
        "-H",
        SPARK,
        "-m",
        "gpt-oss-120b",
        "--engine",
        "llama.cpp",
        "--prompt",
        "2000",
        "--json",
    )
    api = client.get(
        "/api/prefill",
        params={"hardware": SPARK, "model": "gpt-oss-120b", "engine": "llama.cpp", "prompt": 2000},
    )
    assert api.status_code == 200
    assert cli == api.json()
    assert cli["model"]["id"] == GGUF
    assert GGUF in cli["assumptions"]["weight_precision_source"]
