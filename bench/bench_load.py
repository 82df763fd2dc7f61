"""Load test: a real `servebound serve` on loopback, decode clients alone, then under attack.

    python bench/bench_load.py [--seconds 8] [--decode-clients 4] [--attackers 4] [--max-requests 20000]
                               [--heaviest [--distinct]] [--rounds 1]

Starts the server as its own process (the console script, as a user runs it), waits until it answers,
then runs two bounded phases of ``--seconds`` each (and at most ``--max-requests`` requests per client):

1. baseline: ``--decode-clients`` threads loop over ``/api/decode`` requests;
2. attack: the same decode clients, plus ``--attackers`` threads (with ``--heaviest``: only the issue's
   heaviest legal request, a 1,024-device layout search; with ``--distinct`` too, each one with a floor
   of its own, so no kept answer serves it and every one is a fresh search) cycling through the heaviest pages and
   searches: pair pages (default and custom workloads, the custom ones never cached), a system's
   layout page, ``/api/layout`` and ``/api/plan`` over the largest system (1024 B200s, DeepSeek-V3),
   ``/api/cost``, ``/api/prefill`` and ``/api/rank`` calls, and unknown ids of 100 kB in pair paths and
   API queries (sent on raw sockets: HTTP clients refuse URLs that long);
3. crowd: ``--crowd`` clients downloading ``/llms-full.txt`` (gzip and plain in turn), for the
   server's memory (it once encoded the file again per request).

Decode clients, attackers and the crowd run in separate processes, so one role's client work does
not slow another's through a shared GIL.

Before the phases it times how long after the process starts ``/llms-full.txt`` answers 200 (the
background build ``serve`` starts) and its size, plain and gzip.

It counts errors (a connection failure, a 5xx, or a status other than the one each request expects:
200 for real pages, 404 for unknown ids, 4xx for a request line the server refuses; a 503 with
Retry-After, the heavy lane's refusal, is counted apart as refused, not as an error), samples the
server's resident memory every 0.2 s, and prints decode requests/s in both phases, their ratio and
the server's RSS. ``--rounds N`` alternates phases 1 and 2 N times on the one server and reports the
median ratio of the pairs (a machine shared with other work changes its load between phases). Exit status 1 when there is any error, the ratio is below 0.5, or RSS grows past
``--max-rss-growth-mb``: the README quotes its figures.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import multiprocessing
import os
import queue
import shutil
import socket
import statistics
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from multiprocessing import Queue
from typing import Any

import httpx
import psutil

LONG_ID = "x" * 100_000
PAIR_PAGES = [
    "/pair/nvidia-h100-sxm/llama-3.1-8b",
    "/pair/nvidia-rtx-4090/qwen3-30b-a3b-q4_k_m",
    "/pair/nvidia-dgx-spark/qwen3.6-35b-a3b-nvfp4?floor=12&alloc_context=32000",
    "/pair/apple-m4-max-128gb/gpt-oss-20b?overhead_gb=20",
    "/pair/nvidia-b200/deepseek-v3?floor=11&read_context=20000",
    "/hardware/8x-nvidia-b200?model=deepseek-v3",
]
#: The searches the issue timed at 2 to 5 s each (the largest system for the largest model), and the
#: other computed endpoints.
API_CALLS = [
    "/api/layout?hardware=1024x-nvidia-b200&model=deepseek-v3",
    "/api/plan?hardware=1024x-nvidia-b200&model=deepseek-v3&prompt=2000&output_tokens=500&users=100000",
    "/api/cost?hardware=nvidia-h100-sxm&model=llama-3.1-8b",
    "/api/prefill?hardware=nvidia-h100-sxm&model=llama-3.1-8b&prompt=8192&range=true",
    "/api/rank?hardware=nvidia-rtx-4090",
    "/api/decode?hardware=nvidia-b200&model=deepseek-v3&floor=10",
]
DECODE = "/api/decode?hardware=nvidia-h100-sxm&model=llama-3.1-8b"


@dataclass
class Tally:
    """Requests done and errors seen, per kind, shared by the client threads."""

    done: Counter[str] = field(default_factory=Counter)
    errors: Counter[str] = field(default_factory=Counter)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def count(self, kind: str, ok: bool, why: str = "") -> None:
        with self.lock:
            self.done[kind] += 1
            if not ok:
                self.errors[f"{kind}: {why}"] += 1


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_server(
    port: int, timeout_s: float = 120.0
) -> tuple[subprocess.Popen[bytes], float, float, int, int]:
    """Start `servebound serve`; wait for its API, then for llms-full.txt. Returns the process, the
    seconds from start to the API answering and to llms-full.txt answering 200, and that file's
    size plain and gzip."""
    exe = shutil.which("servebound") or os.path.join(os.path.dirname(sys.executable), "servebound")
    began = time.perf_counter()
    proc = subprocess.Popen(
        [exe, "serve", "--port", str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    base = f"http://127.0.0.1:{port}"
    deadline, api_s = time.monotonic() + timeout_s, None
    while time.monotonic() < deadline:
        try:
            if api_s is None and httpx.get(f"{base}/api/hardware", timeout=2).status_code == 200:
                api_s = time.perf_counter() - began
            if api_s is not None:
                plain = httpx.get(
                    f"{base}/llms-full.txt", headers={"Accept-Encoding": "identity"}, timeout=30
                )
                if plain.status_code == 200:
                    ready_s = time.perf_counter() - began
                    packed = httpx.get(
                        f"{base}/llms-full.txt", headers={"Accept-Encoding": "gzip"}, timeout=30
                    )
                    wire = int(packed.headers.get("content-length", len(packed.content)))
                    return proc, api_s, ready_s, len(plain.content), wire
        except httpx.HTTPError:
            pass
        time.sleep(0.25)
    proc.kill()
    raise SystemExit(f"the server did not answer (and build llms-full.txt) within {timeout_s:g} s")


def raw_get(port: int, target: str, timeout: float = 30.0) -> int:
    """One GET over a raw socket (no client-side URL limit); the response's status code."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        sock.sendall(f"GET {target} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".encode())
        chunks = []
        while True:
            data = sock.recv(65536)
            if not data:
                break
            chunks.append(data)
    head = b"".join(chunks).split(b"\r\n", 1)[0].decode("latin-1")
    return int(head.split()[1])


