"""Web benchmarks: in-process page and API latency, requests/s on loopback, llms-full.txt, full export.

    python bench/bench_web.py [--export] [--full-render] [--requests 2000] [--threads 8]

Latencies are medians over repeated in-process requests (FastAPI's TestClient, no network). The load
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

from servebound.web import build_site, create_app
from timing import median_s


def median_ms(client: TestClient, url: str, repeat: int) -> float:
    def get() -> None:
        r = client.get(url)
        assert r.status_code == 200, (url, r.status_code)

    return median_s(get, repeat, warm=True) * 1e3


def load(url: str, requests: int, threads: int) -> float:
    import socket

    import uvicorn

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(create_app(), host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.05)
    base = f"http://127.0.0.1:{port}"
    local = threading.local()

    def one(_: int) -> int:
        if not hasattr(local, "client"):
            local.client = httpx.Client(base_url=base)
        code: int = local.client.get(url).status_code
        return code

    one(0)
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
        f"llms-full.txt, first request (foreground build): {first:7.2f} s  ({docs:,} documents, "
        f"{len(r.content) / 1e6:,.1f} MB); next request {again * 1e3:,.0f} ms"
    )
    app = create_app()
    client = TestClient(app)
    t = time.perf_counter()
    thread = app.state.llms_full.start()
    t503 = time.perf_counter()
    busy = client.get("/llms-full.txt")
    t503 = time.perf_counter() - t503
    thread.join()
    ready = time.perf_counter() - t
    print(
        f"llms-full.txt, background build (serve()):       {ready:7.2f} s to ready; a request meanwhile: "
        f"{busy.status_code} in {t503 * 1e3:,.0f} ms, Retry-After {busy.headers.get('retry-after')} s"
    )
    if full_render:
        from servebound.web import export
        from servebound.web.machine import llms_full_txt

        t = time.perf_counter()
        site = app.state.site
        text = llms_full_txt((p.markdown for p in export.iter_pages(app.state.renderer, site)), "")
        print(
            f"llms-full.txt from fully rendered pages (former): {time.perf_counter() - t:7.2f} s "
            f"({len(text) / 1e6:,.1f} MB)"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
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
    print(f"pair page, default workload (cached):   {median_ms(client, pair, args.repeat):7.2f} ms median")
    print(
        f"pair page, custom workload (computed):  {median_ms(client, pair + '?read_context=8000', args.repeat):7.2f} ms median"
    )
    print(f"/api/decode:                            {median_ms(client, api, args.repeat):7.2f} ms median")
    print(
        f"/api/prefill (prompt 8192, range):      {median_ms(client, f'/api/prefill?hardware=nvidia-dgx-spark&model={model}&prompt=8192&range=true', args.repeat):7.2f} ms median"
    )
    print(
        f"loopback, {args.threads} threads, /api/decode:   {load(api, args.requests, args.threads):7.0f} requests/s"
    )
    print(
        f"loopback, {args.threads} threads, pair page (custom workload): "
        f"{load(pair + '?read_context=8000', args.requests // 4, args.threads):7.0f} requests/s"
    )
    bench_llms_full(args.full_render)
    if args.export:
        with tempfile.TemporaryDirectory() as tmp:
            report = build_site(Path(tmp))
            print(
                f"static export: {report.pages:,} pages ({report.pairs:,} pairs) + mirrors, {report.files:,} files, "
                f"{report.bytes / 1e6:,.0f} MB in {report.seconds:,.1f} s"
            )


if __name__ == "__main__":
    main()
