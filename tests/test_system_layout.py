"""A question on a system answers at a stated layout (issue 32): the best valid one by default (the one
`servebound layout` ranks first), the engine's split where an engine is named, or the one given, and
says which, on the CLI, in the Python API's to_dict(), on /api/decode and on the pair page."""

from __future__ import annotations

import json
import random
import re
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import servebound
from servebound.errors import InputError
from servebound.inputs.scenario import resolve_scenario
from servebound.web.app.server import create_app
from tests.conftest import cli_json
from tests.conftest import run_cli as run

#: Systems and models the drawn questions sit on: NVLink and PCIe systems, an NxID alias and an
#: ideal-link NxID, dense and MoE models, a GGUF quantization.
SYSTEMS = ["8x-nvidia-h200-sxm", "8x-h100", "2x-nvidia-rtx-3090", "4x-nvidia-rtx-4090", "3x-amd-mi300x"]
MODELS = ["llama-3.1-8b", "qwen3-30b-a3b-q4_k_m", "llama-3.3-70b-instruct-q4_k_m", "deepseek-r1"]
#: A few layouts in each spelling a person may type (some invalid for some pairs: an error then).
LAYOUTS = [None, None, "tp=2", "tp2", "pp=2", "tp=1,pp=2", "ep=2", "TP=4", "tp=8,ep=8"]
#: Workload settings a drawn question may carry: (CLI flags, Python keywords, API query).
KNOBS = [
    ([], {}, {}),
    (["--context", "8k"], {"context": "8k"}, {"context": "8k"}),
    (["--alloc-context", "16,000", "--read-context", "4000"], {"alloc_context": 16000, "read_context": 4000}, {"alloc_context": "16,000", "read_context": "4000"}),
    (["--floor", "5"], {"floor_tok_s": 5.0}, {"floor": "5"}),
    (["--batch", "3"], {"batch": 3}, {"batch": "3"}),
    (["--engine", "llama.cpp"], {"engine": "llama.cpp"}, {"engine": "llama.cpp"}),
    (["--kv-precision", "fp8"], {"kv_precision": "fp8"}, {"kv_precision": "fp8"}),
]  # fmt: skip


@pytest.fixture(scope="module")
def client() -> Iterator[TestClient]:
    yield TestClient(create_app())


def test_the_issue_pair_answers_at_the_best_layout(capsys: pytest.CaptureFixture[str]) -> None:
    """decode -H 8x-nvidia-h200-sxm -m deepseek-r1 said 3,165 tok/s, above every layout (best 1,905);
    now it answers at the best layout, says which and why, and keeps the pooled figure as a bound."""
    data = cli_json(capsys, "decode", "-H", "8x-nvidia-h200-sxm", "-m", "deepseek-r1")
    best = cli_json(capsys, "layout", "-H", "8x-nvidia-h200-sxm", "-m", "deepseek-r1")["layouts"][0]
    assert data["layout"]["label"] == best["layout"]["label"] and data["layout"]["source"] == "best"
    assert data["aggregate_tok_s"] == pytest.approx(best["aggregate_tok_s"])
    assert data["single_session_tok_s"] == pytest.approx(best["single_session_tok_s"])
    assert data["batch_star"] == best["sessions"]  # b* counts sessions: dp pp x the micro-batch
    assert data["per_session_tok_s"] * data["batch_star"] == pytest.approx(data["aggregate_tok_s"])
    assert data["pooled"]["aggregate_tok_s"] > data["aggregate_tok_s"]  # the pooled bound: 3,165
    assert round(data["pooled"]["aggregate_tok_s"]) == 3165 and round(data["aggregate_tok_s"]) == 1905
    assert data["system"]["interconnect"]["ideal"] is False
    assert data["assumptions"]["layout"].startswith(best["layout"]["label"])
    assert data["notes"][0].startswith(f"Answered at {best['layout']['label']}")
    status, out, _ = run(capsys, "decode", "-H", "8x-nvidia-h200-sxm", "-m", "deepseek-r1")
    assert status == 0 and f"at {best['layout']['label']}:" in out.splitlines()[0]


