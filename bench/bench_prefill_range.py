"""How long the exact prompt-length range takes: every integer length 1..1,000,000, in process.

Run: python bench/bench_prefill_range.py [--lengths N] [--repeats K]
Prints the median wall time of prefill_range (the README's figure), and of a one-token-chunk prefill
over the longest prompt (closed form, so it costs the same as one shot). The model is the derivation's
Laguna S 2.1 on DGX Spark (tests/golden/laguna_s_spark.toml) with its context limit raised to N.
"""

from __future__ import annotations

import argparse
import statistics
import tomllib
from dataclasses import replace
from pathlib import Path

from servebound.core.prefill import prefill, prefill_range
from servebound.core.workload import Workload
from servebound.inputs.files import parse_hardware, parse_model
from timing import median_s, timed_runs

GOLDEN = Path(__file__).resolve().parent.parent / "tests" / "golden" / "laguna_s_spark.toml"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lengths", type=int, default=1_000_000)
    parser.add_argument("--repeats", type=int, default=21)
    args = parser.parse_args()

    data = tomllib.loads(GOLDEN.read_text(encoding="utf-8"))
    hardware = parse_hardware(data["hardware"]).to_hardware()
    model = replace(parse_model(data["model"]).to_adapter(), context_limit_tokens=args.lengths)
    workload = Workload(alloc_context_tokens=args.lengths)

    result = prefill_range(hardware, model, workload=workload)  # warms up imports and numpy
    times = timed_runs(lambda: prefill_range(hardware, model, workload=workload), args.repeats)
    print(
        f"prefill_range over {result.max_prompt_tokens:,} lengths: median {statistics.median(times) * 1e3:.1f} ms "
        f"(min {min(times) * 1e3:.1f}, max {max(times) * 1e3:.1f}, {args.repeats} runs); "
        f"lo {result.lo_tok_s:,.1f} tok/s at L={result.lo_prompt_tokens:,}, "
        f"hi {result.hi_tok_s:,.1f} tok/s at L={result.hi_prompt_tokens:,}"
    )

    seconds = median_s(
        lambda: prefill(hardware, model, args.lengths, workload=workload, chunk_tokens=1), args.repeats
    )
    print(f"prefill with chunk 1 over {args.lengths:,} tokens: median {seconds * 1e3:.2f} ms")


if __name__ == "__main__":
    main()
