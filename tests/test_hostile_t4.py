"""Issue 33's reproducers (``../shared/hostile-t4/``, its README maps each to its command), one case
each, stated as the README states them: every one now answers with one line naming the field and the fix
(exit 2 on the CLI, a 4xx JSON body on the API, InputError in Python), or with an answer that says what
it did with the odd input. The files are read from ``../shared/hostile-t4`` beside the checkout; the tests
that need one skip when that folder is absent."""

from __future__ import annotations

import math
import os
import shlex
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

import servebound as sb
from servebound.core.hardware import Hardware
from servebound.errors import InputError
from tests.conftest import one_line_error, run_json
from tests.conftest import run_cli as run

ROOT = Path(__file__).resolve().parents[1]
H = ROOT.parent / "shared" / "hostile-t4"
needs_files = pytest.mark.skipif(not H.is_dir(), reason="../shared/hostile-t4 is not beside this checkout")
PLAN = "plan -H 8x-nvidia-h100-sxm -m llama-3.1-70b --prompt 2000 --output-tokens 500"
HOSTED = "decode -H nvidia-rtx-4090 -m qwen3-30b-a3b-q4_k_m --cpu-moe --host desktop-ddr5-6000-2ch"
DRAFTED = ("--draft-tokens", "4", "--acceptance", "0.7")


def check_file(hw: str, model: str, name: str) -> tuple[str, ...]:
    """``check`` of one of the reproducer files on a pair."""
    return ("check", "-H", hw, "-m", model, "--file", str(H / name))


def refused(capsys: pytest.CaptureFixture[str], *args: str, field: str) -> str:
    """The command exits 2 with one line naming ``field``, no traceback."""
    err = one_line_error(capsys, *args)
    assert err.startswith(f"servebound: error: {field}"), err
    return err


def answered(capsys: pytest.CaptureFixture[str], *args: str, status: int = 0) -> str:
    code, out, err = run(capsys, *args)
    assert code == status, err
    return out


def raises(field: str, call: Any) -> str:
    with pytest.raises(InputError) as caught:
        call()
    assert caught.value.field.startswith(field), caught.value
    return str(caught.value)


@pytest.fixture(scope="module")
def client() -> TestClient:
    from servebound.web.app.server import create_app

    return TestClient(create_app(base_url="http://testserver"))


# Refused with one line -------------------------------------------------------------------------------

