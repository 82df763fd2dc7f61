"""Issue 36: where a page says what the code does, it says what the code does (computed, not prose)."""

from __future__ import annotations

import html
import json
from typing import Any

import pytest
from fastapi.testclient import TestClient

from servebound.catalog.hardware import get_hardware
from servebound.core.rates import MISSING_RATE_RULE
from servebound.core.units import GB
from servebound.inputs.files import load_model_file
from tests.conftest import resolved
from tests.web.conftest import CATALOG_HW, EXAMPLES, LAGUNA_FILE, MOE_FILE


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


def _cli_prefill(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, Any]:
    from servebound.cli import main

    base = ["prefill", "-H", str(EXAMPLES / "dgx-spark.toml"), "-m", str(LAGUNA_FILE), "--json"]
    assert main([*base, *args]) == 0
    data: dict[str, Any] = json.loads(capsys.readouterr().out)
    return data


def test_laguna_walk_through_figures_equal_the_cli(
    client: TestClient, capsys: pytest.CaptureFixture[str]
) -> None:
    """The walk-through's figures on /derivation (254 of 256 experts at a 128-token chunk, 3.8 sweeps a
    second, 15.8 + 1.866 GFLOP per token at 8k, attention past the linear math at 128k: 20.0 vs 15.8)
    are what `servebound prefill --json` reports for the example files."""
    chunked = _cli_prefill(capsys, "--prompt", "8192", "--chunk", "128")
    short = _cli_prefill(capsys, "--prompt", "8192")
    long = _cli_prefill(capsys, "--prompt", "131072", "--alloc-context", "131072")

    def per_token(d: dict[str, Any], key: str) -> float:
        return float(d[key]) / (d["batch"] * d["prompt_tokens"]) / 1e9

    sweeps = short["hardware"]["bandwidth_gb_per_s"] * 1e9 / short["weight_sweep_bytes"]
    expected = (
        f"a chunk of 128 tokens already routes to {chunked['experts_touched']:.0f} of the 256 experts",
        f"at {short['hardware']['bandwidth_gb_per_s']:,.0f} GB/s the machine finishes only about {sweeps:.1f} full sweeps",
        f"each token costs {per_token(short, 'linear_flops'):.1f} GFLOP of linear math and "
        f"{per_token(short, 'attention_flops'):.3f} GFLOP of attention",
        f"it reaches {per_token(long, 'attention_flops'):.1f} GFLOP per token and overtakes the "
        f"{per_token(long, 'linear_flops'):.1f} GFLOP of linear math",
    )
    # The figures, as the CLI computes them today.
    assert (f"{chunked['experts_touched']:.0f}", f"{sweeps:.1f}") == ("254", "3.8")
    assert (f"{per_token(short, 'linear_flops'):.1f}", f"{per_token(short, 'attention_flops'):.3f}") == (
        "15.8",
        "1.866",
    )
    assert f"{per_token(long, 'attention_flops'):.1f}" == "20.0"
    page = " ".join(html.unescape(client.get("/derivation.md").text).split())
    for sentence in expected:
        assert sentence in page, sentence


def test_the_measured_gb10_prefill_run_is_reported_and_placed(
    client: TestClient, capsys: pytest.CaptureFixture[str]
) -> None:
    """The vLLM prefill run on GB10 (2,348 tok/s, 8,192-token prompts, 1,600 scheduled tokens) is a
    reported run with its source, /validation lists it, and /derivation places it as `servebound check`
    does: about 45 % of the 1,600-token-chunk ceiling for the example files."""
    from servebound.cli import main
    from servebound.runs.reported import load_reported_runs
    from servebound.web.pages.derivation_live import MEASURED_PREFILL_RUN

    entry = next(e for e in load_reported_runs() if e.id == MEASURED_PREFILL_RUN)
    assert (entry.measured, entry.prompt_tokens, entry.chunk_tokens) == (2348.0, 8192, 1600)
    assert entry.source_url.startswith("doc:roofline-derivation") and "2,348" in entry.source_quote
    args = [
        "check",
        "-H",
        str(EXAMPLES / "dgx-spark.toml"),
        "-m",
        str(LAGUNA_FILE),
        "--metric",
        "prefill_tok_s",
    ]
    args += ["--measured", "2348", "--prompt", "8192", "--chunk", "1600", "--json"]
    assert main(args) == 0
    check = json.loads(capsys.readouterr().out)["checks"][0]
    assert round(check["efficiency"] * 100) == 45
    page = " ".join(html.unescape(client.get("/derivation.md").text).split())
    assert f"whose ceiling for the example files is {check['ceiling_tok_s']:,.0f} tok/s" in page
    assert f"so the run reached about {check['efficiency'] * 100:.0f} % of it" in page
    assert "at 2,348 tok/s" in page and "1,600 tokens scheduled per iteration" in page
    assert MEASURED_PREFILL_RUN in client.get("/validation").text