def test_llama_cpp_answers_at_its_layer_split(capsys: pytest.CaptureFixture[str]) -> None:
    """llama.cpp splits a model's layers over the GPUs by default: on 2x RTX 3090 one session of
    Llama 3.3 70B Q4_K_M passes both cards in turn, R / W of one card (about 21.6 tok/s at a short
    context), not the summed bandwidth (about 43); the best layout (tensor parallel) says so in a note."""
    pair = ["-H", "2x-nvidia-rtx-3090", "-m", "llama-3.3-70b-instruct-q4_k_m", "--context", "4k"]
    engine = cli_json(capsys, "decode", *pair, "--engine", "llama.cpp")
    assert engine["layout"]["label"] == "tp=1,ep=1,pp=2,dp=1" and engine["layout"]["source"] == "engine"
    one_card = cli_json(capsys, "decode", "-H", "nvidia-rtx-3090", "-m", "llama-3.3-70b-instruct-q4_k_m", "--context", "4k", "--memory-only")  # fmt: skip
    weights = one_card["assumptions"]["bandwidth_gb_per_s"] * 1e9 / engine["single_session_tok_s"]
    pooled = engine["pooled"]["single_session_tok_s"]
    assert engine["single_session_tok_s"] == pytest.approx(pooled / 2, rel=0.02)
    assert weights > 40e9  # a session's step streams all the weights at one card's bandwidth
    assert round(engine["single_session_tok_s"], 0) in (21.0, 22.0) and round(pooled) in (43, 44)
    assert any("splits the layers" in n for n in engine["notes"])
    plain = cli_json(capsys, "decode", *pair)
    assert plain["layout"]["source"] == "best" and plain["layout"]["tp"] == 2
    assert any("llama.cpp, which runs this GGUF format" in n for n in plain["notes"])


def test_a_given_layout_is_honoured(client: TestClient, capsys: pytest.CaptureFixture[str]) -> None:
    pair = ["-H", "8x-nvidia-h100-sxm", "-m", "llama-3.1-70b"]
    data = cli_json(capsys, "decode", *pair, "--layout", "tp4")
    assert data["layout"]["label"] == "tp=4,ep=1,pp=1,dp=2" and data["layout"]["source"] == "given"
    ranked = servebound.layout("8x-nvidia-h100-sxm", "llama-3.1-70b").layouts
    one = next(r for r in ranked if r.layout.label == "tp=4,ep=1,pp=1,dp=2")
    assert one is not ranked[0] and data["aggregate_tok_s"] == pytest.approx(one.aggregate_tok_s)
    assert data["batch_star"] == one.sessions
    python = servebound.decode("8x-nvidia-h100-sxm", "llama-3.1-70b", layout="tp=4").to_dict()
    api = client.get(
        "/api/decode", params={"hardware": "8x-nvidia-h100-sxm", "model": "llama-3.1-70b", "layout": "tp=4"}
    ).json()
    assert python == data == api
    scenario = resolve_scenario(hardware="8x-nvidia-h100-sxm", model="llama-3.1-70b", layout="tp=4")
    assert scenario.layout is not None and scenario.sources["layout"].startswith("tp=4,ep=1,pp=1,dp=2: given")


@pytest.mark.parametrize(
    ("layout", "needle"),
    [
        ("tp=3", "tp=3 must divide"),
        ("tp=16", "needs 16 devices"),
        ("xx=2", "is not KEY=N"),
        (",", "give at least"),
    ],
)
def test_an_invalid_layout_names_the_field_on_every_surface(
    client: TestClient, capsys: pytest.CaptureFixture[str], layout: str, needle: str
) -> None:
    hw, model = "8x-nvidia-h100-sxm", "llama-3.1-70b"
    status, _, err = run(capsys, "decode", "-H", hw, "-m", model, "--layout", layout)
    assert status == 2 and "layout" in err and needle in err and "Traceback" not in err
    with pytest.raises(InputError, match=re.escape(needle)) as raised:
        servebound.decode(hw, model, layout=layout)
    assert raised.value.field == "layout" and isinstance(raised.value, ValueError)
    answer = client.get("/api/decode", params={"hardware": hw, "model": model, "layout": layout})
    assert answer.status_code == 400 and "layout" in answer.text and needle in answer.text


def test_one_device_searches_no_layout() -> None:
    """A single device answers as itself: no layout chosen, none searched."""
    scenario = resolve_scenario(hardware="nvidia-rtx-4090", model="qwen3-8b")
    assert scenario.layout is None and "layout" not in scenario.sources
    assert "layout" not in servebound.decode("nvidia-rtx-4090", "qwen3-8b").to_dict()
    with pytest.raises(InputError, match="needs 2 devices"):
        servebound.decode("nvidia-rtx-4090", "qwen3-8b", layout="tp=2")


