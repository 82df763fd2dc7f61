"""Results that document themselves: every result field has help text, the JSON views emit exactly the
documented fields (plus the inputs and views named here), and the manual's tables (docs/) are the generated ones."""

from __future__ import annotations

import dataclasses
import importlib.util
import inspect
from pathlib import Path

import pytest

from servebound import decode, load_hardware, load_model, make_workload, prefill
from servebound.core.band import BandBasis, ExpectedBand
from servebound.core.decode import DecodeResult, Forced
from servebound.core.fields import field_docs, undocumented
from servebound.core.nearest_records import NearestFit
from servebound.core.prefill import PrefillResult
from servebound.questions.rank import RankRow
from servebound.questions.system_decode import SystemDecode
from servebound.questions.system_prefill import SystemPrefill
from servebound.views.report import decode_json, prefill_json

ROOT = Path(__file__).resolve().parents[1]

#: JSON keys that are views of the inputs or prose, documented in the manual's text, not as fields.
VIEW_KEYS = {
    "hardware",
    "model",
    "assumptions",
    "remedies",
    "notes",
    "note_settings",
    "range",
    "decode_compute",
}


def docs_fields() -> object:
    spec = importlib.util.spec_from_file_location("docs_fields", ROOT / "scripts" / "docs_fields.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("record", [DecodeResult, Forced, PrefillResult])
def test_every_result_field_is_documented(record: type) -> None:
    assert undocumented(record) == [], f"document these {record.__name__} fields with documented(...)"
    for doc in field_docs(record):
        assert doc.help.strip() and "|" not in doc.help, doc


@pytest.mark.parametrize(
    "record",
    [
        DecodeResult,
        Forced,
        PrefillResult,
        NearestFit,
        RankRow,
        SystemDecode,
        SystemPrefill,
        ExpectedBand,
        BandBasis,
    ],
)
def test_a_field_is_named_as_its_json_key(record: type) -> None:
    """One name per quantity: a documented field is published under its own name (or not at all), and
    no property repeats a field under another name."""
    for doc in field_docs(record):
        assert doc.json in (None, doc.attribute), (
            f"{record.__name__}.{doc.attribute} is published as {doc.json}"
        )
    fields = {item.name for item in dataclasses.fields(record)}
    for name, value in vars(record).items():
        if isinstance(value, property) and value.fget is not None:
            body = inspect.getsource(value.fget).strip().splitlines()[-1].strip()
            assert body not in {f"return self.{field}" for field in fields}, (
                f"{record.__name__}.{name}: {body}"
            )


def test_the_docs_tables_are_generated_from_the_fields() -> None:
    module = docs_fields()
    texts = {p.name: p.read_text(encoding="utf-8") for p in sorted((ROOT / "docs").glob("*.md"))}
    every = "".join(texts.values())
    assert all(f"<!-- fields: {name} -->" in every for name in ("decode", "prefill", "rank"))
    for name, text in texts.items():
        stale = f"run `python scripts/docs_fields.py` and commit docs/{name}"
        assert module.render(text) == text, stale  # type: ignore[attr-defined]


def test_the_json_views_are_the_documented_fields() -> None:
    hw, model = load_hardware("nvidia-dgx-spark"), load_model("qwen3.6-35b-a3b-nvfp4")
    decoded = decode_json(decode(hw, model, make_workload(batch=4)))
    names = {doc.json for doc in field_docs(DecodeResult) if doc.json}
    assert set(decoded) - VIEW_KEYS == names
    assert set(decoded["forced"]) == {doc.json for doc in field_docs(Forced)}
    prefilled = prefill_json(prefill(hw, model, 4096))
    assert set(prefilled) - VIEW_KEYS == {doc.json for doc in field_docs(PrefillResult) if doc.json}


def test_a_rank_row_carries_its_documented_fields() -> None:
    from servebound.catalog.hardware import get_hardware
    from servebound.questions.rank import RankRow, rank_hardware
    from servebound.views.rows import rank_row_json

    docs = [doc for doc in field_docs(RankRow) if doc.json]
    assert docs and all(doc.help.strip() and "|" not in doc.help for doc in docs)
    model = load_model("qwen3-30b-a3b-q4_k_m")
    (row,) = rank_hardware(model, [get_hardware("nvidia-rtx-4090")])
    data = rank_row_json(row)
    assert {doc.json for doc in docs} <= set(data)
    assert data["hardware_group"] == "consumer" and data["devices"] == 1 and data["price_basis"] == "rental"
    assert data["usd_per_mtok_output"] == data["usd_per_hour"] / (data["aggregate_tok_s"] * 3600) * 1e6
