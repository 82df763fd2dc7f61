"""The catalog as data to take away: hardware, models, profiles, reported runs and the default-workload
ceilings of every pair that fits, as one SQLite file (datasette-ready: primary and foreign keys, and a
``_columns`` table describing every column) or one CSV file per table.

Every table is declared once (``TABLES``: each column's SQL type, description and how a record gives
it); both writers read the declarations. The ceilings come from ``questions.rank.rank_models`` under
``api.default_workload`` (the workload `servebound decode` answers with when no flag is given), one
device at a time over every profile: the same rows `servebound rank` computes.
"""

from __future__ import annotations

import csv
import sqlite3
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from servebound.catalog.hardware import list_hardware
from servebound.catalog.model_build import model_index
from servebound.catalog.models import list_models
from servebound.core.hardware import ARITHMETIC_MODES
from servebound.core.units import GB
from servebound.inputs.scenario import default_workload
from servebound.questions.rank import rank_models
from servebound.runs.reported import load_reported_runs


@dataclass(frozen=True)
class Column:
    name: str
    sql: str
    description: str
    value: Callable[[Any], Any]


@dataclass(frozen=True)
class Table:
    name: str
    description: str
    columns: tuple[Column, ...]
    #: The primary key's columns, and (column, table) foreign keys.
    key: tuple[str, ...]
    references: tuple[tuple[str, str], ...] = ()


def _col(name: str, sql: str, description: str, value: Callable[[Any], Any]) -> Column:
    return Column(name, sql, description, value)


def _tflops(mode: str) -> Column:
    return _col(
        f"{mode}_tflops",
        "REAL",
        f"Dense {mode} rate in TFLOP/s as the row states it (NULL where none is published)",
        lambda h: h.compute_tflops.get(mode),
    )


HARDWARE = Table(
    "hardware",
    "Every hardware catalog row (devices and multi-device systems), in the contract's units",
    (
        _col("id", "TEXT", "Catalog id (what --hardware takes)", lambda h: h.id),
        _col("name", "TEXT", "Marketed name", lambda h: h.name),
        _col("vendor", "TEXT", "Vendor", lambda h: h.vendor),
        _col(
            "class",
            "TEXT",
            "Device class (consumer GPU, datacenter GPU, unified-memory SoC ...)",
            lambda h: h.device_class,
        ),
        _col("year", "INTEGER", "Year of release", lambda h: h.year),
        _col(
            "memory_gb",
            "REAL",
            "Memory capacity C in GB (10^9 bytes) the device reports",
            lambda h: h.memory_gb,
        ),
        _col("memory_type", "TEXT", "Memory technology", lambda h: h.memory_type),
        _col("bandwidth_gb_per_s", "REAL", "Peak memory bandwidth R in GB/s", lambda h: h.bandwidth_gb_per_s),
        *(_tflops(mode) for mode in ARITHMETIC_MODES),
        _col(
            "price_usd",
            "REAL",
            "Purchase price in USD (NULL where the catalog has none)",
            lambda h: h.price_usd,
        ),
        _col(
            "system_member_id",
            "TEXT",
            "For a multi-device system: the catalog id of its device (NULL for a device)",
            lambda h: None if h.system is None else h.system.member_id,
        ),
        _col(
            "system_count",
            "INTEGER",
            "For a multi-device system: how many devices (NULL for a device)",
            lambda h: None if h.system is None else h.system.count,
        ),
        _col(
            "aliases", "TEXT", "Other names --hardware takes, comma-separated", lambda h: ", ".join(h.aliases)
        ),
        _col("memory_source", "TEXT", "Source of memory_gb", lambda h: h.sources.get("memory_gb")),
        _col(
            "bandwidth_source",
            "TEXT",
            "Source of bandwidth_gb_per_s",
            lambda h: h.sources.get("bandwidth_gb_per_s"),
        ),
    ),
    key=("id",),
    references=(("system_member_id", "hardware"),),
)

MODELS = Table(
    "models",
    "Every catalog model: one released checkpoint, its config.json's source",
    (
        _col("id", "TEXT", "Catalog model id (the profile id of its native format)", lambda e: e.id),
        _col("hf_id", "TEXT", "Hugging Face repository", lambda e: e.hf_id),
        _col(
            "hf_revision",
            "TEXT",
            "Repository revision the config was read at (empty where not recorded)",
            lambda e: e.hf_revision,
        ),
        _col("config", "TEXT", "Folder of the shipped config.json", lambda e: e.config),
        _col("verification", "TEXT", "How the config's bytes were checked", lambda e: e.verification),
    ),
    key=("id",),
)

