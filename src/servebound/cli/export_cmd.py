"""`servebound export --sqlite FILE | --csv DIR`: the catalog and ceilings as data to take away."""

from __future__ import annotations

import time
from pathlib import Path

from servebound.catalog.export import write_csv, write_sqlite
from servebound.cli.common import command, option
from servebound.cli.output import console
from servebound.errors import InputError


@command(
    "export",
    option("sqlite", str, None, "Write one SQLite file here (replaced if it exists).", "--sqlite"),
    option("csv_dir", str, None, "Write one CSV file per table into this folder.", "--csv"),
    examples=(
        "servebound export --sqlite servebound.db",
        "servebound export --csv servebound-csv",
    ),
)
def export_command(sqlite: str | None, csv_dir: str | None) -> None:
    if (sqlite is None) == (csv_dir is None):
        raise InputError("sqlite", "give one of --sqlite FILE and --csv DIR")
    target = Path(sqlite if sqlite is not None else str(csv_dir))
    field = "sqlite" if sqlite is not None else "csv_dir"
    if sqlite is not None and (target.is_dir() or not target.parent.is_dir()):
        raise InputError(field, f"{sqlite!r}: give a file path in an existing folder")
    if csv_dir is not None and ((target.exists() and not target.is_dir()) or not target.parent.is_dir()):
        raise InputError(field, f"{csv_dir!r}: give a folder (made if missing) in an existing folder")
    start = time.perf_counter()
    counts = write_sqlite(sqlite) if sqlite is not None else write_csv(str(csv_dir))
    shown = ", ".join(f"{n:,} {table}" for table, n in counts.items())
    console.print(f"wrote {sqlite or csv_dir}: {shown} ({time.perf_counter() - start:.1f} s)")
