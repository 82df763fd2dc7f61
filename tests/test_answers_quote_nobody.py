"""The ceiling answers quote nobody (issue 36): the sources an answer carries in its assumptions (the
runtime overhead's, the engine's allocation and cache) are written in the project's words with their
links, in the catalog itself, so the CLI's JSON, the Python record and /api/* are one text and none of
them reproduces a document's sentences. A page may quote its sources; an answer does not."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

import servebound
from servebound.web.pages.site import quoted_passages

DATA = Path(servebound.__file__).parent / "catalog" / "data"
ENGINES = (None, "vllm", "sglang", "trt-llm", "llama.cpp", "ollama", "lm-studio", "mlx")


def _strings(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def test_the_finder_finds_a_quotation() -> None:
    assert quoted_passages("a source: 'It will use 90% of memory' (https://x)") != []
    assert quoted_passages("vLLM's default 'auto' cache") == []


@pytest.mark.parametrize("name", ["engines.toml", "hosts.toml"])
def test_engine_and_host_sources_are_in_our_words(name: str) -> None:
    """The tables whose sources become an answer's assumptions hold no quoted passage."""
    table = tomllib.loads((DATA / name).read_text("utf-8"))
    quoted = [s for s in _strings(table) if quoted_passages(s)]
    assert not quoted, quoted


def test_hardware_rows_overhead_sources_are_in_our_words() -> None:
    """Each row's runtime-overhead source (the assumption every answer on that row states)."""
    rows = tomllib.loads((DATA / "hardware.toml").read_text("utf-8"))
    quoted = [
        text
        for row in rows["device"]
        for key, text in row["sources"].items()
        if key.startswith("runtime_overhead") and quoted_passages(text)
    ]
    assert not quoted, quoted
    assert sum("runtime_overhead_gb" in row["sources"] for row in rows["device"]) > 50


def test_no_answer_quotes_a_source() -> None:
    """decode on every hardware row, under every engine that runs there: the whole JSON answer."""
    answered = 0
    for row in servebound.hardware():
        for engine in ENGINES:
            try:
                answer = servebound.decode(row.id, "qwen3-8b", engine=engine).to_dict()
            except ValueError:
                continue  # this engine does not run the model's format on this row
            answered += 1
            text = json.dumps(answer, ensure_ascii=False)
            assert not quoted_passages(text), (row.id, engine, [text[a:b] for a, b in quoted_passages(text)])
    assert answered > len(servebound.hardware())
