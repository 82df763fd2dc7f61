"""servebound against llmfit, the compiled peer: cold answers and a whole-catalog sweep, side by side.

Run: python bench/bench_peers.py [--rounds N]. llmfit (a Rust binary, the PyPI package ``llmfit``) is
installed with pip into its own virtual environment under the system's temporary folder
(``servebound-bench-peers/``; reused by later runs, never inside the repository). The cases run
alternately, one process of each per round, so that load on a shared machine falls on all of them
alike; each figure is the median CPU time (user + system, ``resource.getrusage`` of the children) of
the fresh processes, which is steadier than wall time on a busy machine (the wall medians are printed
too). Before the rounds, one untimed run of each case writes servebound's bytecode into a fresh
temporary folder (``PYTHONPYCACHEPREFIX``; ``PYTHONDONTWRITEBYTECODE`` is dropped for the runs), as an
installed package has it compiled at install: without it every run compiles servebound from source and
the figure measures the compiler. servebound keeps nothing else between runs: click parses every run
and catalog records come from the packaged snapshot.

The pairs (from ``llmfit --help`` and its subcommands' help):

- one answer: ``servebound decode -H nvidia-h100-sxm -m llama-3.1-8b --json`` against ``llmfit
  --memory 80G plan meta-llama/Llama-3.1-8B --context 8192 --json`` (one model's memory and speed
  estimate on an 80 GB GPU; ``plan`` needs an exact model name where a family has many);
- the whole catalog: ``servebound rank --hardware nvidia-h100-sxm --all-formats`` (525 profiles,
  decode and prefill each, a table) against ``llmfit --memory 80G fit --no-dashboard`` (every model of
  its database scored, a table; ``--no-dashboard`` keeps it from starting its background server);
- the floor: ``servebound --help`` against ``python -c pass``.

The warm per-pair figures (one decode and prefill in-process; every device x every profile) are
``bench/bench_catalog.py``'s; ``--pairs`` prints them here too.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from timing import cold_env, run_once

SERVEBOUND = [sys.executable, "-m", "servebound"]


def llmfit_binary() -> Path:
    """llmfit in its own virtual environment, created and installed on first use."""
    home = Path(tempfile.gettempdir()) / "servebound-bench-peers"
    binary = home / "venv" / "bin" / "llmfit"
    if not binary.exists():
        subprocess.run([sys.executable, "-m", "venv", str(home / "venv")], check=True)
        pip = home / "venv" / "bin" / "pip"
        subprocess.run([str(pip), "install", "--quiet", "llmfit"], check=True)
    return binary


def cases(llmfit: Path) -> dict[str, list[str]]:
    lf = [str(llmfit), "--memory", "80G"]
    return {
        "servebound decode --json (cold)": [*SERVEBOUND, "decode", "-H", "nvidia-h100-sxm", "-m", "llama-3.1-8b", "--json"],
        "llmfit plan --json": [*lf, "plan", "meta-llama/Llama-3.1-8B", "--context", "8192", "--json"],
        "servebound rank --all-formats": [*SERVEBOUND, "rank", "--hardware", "nvidia-h100-sxm", "--all-formats"],
        "llmfit fit": [*lf, "fit", "--no-dashboard"],
        "servebound --help": [*SERVEBOUND, "--help"],
        "python -c pass": [sys.executable, "-c", "pass"],
    }  # fmt: skip


RATIOS = (
    ("cold decode / llmfit plan", "servebound decode --json (cold)", "llmfit plan --json", "< 1"),
    ("rank --all-formats / llmfit fit", "servebound rank --all-formats", "llmfit fit", "< 1"),
    ("--help / python -c pass", "servebound --help", "python -c pass", "<= 5"),
)


def warm_pairs() -> None:
    """One pair warm, and every device x every profile (decode + prefill each), in-process."""
    from servebound.catalog.hardware import get_hardware, list_hardware
    from servebound.catalog.models import get_model, list_models
    from servebound.core.workload import Workload
    from servebound.inputs.declared import DeclaredWorkload
    from servebound.questions.rank import rank_models

    sys.path.insert(0, str(Path(__file__).parent))
    from servebound.core.decode import decode
    from timing import median_s

    hw = get_hardware("nvidia-h100-sxm").hardware
    model = get_model("llama-3.1-8b").adapter
    workload = Workload()
    pair = median_s(lambda: decode(hw, model, workload), 2000, warm=True)
    both = median_s(lambda: rank_models(hw, [model], workload), 500, warm=True)
    print(
        f"warm pair, H100 x Llama 3.1 8B: decode {pair * 1e6:.1f} us median; decode + prefill at 8,192 "
        f"(a ranking row) {both * 1e6:.1f} us"
    )
    profiles = [m.adapter for m in list_models(native_only=False)]
    machines = [r.hardware for r in list_hardware()]
    fitted = DeclaredWorkload(Workload(), fit_contexts_to_model=True)
    best = min(median_s(lambda: [rank_models(m, profiles, fitted) for m in machines], 1) for _ in range(3))
    pairs = len(machines) * len(profiles)
    print(
        f"all pairs: {len(machines)} x {len(profiles)} = {pairs:,} in {best:.2f} s, {best / pairs * 1e6:.1f} us each"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--pairs", action="store_true", help="also the warm per-pair figures")
    options = parser.parse_args()
    llmfit = llmfit_binary()
    table = cases(llmfit)
    # Bytecode as an installed package has it (pip compiles it at install): written on the warm-up
    # run into the run's own folder, even where the shell turns bytecode writing off.
    env = cold_env()
    for command in table.values():  # warm-up: bytecode, the OS's page cache
        run_once(command, env)
    walls: dict[str, list[float]] = {label: [] for label in table}
    cpus: dict[str, list[float]] = {label: [] for label in table}
    for _ in range(options.rounds):
        for label, command in table.items():
            wall, cpu = run_once(command, env)
            walls[label].append(wall)
            cpus[label].append(cpu)
    shutil.rmtree(env["PYTHONPYCACHEPREFIX"], ignore_errors=True)
    load = os.getloadavg()[0]
    print(f"{options.rounds} alternating rounds; load average {load:.1f} at the end")
    median = {label: statistics.median(values) for label, values in cpus.items()}
    for label in table:
        print(
            f"{label}: CPU median {median[label] * 1e3:.0f} ms "
            f"(min {min(cpus[label]) * 1e3:.0f}, max {max(cpus[label]) * 1e3:.0f}); "
            f"wall median {statistics.median(walls[label]) * 1e3:.0f} ms"
        )
    for name, mine, theirs, goal in RATIOS:
        print(f"{name}: {median[mine] / median[theirs]:.2f} (goal {goal})")
    if options.pairs:
        warm_pairs()


if __name__ == "__main__":
    main()
