"""Issue 14's reproducers on the command line, each through the real entry point: no traceback, no
silent wrong answer, one line on stderr naming the field and the fix, exit status 2."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from gguf import GGUFWriter

from tests.conftest import one_line_error, servebound_process
from tests.conftest import run_cli as run

ROOT = Path(__file__).resolve().parents[1]
HW = str(ROOT / "examples" / "dgx-spark.toml")
MODEL = str(ROOT / "examples" / "qwen3.6-35b-a3b-nvfp4.toml")


# Values beyond any machine ----------------------------------------------------------------------------


def test_tiny_bytes_per_param_is_an_error_not_a_division_by_zero(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    model = tmp_path / "tiny.toml"
    model.write_text(
        'name = "tiny"\n[weights]\nbytes_per_param = 1e-300\ntotal_params = 1e9\n'
        "[kv.alloc]\nglobal_bytes_per_token = 1e-300\n"
    )
    err = one_line_error(capsys, "decode", "-H", HW, "-m", str(model))
    assert "model.weights.bytes_per_param: 1e-300 is below any real bytes per parameter" in err
    model.write_text(
        'name = "tiny"\n[weights]\nbytes_per_param = 0.5\ntotal_params = 1e9\n'
        "[kv.alloc]\nglobal_bytes_per_token = 1e-300\n"
    )
    err = one_line_error(capsys, "decode", "-H", HW, "-m", str(model))
    assert "model.kv.alloc.global_bytes_per_token: 1e-300 is below any real bytes per token" in err


@pytest.mark.parametrize("memory_gb", ["1e308", "1e30"])
def test_memory_beyond_any_machine_is_an_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], memory_gb: str
) -> None:
    hardware = tmp_path / "big.toml"
    hardware.write_text(f'name = "big"\nmemory_gb = {memory_gb}\nbandwidth_gb_per_s = 1000\n')
    err = one_line_error(
        capsys, "prefill", "-H", str(hardware), "-m", "llama-3.1-8b", "--prompt", "100", "--range"
    )
    assert "hardware.memory_gb" in err and "beyond any real memory size in GB" in err


# Ids and paths ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("ref", ["a" * 100_000, "a" * 300, "a/" * 600, "x" * 300 + ".toml"])
def test_long_ids_fail_cleanly(capsys: pytest.CaptureFixture[str], ref: str) -> None:
    """100 kB used to be an OSError (file name too long); the length is checked before any lookup."""
    err = one_line_error(capsys, "decode", "-H", ref, "-m", "llama-3.1-8b")
    assert err.startswith("servebound: error: hardware: ")
    assert len(err) < 2_000  # the id is not echoed back whole
    err = one_line_error(capsys, "decode", "-H", HW, "-m", ref)
    assert err.startswith("servebound: error: model: ")


def test_measure_output_folder_is_checked_before_measuring(capsys: pytest.CaptureFixture[str]) -> None:
    err = one_line_error(capsys, "measure", "--quick", "--output", "/nonexistent-dir/x.toml")
    assert "output: folder /nonexistent-dir does not exist" in err


def test_import_output_suffix_is_a_format_it_writes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--output x.yaml` wrote TOML into a .yaml file."""
    err = one_line_error(
        capsys, "import", "gguf", str(tmp_path / "m.gguf"), "--output", str(tmp_path / "x.yaml")
    )
    assert "name the file .toml or .json" in err
    assert not (tmp_path / "x.yaml").exists()


# rank: errors or done as asked ------------------------------------------------------------------------


def test_rank_prompt_beyond_the_allocation_is_an_error(capsys: pytest.CaptureFixture[str]) -> None:
    err = one_line_error(capsys, "rank", "-H", "nvidia-h100-sxm", "--prompt", "200k")
    assert "prompt: 200,000 tokens is more than the 100,000 tokens" in err and "--alloc-context" in err
    err = one_line_error(capsys, "rank", "-H", "nvidia-h100-sxm", "--prompt", "99999999999")
    assert "prompt: 99,999,999,999 is beyond any real setting" in err  # the token inputs' own bound


def test_rank_prompt_beyond_a_models_context_shows_no_wait(capsys: pytest.CaptureFixture[str]) -> None:
    """SmolLM2's context is 8,192: a 9,000-token prompt is not shortened to fit; its wait is absent."""
    status, out, _ = run(capsys, "rank", "-H", "nvidia-h100-sxm", "--prompt", "9000", "--json")
    rows = {r["model"]["id"]: r for r in json.loads(out)["rows"]}
    assert status == 0
    assert rows["smollm2-135m"]["ttft_s"] is None and rows["smollm2-135m"]["prefill_prompt_tokens"] is None
    assert rows["llama-3.1-8b"]["prefill_prompt_tokens"] == 9000
    status, out, _ = run(capsys, "rank", "-H", "nvidia-h100-sxm", "--prompt", "9000", "--limit", "100")
    line = next(x for x in out.splitlines() if x.startswith("smollm2-135m "))
    assert "beyond context" in line


