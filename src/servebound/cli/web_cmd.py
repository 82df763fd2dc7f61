"""`servebound serve`: the site and the JSON API, live."""

from __future__ import annotations

import errno
import socket

from servebound.cli.common import command, option
from servebound.errors import InputError
from servebound.views.terminal import visible
from servebound.web.app.server import serve


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
