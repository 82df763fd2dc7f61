"""Write the catalog snapshot (src/servebound/catalog/data/snapshot/) from the catalog's files.

Run after any edit to hardware.toml, models.toml, a model's config.json, engines.toml or the code that
builds their records: python scripts/build_snapshot.py. tests/test_snapshot.py fails until the files
equal a rebuild. The output is deterministic (sorted keys, catalog order, no dates). Then it refits the
expected bands over the new snapshot (snapshot/bands.json; tests/test_band_table.py checks it).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from servebound.catalog import snapshot
from servebound.catalog.snapshot_build import build

FOLDER = Path(__file__).resolve().parents[1] / "src" / "servebound" / "catalog" / Path(*snapshot.FOLDER)


def main() -> None:
    FOLDER.mkdir(parents=True, exist_ok=True)
    for name, text in build().items():
        path = FOLDER / name
        path.write_text(text, encoding="utf-8")
        print(f"{path.relative_to(FOLDER.parents[3])}: {len(text.encode()):,} bytes")
    # The band fits evaluate every reported run against the records just written: a fresh process
    # reads the new snapshot (this one may hold records it read before the rewrite).
    subprocess.run([sys.executable, __file__, "--bands"], check=True)


def write_bands() -> None:
    from servebound.runs.band_fit import band_table_text
    from servebound.runs.band_table import TABLE

    path = FOLDER.parent.joinpath(*TABLE[1:])
    text = band_table_text()
    path.write_text(text, encoding="utf-8")
    print(f"{path.relative_to(FOLDER.parents[3])}: {len(text.encode()):,} bytes")


if __name__ == "__main__":
    write_bands() if sys.argv[1:] == ["--bands"] else main()
