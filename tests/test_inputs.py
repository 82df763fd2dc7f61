"""The one input record: every workload input declared once, the same names, bounds and answers on the
CLI, the JSON API and the Python API (issue 18's and 19's reproducers, as the issues state them)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from fastapi.testclient import TestClient

from servebound import make_workload
from servebound.cli import main
from servebound.cli.app import app as cli_app
from servebound.errors import InputError
from servebound.inputs.scenario import resolve_scenario
from servebound.inputs.workload import BY_NAME, INPUTS, WorkloadInputs, inputs_of
from servebound.runs.band import with_band

RTX, QWEN = "nvidia-rtx-4090", "qwen3-8b"


@pytest.fixture(scope="module")
def api() -> TestClient:
    from servebound.web.app.server import create_app

    return TestClient(create_app())


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, Any, str]:
    status = main(list(args))
    out, err = capsys.readouterr()
    return status, (json.loads(out) if status == 0 and "--json" in args else out), err


def test_a_shorter_read_context_keeps_the_reservation_within_the_models_limit(
    capsys: pytest.CaptureFixture[str], api: TestClient
) -> None:
    """`decode -H nvidia-rtx-4090 -m qwen3-8b` fits (K_alloc at 40,960 tokens); adding
    `--read-context 1000` reserved 100,000 and read "no session fits". Same on the API."""
    _, plain, _ = cli(capsys, "decode", "-H", RTX, "-m", QWEN, "--json")
    status, short, _ = cli(capsys, "decode", "-H", RTX, "-m", QWEN, "--read-context", "1000", "--json")
    assert status == 0 and plain["verdict"] == short["verdict"] == "floor_fit"
    assert (
        short["assumptions"]["alloc_context_tokens"] == plain["assumptions"]["alloc_context_tokens"] == 40_960
    )
    assert short["assumptions"]["read_context_tokens"] == 1000
    body = api.get("/api/decode", params={"hardware": RTX, "model": QWEN, "read_context": 1000}).json()
    assert body == short


@pytest.mark.parametrize(
    ("query", "field", "words"),
    [
        ({"flor": "5"}, "flor", "did you mean floor"),
        ({"floor": ["5", "6"]}, "floor", "more than once"),
        ({"kv_precision": ""}, "kv_precision", "use one of"),
        ({"batch": "99999999999999999999999"}, "batch", "beyond any real setting"),
        (
            {"draft": "qwen3-0.6b", "draft_tokens": "1000000000", "acceptance": "0.5"},
            "draft_tokens",
            "at most 64",
        ),
    ],
)
def test_the_api_refuses_what_it_does_not_know(
    api: TestClient, query: dict[str, Any], field: str, words: str
) -> None:
    r = api.get("/api/decode", params={"hardware": RTX, "model": QWEN, **query})
    error = r.json()["error"]
    assert r.status_code == 400 and error["field"] == field and words in error["message"]


@pytest.mark.parametrize(
    ("args", "field", "words"),
    [
        (["--batch", "99999999999999999999999"], "batch", "beyond any real setting"),
        (
            ["--draft", "qwen3-0.6b", "--draft-tokens", "1000000000", "--acceptance", "0.5"],
            "draft_tokens",
            "at most 64",
        ),
        (["--kv-precision", ""], "kv_precision", "use one of"),
    ],
)
def test_the_cli_refuses_the_same_values(
    capsys: pytest.CaptureFixture[str], args: list[str], field: str, words: str
) -> None:
    status, _, err = cli(capsys, "decode", "-H", RTX, "-m", QWEN, *args)
    assert status == 2 and f"{field}: " in err and words in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize(
    "flags",
    [
        {"kv_precision": "fp8"},
        {"memory_only": "true", "batch": "256"},
        {"kv_precision": "q8_0", "floor": "5", "expert_traffic": "minimum"},
        {"draft": "qwen3-0.6b", "draft_tokens": "4", "acceptance": "0.7"},
    ],
)
def test_api_decode_honours_every_flag_as_the_cli_does(
    capsys: pytest.CaptureFixture[str], api: TestClient, flags: dict[str, str]
) -> None:
    """kv_precision=fp8 and memory_only=true on /api/decode returned 200 with the BF16 / compute-roof answer."""
    args = [a for k, v in flags.items() for a in (BY_NAME[k].flag, v) if v != "true"]
    args += [BY_NAME[k].flag for k, v in flags.items() if v == "true"]
    _, out, _ = cli(capsys, "decode", "-H", "nvidia-h100-sxm", "-m", QWEN, *args, "--json")
    body = api.get("/api/decode", params={"hardware": "nvidia-h100-sxm", "model": QWEN, **flags}).json()
    assert body == out
    if "kv_precision" in flags:
        assert body["assumptions"]["kv_precision"] == flags["kv_precision"]
    if "memory_only" in flags:
        assert body["assumptions"]["memory_only"] is True


@pytest.mark.parametrize(
    ("command", "path", "extra"),
    [
        ("decode", "/api/decode", {"layout": "tp=2", "batch": "4"}),
        ("prefill", "/api/prefill", {"layout": "tp=2", "prompt": "2000"}),
    ],
)
def test_the_layout_flag_is_the_api_layout_parameter(
    capsys: pytest.CaptureFixture[str], api: TestClient, command: str, path: str, extra: dict[str, str]
) -> None:
    args = [a for k, v in extra.items() for a in (BY_NAME[k].flag, v)]
    status, out, err = cli(capsys, command, "-H", "2x-nvidia-h100-sxm", "-m", QWEN, *args, "--json")
    assert status == 0, err
    body = api.get(path, params={"hardware": "2x-nvidia-h100-sxm", "model": QWEN, **extra}).json()
    assert body == out and body["layout"]["tp"] == 2


def test_rank_all_formats_with_a_model_is_refused_as_the_cli_refuses_it(
    capsys: pytest.CaptureFixture[str], api: TestClient
) -> None:
    status, _, err = cli(capsys, "rank", "-m", QWEN, "--all-formats")
    r = api.get("/api/rank", params={"model": QWEN, "all_formats": "true"})
    assert status == 2 and "all_formats" in err
    assert r.status_code == 400 and r.json()["error"]["field"] == "all_formats"


@pytest.mark.parametrize(
    ("args", "query", "words"),
    [
        (["-m", QWEN, "--class", "gpu"], {"model": QWEN, "hardware_group": "gpu"}, "use one of consumer, "),
        (["-H", RTX, "--class", "apple"], {"hardware": RTX, "hardware_group": "apple"}, "applies to"),
    ],
)
def test_rank_class_filter_is_checked_alike(
    capsys: pytest.CaptureFixture[str], api: TestClient, args: list[str], query: dict[str, str], words: str
) -> None:
    """An unknown class, or a class with --hardware: exit 2 and a 400, each naming the choices or the fix."""
    status, _, err = cli(capsys, "rank", *args)
    r = api.get("/api/rank", params=query)
    assert status == 2 and words in err and "class" in err
    assert r.status_code == 400 and r.json()["error"]["field"] == "hardware_group"
    assert words in r.json()["error"]["message"]


def _cli_flags(command: str) -> set[str]:
    cmd = cli_app.commands[command]
    return {opt for p in cmd.params for opt in p.opts if opt.startswith("--")}


def _api_params(api: TestClient, path: str) -> set[str]:
    spec = api.get("/openapi.json").json()
    return {p["name"] for p in spec["paths"][path]["get"]["parameters"] if p["in"] == "query"}


#: What a command takes that is not a workload input: the pair, the output and the range switch.
NOT_INPUTS_CLI = {"--hardware", "--model", "--json", "--range"}
NOT_INPUTS_API = {"hardware", "model", "range"}


@pytest.mark.parametrize(("command", "path"), [("decode", "/api/decode"), ("prefill", "/api/prefill")])
def test_every_cli_workload_flag_has_its_api_parameter_and_the_reverse(
    api: TestClient, command: str, path: str
) -> None:
    by_flag = {s.flag: s.name for s in INPUTS}
    cli_names = {by_flag[f] for f in _cli_flags(command) - NOT_INPUTS_CLI}
    assert cli_names == _api_params(api, path) - NOT_INPUTS_API


#: What a command's flag and its endpoint's parameter do not share, and why (every other flag of these
#: commands is a parameter of the same name, and every parameter a flag).
CLI_ONLY = {
    "layout": {"top"},  # text output only
    "rank": {"limit", "sort", "per_dollar", "prompt"},  # the text table's rows, order and wait column
}
API_ONLY = {"layout": {"layout"}}  # one layout: the CLI's decode --layout
#: A flag whose parameter has another name: rank's --class is hardware_group= (on the site, class= is
#: the /hardware listing's filter by the catalog's own device class).
RENAMED = {"rank": {"class": "hardware_group"}}


@pytest.mark.parametrize(
    ("command", "path"),
    [("cost", "/api/cost"), ("layout", "/api/layout"), ("rank", "/api/rank"), ("plan", "/api/plan")],
)
def test_every_other_command_shares_its_flags_with_its_endpoint(
    api: TestClient, command: str, path: str
) -> None:
    by_flag = {s.flag: s.name for s in INPUTS}
    cli_names = {by_flag.get(f, f[2:].replace("-", "_")) for f in _cli_flags(command) - NOT_INPUTS_CLI}
    cli_names = {RENAMED.get(command, {}).get(name, name) for name in cli_names}
    api_names = _api_params(api, path) - NOT_INPUTS_API
    assert cli_names - api_names == CLI_ONLY.get(command, set())
    assert api_names - cli_names == API_ONLY.get(command, set())


def test_the_declaration_is_what_every_surface_shows(api: TestClient) -> None:
    """Help, bounds and choices come from the one record: the CLI's help rows, the OpenAPI entries."""
    spec = api.get("/openapi.json").json()
    params = {p["name"]: p for p in spec["paths"]["/api/decode"]["get"]["parameters"]}
    for s in inputs_of("context", "workload", "decode"):
        schema = params[s.name]["schema"]
        assert params[s.name]["description"] == s.description
        if s.maximum is not None:
            assert schema["maximum"] == (s.site_maximum or s.maximum)
        if s.choices:
            assert schema["enum"] == list(s.choices)


