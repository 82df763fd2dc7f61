"""`servebound serve` and `servebound build-site DIR`: the site, live or as static files."""

from __future__ import annotations

import errno
import socket
from pathlib import Path

from servebound.cli.common import argument, command, option
from servebound.cli.output import console
from servebound.errors import InputError
from servebound.views.terminal import visible


@command(
    "serve",
    option("host", str, "127.0.0.1", "Interface to listen on (localhost by default).", "--host"),
    option("port", int, 8000, "TCP port.", "--port"),
    option(
        "base_url",
        str,
        None,
        "Where clients reach the site: absolute URLs in robots.txt, llms.txt, sitemap.xml "
        "(default http://HOST:PORT; never taken from a request's Host header).",
        "--base-url",
    ),
    examples=(
        "servebound serve",
        "servebound serve --host 0.0.0.0 --port 8080 --base-url https://example.org",
    ),
)
def serve_command(host: str, port: int, base_url: str | None) -> None:
    if not 0 < port < 65536:
        raise InputError("port", f"must be between 1 and 65535 (got {port})")
    if base_url is not None and not base_url.startswith(("http://", "https://")):
        raise InputError("base_url", f"give an absolute http(s) URL (got {base_url!r})")
    _check_bindable(
        host, port
    )  # before the banner: a busy port is one error line, not a URL then a bind error
    from servebound.web.app.server import serve

    # One plain line (rich is not imported for it: the server's start is the time to its first page).
    banner = (
        f"servebound: http://{host}:{port}/  (API: /api/, OpenAPI: /openapi.json, for machines: /llms.txt)"
    )
    print(visible(banner), flush=True)
    serve(host=host, port=port, base_url=base_url)


def _check_bindable(host: str, port: int) -> None:
    """InputError unless ``host:port`` can be bound now (the server binds it again a moment later)."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError) as exc:
        raise InputError("host", f"{host!r} is not an address this machine can listen on ({exc})") from None
    family, kind, proto, _, address = infos[0]
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn binds
        try:
            probe.bind(address)
        except OSError as exc:
            reason = "is in use" if exc.errno == errno.EADDRINUSE else f"cannot be bound ({exc.strerror})"
            raise InputError("port", f"{host}:{port} {reason}; choose another with --port") from None


@command(
    "build-site",
    argument("out_dir", "Folder to write the static site into."),
    option(
        "base_url",
        str,
        None,
        "Where the copy will be served: absolute URLs in robots.txt, llms.txt, sitemap.xml and each "
        "page's canonical link (without it: relative links, no sitemap, and a warning).",
        "--base-url",
    ),
    option("max_pairs", int, None, "Cap the pair pages written (default: every native pair).", "--max-pairs"),
    option(
        "no_data",
        bool,
        False,
        "Leave out data/servebound.sqlite and data/csv/ (the catalog as data, as `servebound export` "
        "writes it; about a minute to compute).",
        "--no-data",
    ),
    examples=(
        "servebound build-site site/",
        "servebound build-site site/ --max-pairs 50 --base-url https://example.org",
    ),
)
def build_site_command(out_dir: str, base_url: str | None, max_pairs: int | None, no_data: bool) -> None:
    folder = Path(out_dir)
    if base_url is None:
        import click

        click.echo(
            "WARNING: no --base-url. The copy's canonical links, robots.txt and llms.txt use relative "
            "paths and no sitemap.xml is written (a sitemap needs absolute URLs). Before deploying, "
            "build again with --base-url https://where.it.is.served",
            err=True,
        )
        base_url = ""
    elif not base_url.startswith(("http://", "https://")):
        raise InputError("base_url", f"give an absolute http(s) URL (got {base_url!r})")
    if max_pairs is not None and max_pairs < 0:
        raise InputError("max_pairs", f"must be >= 0 (got {max_pairs})")
    if folder.exists() and not folder.is_dir():
        raise InputError("out_dir", f"{folder} exists and is not a folder")
    try:  # before the progress bar: a folder that cannot be made (/proc/x, read-only) is one error line
        folder.mkdir(parents=True, exist_ok=True)
        probe = folder / ".servebound-write-check"
        probe.touch()
        probe.unlink()
    except OSError as exc:
        raise InputError(
            "out_dir", f"cannot write into {folder} ({exc.strerror or exc}); give a folder you can write to"
        ) from None
    from servebound.cli.output import progress_bar
    from servebound.web.export.build import build_site

    with progress_bar(counted=True) as bar:
        task = bar.add_task("building", total=None)

        def progress(done: int, total: int, path: str) -> None:
            bar.update(task, completed=done, total=total, description=path[:40].ljust(40))

        report = build_site(
            folder, progress, base_url=base_url.rstrip("/"), max_pairs=max_pairs, takeaway=not no_data
        )
    console.print(
        f"wrote {report.files:,} files ({report.bytes / 1e6:,.1f} MB): {report.pages:,} pages, "
        f"{report.pairs:,} pair pages, in {report.seconds:.1f} s. Serve it: python -m http.server -d {folder}"
    )
