"""--context: the conversation length people think in. It reserves its value (L_alloc) and reads the
derivation's default share of it (L_read = L_alloc x 32,000 / 100,000), and is refused beside either
exact context, naming both."""

from __future__ import annotations

import pytest

from servebound import make_workload
from servebound.core.workload import DEFAULT_ALLOC_CONTEXT_TOKENS, DEFAULT_READ_CONTEXT_TOKENS
from servebound.errors import InputError
from servebound.inputs.workload import BY_NAME, WorkloadInputs
from tests.conftest import run_cli, run_json


def test_context_reserves_it_and_reads_the_default_share() -> None:
    w = make_workload(context=50_000).stated
    assert w.alloc_context_tokens == 50_000
    assert (
        w.read_context_tokens
        == 50_000 * DEFAULT_READ_CONTEXT_TOKENS // DEFAULT_ALLOC_CONTEXT_TOKENS
        == 16_000
    )
    # the defaults' own ratio: --context 100000 is the default workload's contexts
    default = make_workload().stated
    same = make_workload(context=DEFAULT_ALLOC_CONTEXT_TOKENS).stated
    assert (same.alloc_context_tokens, same.read_context_tokens) == (
        default.alloc_context_tokens,
        default.read_context_tokens,
    )


@pytest.mark.parametrize("exact", [{"alloc_context": 8000}, {"read_context": 100}])
def test_context_with_an_exact_one_is_refused_naming_both(exact: dict[str, int]) -> None:
    with pytest.raises(InputError) as caught:
        WorkloadInputs(context=32_000, **exact)  # type: ignore[arg-type]
    assert caught.value.field == "context"
    said = str(caught.value)
    assert "--context" in said and "--" + next(iter(exact)).replace("_", "-") in said


def test_context_on_the_command_line_and_the_api(capsys: pytest.CaptureFixture[str]) -> None:
    from fastapi.testclient import TestClient

    from servebound.web.app.server import create_app

    args = ("decode", "-H", "nvidia-rtx-4090", "-m", "gemma-3-27b-it-q4_k_m", "--context", "32000")
    data = run_json(capsys, *args, "--json")
    status, _, err = run_cli(capsys, *args, "--read-context", "100")
    assert status == 2 and "--context" in err and "--read-context" in err
    assert data["assumptions"]["alloc_context_tokens"] == 32_000
    assert data["assumptions"]["read_context_tokens"] == 10_240
    client = TestClient(create_app())
    params = {"hardware": "nvidia-rtx-4090", "model": "gemma-3-27b-it-q4_k_m", "context": "32000"}
    api = client.get("/api/decode", params=params)
    assert api.status_code == 200 and api.json()["single_session_tok_s"] == data["single_session_tok_s"]
    refused = client.get("/api/decode", params={**params, "alloc_context": "8000"})
    assert refused.status_code in (400, 422)


def test_context_takes_the_suffixes_people_type() -> None:
    assert BY_NAME["context"].parse("32k") == 32_000
    assert BY_NAME["context"].parse("1M") == 1_000_000