#: Each reproducer the CLI now refuses: the command, the field its one line names and words it holds.
#: Every one was a traceback or was accepted without a word; the comments say what it did.
REFUSALS: dict[str, tuple[str, str, tuple[str, ...]]] = {
    # Was: ValueError: cannot convert float NaN to integer (core/workload.py memory_fit_batch).
    "plan_overhead_nan": (f"{PLAN} --users 50 --overhead-gb nan", "overhead_gb", ()),
    # Was: accepted, printing 'budget nan s MISSED' and '$inf/device-hour'.
    "plan_overhead_-1": (f"{PLAN} --users 50 --overhead-gb -1", "overhead_gb", ()),
    "plan_overhead_-inf": (f"{PLAN} --users 50 --overhead-gb -inf", "overhead_gb", ()),
    "plan_ttft_-1": (f"{PLAN} --users 50 --ttft-budget -1", "ttft_budget_s", ()),
    "plan_ttft_nan": (f"{PLAN} --users 50 --ttft-budget nan", "ttft_budget_s", ()),
    "plan_ttft_inf": (f"{PLAN} --users 50 --ttft-budget inf", "ttft_budget_s", ()),
    "plan_ttft_-inf": (f"{PLAN} --users 50 --ttft-budget -inf", "ttft_budget_s", ()),
    "plan_ttft_1e999": (f"{PLAN} --users 50 --ttft-budget 1e999", "ttft_budget_s", ()),
    "plan_usd_inf": (f"{PLAN} --users 50 --usd-per-hour inf", "usd_per_device_hour", ()),
    "plan_usd_1e999": (f"{PLAN} --users 50 --usd-per-hour 1e999", "usd_per_device_hour", ()),
    "plan_usd_1e308": (f"{PLAN} --users 50 --usd-per-hour 1e308", "usd_per_device_hour", ()),
    "plan_usd_1e23": (f"{PLAN} --users 50 --usd-per-hour 99999999999999999999999", "usd_per_device_hour", ()),
    # Was: absurd accepted (a fleet for 1e-300 users).
    "plan_users_1e-300": (f"{PLAN} --users 1e-300", "users", ()),
    "plan_requests_1e-300": (f"{PLAN} --requests-per-s 1e-300", "requests_per_s", ()),
    # Was: numpy ArrayMemoryError (888 PiB array).
    "measure_array_mb_1e12": ("measure --quick --array-mb 1e12", "array_mb", ("10,000,000",)),
    # Was: the whole site built into the current folder.
    "build_site_empty_dir": ('build-site ""', "out_dir", ()),
    # Was: the last repeated flag won silently (the JSON API refuses repeats).
    "repeated_batch": ("decode -H nvidia-rtx-4090 -m qwen3-8b --batch 4 --batch 8", "", ("more than once",)),
    "repeated_hardware": ("decode -H nvidia-rtx-4090 -H h100 -m qwen3-8b", "", ("more than once",)),
    # Was: read as batch 55. A comma may only separate thousands.
    "batch_5_comma_5": ("decode -H nvidia-rtx-4090 -m qwen3-8b --batch 5,5", "batch", ("5,5 is not 55",)),
    # Was: the conflicting flag ignored or overriding without a word; now both are named.
    "cost_rental_purchase": (
        "cost -H nvidia-rtx-4090 -m qwen3-8b --pricing rental --purchase-usd 5",
        "",
        ("--pricing rental", "--purchase-usd"),
    ),
    "cost_owned_usd_per_hour": (
        "cost -H nvidia-rtx-4090 -m qwen3-8b --pricing owned --usd-per-hour 3",
        "",
        ("--usd-per-hour", "--pricing owned"),
    ),
    # Was: absurd accepted.
    "cost_usd_1e-300": ("cost -H nvidia-rtx-4090 -m qwen3-8b --usd-per-hour 1e-300", "usd_per_hour", ()),
    "cost_purchase_1e-300": (
        "cost -H nvidia-rtx-4090 -m qwen3-8b --pricing owned --purchase-usd 1e-300",
        "purchase_usd",
        (),
    ),
    # Was: an empty value accepted as the default.
    "rank_sort_empty": ('rank -m qwen3-8b --sort ""', "sort", ()),
    # Was: an infinite size accepted.
    "models_list_min_size_1e999": ("models list --min-size 1e999B", "min_size", ()),
    # Was: 5 TB/s of host RAM accepted.
    "host_ram_5_tb_per_s": (
        "decode -H nvidia-rtx-4090 -m qwen3-30b-a3b-q4_k_m --cpu-moe --host-memory-gb 128"
        " --host-bandwidth-gb-per-s 5000",
        "host_bandwidth_gb_per_s",
        (),
    ),
    # Was: absurd accepted.
    "host_memory_1e-300": (f"{HOSTED} --host-memory-gb 1e-300", "host_memory_gb", ()),
    "host_link_1e-300": (f"{HOSTED} --host-link-gb-per-s 1e-300", "host_link_gb_per_s", ()),
    "host_tflops_1e-300": (f"{HOSTED} --host-tflops 1e-300", "host_tflops", ()),
    # Was: 200 % efficiency accepted.
    "economics_rl_efficiency_2": (
        "economics training --traffic-tok-s 1e6 --life-days 100 --active-params 1e9 --rl-efficiency 2",
        "rl_efficiency",
        (),
    ),
}


@pytest.mark.parametrize(("command", "field", "words"), list(REFUSALS.values()), ids=list(REFUSALS))
def test_refused_on_the_cli(
    capsys: pytest.CaptureFixture[str], command: str, field: str, words: tuple[str, ...]
) -> None:
    err = refused(capsys, *shlex.split(command), field=field)
    assert all(word in err for word in words), err


