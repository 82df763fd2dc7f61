"""One decode evaluation where b_mem = 10^7: the batch search must not walk the batches.

Run: python bench/bench_decode.py. Prints the median of many in-process evaluations per case.
"""

from __future__ import annotations

from servebound import (
    Experts,
    Hardware,
    KVShape,
    ModelAdapter,
    Weights,
    Workload,
    decode,
    decode_context_range,
)
from timing import median_s

GB = 1e9


def main() -> None:
    hw = Hardware("big", "big", 1000 * GB, 8000 * GB)
    # margin = 1000 - 2 - 8 = 990 GB; K_alloc = 99 bytes/token x 1,000 tokens -> b_mem = 10^7
    kv = KVShape(global_bytes_per_token=99.0)
    tiny_read = KVShape(global_bytes_per_token=1e-3)
    dense = ModelAdapter("dense", "dense", Weights(0.0, 2 * GB), kv, tiny_read)
    moe = ModelAdapter("moe", "moe", Weights(0.0, 0.5 * GB, 0.01 * GB, Experts(150, 8)), kv, tiny_read)
    # K_read = 1 MB per token: the floor binds near 5 x 10^6 sessions, below b_rate, so the exact
    # floor test bisects over [1, b_rate] with the true W_batch(b).
    moe_floor = ModelAdapter("moe", "moe", moe.weights, kv, KVShape(global_bytes_per_token=1000.0))
    loose = Workload(alloc_context_tokens=1000, read_context_tokens=1000, floor_tok_s=0.01)
    tight = Workload(alloc_context_tokens=1000, read_context_tokens=1000, floor_tok_s=1.6)
    cases = (
        ("dense, memory-bound", dense, loose),
        ("MoE, memory-bound", moe, loose),
        ("MoE, floor bisection", moe_floor, tight),
    )
    for label, model, work in cases:
        result = decode(hw, model, work)
        assert result.batch_mem == 10**7, result.batch_mem
        us = median_s(lambda model=model, work=work: decode(hw, model, work), 2000) * 1e6
        print(
            f"decode, b_mem = 10^7, {label:22s}: median {us:7.1f} us  "
            f"(b* = {result.batch_star:,}, limited by {result.batch_limited_by})"
        )
    # decode --range: every read context 0..1,000,000 (a MoE whose floor edge sits inside the range).
    spark = Hardware("spark", "spark", 128 * GB, 273 * GB)
    long_moe = ModelAdapter(
        "moe-1m",
        "moe-1m",
        Weights(0.0, 5 * GB, 0.0234 * GB, Experts(256, 8)),
        KVShape(global_bytes_per_token=10_250.0),
        KVShape(global_bytes_per_token=10_215.6),
        context_limit_tokens=1_000_000,
    )
    rng = decode_context_range(spark, long_moe, Workload())
    ms = median_s(lambda: decode_context_range(spark, long_moe, Workload()), 200) * 1e3
    print(
        f"decode --range over read contexts 0..{rng.max_read_context_tokens:,}: median {ms:.2f} ms "
        f"(floor holds up to {rng.floor_read_context_tokens:,}; curve of {len(rng.curve.read_context_tokens)} points)"
        if rng.curve is not None and rng.floor_read_context_tokens is not None
        else "decode --range: empty"
    )


if __name__ == "__main__":
    main()
