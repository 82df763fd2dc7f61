"""Catalog speed: load both catalogs and rank every model on one device; every device x every profile.

Run: python bench/bench_catalog.py. The first figure includes building every native profile from its
config.json (a cold process); the others are warm, in-process medians. The whole-catalog sweeps are timed
in CPU time of this process (time.process_time) as well as wall time: on a shared machine the wall time
counts other processes' turns too. Each sweep is what `rank` does for one device, once per device
(rank_models: the runnable profiles, decode and the 8,192-token one-shot prefill, sorted).
"""

from __future__ import annotations

import time

from timing import median_s


def main() -> None:
    start = time.perf_counter()
    from servebound.catalog.hardware import get_hardware, list_hardware
    from servebound.catalog.models import list_models
    from servebound.core.workload import Workload
    from servebound.inputs.declared import DeclaredWorkload
    from servebound.questions.rank import rank_models

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
    best: dict[bool, tuple[float, float]] = {}
    for _ in range(3):
        for memory_only in (False, True):
            workload = DeclaredWorkload(Workload(memory_only=memory_only), fit_contexts_to_model=True)
            wall, cpu = time.perf_counter(), time.process_time()
            for hw in machines:
                rank_models(hw, profiles, workload)
            taken = (time.perf_counter() - wall, time.process_time() - cpu)
            best[memory_only] = min(best.get(memory_only, taken), taken, key=lambda t: t[1])
    for memory_only, label in ((False, "compute roof on"), (True, "memory-only")):
        wall, cpu = best[memory_only]
        print(
            f"every device x every profile, {label}: {len(machines)} x {len(profiles)} = {pairs:,} pairs "
            f"(decode + prefill at 8,192): {cpu:.2f} s of CPU, {cpu / pairs * 1e6:.1f} us per pair "
            f"({wall:.2f} s wall)"
        )


if __name__ == "__main__":
    main()