#: Each reproducer the JSON API now refuses (400, the field named); each was accepted.
API_REFUSALS = {
    "plan_usd_1e308": (
        "/api/plan?hardware=8x-nvidia-h100-sxm&model=llama-3.1-70b&prompt=2000&output_tokens=500&users=50"
        "&usd_per_hour=1e308",
        "usd_per_hour",
    ),
    "host_memory_1e-300": (
        "/api/decode?hardware=nvidia-rtx-4090&model=qwen3-30b-a3b-q4_k_m&cpu_moe=true"
        "&host=desktop-ddr5-6000-2ch&host_memory_gb=1e-300",
        "host_memory_gb",
    ),
    "cost_power_1e-300": (
        "/api/cost?hardware=nvidia-rtx-4090&model=qwen3-8b&pricing=owned&power_w=1e-300",
        "power_w",
    ),
    "cost_kwh_1e-300": (
        "/api/cost?hardware=nvidia-rtx-4090&model=qwen3-8b&pricing=owned&usd_per_kwh=1e-300",
        "usd_per_kwh",
    ),
    "cost_usd_1e-300": (
        "/api/cost?hardware=nvidia-rtx-4090&model=qwen3-8b&usd_per_hour=1e-300",
        "usd_per_hour",
    ),
}


@pytest.mark.parametrize(("path", "field"), list(API_REFUSALS.values()), ids=list(API_REFUSALS))
def test_refused_on_the_api(client: TestClient, path: str, field: str) -> None:
    r = client.get(path)
    assert r.status_code == 400 and r.json()["error"]["field"] == field


def py_plan(**keywords: float) -> object:
    return sb.plan(
        "8x-nvidia-h100-sxm", "llama-3.1-70b", prompt_tokens=2000, output_tokens=500, users=50, **keywords
    )


#: Each reproducer Python now refuses with an InputError naming the field; each was accepted (the CLI
#: and the API refused an empty KV precision).
PYTHON_REFUSALS: dict[str, tuple[str, Callable[[], object]]] = {
    "plan_ttft_nan": ("ttft_budget_s", lambda: py_plan(ttft_budget_s=math.nan)),
    "plan_ttft_-1": ("ttft_budget_s", lambda: py_plan(ttft_budget_s=-1.0)),
    "plan_usd_inf": ("usd_per_device_hour", lambda: py_plan(usd_per_device_hour=math.inf)),
    "decode_empty_kv_precision": (
        "kv_precision",
        lambda: sb.decode("nvidia-rtx-4090", "qwen3-8b", kv_precision=""),
    ),
    "cost_batches_1e30": ("batches", lambda: sb.cost("nvidia-rtx-4090", "qwen3-8b", batches=[10**30])),
}


@pytest.mark.parametrize(("field", "call"), list(PYTHON_REFUSALS.values()), ids=list(PYTHON_REFUSALS))
def test_refused_in_python(field: str, call: Callable[[], object]) -> None:
    raises(field, call)


# Tracebacks -------------------------------------------------------------------------------------------


def test_measure_array_larger_than_free_memory(capsys: pytest.CaptureFixture[str]) -> None:
    """An array within the bound that this machine cannot hold three of is refused before allocating."""
    import psutil

    too_big = psutil.virtual_memory().available / 1e6  # MB: three of them cannot fit
    assert "available" in refused(
        capsys, "measure", "--quick", "--array-mb", f"{too_big:.0f}", field="array_mb"
    )


# python_api.py ----------------------------------------------------------------------------------------


def test_python_rank_models_with_ids() -> None:
    """Was: AttributeError; ids and records are both accepted (issue 34's direction)."""
    rows = sb.rank_models("nvidia-rtx-4090", ["qwen3-8b", "qwen3-0.6b"])
    assert {r.model.id for r in rows} == {"qwen3-8b", "qwen3-0.6b"}
    assert sb.rank_models("nvidia-rtx-4090", []) == []
    raises("model", lambda: sb.rank_models("nvidia-rtx-4090", ["no-such-model"]))


def test_python_rank_hardware_with_an_id() -> None:
    """Was: [] silently for an unknown model; an id is resolved (and an unknown one named)."""
    rows = sb.rank_hardware("qwen3-8b", ["nvidia-rtx-4090", "nvidia-h100-sxm"])
    assert {r.hardware.id for r in rows} == {"nvidia-rtx-4090", "nvidia-h100-sxm"}
    raises("model", lambda: sb.rank_hardware("no-such-model", []))


