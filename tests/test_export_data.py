"""`servebound export`: the catalog, reported runs and default-workload ceilings as SQLite and CSV
(issue 34), read back with Python's sqlite3 and csv."""

from __future__ import annotations

import csv
import json
import sqlite3
from pathlib import Path

import pytest

import servebound
from servebound.catalog.export import TABLES
from servebound.catalog.hardware import list_hardware
from servebound.catalog.model_build import model_index
from servebound.catalog.models import get_model, profile_ids
from servebound.cli import main
from servebound.runs.reported import load_reported_runs

PAIRS = [
    ("nvidia-rtx-4090", "qwen3-8b-q4_k_m"),
    ("nvidia-dgx-spark", "gpt-oss-120b"),
    ("nvidia-h100-sxm", "llama-3.1-8b-instruct-fp8"),
    ("apple-m4-max-128gb", "llama-3.3-70b-instruct-q4_k_m"),
]


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("export")
    assert main(["export", "--sqlite", str(folder / "servebound.db")]) == 0
    assert main(["export", "--csv", str(folder / "csv")]) == 0
    return folder


def test_row_counts_equal_the_catalog(exported: Path) -> None:
    db = sqlite3.connect(exported / "servebound.db")
    count = {t.name: db.execute(f'SELECT count(*) FROM "{t.name}"').fetchone()[0] for t in TABLES}
    assert count["hardware"] == len(list_hardware())
    assert count["models"] == len(model_index())
    assert count["profiles"] == len(profile_ids())
    assert count["runs"] == len(load_reported_runs())
    assert count["ceilings"] > 10_000
    assert db.execute("PRAGMA foreign_key_check").fetchall() == []
    described = db.execute('SELECT count(*) FROM "_columns"').fetchone()[0]
    assert described == sum(len(t.columns) for t in TABLES)
    # every table's CSV holds the same rows
    for table in TABLES:
        with (exported / "csv" / f"{table.name}.csv").open(newline="") as handle:
            rows = list(csv.reader(handle))
        assert rows[0] == [c.name for c in table.columns]
        assert len(rows) - 1 == count[table.name], table.name


def test_the_ceilings_are_every_pair_that_fits(exported: Path) -> None:
    """For two devices, the rows are exactly the profiles that fit and that the device runs."""
    db = sqlite3.connect(exported / "servebound.db")
    for hardware in ("nvidia-rtx-4090", "apple-m4-max-128gb"):
        stored = {
            r[0] for r in db.execute("SELECT profile_id FROM ceilings WHERE hardware_id = ?", (hardware,))
        }
        wanted = set()
        for profile in profile_ids():
            result = servebound.decode(hardware, profile)
            if result.fits and result.format_support.value != "unsupported":
                wanted.add(profile)
        assert stored == wanted, hardware


@pytest.mark.parametrize(("hardware", "profile"), PAIRS)
def test_a_joined_ceiling_equals_decode_json(
    exported: Path, capsys: pytest.CaptureFixture[str], hardware: str, profile: str
) -> None:
    db = sqlite3.connect(exported / "servebound.db")
    db.row_factory = sqlite3.Row
    row = db.execute(
        "SELECT c.*, h.bandwidth_gb_per_s, p.weight_format, m.hf_id FROM ceilings c "
        "JOIN hardware h ON h.id = c.hardware_id JOIN profiles p ON p.id = c.profile_id "
        "JOIN models m ON m.id = p.model_id WHERE c.hardware_id = ? AND c.profile_id = ?",
        (hardware, profile),
    ).fetchone()
    assert row is not None
    assert main(["decode", "--hardware", hardware, "--model", profile, "--json"]) == 0
    answer = json.loads(capsys.readouterr().out)
    for key in (
        "verdict",
        "single_session_tok_s",
        "aggregate_tok_s",
        "per_session_tok_s",
        "batch_star",
        "batch_mem",
    ):
        assert row[key] == answer[key], key
    assert row["bandwidth_gb_per_s"] == answer["hardware"]["bandwidth_gb_per_s"]
    model = get_model(profile)
    assert (row["weight_format"], row["hf_id"]) == (model.weight_format, model.entry.hf_id)


def test_export_needs_one_target(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main(["export"]) == 2
    assert "--sqlite" in capsys.readouterr().err
    assert main(["export", "--sqlite", str(tmp_path / "missing" / "x.db")]) == 2
    assert "existing folder" in capsys.readouterr().err
    (tmp_path / "file").write_text("")
    assert main(["export", "--csv", str(tmp_path / "file")]) == 2
    assert "give a folder" in capsys.readouterr().err
