"""`servebound build-site DIR`: the site as static files."""

from __future__ import annotations

from pathlib import Path

import click

from servebound.cli.common import argument, command, option
from servebound.cli.output import console, progress_bar
from servebound.errors import InputError
from servebound.web.export.build import build_site


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