PROFILES = Table(
    "profiles",
    "Every catalog profile: a model at one weight format (what --model takes)",
    (
        _col(
            "id",
            "TEXT",
            "Profile id: the model id for its native format, '<model id>-<format>' otherwise",
            lambda m: m.id,
        ),
        _col("model_id", "TEXT", "The model (models.id)", lambda m: m.base_id),
        _col(
            "weight_format",
            "TEXT",
            "Weight format (bf16, fp8, q4_k_m, mxfp4_moe, mlx_4bit ...)",
            lambda m: m.weight_format,
        ),
        _col("native", "INTEGER", "1 where the format is the release's own storage", lambda m: int(m.native)),
        _col("name", "TEXT", "Display name", lambda m: m.name),
        _col("family", "TEXT", "Architecture family (config.json's model_type)", lambda m: m.family),
        _col(
            "family_name",
            "TEXT",
            "The architecture as its family writes it (Qwen3 MoE)",
            lambda m: m.family_name,
        ),
        _col("total_params", "REAL", "Total parameters, counted from config.json", lambda m: m.total_params),
        _col(
            "active_params",
            "REAL",
            "Parameters read per token (MoE: the routed experts a token uses)",
            lambda m: m.active_params,
        ),
        _col("moe", "INTEGER", "1 for a mixture-of-experts model", lambda m: int(m.is_moe)),
        _col(
            "resident_gb",
            "REAL",
            "W_resident: weight bytes held in memory, in GB",
            lambda m: m.adapter.weights.resident / GB,
        ),
        _col(
            "active_gb",
            "REAL",
            "W_active: weight bytes one token reads, in GB",
            lambda m: m.adapter.weights.active / GB,
        ),
        _col(
            "kv_bytes_per_token",
            "REAL",
            "KV cache bytes allocated per token of context (global + local layers)",
            lambda m: m.adapter.kv_alloc.global_bytes_per_token + m.adapter.kv_alloc.local_bytes_per_token,
        ),
        _col(
            "context_limit",
            "INTEGER",
            "The model's context limit in tokens",
            lambda m: m.adapter.context_limit_tokens,
        ),
    ),
    key=("id",),
    references=(("model_id", "models"),),
)

RUNS = Table(
    "runs",
    "Published measurements (reported_runs.toml), each with its source",
    (
        _col("id", "TEXT", "Run id", lambda r: r.id),
        _col("hardware_id", "TEXT", "Hardware it ran on (hardware.id)", lambda r: r.hardware),
        _col("profile_id", "TEXT", "Profile it ran (profiles.id)", lambda r: r.model),
        _col("engine", "TEXT", "Serving engine", lambda r: r.engine),
        _col("engine_version", "TEXT", "Engine version and settings", lambda r: r.engine_version),
        _col("quantization", "TEXT", "Weights and cache as the source states them", lambda r: r.quantization),
        _col(
            "metric",
            "TEXT",
            "What was measured (per_session_tok_s, aggregate_tok_s, prefill ...)",
            lambda r: r.metric.value,
        ),
        _col("measured", "REAL", "The measured value, in the metric's unit", lambda r: r.measured),
        _col("concurrency", "INTEGER", "Concurrent sessions", lambda r: r.concurrency),
        _col(
            "read_context",
            "INTEGER",
            "Mean context each decode step reads, in tokens",
            lambda r: r.read_context,
        ),
        _col(
            "prompt_tokens",
            "INTEGER",
            "Prompt length of a prefill or TTFT run, in tokens",
            lambda r: r.prompt_tokens,
        ),
        _col("source_url", "TEXT", "Where the figure is published", lambda r: r.source_url),
        _col("source_kind", "TEXT", "primary, secondary or unverified", lambda r: r.source_kind),
    ),
    key=("id",),
    references=(("hardware_id", "hardware"), ("profile_id", "profiles")),
)

CEILINGS = Table(
    "ceilings",
    "Default-workload decode ceilings of every (hardware, profile) pair where a session fits and the "
    "device runs the format: `servebound decode --json` for the pair with no workload flag",
    (
        _col("hardware_id", "TEXT", "Hardware (hardware.id)", lambda r: r.hardware.id),
        _col("profile_id", "TEXT", "Profile (profiles.id)", lambda r: r.model.id),
        _col(
            "verdict",
            "TEXT",
            "floor_fit: a batch clears the floor; fit_below_floor: fits, below it",
            lambda r: r.decode.verdict.value,
        ),
        _col(
            "single_session_tok_s",
            "REAL",
            "One session's decode speed ceiling, tokens/s",
            lambda r: r.decode.single_session_tok_s,
        ),
        _col(
            "batch_star",
            "INTEGER",
            "b*: the batch that maximises useful aggregate at the floor",
            lambda r: r.decode.batch_star,
        ),
        _col(
            "aggregate_tok_s",
            "REAL",
            "Useful aggregate decode ceiling at b*, tokens/s",
            lambda r: r.decode.aggregate_tok_s,
        ),
        _col(
            "per_session_tok_s",
            "REAL",
            "Each session's speed at b*, tokens/s",
            lambda r: r.decode.per_session_tok_s,
        ),
        _col(
            "batch_mem",
            "INTEGER",
            "Sessions that fit in memory at the reserved context",
            lambda r: r.decode.batch_mem,
        ),
        _col(
            "alloc_context_tokens",
            "INTEGER",
            "Context reserved per session, tokens",
            lambda r: r.decode.workload.alloc_context_tokens,
        ),
        _col(
            "read_context_tokens",
            "INTEGER",
            "Mean context each step reads, tokens",
            lambda r: r.decode.workload.read_context_tokens,
        ),
        _col(
            "overhead_gb",
            "REAL",
            "Runtime overhead O held back, GB",
            lambda r: r.decode.workload.overhead_bytes / GB,
        ),
        _col(
            "format_support",
            "TEXT",
            "How the device runs the weight format (native, dequantized ...)",
            lambda r: r.decode.format_support.value,
        ),
        _col(
            "ttft_s", "REAL", "Time to first token of the rank's one-shot prompt, seconds", lambda r: r.ttft_s
        ),
    ),
    key=("hardware_id", "profile_id"),
    references=(("hardware_id", "hardware"), ("profile_id", "profiles")),
)

