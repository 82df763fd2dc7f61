"""Numbers on pages and in the API equal what the CLI prints for the same inputs."""

from __future__ import annotations

import re
from typing import Any

import pytest
from fastapi.testclient import TestClient

from servebound.core.advice import Setting, parameter
from servebound.views.report import fmt_gb, fmt_int, fmt_rate, fmt_seconds
from servebound.web.pages.text import md as md_text
from servebound.web.pages.words import setting_words
from tests.conftest import run_json as cli_json
from tests.web.conftest import HW_FILE, LAGUNA_FILE, MOE_FILE

CASES = [
    ({}, []),
    (
        {"read_context": "8000", "alloc_context": "32000", "floor": "10", "overhead_gb": "4"},
        ["--read-context", "8000", "--alloc-context", "32000", "--floor", "10", "--overhead-gb", "4"],
    ),
    ({"batch": "64", "expert_traffic": "minimum"}, ["--batch", "64", "--expert-traffic", "minimum"]),
    ({"floor": "60"}, ["--floor", "60"]),
]


@pytest.mark.parametrize(
    ("model_id", "model_file"),
    [("qwen3.6-35b-a3b-example", MOE_FILE), ("laguna-s-2.1-nvfp4-example", LAGUNA_FILE)],
)
@pytest.mark.parametrize(("params", "flags"), CASES)
def test_decode_page_and_api_equal_the_cli(
    client: TestClient,
    capsys: pytest.CaptureFixture[str],
    model_id: str,
    model_file: object,
    params: dict[str, str],
    flags: list[str],
) -> None:
    cli = cli_json(capsys, "decode", "--hardware", str(HW_FILE), "--model", str(model_file), "--json", *flags)
    query = "&".join(f"{k}={v}" for k, v in params.items())
    api = client.get(f"/api/decode?hardware=dgx-spark-example&model={model_id}&{query}").json()
    assert api == cli
    html = client.get(f"/pair/dgx-spark-example/{model_id}?{query}").text
    md = client.get(f"/pair/dgx-spark-example/{model_id}.md?{query}").text

    def same(text: str, fmt: Any, value: Any) -> bool:
        """The page's figure is the CLI's; where there is none the page says why (the CLI: n/a)."""
        if value is None:
            return text in ("none: nothing fits in memory", "none: no batch holds the floor")
        return bool(text == fmt(value))

    def shown(key: str, text: str) -> str:
        found = re.search(rf'data-k="{re.escape(key)}"[^>]*>([^<]*)<', text)
        assert found is not None, key
        return found.group(1)

    for key, fmt in (
        ("single_session_tok_s", fmt_rate),
        ("aggregate_tok_s", fmt_rate),
        ("resident_margin_bytes", fmt_gb),
        ("kv_alloc_bytes", fmt_gb),
        ("kv_read_bytes", fmt_gb),
    ):
        assert same(shown(key, html), fmt, cli[key]), key
    assert same(shown("batch_mem", html), fmt_int, cli["batch_mem"])
    assert shown("batch_star", html) == fmt_int(cli["batch_star"])  # type: ignore[arg-type]
    assert shown("per_session_tok_s", html) == fmt_rate(cli["per_session_tok_s"])  # type: ignore[arg-type]
    assert f"One session: {fmt_rate(cli['single_session_tok_s'])}" in md  # type: ignore[arg-type]
    settings = cli["note_settings"]
    said = re.sub(r"\[([^\]]*)\]\([^)\s]*\)", r"\1", md)  # the mirror's links as their words
    for i, note in enumerate(cli["notes"]):  # type: ignore[arg-type]
        # The page says the API's sentence with each setting in words (a link that sets the form).
        for record in (r for r in settings if r["note"] == i):  # type: ignore[attr-defined]
            setting = Setting(
                record["input"], record["value"], also=tuple(Setting(*w) for w in record["with"].items())
            )
            words = setting_words(setting)
            assert words in md and words in html
            note = note.replace(parameter(setting), words)
        assert md_text(note) in said