def test_the_worked_examples_pair_pages_say_why_they_differ() -> None:
    """/pair/nvidia-dgx-spark/qwen3.6-35b-a3b-nvfp4 shows other numbers than the derivation's worked table
    (real tensors and a BF16 cache against the rounded adapter); the M5 Max pages hold 137.4 GB (128 GiB)
    where the derivation uses 128 GB. Each page says so, with the figures computed."""
    from servebound.catalog.models import get_model
    from servebound.web.app.server import create_app
    from servebound.web.pages.derivation_live import example_model, example_result

    rows = [
        get_hardware("nvidia-dgx-spark"),
        get_hardware("apple-m5-max-128gb"),
        get_hardware("nvidia-h100-sxm"),
    ]
    site = TestClient(
        create_app(hardware=rows, models=[get_model("qwen3.6-35b-a3b-nvfp4"), get_model("llama-3.1-8b")])
    )
    model = get_model("qwen3.6-35b-a3b-nvfp4").adapter
    example = example_model("qwen3.6-35b-a3b-nvfp4.toml")
    for hw_id, machine in (
        ("nvidia-dgx-spark", "dgx-spark.toml"),
        ("apple-m5-max-128gb", "apple-m5-max-128gb.toml"),
    ):
        page = " ".join(html.unescape(site.get(f"/pair/{hw_id}/qwen3.6-35b-a3b-nvfp4.md").text).split())
        page = page.replace("\\", "")  # the mirror escapes markdown's b\*
        table = example_result(machine, "qwen3.6-35b-a3b-nvfp4.toml")
        assert table.aggregate_tok_s is not None and table.single_session_tok_s is not None
        assert (
            f"The derivation's worked table gives this pair {round(table.single_session_tok_s):,} tok/s for one "
            f"session, b* {table.batch_star} and {round(table.aggregate_tok_s):,} tok/s"
        ) in page
        assert f"W_resident {model.weights.resident / GB:,.4g} GB" in page
        assert f"rounded adapter's {example.weights.resident / GB:,.4g} GB with P_embed = 0" in page
        assert (
            f"its {model.kv_precision.upper()} cache, reading {model.kv_read.bytes_at(32_000) / GB:,.4g} GB per token at 32,000 tokens"
            in page
        )
    m5 = get_hardware("apple-m5-max-128gb").hardware
    other = " ".join(html.unescape(site.get("/pair/apple-m5-max-128gb/llama-3.1-8b.md").text).split())
    other = other.replace("\\", "")
    assert (
        f"the catalog holds {m5.memory_bytes / GB:,.4g} GB (128 GiB) of memory, where the derivation uses 128 GB"
        in other
    )
    # Pairs the worked examples do not stand for carry no such note.
    plain = html.unescape(site.get("/pair/nvidia-h100-sxm/qwen3.6-35b-a3b-nvfp4.md").text)
    assert "worked table" not in plain and "the derivation uses" not in plain


def test_machine_endpoints_carry_the_license_and_keep_others_words_out(client: TestClient) -> None:
    """/docs.md has the frontmatter every mirror has (license included); a model card's quoted words and a
    run's quoted source are replaced by a link and an attribution in the .md mirrors; llms-full.txt's
    header says what it holds (N documents, named), not "the whole site"."""
    from servebound.catalog.models import get_model
    from servebound.web.app.server import create_app

    for path, heading in (("/docs.md", "# The servebound manual"), ("/api.md", "# The JSON API")):
        docs = client.get(path).text
        front = docs.split("---")[1]
        assert (
            docs.startswith("---\ntitle: ")
            and "\nlicense: CC BY 4.0 (https://creativecommons.org/licenses/by/4.0/)\n" in front
        )
        assert "\nattribution: servebound\n" in front and heading in docs, path

    card = get_model("qwen2.5-7b")
    site = TestClient(
        create_app(
            hardware=[get_hardware("nvidia-dgx-spark")], models=[card, get_model("gemma-4-26b-a4b-nvfp4")]
        )
    )
    words = str(card.published["source"]).split(": '", 1)[1].rstrip("'")
    mirror = site.get("/models/qwen2.5-7b.md").text
    assert words not in mirror and words in html.unescape(site.get("/models/qwen2.5-7b").text)
    card_link = (
        "Qwen2.5-7B model card (words quoted at https://huggingface.co/Qwen/Qwen2.5-7B, not reproduced"
    )
    assert card_link in mirror
    api = site.get("/api/models/qwen2.5-7b").json()["audit"]
    assert words not in json.dumps(api) and api["published_source"].startswith(card_link)
    _hardware_sources_keep_quotes_out(client)
    from servebound.runs.reported import load_reported_runs

    run = next(e for e in load_reported_runs() if e.id == "derivation-dgx-spark-gemma-4-26b-a4b-nvfp4-c16")
    pair = site.get("/pair/nvidia-dgx-spark/gemma-4-26b-a4b-nvfp4.md").text
    assert run.source_quote not in pair and "doc:roofline-derivation" in pair

    full = client.get("/llms-full.txt").text
    held = full.split("\n=====  =====  =====\n")[1:]
    from servebound.web.pages.text import mirror_path

    urls = [d.split('\nurl: "', 1)[1].split('"', 1)[0] for d in held]
    assert "the whole site" not in full.split("\n=====")[0]
    assert full.startswith(
        f"# servebound: {len(held)} documents as text\n\nThis file holds {len(held)} documents: "
    )
    header = full.split("\n=====")[0]
    assert all(f"({mirror_path(url)})" in header for url in urls), urls


