"""Result files that are text, not JSON: llama-bench's markdown table (its default output) and CSV
(``-o csv``), MLX-LM's ``Prompt:`` / ``Generation:`` lines, and Ollama's ``--verbose`` timings.

* llama-bench markdown and CSV rows become the same records as ``-o json`` and go through
  :func:`servebound.runs.llama_bench.llama_bench_runs`. The markdown table names the model by type and
  size only (no file), and its batch sizes only when they were not the defaults (``n_batch`` 2048,
  ``n_ubatch`` 512, llama-bench's own). Device lines llama.cpp prints before the table ("Device 0: NVIDIA
  GeForce RTX 4090, compute capability 8.9", "ggml_vulkan: 0 = Radeon 8060S Graphics (RADV GFX1151)
  (radv) | ...") name the hardware.
* MLX-LM (``mlx_lm.generate --verbose``, the default): ``Prompt: P tokens, X tokens-per-sec`` is the
  prefill of a P-token prompt at batch 1; ``Generation: N tokens, Y tokens-per-sec`` is one session
  decoding N tokens after it, each step reading the prompt and the tokens so far (read context
  P + (N+1)/2, rounded down).
* Ollama (``ollama run --verbose``): ``prompt eval count`` / ``prompt eval rate`` is the prefill,
  ``eval count`` / ``eval rate`` the decode of one session, with the same read context.
"""

from __future__ import annotations

import csv
import io
import math
import re
from pathlib import Path
from typing import Any

from servebound.errors import InputError
from servebound.runs.limits import MAX_RECORD_TOKENS
from servebound.runs.llama_bench import llama_bench_runs
from servebound.runs.measured import MeasuredRun, Metric

_GIB = 2**30
#: llama-bench's own defaults for -b and -ub, which the markdown table shows only when changed.
_LLAMA_BENCH_N_BATCH = 2048
_LLAMA_BENCH_N_UBATCH = 512
_TEST = re.compile(r"^(?:pp\s*(\d+)|tg\s*(\d+)|pp\s*(\d+)\+tg\s*(\d+))(?:\s*@\s*d(\d+))?$")
_CUDA_DEVICE = re.compile(r"^\s*Device \d+: (.+?), (?:compute capability|gfx)", re.MULTILINE)
_VULKAN_DEVICE = re.compile(r"^ggml_vulkan: \d+ = (.+?)(?: \([a-z]+\))? \|", re.MULTILINE)
_BUILD = re.compile(r"^build: (\w+) \((\d+)\)", re.MULTILINE)
#: A number as a tool prints it, read whole: sign, exponent, nan and inf included (1e300 is 1e300, not 1).
_NUMBER = r"([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|[-+]?(?:nan|inf(?:inity)?))"
_MLX = re.compile(
    rf"^(Prompt|Generation): {_NUMBER} tokens, {_NUMBER} tokens-per-sec", re.MULTILINE | re.IGNORECASE
)
_OLLAMA = re.compile(
    rf"^(prompt eval count|prompt eval rate|eval count|eval rate):\s+{_NUMBER}", re.MULTILINE | re.IGNORECASE
)


def _cells(line: str) -> list[str]:
    return [cell.strip() for cell in line.strip().strip("|").split("|")]


def _size_bytes(text: str) -> int:
    value, _, unit = text.partition(" ")
    scale = {"GiB": _GIB, "MiB": 2**20, "KiB": 2**10, "B": 1}.get(unit.strip(), _GIB)
    return round(float(value) * scale)


def _params(text: str) -> int:
    value, _, unit = text.partition(" ")
    return round(float(value) * {"B": 1e9, "M": 1e6, "K": 1e3}.get(unit.strip(), 1.0))


def llama_bench_markdown_records(text: str) -> list[dict[str, Any]]:
    """The rows of llama-bench's markdown table as ``-o json`` records (the fields the table has)."""
    lines = [line for line in text.splitlines() if line.lstrip().startswith("|")]
    header = _cells(lines[0])
    devices = "; ".join([*_CUDA_DEVICE.findall(text), *_VULKAN_DEVICE.findall(text)])
    build = _BUILD.search(text)
    records = []
    for index, line in enumerate(lines[1:], start=1):
        cells = _cells(line)
        if set("".join(cells)) <= set("-: "):
            continue
        if len(cells) != len(header):
            raise InputError(
                f"llama-bench table row {index}", f"has {len(cells)} cells, the header {len(header)}"
            )
        row = dict(zip(header, cells, strict=True))
        test = _TEST.match(row.get("test", ""))
        if test is None or "t/s" not in row:
            raise InputError(
                f"llama-bench table row {index}.test",
                f"{row.get('test')!r} is not ppN, tgN or ppN+tgN (optionally @ dN)",
            )
        pp, tg, mixed_pp, mixed_tg, depth = test.groups()
        record: dict[str, Any] = {
            "model_type": row["model"],
            "model_size": _size_bytes(row["size"]),
            "model_n_params": _params(row["params"]),
            "n_batch": int(row.get("n_batch", _LLAMA_BENCH_N_BATCH)),
            "n_ubatch": int(row.get("n_ubatch", _LLAMA_BENCH_N_UBATCH)),
            "n_prompt": int(pp or mixed_pp or 0),
            "n_gen": int(tg or mixed_tg or 0),
            "n_depth": int(depth or 0),
            "avg_ts": float(row["t/s"].split("±")[0]),
            "backends": row.get("backend"),
        }
        for column, key in (("threads", "n_threads"), ("ngl", "n_gpu_layers")):
            if row.get(column, "").isdigit():
                record[key] = int(row[column])
        for column in ("type_k", "type_v"):
            if row.get(column):
                record[column] = row[column]
        if row.get("fa"):
            record["flash_attn"] = row["fa"]
        if devices:
            record["gpu_info"] = devices.replace("; ", ", ")
        if build:
            record["build_commit"], record["build_number"] = build.group(1), int(build.group(2))
        records.append(record)
    return records


