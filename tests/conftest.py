from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

from servebound import Experts, Hardware, KVShape, ModelAdapter, Weights, Workload
from servebound.inputs.declared import DeclaredWorkload

GOLDEN = Path(__file__).parent / "golden"
GB = 1e9

# Hypothesis in CI is deterministic: each test draws the same examples on every run (derandomize), and
# no example database carries a failure from one run into the next. Locally ("dev") examples stay
# random, so new failures can still be found; each one found becomes an explicit @example.
# HYPOTHESIS_PROFILE=ci reproduces CI's examples on a workstation.
CI = bool(os.environ.get("CI"))
settings.register_profile("ci", derandomize=True, database=None, print_blob=True)
settings.register_profile("dev")
#: bench/mutate.py runs every mutant against CI's examples, fewer of them (a mutant dies at the first).
settings.register_profile("mutation", derandomize=True, database=None, max_examples=30)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE") or ("ci" if CI else "dev"))

# The pages carry the day they were computed (web.text.site_date). A run that crosses midnight would
# compare a page rendered before it with one rendered after (a subprocess's start against this process's
# rebuild): every page in a test run, subprocesses included, is dated the same fixed day instead, unless the
# caller set one. tests/web/test_site_date.py checks the undated default on its own.
os.environ.setdefault("SOURCE_DATE_EPOCH", "1767225600")  # 2026-01-01T00:00:00Z

#: Examples for the fuzzers of untrusted headers (GGUF, safetensors): a fixed, larger count in CI.
FUZZ_EXAMPLES = 600 if settings.default.derandomize else 300


def load_golden(name: str) -> dict[str, Any]:
    with (GOLDEN / name).open("rb") as f:
        return tomllib.load(f)


def derivation_model(case: dict[str, Any]) -> ModelAdapter:
    """One of the derivation's illustrative MoE adapters, built from its printed inputs."""
    weights = Weights.from_params(
        bytes_per_param=case["bytes_per_param"],
        total_params=case["total_params"],
        active_params=case["active_params"],
        experts=Experts(case["routed"], case["per_token"]),
        resident_bytes=case["resident_gb"] * GB,
    )
    return ModelAdapter(
        id=case["model"].lower().replace(" ", "-"),
        name=case["model"],
        weights=weights,
        kv_alloc=KVShape(global_bytes_per_token=case["kv_alloc_gb"] * GB / 100_000),
        kv_read=KVShape(global_bytes_per_token=case["kv_read_gb"] * GB / 32_000),
    )


@pytest.fixture(scope="session")
def decode_golden() -> dict[str, Any]:
    return load_golden("derivation_decode.toml")


@pytest.fixture(scope="session")
def spark() -> Hardware:
    return Hardware("dgx-spark", "DGX Spark", 128 * GB, 273 * GB, {"fp4": 500e12, "bf16": 125e12})


def resolved(
    hardware: Hardware,
    model: ModelAdapter,
    workload: Workload | DeclaredWorkload | None = None,
    **keywords: Any,
) -> Workload:
    """A workload as the scenario hands it to the core: ``workload`` (a record, taken as it stands) or
    ``make_workload(**keywords)`` resolved against the pair once."""
    from servebound.api import make_workload

    declared = workload if workload is not None else make_workload(**keywords)
    return declared.resolve(hardware, model) if isinstance(declared, DeclaredWorkload) else declared


def same_number(actual: object, expected: object, rel: float = 1e-12) -> bool:
    """Equal within ``rel``, or both None (a quantity that does not exist on either side)."""
    if expected is None or actual is None:
        return actual is expected
    return bool(actual == pytest.approx(expected, rel=rel))


def run_cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """The real entry point in process: exit status, stdout and stderr."""
    from servebound.cli import main

    status = main(list(args))
    out, err = capsys.readouterr()
    return status, out, err


def one_line_error(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    """A command that must fail cleanly: exit status 2, one line of error, no traceback; that line."""
    status, _, err = run_cli(capsys, *args)
    assert status == 2, err
    assert err.startswith("servebound: error: ") and err.count("\n") == 1 and "Traceback" not in err, err
    return err


def run_json(capsys: pytest.CaptureFixture[str], *args: str) -> Any:
    """A command that must succeed (exit status 0; its stderr shown if not): its output parsed as JSON."""
    status, out, err = run_cli(capsys, *args)
    assert status == 0, (args, err)
    return json.loads(out)


def servebound_process(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """The console entry point in its own process, so a hang fails the test instead of stalling it."""
    return subprocess.run(
        [sys.executable, "-m", "servebound", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )


def process_json(*args: str, env: dict[str, str] | None = None) -> Any:
    """A command in its own process with ``--json``, which must succeed: its output parsed as JSON."""
    done = servebound_process(*args, "--json", env=env)
    assert done.returncode == 0, (args, done.stderr)
    return json.loads(done.stdout)


def cli_json(capsys: pytest.CaptureFixture[str], *args: str) -> Any:
    """``run_json`` of the command with ``--json``."""
    return run_json(capsys, *args, "--json")