def test_make_workload_takes_the_declared_keywords_and_names_the_rest() -> None:
    assert make_workload(floor_tok_s=5).stated.floor_tok_s == make_workload(floor=5).stated.floor_tok_s == 5
    assert make_workload(WorkloadInputs(read_context=1000)).stated.read_context_tokens == 1000
    import inspect

    keywords = list(inspect.signature(make_workload).parameters)[1:]
    assert keywords == [  # the KV precision included: a workload carries it (tests/test_scenario.py)
        s.python for s in INPUTS if s.groups & {"context", "serving", "workload", "roof", "decode"}
    ]
    with pytest.raises(InputError, match="did you mean floor"):
        make_workload(flor=5)
    with pytest.raises(InputError, match="given twice"):
        make_workload(floor=5, floor_tok_s=6)
    with pytest.raises(InputError, match="draft_tokens"):
        make_workload(draft="qwen3-0.6b", draft_tokens=65, acceptance=0.5)


def test_the_resolved_workload_says_where_each_value_came_from() -> None:
    from servebound import load_hardware, load_model

    hw, model = load_hardware(RTX), load_model(QWEN)
    scenario = resolve_scenario(make_workload(read_context=1000), hardware=hw, model=model)
    w, sources = scenario.workload, scenario.sources
    assert (w.alloc_context_tokens, w.read_context_tokens) == (40_960, 1000)
    assert sources["alloc_context"].startswith("default 100,000 capped at the model's context limit")
    assert sources["read_context"] == "given"
    assert sources["overhead"].startswith(("hardware row", "default 8 GB"))
    assert resolve_scenario(w, hardware=hw, model=model).workload == w  # a resolved record stands as it is
    given = resolve_scenario(make_workload(overhead_gb=3, alloc_context=2000), hardware=hw, model=model)
    assert {key: given.sources[key] for key in ("overhead", "alloc_context", "read_context")} == {
        "overhead": "given: 3 GB",
        "alloc_context": "given",
        "read_context": "default 32,000, at most the given L_alloc",
    }


