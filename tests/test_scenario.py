"""The scenario: a question resolved once, every input inside it. Each disagreement the surfaces had
when each resolved its own workload is an explicit test here (the CLI's --json, the Python API's
to_dict(), /api/decode and the pair page's record); the property test over drawn scenarios is in
tests/web/test_one_answer.py."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import fields
from typing import Any

import pytest
from fastapi.testclient import TestClient

import servebound
from servebound.core.workload import Workload
from servebound.errors import InputError
from servebound.inputs.declared import DeclaredWorkload
from servebound.inputs.scenario import make_workload, resolve_scenario
from servebound.inputs.workload import INPUTS, WorkloadInputs
from servebound.web.app.query import parse_workload_query
from servebound.web.app.server import create_app
from servebound.web.pages.site import compute_pair
from tests.conftest import cli_json

#: The issue's pair: Qwen3-8B on an RTX 4090 with a Qwen3-0.6B draft, the cache at fp8.
PAIR = ("nvidia-rtx-4090", "qwen3-8b")
SPECULATION = {"draft": "qwen3-0.6b", "draft_tokens": 4, "acceptance": 0.7}
FLAGS = ["--draft", "qwen3-0.6b", "--draft-tokens", "4", "--acceptance", "0.7"]
KEYS = ("verdict", "kv_alloc_bytes", "kv_read_bytes", "batch_star", "aggregate_tok_s", "single_session_tok_s")


@pytest.fixture(scope="module")
def client() -> Iterator[TestClient]:
    yield TestClient(create_app())


def picked(d: dict[str, Any]) -> dict[str, Any]:
    return {k: d[k] for k in KEYS}


def test_fp8_applies_to_the_target_and_the_draft_alike() -> None:
    """The derivation's capacity gate holds b (K_alloc + K_draft,alloc): at fp8 both caches are one byte
    an element, so K_alloc is the two models' fp8 caches at the capped L_alloc (40,960 tokens)."""
    scenario = resolve_scenario(hardware=PAIR[0], model=PAIR[1], kv_precision="fp8", **SPECULATION)
    assert scenario.model.kv_precision == "fp8" and scenario.draft is not None
    assert scenario.draft.kv_precision == "fp8"
    r = servebound.decode(*PAIR, kv_precision="fp8", **SPECULATION)
    tokens = r.workload.alloc_context_tokens
    target = scenario.model.kv_alloc.bytes_at(tokens)
    draft = scenario.draft.kv_alloc.bytes_at(tokens)
    assert r.kv_alloc_bytes == pytest.approx(target + draft)
    bf16 = servebound.decode(*PAIR, **SPECULATION)
    assert r.kv_alloc_bytes == pytest.approx(bf16.kv_alloc_bytes / 2)  # both halve: 2 B -> 1 B
    assert r.verdict.value == "floor_fit" and r.batch_star == 1
    assert r.kv_alloc_bytes / 1e9 == pytest.approx(5.37, abs=0.01)
    assert r.aggregate_tok_s == pytest.approx(94.4, abs=0.1)


def test_every_surface_answers_the_fp8_draft_alike(
    client: TestClient, capsys: pytest.CaptureFixture[str]
) -> None:
    """The CLI and /api/decode said one session fits at 94 tok/s (5.37 GB); the Python API and the pair
    page said none fits (7.72 GB: the draft's cache left at BF16). Now all four give the first."""
    cli = cli_json(capsys, "decode", "-H", PAIR[0], "-m", PAIR[1], "--kv-precision", "fp8", *FLAGS)
    api = servebound.decode(*PAIR, kv_precision="fp8", **SPECULATION).to_dict()
    query = "kv_precision=fp8&draft=qwen3-0.6b&draft_tokens=4&acceptance=0.7"
    web = client.get(f"/api/decode?hardware={PAIR[0]}&model={PAIR[1]}&{query}").json()
    assert picked(api) == picked(cli) == picked(web)
    assert api == cli == web
    page = client.get(f"/pair/{PAIR[0]}/{PAIR[1]}?{query}").text
    verdict = re.search(r'<p class="verdict v ([a-z_]+)"', page)
    assert verdict is not None and verdict.group(1) == cli["verdict"] == "floor_fit"
    site = client.app.state.site  # type: ignore[attr-defined]
    query = parse_workload_query(
        {"kv_precision": "fp8", "draft": "qwen3-0.6b", "draft_tokens": "4", "acceptance": "0.7"}
    )
    hw, model, draft = (
        site.hardware_by_id[PAIR[0]],
        site.models_by_id[PAIR[1]],
        site.models_by_id["qwen3-0.6b"],
    )
    record = compute_pair(hw, model, query, with_range=False, draft=draft)
    assert record.decode == cli


def test_make_workload_carries_the_kv_precision() -> None:
    """``make_workload(WorkloadInputs(kv_precision="fp8"))``, as the README documents it, answers at
    fp8 (it answered at BF16: the precision never entered the workload)."""
    work = make_workload(WorkloadInputs(kv_precision="fp8"))
    assert work.stated.kv_precision == "fp8"
    assert servebound.make_workload(kv_precision="fp8") == work
    at_fp8 = servebound.decode(*PAIR, work)
    assert at_fp8.to_dict() == servebound.decode(*PAIR, kv_precision="fp8").to_dict()
    assert at_fp8.kv_alloc_bytes == pytest.approx(servebound.decode(*PAIR).kv_alloc_bytes / 2)
    assert at_fp8.model.kv_precision == "fp8"