TABLES = (HARDWARE, MODELS, PROFILES, RUNS, CEILINGS)


def _records() -> dict[str, Iterator[Any]]:
    """Each table's records, produced on demand."""
    return {
        "hardware": iter(list_hardware()),
        "models": iter(model_index()),
        "profiles": iter(list_models()),
        "runs": iter(load_reported_runs()),
        "ceilings": ceiling_rows(),
    }


def ceiling_rows() -> Iterator[Any]:
    """The rank rows of every catalog device over every profile, those that fit, device by device."""
    profiles = [m.adapter for m in list_models()]
    workload = default_workload()
    for row in list_hardware():
        ranked = rank_models(row, profiles, workload)
        yield from sorted((r for r in ranked if r.decode.fits), key=lambda r: r.model.id)


def _create(table: Table) -> str:
    lines = [f'  "{c.name}" {c.sql}, -- {c.description}' for c in table.columns]
    lines.append(f"  PRIMARY KEY ({', '.join(table.key)})")
    for column, target in table.references:
        lines[-1] += ","
        lines.append(f'  FOREIGN KEY ("{column}") REFERENCES "{target}"(id)')
    return f'CREATE TABLE "{table.name}" ( -- {table.description}\n' + "\n".join(lines) + "\n)"


def write_sqlite(path: str | Path, records: Mapping[str, Iterable[Any]] | None = None) -> dict[str, int]:
    """Write every table to a new SQLite file at ``path`` (an existing file is replaced); the row
    count of each table. ``records``: each table's records (default: computed now)."""
    target = Path(path)
    target.unlink(missing_ok=True)
    counts: dict[str, int] = {}
    with sqlite3.connect(target) as db:
        db.execute(
            'CREATE TABLE "_columns" ( -- What every column of every table holds\n'
            '  "table_name" TEXT, "column_name" TEXT, "description" TEXT,\n'
            "  PRIMARY KEY (table_name, column_name))"
        )
        records = records or _records()
        for table in TABLES:
            db.execute(_create(table))
            db.executemany(
                'INSERT INTO "_columns" VALUES (?, ?, ?)',
                [(table.name, c.name, c.description) for c in table.columns],
            )
            rows = [tuple(c.value(r) for c in table.columns) for r in records[table.name]]
            marks = ", ".join("?" * len(table.columns))
            db.executemany(f'INSERT INTO "{table.name}" VALUES ({marks})', rows)
            counts[table.name] = len(rows)
    return counts


def write_csv(folder: str | Path, records: Mapping[str, Iterable[Any]] | None = None) -> dict[str, int]:
    """Write each table as ``<table>.csv`` (a header row, then the records) and ``_columns.csv`` into
    ``folder`` (made if missing); the row count of each table. ``records`` as for :func:`write_sqlite`."""
    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    counts: dict[str, int] = {}
    records = records or _records()
    with (out / "_columns.csv").open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["table_name", "column_name", "description"])
        for table in TABLES:
            writer.writerows((table.name, c.name, c.description) for c in table.columns)
    for table in TABLES:
        with (out / f"{table.name}.csv").open("w", newline="", encoding="utf-8") as handle:
            writer = csv.writer(handle)
            writer.writerow([c.name for c in table.columns])
            count = 0
            for record in records[table.name]:
                writer.writerow([c.value(record) for c in table.columns])
                count += 1
            counts[table.name] = count
    return counts


def write_both(sqlite_path: str | Path, csv_folder: str | Path) -> dict[str, int]:
    """The SQLite file and the CSV folder from one computation of the records (the static site's
    ``data/``); the row count of each table."""
    records = {name: list(rows) for name, rows in _records().items()}
    write_csv(csv_folder, records)
    return write_sqlite(sqlite_path, records)


def table_names() -> tuple[str, ...]:
    """The tables, in the order the files hold them (``_columns`` describes the others' columns)."""
    return ("_columns", *(table.name for table in TABLES))
