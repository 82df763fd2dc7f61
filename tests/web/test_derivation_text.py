"""The derivation page's text: servebound's own words (no 8-word run of the source's prose beyond a few
percent, no first person of its author), complete against the source (every heading, display formula
and table has its counterpart), credited, and with every worked figure computed, none withheld.

The source text is ../shared/spec/roofline-derivation.md; the tests that compare against it skip, saying
so, in a checkout without ../shared.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from servebound.web.pages import derivation as dv
from servebound.web.pages import derivation_live as live
from servebound.web.pages import derivation_toy as dt

ROOT = Path(__file__).resolve().parents[2]
SPEC = ROOT.parent / "shared" / "spec" / "roofline-derivation.md"
needs_spec = pytest.mark.skipif(
    not SPEC.exists(), reason="../shared/spec/roofline-derivation.md is absent (a checkout without ../shared)"
)
#: The most of the page's 8-word prose runs that may also stand in the source ("a few percent").
MAX_SHARED_RUNS = 0.03
RUN = 8


def source() -> dv.Derivation:
    """The source text parsed by the page's own parser (it has no marker lines and no figures to fill)."""
    return dv.parse(SPEC.read_text("utf-8"))


def prose_lines(blocks: tuple[dv.Block, ...]) -> list[str]:
    """The prose of a text: paragraphs and list items, inline math, numbers and computed figures aside
    (formulas, tables and headings are not prose)."""
    out = [b.text for b in blocks if b.kind == "p"]
    out += [item for b in blocks if b.kind in ("ul", "ol") for item in b.items]
    return out


def words(line: str) -> list[str]:
    line = re.sub(r"\$[^$]*\$", " ", line).replace("\u2019", "'")
    line = " ".join(w for w in line.split() if not re.search(r"\d", w))  # numbers (and hashes) aside
    return re.findall(r"[a-z]+(?:'[a-z]+)?", line.lower())


def runs(lines: list[str], n: int = RUN) -> list[tuple[str, ...]]:
    out = []
    for line in lines:
        w = words(line)
        out += [tuple(w[i : i + n]) for i in range(len(w) - n + 1)]
    return out


def shared_runs(page: list[str], src: list[str]) -> tuple[list[tuple[str, ...]], int]:
    known = set(runs(src))
    mine = runs(page)
    return [r for r in mine if r in known], len(mine)


def test_run_counting_catches_a_copied_sentence() -> None:
    """The measure itself: a sentence carried over is found, a rephrased one is not."""
    src = ["The product CR measures the workload-feasibility region, the set of jobs the device can support."]
    copied, total = shared_runs(["Note that " + src[0]], src)
    assert total > 0 and len(copied) == len(runs(src))
    rephrased, _ = shared_runs(
        ["CR is the size of the set of workloads a device can carry at one moment."], src
    )
    assert rephrased == []
    assert words("at $F = 100$ TFLOP/s and 31.25 tokens b482b5d") == ["at", "tflop", "s", "and", "tokens"]


@needs_spec
def test_prose_is_servebounds_own() -> None:
    page, src = prose_lines(dv.derivation().blocks), prose_lines(source().blocks)
    copied, total = shared_runs(page, src)
    assert total > 5000, total  # the whole text, not a stub
    share = len(copied) / total
    assert share <= MAX_SHARED_RUNS, (f"{share:.1%} of 8-word runs stand in the source", copied[:20])


def test_no_first_person_of_the_source_author() -> None:
    text = " ".join(prose_lines(dv.derivation().blocks)).replace("Our Models", "(the site's name)")
    for phrase in (r"\bI\b", r"\bmy\b", r"\bme\b", r"\bthis post\b", r"\bI built\b", r"\bwe\b", r"\bour\b"):
        found = re.findall(phrase, text, flags=0 if phrase == r"\bI\b" else re.IGNORECASE)
        assert not found, (phrase, found[:5])


@needs_spec
def test_every_heading_and_formula_of_the_source_has_its_counterpart() -> None:
    page, src = dv.derivation(), source()
    heads = [(b.kind, b.text) for b in page.blocks if b.kind in ("h2", "h3")]
    assert heads == [(b.kind, b.text) for b in src.blocks if b.kind in ("h2", "h3")]
    formulas = [b.text for b in page.blocks if b.kind == "eq"]
    source_formulas = [b.text for b in src.blocks if b.kind == "eq"]
    # the same formulas in the same order (so #eq-N keeps its meaning); the sanity check's formula is
    # computed on the page and equals the source's printed one
    assert formulas == source_formulas
    # each formula sits under the same heading as in the source
    assert _formulas_by_heading(page) == _formulas_by_heading(src)


def _formulas_by_heading(d: dv.Derivation) -> list[tuple[str, int]]:
    out, heading = [], ""
    for b in d.blocks:
        if b.kind in ("h2", "h3"):
            heading = b.text
        elif b.kind == "eq":
            out.append((heading, b.number))
    return out