def client_loop(work: Callable[[int], None], stop: threading.Event, max_requests: int) -> None:
    for i in range(max_requests):
        if stop.is_set():
            return
        work(i)


def decode_worker(base: str, tally: Tally) -> Callable[[int], None]:
    client = httpx.Client(base_url=base, timeout=30)

    def work(_: int) -> None:
        try:
            code = client.get(DECODE).status_code
            tally.count("decode", code == 200, str(code))
        except httpx.HTTPError as exc:
            tally.count("decode", False, type(exc).__name__)

    return work


def crowd_worker(base: str, tally: Tally, offset: int) -> Callable[[int], None]:
    """A client of llms-full.txt, gzip and plain in turn (the whole site as text, ~70 MB plain)."""
    client = httpx.Client(base_url=base, timeout=120)
    kinds = itertools.islice(itertools.cycle(["llms-full gzip", "llms-full plain"]), offset, None)

    def work(_: int) -> None:
        kind = next(kinds)
        encoding = "gzip" if kind.endswith("gzip") else "identity"
        try:
            with client.stream("GET", "/llms-full.txt", headers={"Accept-Encoding": encoding}) as response:
                for _chunk in response.iter_raw(1 << 20):  # read it all, undecoded
                    pass
            tally.count(kind, response.status_code == 200, str(response.status_code))
        except httpx.HTTPError as exc:
            tally.count(kind, False, type(exc).__name__)

    return work


#: The heaviest legal request (issue 33): with --heaviest the attackers send only this one.
HEAVIEST = "/api/layout?hardware=1024x-nvidia-b200&model=deepseek-v3"
#: Set by --heaviest before the client processes start (they inherit it).
ONLY_HEAVIEST = False
#: Set by --distinct: each heaviest request asks a floor of its own (10.0001, 10.0002, ...), so no kept
#: answer serves it and every one is a fresh 1,024-device search.
DISTINCT = False


