"""Web benchmarks: in-process page and API latency, requests/s on loopback, llms-full.txt, full export.

    python bench/bench_web.py [--pages] [--export] [--full-render] [--requests 2000] [--threads 8]

Latencies are medians over repeated in-process requests (FastAPI's TestClient, no network). A pair
page with a custom workload is timed over a different workload each request (read_context 8000,
8001, ...), so nothing one request computed serves the next; its folded sections' fragments are timed
right after their page, as a reader opening them would ask for them. ``--pages`` stops there. The load
test starts uvicorn on 127.0.0.1 and drives it with a bounded loop of httpx requests from a thread
pool. llms-full.txt is timed three ways on fresh apps: the first request with no background build
(the foreground build), the background build ``serve()`` starts (time until ready, and the latency
of a request answered 503 meanwhile), and a request after it. ``--full-render`` also times the
former path (every page rendered in full, HTML and figures included) for comparison. ``--export``
also times ``build_site`` over the packaged catalogs into a temporary folder.
"""

from __future__ import annotations

import argparse
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
from fastapi.testclient import TestClient

from servebound.web.app.server import create_app
from servebound.web.export.build import build_site
from timing import cpu_s, free_port, median_s


def median_ms(client: TestClient, url: str, repeat: int) -> float:
    def get() -> None:
        r = client.get(url)
        assert r.status_code == 200, (url, r.status_code)

    return median_s(get, repeat, warm=True) * 1e3


def _timed(client: TestClient, url: str) -> tuple[float, float, str]:
    """One request: its wall seconds, the CPU seconds the whole process spent meanwhile (the test
    client's threads and the app's: steadier than the wall on a shared machine) and its text."""
    wall, cpu = time.perf_counter(), time.process_time()
    r = client.get(url)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    assert r.status_code == 200, (url, r.status_code)
    return wall, cpu, r.text


def pair_pages(client: TestClient, pair: str, repeat: int) -> None:
    """The cached pair page, then the computed one: each request a new workload, then the fragments
    its folded sections name (``data-fragment``), in page order; medians of the wall time (and of
    the process's CPU time), and the page plus every fragment as one total."""
    import html
    import re
    from statistics import median

    def show(label: str, times: list[tuple[float, float]], note: str = "") -> float:
        wall, cpu = median(t[0] for t in times) * 1e3, median(t[1] for t in times) * 1e3
        print(f"{label:<40} {wall:7.2f} ms median ({cpu:.2f} ms CPU){note}")
        return wall

    cached = [_timed(client, pair)[:2] for _ in range(repeat + 1)][1:]
    page: list[tuple[float, float]] = []
    parts: dict[str, list[tuple[float, float]]] = {}
    total: list[tuple[float, float]] = []
    for i in range(repeat + 1):  # the first round warms up
        wall, cpu, text = _timed(client, f"{pair}?read_context={8000 + i}")
        spent = [wall, cpu]
        for href in re.findall(r'data-fragment="([^"]+)"', text):
            f_wall, f_cpu, _ = _timed(client, html.unescape(href))
            spent = [spent[0] + f_wall, spent[1] + f_cpu]
            if i:
                parts.setdefault(href.rsplit("section=", 1)[1], []).append((f_wall, f_cpu))
        if i:
            page.append((wall, cpu))
            total.append((spent[0], spent[1]))
    base = show("pair page, default workload (cached):", cached)
    custom = median(t[0] for t in page) * 1e3
    show("pair page, custom workload (computed):", page, f"; {custom / base:.2f}x the cached")
    for name, times in parts.items():
        show(f"  its folded section {name} (fragment):", times)
    show("  the page and every folded section:", total)
    again = [_timed(client, pair + "?read_context=8000")[:2] for _ in range(repeat + 1)][1:]
    show("pair page, one custom workload repeated:", again, " (its records kept between requests)")


