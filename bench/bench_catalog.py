"""Catalog speed: load both catalogs and rank every model on one device; every device x every profile.

Run: python bench/bench_catalog.py. The first figure includes building every native profile from its
config.json (a cold process); the others are warm, in-process medians.
"""

from __future__ import annotations

import time

from timing import median_s


def main() -> None:
    start = time.perf_counter()
    from servebound.catalog.hardware import get_hardware, list_hardware
    from servebound.catalog.models import list_models
    from servebound.core.workload import Workload
    from servebound.views.rank import rank_models

    spark = get_hardware("nvidia-dgx-spark").hardware
    natives = [m.adapter for m in list_models(native_only=True)]
    rows = rank_models(spark, natives)
    cold = time.perf_counter() - start
    print(
        f"cold: import + load catalogs + build {len(natives)} profiles + rank them on one device: {cold * 1e3:.0f} ms"
    )

    ms = median_s(lambda: rank_models(spark, natives), 20) * 1e3
    print(f"warm: rank {len(rows)} models on one device (decode + prefill each): {ms:.1f} ms")

    profiles = [m.adapter for m in list_models(native_only=False)]
    machines = [r.hardware for r in list_hardware()]
    pairs = len(machines) * len(profiles)
    # Decode's compute roof on (the default) and off (--memory-only, the former ceiling), interleaved
    # so that load on a shared machine falls on both alike; the best of three sweeps each.
    best: dict[bool, float] = {}
    for _ in range(3):
        for memory_only in (False, True):
            workload = Workload(fit_contexts_to_model=True, memory_only=memory_only)
            t = time.perf_counter()
            for hw in machines:
                rank_models(hw, profiles, workload)
            elapsed = time.perf_counter() - t
            best[memory_only] = min(best.get(memory_only, elapsed), elapsed)
    for memory_only, label in ((False, "compute roof on"), (True, "memory-only")):
        total = best[memory_only]
        print(
            f"every device x every profile, {label}: {len(machines)} x {len(profiles)} = {pairs:,} pairs "
            f"(decode + prefill at 8,192) in {total:.2f} s, {total / pairs * 1e6:.0f} us per pair"
        )


if __name__ == "__main__":
    main()