def test_the_core_takes_a_plain_record_and_the_api_resolves_it() -> None:
    """The core computes with the workload as the scenario resolved it, a plain record with concrete
    values (no flag says what is left to fill: the declared workload keeps that); the Python API
    resolves once, so ids, records and keywords give the resolved answer."""
    from servebound import decode, load_hardware, load_model, prefill
    from servebound.core import cost, decode_range
    from servebound.core import decode as core_decode
    from servebound.core import prefill as core_prefill

    hw, model = load_hardware(RTX), load_model(QWEN)
    declared = make_workload(read_context=1000)
    entries = {
        "decode": lambda w: core_decode.decode(hw, model, w),
        "curve": lambda w: core_decode.curve(hw, model, w, [1, 2]),
        "step_curve": lambda w: core_decode.step_curve(hw, model, w, [1, 2]),
        "decode_context_range": lambda w: decode_range.decode_context_range(hw, model, w),
        "context_curve": lambda w: decode_range.context_curve(hw, model, w, [0, 1000]),
        "prefill": lambda w: core_prefill.prefill(hw, model, 1000, workload=w),
        "prefill_curve": lambda w: core_prefill.prefill_curve(hw, model, [1000], workload=w),
        "prefill_range": lambda w: core_prefill.prefill_range(hw, model, workload=w),
        "cost_curve": lambda w: cost.cost_curve(hw, model, w, [1, 2], 1.0),
        "cost.context_curve": lambda w: cost.context_curve(hw, model, w, 1, [1000], 1.0),
    }
    done = declared.resolve(hw, model)
    assert (done.alloc_context_tokens, done.read_context_tokens) == (40_960, 1000)
    assert not hasattr(done, "resolve") and not hasattr(done, "pending")
    for entry in entries.values():
        entry(done)  # resolved once by the scenario: computed as it stands
    assert decode(RTX, QWEN, read_context=1000) == with_band(core_decode.decode(hw, model, done))
    assert decode(hw, model, declared).workload == done
    assert prefill(RTX, QWEN, 1000, read_context=1000) == with_band(
        core_prefill.prefill(hw, model, 1000, workload=done)
    )