def test_rank_flag_errors(capsys: pytest.CaptureFixture[str]) -> None:
    assert "limit: must be >= 1" in one_line_error(capsys, "rank", "-H", "nvidia-h100-sxm", "--limit", "-1")
    assert "limit: must be >= 1" in one_line_error(capsys, "rank", "-H", "nvidia-h100-sxm", "--limit", "0")
    err = one_line_error(capsys, "rank", "-H", "nvidia-h100-sxm", "--per-dollar")
    assert "per_dollar: applies to --model" in err
    assert "sort: unknown order 'speed'" in one_line_error(
        capsys, "rank", "-H", "nvidia-h100-sxm", "--sort", "speed"
    )


def test_rank_limit_prints_exactly_that_many_rows(capsys: pytest.CaptureFixture[str]) -> None:
    import re

    status, out, _ = run(capsys, "rank", "-H", "nvidia-h100-sxm", "--limit", "3")
    lines = out.splitlines()
    assert status == 0 and any(line.startswith("model ") for line in lines)
    rows = next(i for i, line in enumerate(lines) if line.startswith("model ")) + 1
    words = ("serves", "below floor", "no session fits", "does not fit")  # no enum in a table
    assert all(any(f" {w} " in line for w in words) for line in lines[rows : rows + 3])
    assert re.match(r"^\d+ rows, 3 shown, ordered by size within each verdict", lines[rows + 3]), lines[
        rows + 3
    ]


def test_rank_hardware_heads_with_the_largest_model_that_serves(capsys: pytest.CaptureFixture[str]) -> None:
    """The question is "the best model this machine serves at the floor": largest first by default."""
    status, out, _ = run(capsys, "rank", "-H", "nvidia-h100-sxm", "--json")
    data = json.loads(out)
    serving = [r for r in data["rows"] if r["verdict"] == "floor_fit"]
    assert status == 0 and data["sort"] == "size" and data["rows"][: len(serving)] == serving
    sizes = [r["resident_gb"] for r in serving]
    assert sizes == sorted(sizes, reverse=True) and sizes[0] > 10
    status, out, _ = run(capsys, "rank", "-H", "nvidia-h100-sxm", "--sort", "useful", "--json")
    useful = [r["aggregate_tok_s"] for r in json.loads(out)["rows"] if r["verdict"] == "floor_fit"]
    assert useful == sorted(useful, reverse=True)
    status, out, _ = run(capsys, "rank", "-H", "nvidia-h100-sxm", "--sort", "ttft", "--json")
    waits = [r["ttft_s"] for r in json.loads(out)["rows"] if r["verdict"] == "floor_fit" and r["ttft_s"]]
    assert waits == sorted(waits)


def test_rank_waits_show_their_digits_and_sums_are_labelled(capsys: pytest.CaptureFixture[str]) -> None:
    """A TTFT column of "0.00 s" said nothing; a 72-GPU ideal sum headed the list unlabelled."""
    status, out, _ = run(capsys, "rank", "-m", "llama-3.1-8b", "--limit", "5")
    assert status == 0 and "0.00 s" not in out
    first = out.splitlines()[1]
    assert first.startswith("nvidia-gb300-nvl72 †") and ("µs" in first or "ms" in first)
    assert "† ideal sum of several devices" in out and "nvidia-gb300-nvl72 = 72 x nvidia-gb300" in out


# No wait where nothing fits ---------------------------------------------------------------------------