def test_a_workload_and_a_keyword_precision_must_agree() -> None:
    work = make_workload(kv_precision="fp8")
    assert (
        servebound.decode(*PAIR, work, kv_precision="fp8").to_dict()
        == servebound.decode(*PAIR, work).to_dict()
    )
    with pytest.raises(InputError, match="kv_precision"):
        servebound.decode(*PAIR, work, kv_precision="q4_0")


def test_a_built_workloads_draft_takes_the_precision() -> None:
    """A draft given as a record is re-expressed at the workload's precision, as one given by id."""
    draft = servebound.load_model("qwen3-0.6b")
    by_record = make_workload(kv_precision="fp8", draft=draft, draft_tokens=4, acceptance=0.7)
    by_id = make_workload(kv_precision="fp8", **SPECULATION)
    assert (
        by_record.stated.speculation is not None and by_record.stated.speculation.draft.kv_precision == "fp8"
    )
    assert servebound.decode(*PAIR, by_record).to_dict() == servebound.decode(*PAIR, by_id).to_dict()


def test_the_scenario_keeps_every_declared_input() -> None:
    """A declared workload (``make_workload``) leaves out the prefill and layout inputs (they are their questions'
    arguments); the scenario keeps all 30 (--context among them), and the workload holds the KV precision."""
    given = WorkloadInputs(
        kv_precision="fp8",
        prompt=2048,
        chunk=512,
        linear_mode="bf16",
        attention_mode="bf16",
        ttft_budget=2.0,
        layout="tp=1",
        read_context=4096,
        engine="vllm",
    )
    scenario = resolve_scenario(given, hardware=PAIR[0], model=PAIR[1])
    assert scenario.inputs == given
    assert {f.name for f in fields(WorkloadInputs)} == {s.name for s in INPUTS} and len(INPUTS) == 30
    assert scenario.workload.kv_precision == "fp8" and scenario.model.kv_precision == "fp8"
    assert scenario.sources["kv_precision"].startswith("given: fp8")
    assert isinstance(scenario.workload, Workload) and isinstance(scenario.declared, DeclaredWorkload)
    assert scenario.declared.read_context_given and scenario.declared.overhead_from_hardware


def test_keywords_join_the_declared_inputs() -> None:
    scenario = resolve_scenario(
        WorkloadInputs(read_context=4096), hardware=PAIR[0], model=PAIR[1], floor_tok_s=30
    )
    assert scenario.inputs == WorkloadInputs(read_context=4096, floor=30)
    assert scenario.workload.floor_tok_s == 30


def test_an_unknown_precision_names_the_field() -> None:
    with pytest.raises(InputError, match="kv_precision"):
        resolve_scenario(hardware=PAIR[0], model=PAIR[1], kv_precision="fp7")


def test_an_alias_system_is_the_catalogs_with_its_link(capsys: pytest.CaptureFixture[str]) -> None:
    """``8x-h200`` printed the id ``8x-nvidia-h200-sxm`` but stood for an ideal-link system; it is now
    the catalog's row, NVLink and price included, on every question."""
    from servebound.inputs.layout import resolve_system

    alias, listed = resolve_system("8x-h200"), resolve_system("8x-nvidia-h200-sxm")
    assert alias == listed and not alias.system.interconnect.ideal
    assert "NVLink" in alias.system.interconnect.scale_up_link
    args = ["-m", "llama-3.1-8b", "--json"]
    assert cli_json(capsys, "layout", "-H", "8x-h200", *args[:-1]) == cli_json(
        capsys, "layout", "-H", "8x-nvidia-h200-sxm", *args[:-1]
    )
    assert cli_json(capsys, "decode", "-H", "8x-h200", *args[:-1]) == cli_json(
        capsys, "decode", "-H", "8x-nvidia-h200-sxm", *args[:-1]
    )


@pytest.mark.parametrize("precision", ["fp8", "q4_0", "f16"])
def test_prefill_and_cost_take_the_precision_alike(
    client: TestClient, capsys: pytest.CaptureFixture[str], precision: str
) -> None:
    """prefill and cost resolve the same scenario: the CLI, the Python API and the JSON API agree."""
    pair = ["-H", PAIR[0], "-m", PAIR[1], "--kv-precision", precision]
    cli = cli_json(capsys, "prefill", *pair, "--prompt", "8k")
    assert servebound.prefill(*PAIR, 8000, kv_precision=precision).to_dict() == cli
    query = {"hardware": PAIR[0], "model": PAIR[1], "kv_precision": precision}
    assert client.get("/api/prefill", params={**query, "prompt": "8,000"}).json() == cli
    cost = cli_json(capsys, "cost", *pair)
    assert servebound.cost(*PAIR, kv_precision=precision).to_dict() == cost
    assert client.get("/api/cost", params=query).json() == cost
    assert cost["assumptions"]["kv_precision"] == cli["assumptions"]["kv_precision"]


def test_a_system_answers_at_its_best_layout() -> None:
    """decode on a system said 3,165 tok/s where layout finds none above 1,905: a system answers at the
    layout `layout` ranks first (or the one given) and says which."""
    search = servebound.layout("8x-nvidia-h200-sxm", "deepseek-r1")
    best = search.layouts[0]
    answer = servebound.decode("8x-nvidia-h200-sxm", "deepseek-r1").to_dict()
    assert answer["aggregate_tok_s"] == pytest.approx(best.aggregate_tok_s)
    assert answer["layout"]["label"] == best.layout.label