def test_what_layouts_do_not_model_answers_pooled_and_says_so() -> None:
    """Weights in host RAM and speculative decoding are not modelled on layouts: a system answers as
    one pooled device (a looser bound), says so in its sources, and refuses a layout given with them."""
    offload = {"cpu_moe": True, "host": "desktop-ddr5-6000-2ch"}
    scenario = resolve_scenario(hardware="2x-nvidia-rtx-3090", model="qwen3-30b-a3b-q4_k_m", **offload)
    assert scenario.layout is None and scenario.sources["layout"].startswith("none: layouts do not model")
    answer = servebound.decode("2x-nvidia-rtx-3090", "qwen3-30b-a3b-q4_k_m", **offload).to_dict()
    assert answer["layout"] is None and answer["notes"][0].startswith("Answered as one pooled device")
    assert "host RAM" in answer["assumptions"]["layout"]
    with pytest.raises(InputError, match="do not model") as raised:
        resolve_scenario(
            hardware="2x-nvidia-rtx-3090", model="qwen3-30b-a3b-q4_k_m", layout="tp=2", **offload
        )
    assert raised.value.field == "layout"


def _spelt(layout: str | None) -> str:
    return "" if layout is None else layout


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    system=st.sampled_from(SYSTEMS),
    model=st.sampled_from(MODELS),
    layout=st.sampled_from(LAYOUTS),
    knob=st.sampled_from(KNOBS),
)
def test_every_surface_answers_a_system_alike(
    client: TestClient,
    capsys: pytest.CaptureFixture[str],
    system: str,
    model: str,
    layout: str | None,
    knob: tuple[list[str], dict[str, Any], dict[str, str]],
) -> None:
    """Drawn systems, models, layouts and workloads: the CLI's --json, to_dict() and /api/decode give
    one answer (or one error naming one field), at the layout the answer names."""
    flags, keywords, query = knob
    args = ["decode", "-H", system, "-m", model, *flags]
    extra = {} if layout is None else {"layout": layout}
    status, out, err = run(capsys, *args, *(["--layout", layout] if layout is not None else []), "--json")
    api = client.get("/api/decode", params={"hardware": system, "model": model, **query, **extra})
    try:
        python: dict[str, Any] | None = servebound.decode(system, model, **keywords, **extra).to_dict()
        field = None
    except InputError as exc:
        python, field = None, exc.field
    if status != 0:
        assert python is None and api.status_code == 400, (err, api.text)
        assert f"{field}:" in err and field in api.text
        return
    cli = json.loads(out)
    assert python == cli == api.json()
    assert cli["layout"]["label"].startswith("tp=")
    if layout is not None:
        assert cli["layout"]["source"] == "given"
    elif "engine" in keywords:
        assert cli["layout"]["source"] in ("engine", "best")
    else:
        best = servebound.layout(system, model, **keywords).layouts[0]
        assert cli["layout"]["label"] == best.layout.label
    pooled = cli["pooled"]
    if cli["single_session_tok_s"] is not None and pooled["single_session_tok_s"] is not None:
        assert cli["single_session_tok_s"] <= pooled["single_session_tok_s"] * (1 + 1e-9)


def test_rank_rows_on_a_system_name_their_layout(capsys: pytest.CaptureFixture[str]) -> None:
    rows = cli_json(capsys, "rank", "-m", "deepseek-r1")["rows"]
    row = next(r for r in rows if r["hardware"]["id"] == "8x-nvidia-h200-sxm")
    decode = cli_json(capsys, "decode", "-H", "8x-nvidia-h200-sxm", "-m", "deepseek-r1")
    assert row["layout"]["label"] == decode["layout"]["label"]
    assert row["aggregate_tok_s"] == pytest.approx(decode["aggregate_tok_s"])
    single = next(r for r in rows if r["hardware"]["id"] == "nvidia-h200-sxm")
    assert single["layout"] is None


def test_the_pair_page_says_its_layout(client: TestClient, capsys: pytest.CaptureFixture[str]) -> None:
    decode = cli_json(capsys, "decode", "-H", "8x-nvidia-h200-sxm", "-m", "deepseek-r1")
    page = client.get("/pair/8x-nvidia-h200-sxm/deepseek-r1").text
    assert f"Answered at the parallel layout <code>{decode['layout']['label']}</code>" in page
    assert "?layout=" not in page and "&amp;layout=" not in page  # the page's form takes no layout
    mirror = client.get("/pair/8x-nvidia-h200-sxm/deepseek-r1.md").text
    assert f"Answered at the parallel layout {decode['layout']['label']}" in mirror


