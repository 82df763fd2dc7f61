"""CLI start-up: cold processes of `servebound --help`, one `decode` on a catalog pair and a whole-catalog
`rank`.

Run: python bench/bench_startup.py [--runs N]. Each figure is the median of N fresh processes
(`python -m servebound ...`, the console script's work), after one warm-up run that writes the bytecode
into a fresh temporary folder (``PYTHONPYCACHEPREFIX``, even where the shell turns bytecode writing
off), as an installed package has it compiled at install, and fills the OS's page cache. Nothing else is kept between runs: click parses every run and catalog
records come from the packaged snapshot. `python -c pass` is the
interpreter's own floor on this machine. The spread (min-max) shows how busy the machine was; the CPU
time (user + system) of the process is steadier on a shared machine than its wall time.
bench/bench_peers.py runs the same commands alternately against llmfit.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys

from timing import cold_env, run_once

PAIR = ["--hardware", "nvidia-dgx-spark", "--model", "qwen3.6-35b-a3b-nvfp4"]
SERVEBOUND = [sys.executable, "-m", "servebound"]
H100 = ["-H", "nvidia-h100-sxm", "-m", "llama-3.1-8b"]
CASES = {
    "python -c pass (the floor)": [sys.executable, "-c", "pass"],
    "servebound --help": [*SERVEBOUND, "--help"],
    "servebound decode (catalog pair)": [*SERVEBOUND, "decode", *PAIR],
    "servebound decode --json (catalog pair)": [*SERVEBOUND, "decode", *PAIR, "--json"],
    "servebound decode --json (H100 x Llama 3.1 8B)": [*SERVEBOUND, "decode", *H100, "--json"],
    "servebound rank --hardware nvidia-h100-sxm --all-formats": [
        *SERVEBOUND, "rank", "--hardware", "nvidia-h100-sxm", "--all-formats",
    ],
}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=11)
    runs = parser.parse_args().runs
    env = cold_env()
    print(f"load average {os.getloadavg()[0]:.1f} at the start")
    for label, command in CASES.items():
        run_once(command, env)  # warm-up: bytecode, the OS's page cache
        walls, cpus = zip(*(run_once(command, env) for _ in range(runs)), strict=True)
        print(
            f"{label}: wall median {statistics.median(walls) * 1e3:.0f} ms "
            f"(min {min(walls) * 1e3:.0f}, max {max(walls) * 1e3:.0f}); "
            f"CPU median {statistics.median(cpus) * 1e3:.0f} ms; {runs} cold processes"
        )
    shutil.rmtree(env["PYTHONPYCACHEPREFIX"], ignore_errors=True)
    print(f"load average {os.getloadavg()[0]:.1f} at the end")


if __name__ == "__main__":
    main()