def test_python_check_run_with_a_string() -> None:
    """Was: AttributeError 'str' object has no attribute 'kv_precision'."""
    assert "make_run" in raises("run", lambda: sb.check_run("nvidia-rtx-4090", "qwen3-8b", "garbage"))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        (
            {"memory_bytes": 1e30, "bandwidth_bytes_per_s": 1e12, "compute_flop_per_s": {}},
            "hardware.memory_bytes",
        ),
        (
            {"memory_bytes": 1e11, "bandwidth_bytes_per_s": 1e12, "compute_flop_per_s": {"fp3": 1e15}},
            "hardware.compute_flop_per_s.fp3",
        ),
        (
            {"memory_bytes": 1e11, "bandwidth_bytes_per_s": 1e12, "runtime_overhead_bytes": 5e11},
            "hardware.runtime_overhead_bytes",
        ),
    ],
)
def test_python_hardware_records(fields: dict[str, Any], field: str) -> None:
    """Was: 1e30 B accepted, mode fp3 dropped silently, overhead above memory accepted."""
    raises(field, lambda: Hardware(id="x", name="x", **fields))


@needs_files
def test_python_api_script_runs_clean() -> None:
    """The reproducer script itself: no line reports an AttributeError or an accepted absurd value."""
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    done = subprocess.run(
        [sys.executable, str(H / "python_api.py")],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=True,
    )
    assert "AttributeError" not in done.stdout and "Traceback" not in done.stderr
    lines = done.stdout.splitlines()
    assert all("InputError" in line for line in lines[3:]), lines


# Hangs ------------------------------------------------------------------------------------------------