def test_the_pages_script_asks_the_api_with_the_names_it_takes(api: TestClient) -> None:
    """pair-data's input lists (what site.js sends) are the API's own parameters: the page's prefill
    call carries the same contexts as its decode call (it lacked read_context, and 400'd below 32k)."""
    from servebound.web.app.query import QUERY_FIELDS, page_inputs

    inputs = page_inputs()
    # (the pair page is one device: it sends no layout=)
    assert set(inputs["decode"]) == _api_params(api, "/api/decode") - NOT_INPUTS_API - {"layout"}
    assert set(inputs["prefill"]) <= _api_params(api, "/api/prefill") and "read_context" in inputs["prefill"]
    assert "batch" not in inputs["prefill"]  # the page's prefill is batch 1; its batch is decode's
    assert [f["name"] for f in inputs["fields"]] == list(QUERY_FIELDS) == inputs["page"]
    assert all(f["kind"] == BY_NAME[f["name"]].kind.__name__ for f in inputs["fields"])
    r = api.get(
        "/api/prefill", params={"hardware": RTX, "model": QWEN, "prompt": 2000, "alloc_context": 16000}
    )
    assert r.status_code == 200 and r.json()["assumptions"]["read_context_tokens"] == 16000


def test_a_page_names_a_misspelt_field_and_ignores_tracking(api: TestClient) -> None:
    page = api.get(f"/pair/{RTX}/{QWEN}", params={"flor": "5", "utm_source": "x"}).text
    assert "Not used: flor (did you mean floor?)" in page and "utm_source" not in page
    assert "Not used" not in api.get(f"/pair/{RTX}/{QWEN}", params={"utm_campaign": "x"}).text


def test_the_pair_form_offers_the_declared_inputs(api: TestClient) -> None:
    """Every field of the pair page's form is a declared input (or the maximize switch), with the
    declaration's bounds; every declared page input has a control there (the engine and the offload
    fields too, issue 22; the KV precision since issue 35)."""
    import re

    from servebound.web.app.query import QUERY_FIELDS

    page = api.get(f"/pair/{RTX}/{QWEN}").text
    start = page.index('<form method="get"')  # the workload's form (the pair picker's comes first)
    form = page[start : page.index("</form>", start)]
    names = set(re.findall(r'name="([a-z_]+)"', form))
    assert names - {"maximize"} <= set(QUERY_FIELDS)
    assert set(QUERY_FIELDS) - names == set()
    for name in ("n_cpu_moe", "gpu_layers"):
        low = re.search(rf'name="{name}" min="([^"]+)"', form)
        assert low is not None and float(low[1]) == BY_NAME[name].minimum, name
    engines = re.search(r'<select name="engine"[^>]*>(.*?)</select>', form, flags=re.S)
    assert engines is not None
    # each engine by its id as the value, its name as people write it as the label
    assert re.findall(r'<option value="([^"]+)"', engines[1]) == list(BY_NAME["engine"].choices)
    gamma = re.search(r'name="draft_tokens" min="([^"]+)" max="([^"]+)"', form)
    assert gamma is not None and (float(gamma[1]), float(gamma[2])) == (
        BY_NAME["draft_tokens"].minimum,
        BY_NAME["draft_tokens"].maximum,
    )