def llama_bench_csv_records(text: str) -> list[dict[str, Any]]:
    """The rows of ``llama-bench -o csv`` as ``-o json`` records (empty cells dropped; the per-sample
    lists, which CSV flattens to text, left out)."""
    rows = list(csv.DictReader(io.StringIO(text)))
    return [
        {key: value for key, value in row.items() if key and value != "" and not key.startswith("samples_")}
        for row in rows
    ]


def _usable(what: str, tokens: float, rate: float | None) -> str | None:
    """Why a record of ``tokens`` at ``rate`` cannot be checked (None: it can)."""
    if rate is None:
        return None if tokens == 0 else f"{what}: no rate printed"
    if not math.isfinite(tokens) or not tokens.is_integer() or not 0 < tokens <= MAX_RECORD_TOKENS:
        return f"{what}: {tokens:g} tokens is not a token count of 1 to {MAX_RECORD_TOKENS:,}"
    if not math.isfinite(rate) or rate <= 0:
        return (
            f"{what}: a rate of {rate:g} tokens/s is not a measured rate (it must be a finite number above 0)"
        )
    return None


def _decode_and_prefill(
    prompt: float, prompt_rate: float | None, generated: float, rate: float | None, common: dict[str, Any]
) -> list[MeasuredRun]:
    """The block's prefill and decode runs; a record that cannot be checked is skipped, and named (with
    its reason) in the notes of the run kept, or as the error when none is kept."""
    name, where = common["engine"], common["source"]
    skipped = [
        f"{where}: {why}; skipped"
        for why in (_usable("prompt", prompt, prompt_rate), _usable("generation", generated, rate))
        if why is not None
    ]
    runs = []
    if prompt_rate is not None and not _usable("prompt", prompt, prompt_rate):
        p, g = int(prompt), int(generated) if math.isfinite(generated) and generated > 0 else 0
        runs.append(
            MeasuredRun(
                metric=Metric.PREFILL_TOK_S,
                value=prompt_rate,
                prompt_tokens=p,
                alloc_context_tokens=p + g,
                label=f"prompt {p}",
                metric_definition=f"{name}'s prompt rate: {p} prompt tokens / prompt time, one prompt",
                notes=tuple(skipped),
                **common,
            )
        )
    if rate is not None and not _usable("generation", generated, rate):
        p = int(prompt) if prompt_rate is not None and not _usable("prompt", prompt, prompt_rate) else 0
        g = int(generated)
        read = p + (g + 1) // 2
        runs.append(
            MeasuredRun(
                metric=Metric.PER_SESSION_TOK_S,
                value=rate,
                read_context_tokens=max(read, 1),
                alloc_context_tokens=p + g,
                label=f"generate {g} after {p}",
                metric_definition=(
                    f"{name}'s generation rate: {g} tokens / generation time, one session; "
                    f"read context = prompt + (generated+1)/2 = {read}"
                ),
                notes=tuple(skipped),
                **common,
            )
        )
    if skipped and not runs:
        raise InputError(f"{name} output", f"{'; '.join(skipped)}: no record left to check")
    return runs


def mlx_runs(text: str, path: str | Path) -> list[MeasuredRun]:
    """Each ``Prompt:`` / ``Generation:`` pair MLX-LM printed, as a prefill and a decode run."""
    runs: list[MeasuredRun] = []
    prompt: tuple[float, float] | None = None
    for number, match in enumerate(_MLX.finditer(text)):
        kind, tokens, rate = match.group(1).capitalize(), float(match.group(2)), float(match.group(3))
        if kind == "Prompt":
            prompt = (tokens, rate)
            continue
        if prompt is None:
            raise InputError("MLX output", f"{path}: a Generation line without the Prompt line before it")
        common = dict(engine="mlx", source=f"{Path(path).name} block {number // 2}")
        runs += _decode_and_prefill(prompt[0], prompt[1], tokens, rate, common)
        prompt = None
    return runs


def ollama_runs(text: str, path: str | Path) -> list[MeasuredRun]:
    """Each block of ``ollama run --verbose`` timings as a prefill and a decode run."""
    runs: list[MeasuredRun] = []
    block: dict[str, float] = {}
    for match in _OLLAMA.finditer(text):
        key, value = match.group(1).lower(), float(match.group(2))
        if key in block:  # a new block starts
            runs += _ollama_block(block, path, len(runs))
            block = {}
        block[key] = value
    if block:
        runs += _ollama_block(block, path, len(runs))
    return runs


def _ollama_block(block: dict[str, float], path: str | Path, index: int) -> list[MeasuredRun]:
    common = dict(engine="ollama", source=f"{Path(path).name} block {index}")
    return _decode_and_prefill(
        block.get("prompt eval count", 0.0),
        block.get("prompt eval rate"),
        block.get("eval count", 0.0),
        block.get("eval rate"),
        common,
    )


def text_result_runs(text: str, path: str | Path) -> list[MeasuredRun] | None:
    """Runs from a text result file, told apart by content; None when it is none of these formats."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if any(line.startswith("|") and "t/s" in line and "test" in line for line in lines):
        return llama_bench_runs(llama_bench_markdown_records(text), path)
    header = lines[0].replace('"', "").split(",") if lines else []
    if "avg_ts" in header:
        return llama_bench_runs(llama_bench_csv_records(text), path)
    if _MLX.search(text):
        return mlx_runs(text, path)
    if _OLLAMA.search(text):
        return ollama_runs(text, path)
    return None
