"""`servebound serve`'s first answer: seconds from the process's start to the first 200.

Run: python bench/bench_serve_start.py [--runs N]. Each run starts a fresh `python -m servebound serve`
on a free loopback port and asks one URL every 10 ms until it answers 200: the home page, a pair page,
or `/api/decode` on a catalog pair, each in its own runs (the first request is the one that waits, so
each kind of first request is timed from a cold process). The figures are the medians of N runs of the
wall seconds from the spawn to that 200 and of the server's CPU seconds (user + system) by then. One
untimed start first writes the bytecode into a fresh temporary folder (``PYTHONPYCACHEPREFIX``, even
where the shell turns bytecode writing off), as an installed package has it compiled at install; nothing
else is kept between runs (the catalog comes from the packaged snapshot, nothing is written under the home folder). The
kinds alternate, one run of each per round, so load on a shared machine falls on all of them alike.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time

import httpx

from timing import cold_env, cpu_s, free_port

FIRST = {
    "home page /": "/",
    "pair page /pair/nvidia-h100-sxm/llama-3.1-8b": "/pair/nvidia-h100-sxm/llama-3.1-8b",
    "/api/decode (H100 x Llama 3.1 8B)": "/api/decode?hardware=nvidia-h100-sxm&model=llama-3.1-8b",
}


def first_answer(path: str, env: dict[str, str], timeout_s: float = 60.0) -> tuple[float, float]:
    """Start a server, ask `path` until it answers 200; wall seconds from the spawn, server CPU seconds."""
    port = free_port()
    url = f"http://127.0.0.1:{port}{path}"
    began = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "servebound", "serve", "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    try:
        while time.perf_counter() - began < timeout_s:
            if proc.poll() is not None:
                raise SystemExit(f"the server stopped (exit {proc.returncode})")
            try:
                if httpx.get(url, timeout=timeout_s).status_code == 200:
                    return time.perf_counter() - began, cpu_s(proc.pid)
            except httpx.TransportError:
                time.sleep(0.01)
        raise SystemExit(f"{path} did not answer 200 within {timeout_s:g} s")
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=7)
    runs = parser.parse_args().runs
    env = cold_env()
    first_answer("/", env)  # warm-up: bytecode, the OS's page cache
    walls: dict[str, list[float]] = {label: [] for label in FIRST}
    cpus: dict[str, list[float]] = {label: [] for label in FIRST}
    load = os.getloadavg()[0]
    for _ in range(runs):
        for label, path in FIRST.items():
            wall, cpu = first_answer(path, env)
            walls[label].append(wall)
            cpus[label].append(cpu)
    shutil.rmtree(env["PYTHONPYCACHEPREFIX"], ignore_errors=True)
    print(f"{runs} alternating rounds; load average {load:.1f} before, {os.getloadavg()[0]:.1f} after")
    for label in FIRST:
        print(
            f"serve, first answer {label}: wall median {statistics.median(walls[label]):.2f} s "
            f"(min {min(walls[label]):.2f}, max {max(walls[label]):.2f}); "
            f"server CPU median {statistics.median(cpus[label]):.2f} s"
        )


if __name__ == "__main__":
    main()