@needs_spec
def test_every_table_of_the_source_has_its_counterpart() -> None:
    page, src = dv.derivation(), source()
    static = {(b.rows[0], tuple(r[0] for r in b.rows)) for b in page.blocks if b.kind == "table"}
    computed = {name: live.TABLES[name]() for b in page.blocks if b.kind == "live" for name in [b.text]}
    for table in (b for b in src.blocks if b.kind == "table"):
        key = (table.rows[0], tuple(r[0] for r in table.rows))
        if key in static:  # a table of terms: same header, same terms, explained anew
            continue
        match = [rows for rows in computed.values() if rows[0] == table.rows[0]]
        assert match, f"no counterpart for the source's table headed {table.rows[0]}"
        # a worked table: computed, and every row the source prints is among the computed rows
        assert set(table.rows[1:]) <= set(match[0][1:]), sorted(set(table.rows[1:]) - set(match[0][1:]))
    lists = [b.items for b in page.blocks if b.kind in ("ul", "ol")]
    assert [len(i) for i in lists] == [len(b.items) for b in src.blocks if b.kind in ("ul", "ol")]


def test_worked_tables_are_computed_and_none_withheld() -> None:
    page = dv.derivation()
    assert {b.text for b in page.blocks if b.kind == "live"} == set(live.TABLES)
    md, html = dv.render_markdown(), str(dv.render_html())
    for text in (md, html):
        assert "[[" not in text and "withheld" not in text.lower() and "placeholder" not in text.lower()
    # the Results row for Qwen on DGX Spark, as the decode golden file records it
    assert "| DGX Spark | Qwen3.6-35B-A3B | 149 tok/s | 17 | 346 tok/s | 18.2k tok/s |" in md
    assert "| Qwen3.6-35B-A3B | 0.5 | 17.5 | 1.025 | 0.3268992 |" in md  # the adapter inputs, from the file


def test_sanity_check_is_its_own_sentence() -> None:
    blocks = dv.derivation().blocks
    i = next(n for n, b in enumerate(blocks) if b.kind == "h3" and b.text.startswith("A sanity check"))
    para, formula, after = blocks[i + 1], blocks[i + 2], blocks[i + 3]
    agg, lo, hi = live.sanity_check()
    assert para.kind == "p" and para.text.endswith("share of the estimate:")
    assert f"{agg:,.1f} tok/s" in para.text and f"{round(agg):,} tok/s rounded" in para.text
    assert formula.kind == "eq" and formula.text == (
        rf"\frac{{256}}{{{round(agg)}}} \approx {lo * 100:.0f}\% \quad\text{{to}}\quad "
        rf"\frac{{288}}{{{round(agg)}}} \approx {hi * 100:.0f}\%"
    )
    assert after.kind == "p" and after.text[:1].isupper()  # a new sentence, not the rest of one


def test_toy_and_crossover_figures_are_computed() -> None:
    text = " ".join(prose_lines(dv.derivation().blocks))
    four, one = dt.boards(dt.Toy(reserved=4000)), dt.boards(dt.Toy(reserved=1000))
    assert four.memory_power_tok_s is not None and one.memory_power_tok_s is not None
    assert f"{four.batch_mem:,} sessions fit on the toy machine" in text
    assert f"{four.memory_power_tok_s:,.0f} tok/s" in text and f"{one.memory_power_tok_s:,.0f} tok/s" in text
    slow = live.laguna(8192, None, "bf16").crossover_tokens
    fast = live.laguna(8192).crossover_tokens
    assert slow is not None and fast is not None and 2000 < slow < fast < 8500
    assert f"between about {slow:,.0f} and {fast:,.0f} tokens per sweep" in text


def test_credit_near_the_top_and_in_the_mirror() -> None:
    blocks = [b for b in dv.derivation().blocks if b.kind != "h1"]
    assert blocks[0].kind == "credit"
    html = str(dv.render_html())
    assert html.index('class="credit"') < html.index("<h2")
    assert f'href="{dv.CREDIT_URL}"' in html and "Our Models" in html
    for change in ("overhead", "compute roof", "device reports"):
        assert change in dv.credit_text()


def test_mirror_frontmatter_credits_the_derivation(client: TestClient) -> None:
    md = client.get("/derivation.md").text
    front = md.split("---")[1]
    assert f"\nfollows_url: {dv.CREDIT_URL}\n" in front and "\ncredit: " in front and "Our Models" in front
    assert "\nattribution: servebound\n" in front
    other = client.get("/methodology.md").text.split("---")[1]
    assert "follows_url" not in other  # only the page that follows another's derivation says so


@needs_spec
def test_machine_readable_copies_quote_no_source_prose(client: TestClient) -> None:
    """The markdown mirror (and so llms-full.txt, which concatenates the mirrors) carries the page's
    own prose: its 8-word runs stand in the source no more than the page's do."""
    md = client.get("/derivation.md").text
    lines = [ln for ln in md.split("\n") if ln and not ln.startswith(("$$", "|", "#", "---"))]
    copied, total = shared_runs(lines, prose_lines(source().blocks))
    assert total > 5000 and len(copied) / total <= MAX_SHARED_RUNS, copied[:20]