def test_import_to_a_fifo(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """Was: blocked writing to a FIFO with no reader."""
    fifo = tmp_path / "f.toml"
    os.mkfifo(fifo)
    refused(capsys, "import", "hf", "Qwen/Qwen3-8B", "-o", str(fifo), field="output")


@needs_files
def test_llama_bench_60k_records_summarized(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """Was: 17.5 s and 200,000 lines; now the first checks and a summary of the rest."""
    big = tmp_path / "lb60k.json"
    subprocess.run(
        [
            sys.executable,
            str(H / "gen_llama_bench_60k.py"),
            str(ROOT / "tests/data/results/llama-bench-rtx4090.json"),
            str(big),
        ],
        check=True,
        timeout=120,
    )
    out = answered(capsys, "check", "-H", "nvidia-rtx-4090", "-m", "llama-2-7b-q4_0", "--file", str(big))
    assert out.count("\n") < 200 and "more records (not printed; --json lists every one)" in out


# Silent contradictions --------------------------------------------------------------------------------


def test_cpu_moe_host_too_small(capsys: pytest.CaptureFixture[str]) -> None:
    """Was: floor_fit though the host share (17.73 GB) does not fit 2 GB of host RAM."""
    command = "decode -H nvidia-rtx-4090 -m qwen3-30b-a3b-q4_k_m --cpu-moe --host-memory-gb 2"
    data = run_json(capsys, *shlex.split(command), "--host-bandwidth-gb-per-s", "50", "--json")
    assert data["verdict"] == "no_resident_fit" and data["offload"]["host_fits"] is False
    assert any("does not fit in host RAM" in n for n in data["notes"])


def test_batch_1_comma_000(capsys: pytest.CaptureFixture[str]) -> None:
    """Was: read as batch 55; 5,5 is refused above, and a comma that separates thousands is read."""
    data = run_json(capsys, *shlex.split("decode -H nvidia-rtx-4090 -m qwen3-8b --batch 1,000 --json"))
    assert data["assumptions"]["forced_batch"] == 1000


def test_cost_batches_that_do_not_fit(capsys: pytest.CaptureFixture[str]) -> None:
    """Was: batches 4 and 1e9 priced (b_mem = 1) with no does-not-fit mark."""
    args = shlex.split("cost -H nvidia-rtx-4090 -m qwen3-8b --batches 1,4,1000000000")
    data = run_json(capsys, *args, "--json")
    assert [p["fits_in_memory"] for p in data["points"]] == [True, False, False]
    assert answered(capsys, *args).count("(does not fit)") == 2


@pytest.mark.parametrize("revision", ["deadbeef", "../../etc"])
def test_import_hf_revision_not_ignored(
    capsys: pytest.CaptureFixture[str], revision: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Was: the revision ignored (the catalog copy used). The catalog copy is of one revision: another is
    fetched from the Hub (offline here: refused, naming the revision), and a path is no revision."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    err = refused(capsys, "import", "hf", "Qwen/Qwen3-8B", "--revision", revision, field="")
    assert revision in err


# File values ------------------------------------------------------------------------------------------


@needs_files
@pytest.mark.parametrize("command", ["decode", "prefill", "rank", "cost"])
def test_hardware_overhead_above_memory(capsys: pytest.CaptureFixture[str], command: str) -> None:
    """Was: runtime_overhead_gb 500 over memory_gb 128 accepted."""
    hw = str(H / "hw_overhead_gt_mem.toml")
    extra = ("--prompt", "1000") if command == "prefill" else ()
    args = (command, "-H", hw) if command == "rank" else (command, "-H", hw, "-m", "qwen3-8b", *extra)
    assert "runtime_overhead_gb" in refused(capsys, *args, field="hardware")


@needs_files
def test_hardware_name_with_a_newline(capsys: pytest.CaptureFixture[str]) -> None:
    """Was: LF printed raw (CR escaped), so a name could forge output lines."""
    out = answered(capsys, "decode", "-H", str(H / "hw_name_newline.toml"), "-m", "qwen3-8b")
    assert out.splitlines()[0].startswith("Qwen3-8B (BF16) on a\\x0ab\\x0dc")


@needs_files
@pytest.mark.parametrize(
    ("name", "words"),
    [
        ("md_kv_zero.toml", "0 bytes per token"),
        ("md_experts_1e12.toml", "100000"),
        ("md_linear_params_gt_total.toml", "linear_active_params"),
    ],
)
@pytest.mark.parametrize("how", ["decode", "prefill", "draft"])
def test_model_file_values(capsys: pytest.CaptureFixture[str], name: str, words: str, how: str) -> None:
    """Was: 0 B/token KV (b_mem at the 1e9 cap), 1e12 experts, linear params above total accepted."""
    model = str(H / name)
    args = {
        "decode": ("decode", "-H", "nvidia-dgx-spark", "-m", model),
        "prefill": ("prefill", "-H", "nvidia-dgx-spark", "-m", model, "--prompt", "1000"),
        "draft": ("decode", "-H", "nvidia-dgx-spark", "-m", "qwen3-8b", "--draft", model, *DRAFTED),
    }[how]
    assert words in refused(capsys, *args, field="")


@needs_files
@pytest.mark.parametrize("command", ["decode", "import"])
def test_gguf_context_length_0(capsys: pytest.CaptureFixture[str], command: str) -> None:
    """Was: context 0 accepted: reserved 0 tokens, b_mem 1e9, 2.2e9 tok/s."""
    gguf = str(H / "gguf_context_length_0.gguf")
    args = (
        ("import", "gguf", gguf) if command == "import" else ("decode", "-H", "nvidia-rtx-4090", "-m", gguf)
    )
    refused(capsys, *args, field="model.context_limit")


# Result files -----------------------------------------------------------------------------------------


@needs_files
@pytest.mark.parametrize(
    ("name", "shown"), [("ollama_eval_rate_negative.txt", "-144.43"), ("ollama_eval_rate_nan.txt", "nan")]
)
def test_ollama_bad_rate_named_as_skipped(capsys: pytest.CaptureFixture[str], name: str, shown: str) -> None:
    """Was: the decode record dropped without a word (only the prompt checked)."""
    data = run_json(capsys, *check_file("nvidia-rtx-4090", "llama-3.1-8b", name), "--json")
    assert len(data["checks"]) == 1
    assert any(f"a rate of {shown} tokens/s" in w and "skipped" in w for w in data["checks"][0]["warnings"])


@needs_files
def test_ollama_rate_1e300_read_as_written(capsys: pytest.CaptureFixture[str]) -> None:
    """Was: 'eval rate: 1e300 tokens/s' read as 1.00 tok/s (1.5 % efficiency)."""
    code, out, _ = run(capsys, *check_file("nvidia-rtx-4090", "llama-3.1-8b", "ollama_eval_rate_1e300.txt"))
    assert code == 3 and "measured 1e+300 tok/s" in out and "ABOVE THE CEILING" in out


@needs_files
def test_mlx_generation_0_tokens_named(capsys: pytest.CaptureFixture[str]) -> None:
    """Was: the generation record dropped without a word."""
    out = answered(capsys, *check_file("apple-m3-max-128gb", "llama-3.1-8b", "mlx_generation_0_tokens.txt"))
    assert "generation: 0 tokens is not a token count" in out and "skipped" in out


@needs_files
def test_sglang_input_len_1e12(capsys: pytest.CaptureFixture[str]) -> None:
    """Was: 1e12-token prompts accepted."""
    args = check_file("nvidia-h100-sxm", "llama-3.1-8b", "sglang_input_len_1e12.jsonl")
    assert "random_input_len" in refused(capsys, *args, field="")


# Absurd values ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("draft", "words"),
    [
        ("llama-3.1-405b", "drafting costs more"),
        ("qwen3-8b", "the target itself"),
        ("gemma-3-1b-it", "vocabulary"),
    ],
)
def test_draft_models_noted(capsys: pytest.CaptureFixture[str], draft: str, words: str) -> None:
    """Was: a draft 50x the target, the target itself or another tokenizer family accepted without a note."""
    data = run_json(
        capsys, "decode", "-H", "nvidia-rtx-4090", "-m", "qwen3-8b", "--draft", draft, *DRAFTED, "--json"
    )
    assert any(words in n for n in data["notes"]), data["notes"]


def test_offload_from_unified_memory_noted(capsys: pytest.CaptureFixture[str]) -> None:
    """Was: offload from unified memory to desktop DDR5 accepted without a word."""
    command = "decode -H m4-max-128gb -m qwen3-30b-a3b-q4_k_m --cpu-moe --host desktop-ddr5-6000-2ch --json"
    data = run_json(capsys, *shlex.split(command))
    assert any("memory is unified" in n for n in data["notes"])


# The web ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "path", ["/hardware/", "/api/hardware/", "/api/models/", "/pair/nvidia-rtx-4090/qwen3-8b/"]
)
def test_redirects_name_no_host(client: TestClient, path: str) -> None:
    """Was: 307 Location: http://evil.example/... (the request's Host in an absolute URL)."""
    r = client.get(path, headers={"Host": "evil.example"}, follow_redirects=False)
    assert r.status_code in (301, 307, 308) and "evil" not in r.headers["location"]
    assert r.headers["location"].startswith("/")


@pytest.mark.parametrize(
    ("path", "named"),
    [
        ("/derivation?weights=1e9", "weights"),
        ("/economics?x=1", "x"),
        ("/hardware/8x-nvidia-h100-sxm?model=deepseek-v3&layout=tp=0", "layout"),
    ],
)
def test_pages_name_unknown_parameters(client: TestClient, path: str, named: str) -> None:
    """Was: unknown or invalid parameters ignored without a word."""
    r = client.get(path)
    assert r.status_code == 400 and named in r.text


def test_pair_mirror_empty_kv_precision(client: TestClient) -> None:
    """Was: an empty kv_precision accepted on the mirror (the API answers 400) without a word. The pair
    page now has a cache-precision control whose blank choice is "the model's own cache" (a form's
    blank is its default, as for every control of the page's form), so the blank answers the default
    page itself, word for word; the JSON API, which has no form, still refuses it."""
    path = "/pair/nvidia-rtx-4090/qwen3-30b-a3b-q4_k_m.md"
    r = client.get(path + "?kv_precision=")
    assert r.status_code == 200 and r.text == client.get(path).text
    api = client.get("/api/decode?hardware=nvidia-rtx-4090&model=qwen3-30b-a3b-q4_k_m&kv_precision=")
    assert api.status_code == 400 and api.json()["error"]["field"] == "kv_precision"
