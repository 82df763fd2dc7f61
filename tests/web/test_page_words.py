"""Words for people on every page kind (issue 35): no command-line flag of servebound's, no verdict enum,
no float in exponent notation and no "1 sessions" in what a reader sees. Code, formulas, figures, hidden
elements and quoted source text (a catalog row's sources and notes, a run's quoted command) are not the
site's sentences and are left out, as are other programs' flags quoted from their docs (vLLM's
--gpu-memory-utilization); the CLI manual (/docs/cli) is about the flags and is not scanned."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest
from fastapi.testclient import TestClient

from servebound.views.notes import VERDICT_TEXT

#: Elements whose text is not the site's prose: code, formulas, figures, scripts, quoted sources.
NOT_PROSE = {"script", "style", "code", "pre", "kbd", "samp", "math", "svg", "q", "template"}
NOT_PROSE_CLASSES = {"src", "sources"}
VOID = {"br", "img", "input", "meta", "link", "hr", "wbr", "source", "col", "area", "base", "embed", "track"}

PAGES = [
    "/",
    "/hardware",
    "/hardware/nvidia-h100-sxm",
    "/hardware/dgx-spark-example",
    "/models",
    "/models/laguna-s-2.1-nvfp4-example",
    "/pair/nvidia-h100-sxm/laguna-s-2.1-nvfp4-example",
    "/pair/nvidia-rtx-4090/laguna-s-2.1-nvfp4-example",  # does not fit
    "/pair/dgx-spark-example/qwen3.6-35b-a3b-example?batch=1&alloc_context=200000",
    "/pair/nvidia-h100-sxm/laguna-s-2.1-nvfp4-example?engine=vllm",  # an engine's overhead and cache
    "/validation",
    "/methodology",
    "/derivation",
    "/economics",
    "/docs",
    "/docs/site",
    "/search?q=laguna",
    "/search?q=qwen3.6",
]

FLAG = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]+")


def servebound_flags() -> set[str]:
    """Every option of every servebound command (an engine's own flag, quoted from its docs, is not ours)."""
    import click

    from servebound.cli.app import app

    found: set[str] = set()

    def walk(cmd: click.Command) -> None:
        for param in cmd.params:
            found.update(o for o in param.opts if o.startswith("--"))
        for sub in getattr(cmd, "commands", {}).values():
            walk(sub)

    walk(app)
    return found


ENUM = re.compile(r"\b(" + "|".join(sorted(VERDICT_TEXT)) + r")\b")
EXPONENT = re.compile(r"\b\d+(?:\.\d+)?e[+-]?\d+\b")
ONE_PLURAL = re.compile(r"(?<![\d,.])1 (sessions|tokens|devices|layouts)\b")
#: An engine by its id (vllm) where people write its name (vLLM): the engine table's display names.
ENGINE_ID = re.compile(r"(?<![\w./=-])(vllm|sglang|trt-llm|lm-studio|ollama)(?![\w-])")
#: An assumption's internal value: the batch search's cap, as a number.
INTERNAL = re.compile(r"\b1,000,000,000\b")


def format_ids() -> set[str]:
    """Every storage format's id, arithmetic mode and catalog profile's weight format (fp8, fp4,
    q4_k_m, mlx_4bit, bf16_mxfp4_experts): a page writes them as people do (FP8, Q4_K_M, MLX 4-bit)."""
    from servebound.catalog.models import _profile_ids
    from servebound.core.formats import FORMATS
    from servebound.core.hardware import ARITHMETIC_MODES

    return set(FORMATS) | set(ARITHMETIC_MODES) | {fmt for _, fmt, _ in _profile_ids().values()}


#: A format by its id where people write its name; not inside an id, a path or a parameter (an address
#: like /models/llama-3.1-70b-instruct-fp8 or ?kv_precision=fp8 is not prose).
FORMAT_ID = re.compile(
    r"(?<![\w./=-])(" + "|".join(sorted(format_ids(), key=len, reverse=True)) + r")(?![\w-])"
)


class Visible(HTMLParser):
    """The text a reader sees, without the elements above."""

    def __init__(self) -> None:
        super().__init__()
        self.skipping: list[bool] = []
        self.parts: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in VOID:
            return
        a = dict(attrs)
        classes = set((a.get("class") or "").split())
        self.skipping.append(tag in NOT_PROSE or "hidden" in a or bool(classes & NOT_PROSE_CLASSES))

    def handle_endtag(self, tag: str) -> None:
        if tag not in VOID and self.skipping:
            self.skipping.pop()

    def handle_data(self, data: str) -> None:
        if not any(self.skipping):
            self.parts.append(data)


def visible(html: str) -> str:
    parser = Visible()
    parser.feed(html)
    return " ".join(parser.parts)


@pytest.mark.parametrize("path", PAGES)
def test_no_flag_enum_or_raw_float_on_a_page(client: TestClient, path: str) -> None:
    r = client.get(path)
    assert r.status_code == 200, path
    text, ours = visible(r.text), servebound_flags()
    found = {
        name: sorted({m.group(0) for m in rx.finditer(text)})
        for name, rx in (
            ("flag", FLAG),
            ("enum", ENUM),
            ("exponent", EXPONENT),
            ("plural", ONE_PLURAL),
            ("engine id", ENGINE_ID),
            ("internal value", INTERNAL),
            ("format id", FORMAT_ID),
        )
    }
    found["flag"] = [f for f in found["flag"] if f in ours]
    assert not any(found.values()), (path, found)


def test_the_scan_finds_what_it_looks_for() -> None:
    page = (
        "<p>pass --hardware my.toml: no_session_fit at 2.1463e+06 for 1 sessions</p><code>--json</code>"
        "<p>hopper multiplies fp8 natively (vllm, sglang, trt-llm); largest batch 1,000,000,000</p>"
    )
    text = visible(page)
    assert ENGINE_ID.findall(text) == ["vllm", "sglang", "trt-llm"] and INTERNAL.findall(text)
    formats = visible("<p>the engine that runs fp8 weights; bf16_mxfp4_experts, mlx_4bit weights</p>")
    assert FORMAT_ID.findall(formats) == ["fp8", "bf16_mxfp4_experts", "mlx_4bit"]
    assert not FORMAT_ID.findall(
        "FP8, BF16 with experts in MXFP4; /models/llama-3.1-70b-instruct-fp8 q4_k_m-x"
    )
    assert not ENGINE_ID.findall("vLLM, SGLang, TensorRT-LLM; docs.vllm.ai; advanced-vllm-settings")
    assert (
        FLAG.findall(text) == ["--hardware"]
        and "--hardware" in servebound_flags()
        and ENUM.findall(text) == ["no_session_fit"]
    )
    assert EXPONENT.findall(text) == ["2.1463e+06"] and ONE_PLURAL.findall(text) == ["sessions"]
    assert "--gpu-memory-utilization" not in servebound_flags()  # vLLM's, quoted from its docs


#: Each assumption's value where its JSON holds a name: none of these may reach a page bare.
RAW_VALUES = {"reserved", "paged", "bound", "estimate", "peak", "measured", "expected", "minimum", "None"}


@pytest.mark.parametrize(
    "path",
    [
        "/pair/nvidia-h100-sxm/laguna-s-2.1-nvfp4-example",
        "/pair/nvidia-h100-sxm/laguna-s-2.1-nvfp4-example?engine=vllm",
        "/pair/dgx-spark-example/qwen3.6-35b-a3b-example?expert_traffic=minimum",
    ],
)
def test_assumption_rows_read_as_words(client: TestClient, path: str) -> None:
    page = client.get(path).text
    table = page[page.index("<h3>Assumptions</h3>") :]
    rows = dict(re.findall(r"<tr><th>(.*?)</th><td>(.*?)</td></tr>", table[: table.index("</table>")]))
    assert rows and not {v for v in rows.values() if v in RAW_VALUES}, rows
    assert not [k for k in rows if "_" in k or k[:1].islower()], rows  # every label is a label
    formats = [rows["Weight format"], rows["KV cache format"]]
    assert all(f == f.upper() or " " in f for f in formats), formats  # FP8, BF16, MLX 4-bit
    assert "no batch limit beyond memory" in rows["Largest batch searched"]
    if "engine=vllm" in path:
        assert rows["Engine"] == "vLLM" and rows["Runtime overhead: where it comes from"].startswith(
            "engine vLLM"
        )


def na_cells(page: str) -> list[tuple[str, str]]:
    """Each n/a cell of a page's ranking tables: (the cell's HTML, the words of the note it points to)."""
    notes = dict(re.findall(r'<li id="([^"]+-why-\d+)" value="\d+">(.*?)</li>', page))
    found = []
    for cell in re.findall(r'<td class="[^"]*\bna\b[^"]*">(.*?)</td>', page):
        target = re.search(r'<sup><a href="#([^"]+)">\d+</a></sup>', cell)
        found.append((cell, notes.get(target.group(1), "") if target else ""))
    return found


@pytest.mark.parametrize(
    "path",
    [
        "/hardware/nvidia-rtx-4090",
        "/hardware/dgx-spark-example",
        "/models/laguna-s-2.1-nvfp4-example",
        "/hardware?model=laguna-s-2.1-nvfp4-example",
    ],
)
def test_each_n_a_in_a_ranking_table_says_why(client: TestClient, path: str) -> None:
    page = client.get(path).text
    cells = na_cells(page)
    assert cells, path  # these pages have rows that do not fit
    assert all(cell.startswith("n/a") and why.startswith("n/a: ") and len(why) > 15 for cell, why in cells), (
        cells
    )
    # no n/a in a ranking table without its mark
    bare = re.findall(r'<td class="n">n/a</td>', page[page.index('<table class="sortable classes"') :])
    assert not bare, path
    # the mirror says the same: each n/a in its tables with the number of a note below the table
    mirror = client.get(path.replace("?", ".md?") if "?" in path else path + ".md").text
    rows = [line for line in mirror.splitlines() if line.startswith("| [")]
    marks = {m for line in rows for m in re.findall(r"\| n/a \[(\d+)\] ", line)}
    assert marks and not [line for line in rows if re.search(r"\| n/a \|", line)], path
    assert all(f"- [{m}] n/a: " in mirror for m in marks), path


def test_arithmetic_modes_read_as_people_write_them(client: TestClient) -> None:
    page = client.get("/hardware/nvidia-rtx-4090").text
    modes = re.findall(r"<tr><th>Dense ([^<]+)</th>", page)
    assert "FP8" in modes and "FP16 with FP16 accumulate" in modes, modes
    assert not [m for m in modes if "_" in m or m != m.strip() or m[:2].islower()], modes


@pytest.mark.parametrize(
    ("path", "family"),
    [
        ("/pair/nvidia-h100-sxm/laguna-s-2.1-nvfp4-example", "Hopper"),
        ("/pair/nvidia-b200/laguna-s-2.1-nvfp4-example", "Blackwell"),
    ],
)
def test_the_format_support_line_names_the_silicon_and_the_engines(
    client: TestClient, path: str, family: str
) -> None:
    page = client.get(path).text
    line = re.search(r'data-k="format_support_why">(.*?)</small>', page)
    assert line is not None
    said = line.group(1)
    assert said.startswith(family) and "vLLM" in said and "FP4" in said, said
    assert not ENGINE_ID.findall(said) and family.lower() not in said, said