def test_prefill_where_nothing_fits_reports_no_wait(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(
        capsys, "prefill", "-H", "nvidia-rtx-4090", "-m", "llama-3.1-70b", "--prompt", "8192", "--json"
    )
    data = json.loads(out)
    assert status == 0 and data["verdict"] == "no_resident_fit"
    assert "time_s" in data and data["time_s"] is None and data["tok_s"] is None
    status, out, _ = run(
        capsys, "prefill", "-H", "nvidia-rtx-4090", "-m", "llama-3.1-70b", "--prompt", "8192"
    )
    assert (
        "does not fit in memory" in out
        and "modeled prefill time" in out
        and " s " not in out.split("modeled prefill time")[1].splitlines()[0]
    )


# Hostile strings ---------------------------------------------------------------------------------------


def test_terminal_control_characters_are_escaped(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A TOML name holding "clear screen" and "set window title" sequences reaches the terminal inert."""
    hostile = "evil\x1b[2J\x1b]0;owned\x07\x9b"
    text = (
        (ROOT / "examples" / "dgx-spark.toml")
        .read_text()
        .replace('name = "DGX Spark (derivation example)"', f"name = {json.dumps(hostile)}")
    )
    hardware = tmp_path / "hostile.toml"
    hardware.write_text(text)
    for args in (
        ["decode", "-H", str(hardware), "-m", MODEL],
        ["prefill", "-H", str(hardware), "-m", "llama-3.1-8b", "--prompt", "100"],
    ):
        status, out, _ = run(capsys, *args)
        assert status == 0 and "evil\\x1b[2J\\x1b]0;owned\\x07\\x9b" in out
        assert not any(c in out for c in "\x1b\x07\x9b")


def test_hostile_gguf_architecture_is_escaped_in_the_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "evil.gguf"
    writer = GGUFWriter(path, "x\x1b[2Jy")
    writer.add_tensor("x.weight", np.zeros(32, np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    err = one_line_error(capsys, "import", "gguf", str(path))
    assert "x\\x1b[2Jy" in err and "\x1b" not in err


# Checkpoints given to --model --------------------------------------------------------------------------


def test_gguf_given_as_model_is_imported_on_the_fly(capsys: pytest.CaptureFixture[str]) -> None:
    from tests.test_import_gguf import smollm2_path

    path = str(smollm2_path())
    status, out, _ = run(capsys, "decode", "-H", HW, "-m", path, "--json")
    data = json.loads(out)
    status_import, imported, _ = run(capsys, "import", "gguf", path, "--json")
    assert status == status_import == 0 and data["verdict"] == "floor_fit"
    resident = json.loads(imported)["model"]["weights"]["resident_gb"] * 1e9
    assert data["model"]["id"] == "smollm2-135m-instruct-q4-1"
    # The margin C - O - W_resident carries the imported file's exact weight bytes.
    overhead = data["assumptions"]["overhead_gb"] * 1e9
    assert data["resident_margin_bytes"] == pytest.approx(128e9 - overhead - resident)


def test_config_json_given_as_model_names_the_converting_command(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"model_type": "llama", "hidden_size": 16}))
    err = one_line_error(capsys, "decode", "-H", HW, "-m", str(config))
    assert "Hugging Face config.json" in err and f"servebound import hf {config}" in err


def test_console_script_prints_no_traceback_for_a_long_id() -> None:
    done = servebound_process("decode", "-H", "a" * 300, "-m", "llama-3.1-8b")
    assert done.returncode == 2 and "Traceback" not in done.stderr


# Surfaces a newcomer meets -------------------------------------------------------------------------


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    from importlib.metadata import version

    status, out, _ = run(capsys, "--version")
    assert status == 0 and out == f"servebound {version('servebound')}\n"


def test_help_shows_no_bool_metavar_and_its_defaults(capsys: pytest.CaptureFixture[str]) -> None:
    """Flags read `<bool>` and bracketed defaults vanished into rich markup ("per session .")."""
    done = servebound_process("decode", "--help", env={"COLUMNS": "200", "PATH": "/usr/bin:/bin"})
    text = " ".join(done.stdout.replace("│", " ").split())  # a help row may wrap inside its box
    assert done.returncode == 0 and "<bool>" not in text
    assert "per session ." not in text and "per step ." not in text
    assert "(default: 100,000, capped at the model's context limit)" in text
    assert "(default: 32,000, at most L_alloc)" in text and "8 where it states none" in text


def test_busy_port_is_one_error_line_and_no_banner(capsys: pytest.CaptureFixture[str]) -> None:
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        status, out, err = run(capsys, "serve", "--port", str(port))
    assert status == 2 and out == ""
    assert err == f"servebound: error: port: 127.0.0.1:{port} is in use; choose another with --port\n"


def test_import_hf_takes_the_catalog_copy_without_network(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = run(capsys, "import", "hf", "Qwen/Qwen3-8B", "--json")
    model = json.loads(out)["model"]
    assert status == 0 and err == "" and model["context_limit"] == 40960


def test_import_hf_offline_fails_fast_and_quietly(tmp_path: Path) -> None:
    """An unreachable Hub is one line at once, not 24 s of retry logs (the endpoint here refuses)."""
    import os

    env = {**os.environ, "HF_ENDPOINT": "http://127.0.0.1:9", "HF_HOME": str(tmp_path)}
    done = servebound_process("import", "hf", "someorg/not-in-the-catalog", env=env)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and "Retrying" not in done.stderr
    assert "cannot reach the Hugging Face Hub" in done.stderr and "servebound models list" in done.stderr


def test_rank_footer_states_what_varies_across_rows(capsys: pytest.CaptureFixture[str]) -> None:
    """Machines for one model have different overheads (1 GB on a card, 10 % on a datacenter GPU, the OS's
    share on a Mac): the footer gives their range, not the first row's value as everyone's."""
    status, out, _ = run(capsys, "rank", "-m", "qwen3-8b", "--limit", "2", "--json")
    rows = json.loads(out)["rows"]
    overheads = {r["overhead_gb"] for r in rows}
    assert status == 0 and len(overheads) > 1
    status, out, _ = run(capsys, "rank", "-m", "qwen3-8b", "--limit", "2")
    footer = " ".join(out.split())
    low, high = min(overheads), max(overheads)
    assert f"overhead_gb={low:g} to {high:g} per row (each machine's)" in footer, footer
    assert f"overhead_gb={rows[0]['overhead_gb']:g}," not in footer
    # one machine: one overhead, and the contexts capped at each model's limit vary by row
    status, out, _ = run(capsys, "rank", "-H", "nvidia-rtx-4090", "--limit", "2")
    footer = " ".join(out.split())
    assert "overhead_gb=1, " in footer and "per row (capped at each model's context)" in footer, footer