def _flat(text: str) -> str:
    """A page's text with markdown escapes and runs of spaces undone (so a passage is found however
    the page wraps or escapes it)."""
    return " ".join(html.unescape(text).replace("\\", "").split())


def _hardware_sources_keep_quotes_out(client: TestClient) -> None:
    """A hardware row's sources quote vendor and engine documents: the .md mirror and /api/hardware/<id>
    carry each quoted passage's attribution and link instead, the HTML page the words; llms-full.txt
    (the engine table's sources) likewise."""
    from servebound.web.pages.site import quoted_passages, without_quotes

    vllm = "https://huggingface.co/neuralmagic/Mistral-7B-Instruct-v0.3-GPTQ-4bit/discussions/1"
    for hw_id in ("nvidia-h100-sxm", "nvidia-rtx-4090", "apple-m3-ultra-512gb"):
        row = get_hardware(hw_id)
        texts = [*row.sources.values(), row.notes]
        passages = [" ".join(t[a:b].split()) for t in texts for a, b in quoted_passages(t)]
        assert passages, hw_id  # each of these rows quotes a source
        mirror = _flat(client.get(f"/hardware/{hw_id}.md").text)
        page = _flat(client.get(f"/hardware/{hw_id}").text)
        api = client.get(f"/api/hardware/{hw_id}").json()
        assert api["id"] == hw_id and mirror.startswith("--- title:")
        api_text = _flat(json.dumps(api, ensure_ascii=False).replace('\\"', '"'))
        for passage in passages:
            assert passage not in mirror and passage not in api_text and passage in page, (hw_id, passage)
        shown = ("memory_gb", "bandwidth_gb_per_s", *row.hardware.compute_flop_per_s)  # the mirror's table
        for key, text in row.sources.items():
            if text != without_quotes(text):
                assert "words quoted at http" in api["sources"][key], (hw_id, key)
                assert key not in shown or _flat(without_quotes(text)) in mirror, (hw_id, key)
    # The pair mirror's assumptions carry the row's runtime-overhead source in our words, with its link.
    model = client.get("/api/models").json()["models"][0]["id"]
    pair = _flat(client.get(f"/pair/nvidia-h100-sxm/{model}.md").text)
    assert vllm in pair and "'It will use 90%" not in pair
    full = _flat(client.get("/llms-full.txt").text)
    for words, link in (
        ("'The default value is 0.9'", "https://docs.sglang.io/docs/advanced_features/server_arguments"),
        ("'allocate 90% of free GPU memory for KV cache'", "https://nvidia.github.io/TensorRT-LLM/examples/"),
    ):
        assert words not in full and link in full, words


def test_the_lectures_asides_are_on_the_economics_page(client: TestClient) -> None:
    """The lecture's asides (one rack against a provider, sparse attention, the 2 kB cache check, the
    context plateau, rebuild against keep, rack hops, derating, 150T against ~200T) are on /economics and
    its mirror, in our words, each number computed."""
    from servebound.core import economics as econ
    from servebound.questions.economics import LECTURE

    rack = econ.train_schedule(LECTURE["batch"], 1 / LECTURE["steps_per_s"]).tok_s
    inference = econ.equal_cost(
        LECTURE["traffic_tok_s"],
        LECTURE["life_days"] * econ.SECONDS_PER_DAY,
        LECTURE["frontier_active_params"],
    ).inference_tokens
    for path in ("/economics", "/economics.md"):
        page = " ".join(html.unescape(client.get(path).text).split()).replace("**", "")
        for heading in (
            "One rack against a provider",
            "The 2 kB cache check",
            "Why context lengths plateau",
            "Rebuild or keep a cache",
            "Sparse attention",
            "Rack hops in a pipeline",
            "Tokens in, tokens out",
            "A model that may miss the frontier",
        ):
            assert heading in page, (path, heading)
        assert f"emits {rack:,.0f} tokens per second" in page and "about a thousandth" in page
        assert "1 x 2 x 128 x 8 = 2,048 bytes per token" in page
        assert (
            f"{inference / 1e12:,.0f}T lifetime inference tokens" in page and "150T of pre-training" in page
        )
        assert "one-time gain" in page and "costs quality" in page


def test_the_api_reports_the_unrestricted_prefill_beside_a_budget(client: TestClient) -> None:
    """A TTFT budget on /api/prefill keeps the unrestricted answer visible, as the CLI's JSON does."""
    params = {"hardware": "nvidia-h100-sxm", "model": "hostile", "prompt": 8192, "batch": "max"}
    free = client.get("/api/prefill", params=params).json()
    tight = client.get("/api/prefill", params={**params, "ttft_budget": free["time_s"] / 2}).json()
    assert free["unrestricted"] is None and tight["ttft_ok"] is not None
    assert tight["batch"] < free["batch"]
    assert (tight["unrestricted"]["batch"], tight["unrestricted"]["tok_s"]) == (free["batch"], free["tok_s"])
