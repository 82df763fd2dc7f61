"""One grammar: a number's text is read by ``Input.parse`` on every surface (the CLI's flags, the JSON
API's query, the pages' query strings, Python's keywords through the record) and by calc.js's
``parseNumber`` in the browser's form; both agree on one table of spellings."""

from __future__ import annotations

import json
import subprocess
from typing import Any

import pytest
from fastapi.testclient import TestClient

from servebound.cli import main
from servebound.errors import InputError
from servebound.inputs.declare import TOKENS_SPELLING
from servebound.inputs.workload import BY_NAME, inputs_of
from servebound.web.app.query import parse_workload_query
from servebound.web.app.server import create_app
from tests.web.test_conformance import CALC, node

#: (text, the token count it spells, or None where it is refused).
TOKEN_SPELLINGS: list[tuple[str, int | None]] = [
    ("32000", 32000),
    ("32k", 32000),
    ("32K", 32000),
    ("1M", 1_000_000),
    ("1m", 1_000_000),
    ("1.5k", 1500),
    ("1.1k", 1100),
    (".5k", 500),
    ("32,000", 32000),
    ("32_000", 32000),
    ("1,000,000", 1_000_000),
    ("1e3", 1000),  # an exponent is kept, as the pages always took it
    ("1E3", 1000),
    ("4096.0", 4096),
    (" 8k ", 8000),
    ("+3", 3),
    ("1.0005k", None),  # 1,000.5: not a whole number once scaled
    ("1e3k", None),  # a suffix takes no exponent
    ("32kk", None),
    ("32 k", None),
    ("32x", None),
    ("k", None),
    ("", None),
    ("1,", None),
    (",1", None),
    ("1__0", None),
    ("inf", None),
    ("nan", None),
    ("0x10", None),
    ("1.5", None),
    ("١٢", None),  # digits of other scripts: ASCII only
    ("32G", None),
]
#: (text, the rate it spells, or None): a number that is no token count takes no suffix.
RATE_SPELLINGS: list[tuple[str, float | None]] = [
    ("20", 20.0),
    ("1,000.5", 1000.5),
    ("2.5e1", 25.0),
    (".5", 0.5),
    ("5.", 5.0),
    ("2k", None),
    ("inf", None),
    ("1e400", None),
]


def python_parse(name: str, text: str) -> Any:
    try:
        return BY_NAME[name].parse(text)
    except InputError:
        return None


@pytest.mark.parametrize(("text", "expected"), TOKEN_SPELLINGS)
def test_input_parse_reads_each_token_spelling(text: str, expected: int | None) -> None:
    assert python_parse("read_context", text) == expected
    if expected is not None:
        assert type(python_parse("read_context", text)) is int


@pytest.mark.parametrize(("text", "expected"), RATE_SPELLINGS)
def test_input_parse_reads_each_rate_spelling(text: str, expected: float | None) -> None:
    assert python_parse("floor", text) == expected


def test_calc_js_reads_the_same_table() -> None:
    """calc.js's parseNumber under Node gives Input.parse's value for every spelling (NaN: refused)."""
    cases = [[t, "int", True] for t, _ in TOKEN_SPELLINGS] + [[t, "float", False] for t, _ in RATE_SPELLINGS]
    script = (
        f"var c = require({json.dumps(str(CALC))}); var cases = {json.dumps(cases)};"
        "console.log(JSON.stringify(cases.map(function (k) { var v = c.parseNumber(k[0], k[1], k[2]);"
        " return isNaN(v) ? null : v; })));"
    )
    done = subprocess.run([node(), "-e", script], capture_output=True, text=True, timeout=60, check=True)
    got = json.loads(done.stdout)
    assert got == [e for _, e in TOKEN_SPELLINGS] + [e for _, e in RATE_SPELLINGS]


def test_every_surface_takes_32k_and_32_000(capsys: pytest.CaptureFixture[str]) -> None:
    """The CLI's flags, the JSON API's query and a page's query string read the same spellings alike
    (the CLI and the API refused 32,000 and 1e3, and 32k was refused everywhere)."""
    pair = ["-H", "nvidia-rtx-4090", "-m", "qwen3-8b"]
    answers = []
    for alloc, read in (("32k", "8,000"), ("32,000", "8_000"), ("32000", "8e3")):
        assert main(["decode", *pair, "--alloc-context", alloc, "--read-context", read, "--json"]) == 0
        answers.append(json.loads(capsys.readouterr().out))
    assert answers[0] == answers[1] == answers[2]
    assert answers[0]["assumptions"]["alloc_context_tokens"] == 32000
    client = TestClient(create_app())
    api = client.get(
        "/api/decode",
        params={
            "hardware": "nvidia-rtx-4090",
            "model": "qwen3-8b",
            "alloc_context": "32k",
            "read_context": "8,000",
        },
    ).json()
    assert api == answers[0]
    page = parse_workload_query({"alloc_context": "32k", "read_context": "8,000"})
    assert (page.alloc_context, page.read_context) == (32000, 8000)