def attack_worker(base: str, port: int, tally: Tally, offset: int) -> Callable[[int], None]:
    client = httpx.Client(base_url=base, timeout=30)
    targets: list[tuple[str, str]] = (
        [("api", HEAVIEST)]
        if ONLY_HEAVIEST
        else (
            [("page", p) for p in PAIR_PAGES]
            + [("api", a) for a in API_CALLS]
            + [
                ("long id", f"/pair/nvidia-h100-sxm/{LONG_ID}"),
                ("long id", f"/api/decode?hardware=nvidia-h100-sxm&model={LONG_ID}"),
                ("long id", f"/pair/{LONG_ID}/llama-3.1-8b"),
            ]
        )
    )
    cycle = itertools.islice(itertools.cycle(targets), offset, None)
    fresh = itertools.count(offset * 100_000 + 1)

    def work(_: int) -> None:
        kind, target = next(cycle)
        if DISTINCT and ONLY_HEAVIEST:
            target += f"&floor={10 + next(fresh) / 1e6:.6f}"
        try:
            if kind.startswith("llms-full"):
                encoding = "gzip" if kind.endswith("gzip") else "identity"
                code = client.get(target, headers={"Accept-Encoding": encoding}).status_code
                tally.count(kind, code == 200, str(code))
            elif kind == "long id":
                code = raw_get(port, target)
                # 404 from the app; 4xx if the server refuses the request line first
                tally.count(kind, 400 <= code < 500, str(code))
            else:
                response = client.get(target)
                code = response.status_code
                if code == 503 and "retry-after" in response.headers:  # the heavy lane's refusal
                    tally.count(f"{kind} refused", True)
                else:
                    tally.count(kind, code == 200, f"{code} {target}")
        except (httpx.HTTPError, OSError, ValueError, IndexError) as exc:
            tally.count(kind, False, type(exc).__name__)

    return work


def run_clients(
    role: str, clients: int, port: int, seconds: float, max_requests: int, out: Queue[Any]
) -> None:
    """One client process: ``clients`` threads of one role for ``seconds``; puts its tally on ``out``.
    Decode clients and attackers live in separate processes, so an attacker decompressing 70 MB
    does not slow the decode clients through this process's own GIL."""
    base = f"http://127.0.0.1:{port}"
    tally, stop = Tally(), threading.Event()
    if role == "decode":
        works = [decode_worker(base, tally) for _ in range(clients)]
    elif role == "crowd":
        works = [crowd_worker(base, tally, i) for i in range(clients)]
    else:
        works = [attack_worker(base, port, tally, i * 3) for i in range(clients)]
    threads = [threading.Thread(target=client_loop, args=(w, stop, max_requests)) for w in works]
    start = time.perf_counter()
    for t in threads:
        t.start()
    while time.perf_counter() - start < seconds and any(t.is_alive() for t in threads):
        time.sleep(0.05)
    stop.set()
    for t in threads:
        t.join()
    out.put((role, dict(tally.done), dict(tally.errors), time.perf_counter() - start))