def test_a_random_sample_of_catalog_systems_never_answers_above_the_pool() -> None:
    """Every layout is at most the pooled device (each device streams its share over its own
    bandwidth): the answer at the chosen layout never exceeds the pooled bound."""
    rng = random.Random(32)
    systems = [h.id for h in servebound.hardware() if h.system is not None and h.system.count <= 8]
    models = [
        "llama-3.1-8b",
        "qwen3-30b-a3b-q4_k_m",
        "llama-3.3-70b-instruct-q4_k_m",
        "gemma-3-27b-it-q4_k_m",
    ]
    for system, model in ((rng.choice(systems), rng.choice(models)) for _ in range(12)):
        answer = servebound.decode(system, model, context="8k")
        pooled = answer.pooled  # type: ignore[attr-defined]
        assert answer.layout is not None, system  # type: ignore[attr-defined]
        for ours, bound in (
            (answer.single_session_tok_s, pooled.single_session_tok_s),
            (answer.aggregate_tok_s, pooled.aggregate_tok_s),
        ):
            if ours is not None:
                assert bound is not None and ours <= bound * (1 + 1e-9), (system, model)


def test_prefill_and_cost_take_the_same_layout(
    client: TestClient, capsys: pytest.CaptureFixture[str]
) -> None:
    """prefill and cost on a system answer at the layout decode answers at, on every surface."""
    pair = ["-H", "8x-nvidia-h200-sxm", "-m", "deepseek-r1"]
    label = cli_json(capsys, "decode", *pair)["layout"]["label"]
    prefill = cli_json(capsys, "prefill", *pair, "--prompt", "8k")
    assert prefill["layout"]["label"] == label and prefill["layout"]["source"] == "best"
    assert prefill["time_s"] >= prefill["communication_time_s"] > 0
    assert prefill["tok_s"] == pytest.approx(8000 / prefill["time_s"])
    assert servebound.prefill("8x-nvidia-h200-sxm", "deepseek-r1", 8000).to_dict() == prefill
    query = {"hardware": "8x-nvidia-h200-sxm", "model": "deepseek-r1"}
    assert client.get("/api/prefill", params={**query, "prompt": "8k"}).json() == prefill
    cost = cli_json(capsys, "cost", *pair)
    assert cost["layout"]["label"] == label and cost["points"]
    assert servebound.cost("8x-nvidia-h200-sxm", "deepseek-r1").to_dict() == cost
    assert client.get("/api/cost", params=query).json() == cost
    given = cli_json(capsys, "prefill", *pair, "--prompt", "8k", "--layout", "tp=8")
    assert given["layout"]["label"] == "tp=8,ep=1,pp=1,dp=1" and given["layout"]["source"] == "given"
    given_cost = cli_json(capsys, "cost", *pair, "--layout", "tp=8")
    assert given_cost["layout"]["source"] == "given"
    assert client.get("/api/cost", params={**query, "layout": "tp=8"}).json() == given_cost
    assert servebound.cost("8x-nvidia-h200-sxm", "deepseek-r1", layout="tp8").to_dict() == given_cost
    status, _, err = run(capsys, "prefill", *pair, "--prompt", "8k", "--range")
    assert status == 2 and err.startswith("servebound: error: layout:")


def test_the_pruned_search_finds_the_layout_the_full_ranking_puts_first() -> None:
    """best_layout stops evaluating once no bound left can beat a floor fit; it must find what
    search_layouts ranks first, over catalog systems, models and workloads (a fixed sample)."""
    from servebound.core.layout_search import best_layout, search_layouts
    from servebound.inputs.layout import compute_seconds_per_session_step, resolve_system
    from servebound.inputs.scenario import load_hardware, load_model, make_workload

    rng = random.Random(32)
    systems = [h.id for h in servebound.hardware() if h.system is not None]
    models = [m.id for m in servebound.models()]
    checked = 0
    for _ in range(40):
        system, model_id = rng.choice(systems), rng.choice(models)
        resolved, model = resolve_system(system), load_model(model_id)
        for keywords in ({}, {"context": "8k"}, {"floor_tok_s": 60.0}):
            work = make_workload(**keywords).resolve(load_hardware(system), model)
            c = compute_seconds_per_session_step(resolved.system.device, model, work)
            ranked = search_layouts(resolved.system, model, work, compute_s_per_session_step=c)
            found = best_layout(resolved.system, model, work, compute_s_per_session_step=c)
            assert found == (ranked[0] if ranked else None), (system, model_id, keywords)
            checked += found is not None and found.verdict.value == "floor_fit"
    assert checked >= 30