def test_a_refused_spelling_is_refused_alike(capsys: pytest.CaptureFixture[str]) -> None:
    status = main(["decode", "-H", "nvidia-rtx-4090", "-m", "qwen3-8b", "--read-context", "32kk"])
    assert status == 2 and "read_context" in capsys.readouterr().err
    client = TestClient(create_app())
    answer = client.get("/api/decode?hardware=nvidia-rtx-4090&model=qwen3-8b&read_context=32kk")
    assert answer.status_code == 400 and answer.json()["error"]["field"] == "read_context"
    with pytest.raises(InputError, match="read_context"):
        parse_workload_query({"read_context": "32kk"})


def test_each_token_input_says_its_spellings() -> None:
    tokens = [s for s in inputs_of("context", "decode", "prefill") if s.unit == "tokens"]
    assert {s.name for s in tokens} >= {"alloc_context", "read_context", "prompt", "chunk", "draft_tokens"}
    for spec in tokens:
        assert TOKENS_SPELLING in spec.help_for("decode") and TOKENS_SPELLING in spec.description
        assert "32k, 1.5k or 1M" in TOKENS_SPELLING and "32,000" in TOKENS_SPELLING


def test_python_keywords_take_the_same_text() -> None:
    """A notebook may pass a token count as text: read by the same parser, refused alike."""
    import servebound

    as_text = servebound.decode("nvidia-rtx-4090", "qwen3-8b", read_context="8k", alloc_context="32,000")
    as_ints = servebound.decode("nvidia-rtx-4090", "qwen3-8b", read_context=8000, alloc_context=32000)
    assert as_text.to_dict() == as_ints.to_dict()
    with pytest.raises(InputError, match="read_context"):
        servebound.decode("nvidia-rtx-4090", "qwen3-8b", read_context="8kk")


def test_economics_balance_takes_the_spellings(capsys: pytest.CaptureFixture[str]) -> None:
    base = ["economics", "balance", "-H", "nvidia-h100-sxm", "-m", "qwen3-8b", "--json"]
    assert main([*base, "--read-context", "8k", "--alloc-context", "32,000"]) == 0
    spelled = capsys.readouterr().out
    assert main([*base, "--read-context", "8000", "--alloc-context", "32000"]) == 0
    assert capsys.readouterr().out == spelled


def test_the_commands_own_token_counts_take_the_spellings(capsys: pytest.CaptureFixture[str]) -> None:
    """cost's, rank's and plan's --prompt and plan's --output-tokens (and /api/cost, /api/plan) read
    the same grammar as the declared token inputs."""
    pair = ["-H", "nvidia-rtx-4090", "-m", "qwen3-8b", "--json"]
    outs = []
    for prompt in ("8k", "8,000", "8000"):
        assert main(["cost", *pair, "--prompt", prompt]) == 0
        outs.append(capsys.readouterr().out)
    assert outs[0] == outs[1] == outs[2]
    client = TestClient(create_app())
    cost = client.get(
        "/api/cost", params={"hardware": "nvidia-rtx-4090", "model": "qwen3-8b", "prompt": "8k"}
    )
    assert cost.json() == json.loads(outs[0])
    plan = ["plan", "-H", "8x-h200", "-m", "llama-3.1-8b", "--users", "100", "--json"]
    assert main([*plan, "--prompt", "2k", "--output-tokens", "1,000"]) == 0
    spelled = capsys.readouterr().out
    assert main([*plan, "--prompt", "2000", "--output-tokens", "1000"]) == 0
    assert capsys.readouterr().out == spelled
    query = {
        "hardware": "8x-h200",
        "model": "llama-3.1-8b",
        "users": 100,
        "prompt": "2k",
        "output_tokens": "1_000",
    }
    assert client.get("/api/plan", params=query).json() == json.loads(spelled)
    assert main(["rank", "-H", "nvidia-rtx-4090", "--prompt", "4k", "--json"]) == 0
    ranked = capsys.readouterr().out
    assert main(["rank", "-H", "nvidia-rtx-4090", "--prompt", "4000", "--json"]) == 0
    assert capsys.readouterr().out == ranked
    assert main(["cost", *pair, "--prompt", "8kk"]) == 2 and "prompt" in capsys.readouterr().err