def phase(
    port: int,
    seconds: float,
    decoders: int,
    attackers: int,
    max_requests: int,
    server: psutil.Process,
    crowd: int = 0,
) -> tuple[Tally, float, int]:
    """Run one phase; return the tally, decode requests/s and the server's peak RSS in bytes."""
    out: Queue[Any] = multiprocessing.Queue()
    roles = [(role, n) for role, n in (("decode", decoders), ("attack", attackers), ("crowd", crowd)) if n]
    procs = [
        multiprocessing.Process(target=run_clients, args=(role, n, port, seconds, max_requests, out))
        for role, n in roles
    ]
    peak = server.memory_info().rss
    for proc in procs:
        proc.start()
    results: list[tuple[str, dict[str, int], dict[str, int], float]] = []
    while len(results) < len(procs):
        with contextlib.suppress(queue.Empty):
            results.append(out.get(timeout=0.2))
        peak = max(peak, server.memory_info().rss)
    for proc in procs:
        proc.join()
    tally, decode_rate = Tally(), 0.0
    for role, done, errors, elapsed in results:
        tally.done.update(done)
        tally.errors.update(errors)
        if role == "decode":
            decode_rate = done.get("decode", 0) / elapsed
    return tally, decode_rate, peak


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=8.0)
    parser.add_argument(
        "--rounds", type=int, default=1, help="alternate the alone and attack phases this many times"
    )
    parser.add_argument("--decode-clients", type=int, default=4)
    parser.add_argument("--attackers", type=int, default=4)
    parser.add_argument("--max-requests", type=int, default=20_000, help="per client and phase")
    parser.add_argument("--crowd", type=int, default=8, help="llms-full.txt clients in the third phase")
    parser.add_argument("--max-rss-growth-mb", type=float, default=300.0)
    parser.add_argument(
        "--startup-timeout", type=float, default=120.0, help="seconds to wait for llms-full.txt"
    )
    parser.add_argument(
        "--heaviest", action="store_true", help=f"attackers send only the heaviest request, {HEAVIEST}"
    )
    parser.add_argument(
        "--distinct",
        action="store_true",
        help="with --heaviest: every request a distinct floor, so none is answered from kept answers",
    )
    args = parser.parse_args()
    global ONLY_HEAVIEST, DISTINCT
    ONLY_HEAVIEST, DISTINCT = args.heaviest, args.distinct
    multiprocessing.set_start_method("fork", force=True)  # the clients inherit ONLY_HEAVIEST
    port = free_port()
    proc, api_s, ready_s, full_bytes, full_gzip = start_server(port, args.startup_timeout)
    print(
        f"serve: API answering {api_s:.1f} s after start; llms-full.txt ready {ready_s:.1f} s after start, "
        f"{full_bytes / 1e6:,.1f} MB ({full_gzip / 1e6:,.1f} MB gzip)"
    )
    try:
        server = psutil.Process(proc.pid)
        # warm the pages and calls once, so neither phase pays first-render costs
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=60) as warm:
            for target in [DECODE, *PAIR_PAGES, *API_CALLS]:
                warm.get(target)
        rss_start = server.memory_info().rss
        # --rounds alternates the two phases on the one server: on a shared machine the load moves
        # between phases, and the median of the paired ratios is steadier than one pair.
        base_tally, attack_tally = Tally(), Tally()
        base_rates, attack_rates, base_peak, attack_peak = [], [], 0, 0
        for _ in range(args.rounds):
            tally, rate, top = phase(port, args.seconds, args.decode_clients, 0, args.max_requests, server)
            base_tally.done.update(tally.done)
            base_tally.errors.update(tally.errors)
            base_rates.append(rate)
            base_peak = max(base_peak, top)
            tally, rate, top = phase(
                port, args.seconds, args.decode_clients, args.attackers, args.max_requests, server
            )
            attack_tally.done.update(tally.done)
            attack_tally.errors.update(tally.errors)
            attack_rates.append(rate)
            attack_peak = max(attack_peak, top)
        crowd_tally, _, crowd_peak = phase(port, args.seconds, 0, 0, args.max_requests, server, args.crowd)
        rss_end = server.memory_info().rss
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    errors = base_tally.errors + attack_tally.errors + crowd_tally.errors
    ratios = [a / b if b else 0.0 for a, b in zip(attack_rates, base_rates, strict=True)]
    ratio = statistics.median(ratios)
    base_rate, attack_rate = statistics.median(base_rates), statistics.median(attack_rates)
    peak = max(base_peak, attack_peak, crowd_peak)
    growth_mb = (peak - rss_start) / 1e6
    print(f"decode alone: {base_rate:,.0f} requests/s ({args.decode_clients} clients, {args.seconds:g} s)")
    print(
        f"decode under attack: {attack_rate:,.0f} requests/s ({ratio:.0%} of alone) with {args.attackers} "
        f"attackers: {dict(attack_tally.done)}"
    )
    if args.rounds > 1:
        pairs = ", ".join(
            f"{a:,.0f}/{b:,.0f} ({r:.0%})" for a, b, r in zip(attack_rates, base_rates, ratios, strict=True)
        )
        print(f"rounds (under attack / alone): {pairs}; median ratio {ratio:.0%}")
    print(
        f"llms-full.txt crowd: {args.crowd} clients, {dict(crowd_tally.done)} in {args.seconds:g} s; "
        f"server RSS peak {crowd_peak / 1e6:,.0f} MB"
    )
    print(
        f"server RSS: {rss_start / 1e6:,.0f} MB after warm-up, peak {peak / 1e6:,.0f} MB "
        f"(+{growth_mb:,.0f} MB), {rss_end / 1e6:,.0f} MB at the end"
    )
    print(f"errors: {sum(errors.values())}" + (f" {dict(errors)}" if errors else ""))
    ok = not errors and ratio >= 0.5 and growth_mb <= args.max_rss_growth_mb
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