def test_prefill_page_and_api_equal_the_cli(client: TestClient, capsys: pytest.CaptureFixture[str]) -> None:
    flags = ["--prompt", "4096", "--alloc-context", "65536", "--overhead-gb", "6"]
    cli = cli_json(
        capsys,
        "prefill",
        "--hardware",
        str(HW_FILE),
        "--model",
        str(LAGUNA_FILE),
        "--json",
        "--range",
        *flags,
    )
    pair = "/pair/dgx-spark-example/laguna-s-2.1-nvfp4-example"
    api = client.get(
        "/api/prefill?hardware=dgx-spark-example&model=laguna-s-2.1-nvfp4-example&prompt=4096"
        "&alloc_context=65536&overhead_gb=6&range=true"
    ).json()
    assert api == cli
    html = client.get(f"{pair}?prompt=4096&alloc_context=65536&overhead_gb=6").text
    assert f'data-k="prefill.time_s" data-f="wait">{fmt_seconds(cli["time_s"])}<' in html  # type: ignore[arg-type]
    assert f'data-k="prefill.tok_s" data-f="rate">{fmt_rate(cli["tok_s"])}<' in html  # type: ignore[arg-type]
    assert f"{cli['crossover_tokens']:,.0f}" in html
    rng = cli["range"]
    text = re.sub(r"<[^>]+>", "", html)  # the sentence's numbers sit in their own spans
    assert f"{fmt_rate(rng['lo_tok_s'])} to {fmt_rate(rng['hi_tok_s'])}" in text  # type: ignore[index]


def test_ranges_alone_are_the_same_answer_on_the_cli_and_the_api(
    client: TestClient, capsys: pytest.CaptureFixture[str]
) -> None:
    """decode --range and prefill --range without --prompt: one computation behind both surfaces."""
    pair = "hardware=dgx-spark-example&model=laguna-s-2.1-nvfp4-example&overhead_gb=6&range=true"
    files = [
        "--hardware",
        str(HW_FILE),
        "--model",
        str(LAGUNA_FILE),
        "--overhead-gb",
        "6",
        "--json",
        "--range",
    ]
    decode = cli_json(capsys, "decode", *files)
    assert "context_range" in decode
    assert client.get(f"/api/decode?{pair}").json() == decode
    prefill = cli_json(capsys, "prefill", *files)
    assert set(prefill) == {"range"}
    assert client.get(f"/api/prefill?{pair}").json() == prefill
    missing = client.get(f"/api/prefill?{pair.removesuffix('&range=true')}")
    assert missing.status_code == 400 and "range=true" in missing.text


def test_the_work_is_mathml_not_tex(client: TestClient) -> None:
    html = client.get("/pair/dgx-spark-example/laguna-s-2.1-nvfp4-example").text
    work = html.split('<section class="work" data-server>')[1].split("</section>")[0]
    assert work.count('<math xmlns="http://www.w3.org/1998/Math/MathML" display="block">') >= 6
    assert "\\frac" not in work and "$$" not in work
    for gate in ("memory bounds the batch", "bound by"):
        assert gate in work or "floor bounds the batch" in work
    md = client.get("/pair/dgx-spark-example/laguna-s-2.1-nvfp4-example.md").text
    assert "$$ T(b^*) = \\frac{R}" in md  # the mirror keeps TeX, which text readers expect


def test_figures_are_inline_svg(client: TestClient) -> None:
    html = client.get("/pair/dgx-spark-example/laguna-s-2.1-nvfp4-example").text
    for fig in ("fig-memory", "fig-aggregate", "fig-per-session", "fig-prefill-rate", "fig-prefill-time"):
        assert '<svg class="chart' in html and f'id="{fig}"' in html
    aggregate = html.split('id="fig-aggregate"')[1].split("</svg>")[0]
    assert "b_mem = " in aggregate and "b* = " in aggregate and "<polyline" in aggregate
    per = html.split('id="fig-per-session"')[1].split("</svg>")[0]
    assert "floor r* = 20" in per
    rate = html.split('id="fig-prefill-rate"')[1].split("</svg>")[0]
    assert "crossover S* = " in rate and "compute roofline" in rate and "memory roofline" in rate
    assert 'data-xlog="1"' in aggregate.split(">")[0] + ">" or 'data-xlog="1"' in html
