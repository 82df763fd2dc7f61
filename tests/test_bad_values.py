"""Every declared decode input, given a bad value (NaN, inf, negative, zero, 1e-300, 1e300, a huge int,
empty, unicode, markup, a misplaced comma), answers the same way on the three surfaces: the CLI exits 0
with an answer or 2 with one line naming a field, /api/decode answers 200 or a 4xx in the one error
shape, Python returns or raises InputError; never a traceback, and never an answer on one surface
where another refuses (issue 33)."""

from __future__ import annotations

import re
from typing import Any

import pytest
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import servebound as sb
from servebound.errors import InputError
from servebound.inputs.workload import WORKLOAD_KEYWORDS, Input, inputs_of
from tests.conftest import run_cli

PAIR = ("nvidia-rtx-4090", "qwen3-30b-a3b-q4_k_m")
#: The values a hostile user types: each is refused or answered alike everywhere.
BAD = (
    "nan", "inf", "-inf", "-1", "0", "1e-300", "1e300", "1e999", "99999999999999999999999",
    "", " ", "5,5", "é", "\u202e1", "<b>1</b>", "1; rm -rf /", "0x10",
)  # fmt: skip
#: Every declared input decode takes on all three surfaces, but the flags (no value on the CLI).
DECLARED = tuple(
    s
    for s in inputs_of("context", "serving", "workload", "roof", "decode")
    if s.kind is not bool and (s.python in WORKLOAD_KEYWORDS or s.name == "kv_precision")
)
_ERROR = re.compile(r"^servebound: error: [A-Za-z_.\-/ ]+[:(]")


@pytest.fixture(scope="module")
def client() -> TestClient:
    from servebound.web.app.server import create_app

    return TestClient(create_app(base_url="http://testserver"))


def _python_value(spec: Input, text: str) -> Any:
    """What a Python caller would pass for ``text``: a number where it reads as one, else the text."""
    if spec.kind is str:
        return text
    try:
        return float(text)
    except ValueError:
        return text


def _cli(capsys: pytest.CaptureFixture[str], spec: Input, text: str) -> bool:
    status, out, err = run_cli(
        capsys, "decode", "-H", PAIR[0], "-m", PAIR[1], f"{spec.flag}={text}", "--json"
    )
    assert status in (0, 2), (spec.name, text, status, err)
    assert "Traceback" not in err
    if status == 2:
        assert err.count("\n") == 1 and _ERROR.match(err), (spec.name, text, err)
    else:
        assert out.startswith("{"), (spec.name, text)
    return status == 0


def _api(client: TestClient, spec: Input, text: str) -> bool:
    r = client.get("/api/decode", params={"hardware": PAIR[0], "model": PAIR[1], spec.name: text})
    assert r.status_code in (200, 400, 404), (spec.name, text, r.status_code, r.text[:300])
    if r.status_code != 200:
        error = r.json()["error"]
        assert error["status"] == r.status_code and error["field"] and error["message"], error
    return r.status_code == 200


def _python(spec: Input, text: str) -> bool:
    try:
        sb.decode(*PAIR, **{spec.python: _python_value(spec, text)})
    except InputError:
        return False
    return True


@settings(max_examples=100, deadline=None, suppress_health_check=list(HealthCheck))
@given(spec=st.sampled_from(DECLARED), text=st.sampled_from(BAD))
def test_a_bad_value_answers_alike_everywhere(
    capsys: pytest.CaptureFixture[str], client: TestClient, spec: Input, text: str
) -> None:
    cli, api, python = _cli(capsys, spec, text), _api(client, spec, text), _python(spec, text)
    assert cli == api == python, (spec.name, text, {"cli": cli, "api": api, "python": python})


#: prefill's own inputs and their Python keywords (``prompt`` is the third positional argument).
PREFILL_KEYWORDS = {
    "prompt": "prompt_tokens",
    "chunk": "chunk_tokens",
    "ttft_budget": "ttft_budget_s",
    "linear_mode": "linear_mode",
    "attention_mode": "attention_mode",
}
PREFILL = tuple(s for s in inputs_of("prefill") if s.name in PREFILL_KEYWORDS)


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(spec=st.sampled_from(PREFILL), text=st.sampled_from(BAD))
def test_a_bad_prefill_value_answers_alike_everywhere(
    capsys: pytest.CaptureFixture[str], client: TestClient, spec: Input, text: str
) -> None:
    prompt = () if spec.name == "prompt" else ("--prompt", "1000")
    args = ("prefill", "-H", PAIR[0], "-m", PAIR[1], *prompt, f"{spec.flag}={text}", "--json")
    status, _, err = run_cli(capsys, *args)
    assert status in (0, 2) and "Traceback" not in err, (spec.name, text, err)
    assert status == 0 or (err.count("\n") == 1 and _ERROR.match(err)), (spec.name, text, err)
    r = client.get(
        "/api/prefill", params={"hardware": PAIR[0], "model": PAIR[1], "prompt": "1000", spec.name: text}
    )
    assert r.status_code in (200, 400, 404), (spec.name, text, r.text[:300])
    try:
        sb.prefill(*PAIR, **{"prompt_tokens": 1000, PREFILL_KEYWORDS[spec.name]: _python_value(spec, text)})
        python = True
    except InputError:
        python = False
    assert (status == 0) == (r.status_code == 200) == python, (spec.name, text, status, r.status_code, python)


def test_every_declared_input_is_drawn() -> None:
    """The inputs the property draws from: every value-taking one decode declares."""
    names = {s.name for s in DECLARED}
    assert {
        "overhead_gb",
        "alloc_context",
        "floor",
        "batch",
        "host_memory_gb",
        "draft",
        "kv_precision",
    } <= names
