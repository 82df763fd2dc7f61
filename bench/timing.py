"""The benchmarks' timers: wall times of repeated in-process calls (time.perf_counter), and one fresh
process's wall and CPU time in an environment that keeps bytecode as an installed package has it.

The bench scripts run as `python bench/<script>.py`, which puts this folder first on the import path.
"""

from __future__ import annotations

import os
import resource
import socket
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable


def timed_runs(fn: Callable[[], object], repeat: int, *, warm: bool = False) -> list[float]:
    """Seconds taken by each of `repeat` calls of fn, after one untimed call when `warm`."""
    if warm:
        fn()
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return samples


def median_s(fn: Callable[[], object], repeat: int, *, warm: bool = False) -> float:
    """The median of timed_runs, in seconds."""
    return statistics.median(timed_runs(fn, repeat, warm=warm))


def cold_env() -> dict[str, str]:
    """This environment with bytecode written into a fresh temporary folder (``PYTHONPYCACHEPREFIX``),
    even where the shell turns bytecode writing off: a warm-up run compiles the package once, as pip
    does at install, and nothing else is kept between runs."""
    env = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = tempfile.mkdtemp(prefix="servebound-bench-")
    return env


def run_once(command: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Wall seconds and CPU seconds (user + system, the process and what it waited for) of one fresh
    process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def free_port() -> int:
    """A loopback port free at the moment of asking."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def cpu_s(pid: int) -> float:
    """The CPU seconds (user + system) a running process has used so far (Linux: /proc; NaN elsewhere):
    on a shared machine the steadier figure beside the wall time."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return float("nan")
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
