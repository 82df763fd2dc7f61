"""The derivation page's content: the text parsed, formulas numbered, worked examples live, toy figures."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from servebound.core.decode import decode
from servebound.errors import InputError
from servebound.web.figures import derivation as figs
from servebound.web.pages import derivation as dv
from servebound.web.pages import derivation_live as lv
from servebound.web.pages import derivation_toy as tq

ROOT = Path(__file__).resolve().parents[2]


def test_worked_tables_are_the_golden_results(decode_golden: dict[str, Any]) -> None:
    """The Results table, computed from the example files, carries the decode golden file's figures."""
    rows = {(r[0], r[1]): r for r in lv.results_table()[1:]}
    assert {m for m, _ in rows} == {"DGX Spark", "Apple M5 Max 128GB"}  # both machines, all three models
    for case in decode_golden["case"]:
        r = rows[("DGX Spark", case["model"])]
        assert r[2:] == (
            f"{case['single_session_tok_s']:,} tok/s",
            f"{case['batch_star']:,}",
            f"{case['aggregate_tok_s']:,} tok/s",
            f"{case['memory_power_tok_s'] / 1000:.1f}k tok/s",
        )
    adapters = {r[0]: r for r in lv.adapters_table()[1:]}
    for case in decode_golden["case"]:
        a = adapters[case["model"]]
        assert [float(x) for x in a[1:]] == [
            case["bytes_per_param"],
            case["resident_gb"],
            case["kv_alloc_gb"],
            case["kv_read_gb"],
        ]


def test_sanity_check_is_the_texts() -> None:
    agg, lo, hi = lv.sanity_check()
    assert round(agg) == 333 and round(lo * 100) == 77 and round(hi * 100) == 86


def test_forced_table_marks_fit_and_floor() -> None:
    rows = lv.forced_table()[1:]
    assert len(rows) == 2 * 3 * len(lv.FORCED_BATCHES)
    gemma16 = next(r for r in rows if r[0] == "DGX Spark" and r[1].startswith("Gemma") and r[2] == "16")
    assert gemma16[3] == "333 tok/s" and gemma16[5] == "yes" and gemma16[6] == "yes"
    assert any(r[5] == "no" for r in rows)  # pushing past b* costs the floor somewhere


def test_toy_figures_at_the_texts_numbers() -> None:
    b = tq.boards(tq.Toy())
    assert b.batch_mem == 100 and b.batch == 100
    assert b.memory_power_tok_s is not None and round(b.memory_power_tok_s) == 4444
    assert round(b.left_tok_s) == 4444  # memory-power accounting at b_mem is the bound itself
    assert b.right_tok_s < b.left_tok_s
    one_k = tq.boards(tq.Toy(reserved=1000))
    assert one_k.memory_power_tok_s is not None and round(one_k.memory_power_tok_s) == 17778
    svg = figs.boards_svg(b)
    assert "4,444 tok/s" in svg and "b_mem = 100" in svg
    assert "17,778 tok/s" in figs.boards_svg(one_k)
    assert tq.Toy().read == 3600 and tq.read_following(1_000_000) == 968_000  # 90 %, rest capped at 32k


def test_boards_show_containers_that_stop_fitting() -> None:
    b = tq.boards(tq.Toy(batch=150))
    assert b.batch == 150 and b.batch_mem == 100
    assert "50 sessions do not fit" in figs.boards_svg(b)
    assert "1 session does not fit" in figs.boards_svg(tq.boards(tq.Toy(batch=101)))


def test_sweeps_equal_the_core() -> None:
    toy = tq.Toy()
    reserved = np.asarray([1000.0, 4000.0, 32_000.0, 150_000.0])
    sweep = tq.reservation_sweep(toy, reserved)
    for i, r in enumerate(reserved):
        t = replace(toy, reserved=int(r))
        full = decode(t.hardware, t.model(), t.workload())
        assert sweep.batch_mem[i] == full.batch_mem
        assert sweep.memory_power_tok_s[i] == pytest.approx(full.memory_power_tok_s, rel=1e-12)
        forced = decode(t.hardware, t.model(), t.workload(full.batch_mem)).forced
        assert forced is not None
        assert sweep.kv_aware_tok_s[i] == pytest.approx(forced.aggregate_tok_s, rel=1e-12)


def test_formulas_numbered_and_keys_resolve() -> None:
    d = dv.derivation()
    numbers = [b.number for b in d.blocks if b.kind == "eq"]
    assert numbers == list(range(1, len(numbers) + 1)) and len(numbers) >= 80
    assert set(d.equations) == set(dv.EQUATION_KEYS)
    headings = [b.text for b in d.blocks if b.kind == "h2"]
    assert headings == list(dv.SECTIONS)
    html = dv.render_html()
    assert html.count('class="eqno"') == len(numbers)
    assert "<math" in html and "$$" not in html
    for name in ("fig-feasibility", "fig-boards", "fig-read-context", "fig-model-size", "fig-containers"):
        assert f'id="{name}"' in html, name
    md = dv.render_markdown()
    assert (
        "\\tag{1}" in md
        and "| DGX Spark | Qwen3.6-35B-A3B | 149 tok/s | 17 | 346 tok/s | 18.2k tok/s |" in md
    )


def test_shipped_examples_are_the_repositorys() -> None:
    for path in lv.examples_dir().iterdir():
        assert path.read_bytes() == (ROOT / "examples" / path.name).read_bytes(), path.name


def test_toy_query_is_validated() -> None:
    assert tq.toy_from_query({"reserved": "1000", "maximize": "1"}) == tq.Toy(reserved=1000)
    assert tq.toy_from_query({"batch": "20"}).batch == 20
    with pytest.raises(InputError) as err:
        tq.toy_from_query({"fraction": "2"})
    assert err.value.field == "fraction"
    with pytest.raises(InputError):
        tq.toy_from_query({"reserved": "many"})


def test_every_control_is_a_query_parameter() -> None:
    toy = tq.Toy(
        reserved=20_000,
        fraction=0.5,
        weights_gb=24.0,
        batch=7,
        overhead_gb=4.5,
        kv_gb_per_1k=0.13,
        unread_cap=6000,
        capacity_gb=96.0,
        bandwidth_gb_per_s=546.0,
    )
    assert tq.toy_from_query(tq.toy_query(toy)) == toy
    assert tq.toy_from_query(tq.toy_query(tq.Toy(fraction=1 / 3))) == tq.Toy(fraction=1 / 3)
    assert tq.toy_from_query({"capacity_gb": "64", "bandwidth_gb_per_s": "273"}).hardware.memory_bytes == 64e9
    with pytest.raises(InputError) as err:
        tq.toy_from_query({"capacity_gb": "8", "overhead_gb": "8"})
    assert err.value.field == "overhead_gb"
    with pytest.raises(InputError) as err:
        tq.toy_from_query({"unread_cap": "1.5"})
    assert err.value.field == "unread_cap"
    with pytest.raises(InputError) as err:
        tq.toy_from_query({"kv_gb_per_1k": "0"})
    assert err.value.field == "kv_gb_per_1k"
    desc = tq.toy_description(toy)
    assert desc["toy"]["unread_cap"] == 6000 and {c["name"] for c in desc["controls"]} == set(tq.TOY_LIMITS)


def test_form_carries_the_toy_for_the_script() -> None:
    html = dv.render_html(tq.Toy(capacity_gb=96.0))
    assert 'id="toy-controls"' in html and "data-toy=" in html and 'name="capacity_gb"' in html
    assert "C = 96 GB" in html  # the feasibility rectangle follows the machine
