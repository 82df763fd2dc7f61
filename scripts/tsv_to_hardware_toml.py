"""Print one hardware.tsv row as a ``[[device]]`` block to paste into catalog/data/hardware.toml.

    python scripts/tsv_to_hardware_toml.py path/to/hardware.tsv ROW_ID >> new-row.toml

hardware.toml is the catalog's source of truth and is edited by hand; this only saves typing when a
row starts from the reference TSV. Every number gets the row's whole ``sources`` cell as its source:
split it per number, add the curation (sparse_halved, derived, notes) and run ``servebound catalog
lint`` before committing.
"""

from __future__ import annotations

import csv
import sys

import tomli_w

COLUMNS = {"fp4": "fp4_tflops", "fp8": "fp8_tflops", "int8": "int8_tops"}
COLUMNS |= {mode: f"{mode}_tflops" for mode in ("bf16", "fp16", "fp32")}


def number(cell: str) -> int | float:
    value = float(cell)
    return int(value) if value.is_integer() else value


def device(row: dict[str, str]) -> dict[str, object]:
    keys = ("id", "name", "vendor", "class")
    out: dict[str, object] = {key: row[key] for key in keys}
    out |= {"year": int(row["year"]), "memory_gb": number(row["memory_gb"])}
    out |= {"memory_type": row["memory_type"], "bandwidth_gb_per_s": number(row["bandwidth_gb_per_s"])}
    if row["price_usd"]:
        out["price_usd"] = number(row["price_usd"])
    out["notes"] = row["notes"]
    rates = {mode: number(row[col]) for mode, col in COLUMNS.items() if row[col]}
    out["compute_tflops"] = rates
    numbers = ["memory_gb", "bandwidth_gb_per_s", *(["price_usd"] if row["price_usd"] else []), *rates]
    out["sources"] = {key: row["sources"] for key in numbers}
    return out


def main(argv: list[str]) -> int:
    if len(argv) != 3:
        print("usage: tsv_to_hardware_toml.py HARDWARE_TSV ROW_ID", file=sys.stderr)
        return 2
    with open(argv[1], encoding="utf-8", newline="") as handle:
        rows = {row["id"]: row for row in csv.DictReader(handle, delimiter="\t")}
    if argv[2] not in rows:
        print(f"row id {argv[2]!r} is not in {argv[1]}; ids: {', '.join(sorted(rows))}", file=sys.stderr)
        return 2
    sys.stdout.write(tomli_w.dumps({"device": [device(rows[argv[2]])]}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