def load(url: str, requests: int, threads: int) -> float:
    """Requests/s over loopback; a ``{}`` in ``url`` takes each request's number (a new workload each)."""
    import uvicorn

    port = free_port()
    server = uvicorn.Server(uvicorn.Config(create_app(), host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.05)
    base = f"http://127.0.0.1:{port}"
    local = threading.local()

    def one(i: int) -> int:
        if not hasattr(local, "client"):
            local.client = httpx.Client(base_url=base)
        code: int = local.client.get(url.replace("{}", str(8000 + i))).status_code
        return code

    one(-1)  # warm: a workload the timed requests do not ask for
    start = time.perf_counter()
    with ThreadPoolExecutor(threads) as pool:
        codes = list(pool.map(one, range(requests)))
    elapsed = time.perf_counter() - start
    server.should_exit = True
    thread.join(timeout=10)
    assert all(c == 200 for c in codes)
    return requests / elapsed


def bench_llms_full(full_render: bool) -> None:
    app = create_app()
    client = TestClient(app)
    t = time.perf_counter()
    r = client.get("/llms-full.txt")
    first = time.perf_counter() - t
    assert r.status_code == 200
    t = time.perf_counter()
    client.get("/llms-full.txt")
    again = time.perf_counter() - t
    docs = r.text.count("\n=====  =====  =====\n")
    print(
        f"llms-full.txt, first request (streamed as it builds): {first:7.2f} s  ({docs:,} documents, "
        f"{len(r.content) / 1e6:,.1f} MB); next request {again * 1e3:,.0f} ms"
    )

    import uvicorn

    app = create_app()
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    runner = threading.Thread(target=server.run, daemon=True)
    t = time.perf_counter()
    thread = app.state.llms_full.start()  # as serve() does
    runner.start()
    while not server.started:
        time.sleep(0.01)
    up = time.perf_counter() - t
    with httpx.stream("GET", f"http://127.0.0.1:{port}/llms-full.txt", timeout=600) as streamed:
        status = streamed.status_code
        chunks = streamed.iter_raw()
        size = len(next(chunks))
        t_first = time.perf_counter() - t
        size += sum(len(chunk) for chunk in chunks)
    t_done = time.perf_counter() - t
    assert thread is not None
    thread.join()
    server.should_exit = True
    runner.join(timeout=10)
    print(
        f"llms-full.txt on uvicorn, background build started with the server: server up after {up:.2f} s; "
        f"a request at once: {status}, first bytes {t_first:.2f} s after start, all {size / 1e6:,.1f} MB "
        f"after {t_done:.2f} s"
    )
    if full_render:
        from servebound.web.export import build as export
        from servebound.web.pages.machine_files import llms_full_txt

        t = time.perf_counter()
        site = app.state.site
        text = llms_full_txt((p.markdown for p in export.iter_pages(app.state.renderer, site)), "")
        print(
            f"llms-full.txt from fully rendered pages (former): {time.perf_counter() - t:7.2f} s "
            f"({len(text) / 1e6:,.1f} MB)"
        )


def serve_ready() -> None:
    """``servebound serve`` as a user starts it (a fresh process, twice: nothing is kept between starts,
    the catalog records come from the packaged snapshot and llms-full.txt is built after each start):
    seconds from the spawn until the home page and the pair page answer, and until llms-full.txt's
    first bytes and its last."""
    import os
    import subprocess
    import sys

    env = dict(os.environ)
    for start in ("first start", "second start"):
        port = free_port()
        base = f"http://127.0.0.1:{port}"
        t = time.perf_counter()
        proc = subprocess.Popen(
            [sys.executable, "-m", "servebound", "serve", "--port", str(port)],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            while True:
                try:
                    if httpx.get(base + "/", timeout=5).status_code == 200:
                        break
                except httpx.TransportError:
                    time.sleep(0.02)
            home = time.perf_counter() - t
            home_cpu = cpu_s(proc.pid)
            model = "llama-3.1-8b"
            pair = httpx.get(f"{base}/pair/nvidia-h100-sxm/{model}", timeout=60).status_code
            pair_after = time.perf_counter() - t
            with httpx.stream("GET", base + "/llms-full.txt", timeout=600) as streamed:
                status = streamed.status_code
                chunks = streamed.iter_raw()
                size = len(next(chunks))
                first = time.perf_counter() - t
                size += sum(len(chunk) for chunk in chunks)
            done = time.perf_counter() - t
        finally:
            proc.terminate()
            proc.wait(timeout=30)
        print(
            f"servebound serve, {start}: home page after {home:.2f} s ({home_cpu:.2f} s of the server's "
            f"CPU; the first pair page {pair} after {pair_after:.2f} s); llms-full.txt {status}: first bytes "
            f"after {first:.2f} s, all {size / 1e6:,.2f} MB (compressed) after {done:.2f} s"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--pages", action="store_true", help="only the in-process pair page latencies")
    parser.add_argument("--export", action="store_true", help="also time the full static export")
    parser.add_argument(
        "--full-render", action="store_true", help="also time llms-full.txt from fully rendered pages"
    )
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--threads", type=int, default=8)
    parser.add_argument("--repeat", type=int, default=50)
    args = parser.parse_args()

    app = create_app()
    site = app.state.site
    model = next(m.id for m in site.models if m.native)
    client = TestClient(app)
    pair = f"/pair/nvidia-dgx-spark/{model}"
    api = f"/api/decode?hardware=nvidia-dgx-spark&model={model}"
    print(f"catalog: {len(site.hardware)} hardware rows, {len(site.models)} model profiles")
    pair_pages(client, pair, args.repeat)
    if args.pages:
        return
    print(f"/api/decode:                            {median_ms(client, api, args.repeat):7.2f} ms median")
    print(
        f"/api/prefill (prompt 8192, range):      {median_ms(client, f'/api/prefill?hardware=nvidia-dgx-spark&model={model}&prompt=8192&range=true', args.repeat):7.2f} ms median"
    )
    print(
        f"loopback, {args.threads} threads, /api/decode:   {load(api, args.requests, args.threads):7.0f} requests/s"
    )
    print(
        f"loopback, {args.threads} threads, pair page (custom workload): "
        f"{load(pair + '?read_context={}', args.requests // 4, args.threads):7.0f} requests/s (a new workload each)"
    )
    bench_llms_full(args.full_render)
    serve_ready()
    if args.export:
        with tempfile.TemporaryDirectory() as tmp:
            report = build_site(Path(tmp))
            print(
                f"static export: {report.pages:,} pages ({report.pairs:,} pairs) + mirrors, {report.files:,} files, "
                f"{report.bytes / 1e6:,.0f} MB in {report.seconds:,.1f} s"
            )


if __name__ == "__main__":
    main()
