"""The derivation's live figures under Node: static/derivation.js (with calc.js for every number) draws
the same SVG as the server's derivation_figures for the same toy, over the text's setup, edge cases
(nothing fits, sessions that do not fit, exact rounding ties, the batch cap) and seeded random toys;
its ports of Python's number formats and of read_following agree with Python on their own."""

from __future__ import annotations

import json
import shutil
import subprocess
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from servebound.web.pages import derivation as dv
from servebound.web.pages import derivation_toy as tq
from tests.web.figure_compare import same_figure

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "src" / "servebound" / "web" / "static" / "derivation.js"
RUNNER = Path(__file__).with_name("run_derivation.js")

EDGE_TOYS = (
    tq.Toy(),
    tq.Toy(reserved=1000),  # the text's 17,778 tok/s
    tq.Toy(batch=150),  # 50 sessions do not fit
    tq.Toy(batch=101),  # one does not
    tq.Toy(batch=1),
    tq.Toy(weights_gb=200.0),  # the weights alone do not fit
    tq.Toy(reserved=1_000_000),  # no session fits
    tq.Toy(capacity_gb=10.0, overhead_gb=2.0),
    tq.Toy(fraction=0.0, unread_cap=0),  # everything read
    tq.Toy(fraction=0.0, unread_cap=1_000_000),  # nothing read
    tq.Toy(fraction=0.5, reserved=4001),  # an exact rounding tie in L_read
    tq.Toy(kv_gb_per_1k=0.001, reserved=1),
    tq.Toy(capacity_gb=100_000.0, kv_gb_per_1k=0.001, bandwidth_gb_per_s=1_000_000.0),  # b_mem at the cap
    tq.Toy(weights_gb=0.1, overhead_gb=0.0, capacity_gb=1.0, bandwidth_gb_per_s=1.0),
    tq.Toy(weights_gb=18.25, fraction=0.125, batch=99_999, unread_cap=999),
)


def random_toys(n: int) -> list[tq.Toy]:
    """Seeded (deterministic) toys across the controls' limits."""
    rng = np.random.default_rng(12)
    out = []
    for _ in range(n):
        capacity = float(np.round(10 ** rng.uniform(0.5, 3.5), 2))
        out.append(
            tq.Toy(
                reserved=int(10 ** rng.uniform(0, 6)),
                fraction=float(np.round(rng.uniform(0, 1), 3)),
                weights_gb=float(np.round(rng.uniform(0.1, capacity), 2)),
                batch=None if rng.random() < 0.4 else int(10 ** rng.uniform(0, 4)),
                overhead_gb=float(np.round(rng.uniform(0, capacity * 0.9), 1)),
                kv_gb_per_1k=float(np.round(10 ** rng.uniform(-3, 1), 4)),
                unread_cap=int(rng.integers(0, 100_000)),
                capacity_gb=capacity,
                bandwidth_gb_per_s=float(np.round(10 ** rng.uniform(1, 4), 1)),
            )
        )
    return out


def node() -> str:
    found = shutil.which("node") or shutil.which("nodejs")
    assert found, "Node.js is needed for this test (Debian: apt-get install nodejs; .ci/run does)"
    return found


def run(cases: dict[str, Any], tmp_path: Path) -> dict[str, Any]:
    path = tmp_path / "cases.json"
    path.write_text(json.dumps(cases, allow_nan=False))
    done = subprocess.run(
        [node(), str(RUNNER), str(path), str(SCRIPT)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout)
    return result


#: Ties in every position (0.25, 2.5, 12.25, 999.5 ...), near-ties, and the ranges where Python's
#: general and repr formats switch to exponents.
FORMAT_VALUES = [
    *(0.0, 0.25, 0.35, 0.5, 1.5, 2.5, 12.25, 12.35, 99.95, 99.99, 100.0, 999.5, 1000.5, 1234.5678),
    *(4444.444, 17777.77, 999_999.5, 1e6, 1.5e6, 123_456_789.0, 1e15, 1e16, 2.5e17, 1e21 / 3),
    *(0.001, 0.0001, 0.00012345, 1e-5, 3.0e-7, -0.25, -2.5, -1234.5, 0.1 + 0.2, 1 / 3, 2 / 3),
]


def test_script_draws_the_servers_figures(tmp_path: Path) -> None:
    toys = [*EDGE_TOYS, *random_toys(40)]
    description = tq.toy_description(tq.Toy())
    out = run(
        {"toys": [asdict(t) for t in toys], "description": description, "read": [], "formats": []}, tmp_path
    )
    off = total = 0
    for toy, drawn, query in zip(toys, out["figures"], out["queries"], strict=True):
        served = dv.figures_for(toy)
        ids = {
            "feasibility": "fig-feasibility",
            "boards": "fig-boards",
            "read_context": "fig-read-context",
            "model_size": "fig-model-size",
            "containers": "fig-containers",
        }
        for name, svg_id in ids.items():
            try:
                off += same_figure(drawn[svg_id], str(served[name]))
            except AssertionError as err:
                raise AssertionError(f"{svg_id} for {toy}: {err}") from None
            total += 1
        assert query == "&".join(f"{k}={v}" for k, v in tq.toy_query(toy).items())
        assert tq.toy_from_query(dict(p.split("=") for p in query.split("&"))) == toy
    assert total == 5 * len(toys)
    assert off <= 10  # last-place differences are rare (none or a handful of ~300k printed numbers)


def test_read_following_and_formats_equal_pythons(tmp_path: Path) -> None:
    reads = [
        (r, f, c)
        for r in (1, 2, 3, 5, 7, 999, 1000, 4000, 4001, 32_001, 1_000_000)
        for f in (0.0, 0.05, 0.125, 1 / 3, 0.5, 0.75, 0.9, 0.95, 1.0)
        for c in (0, 1, 1000, 32_000, 1_000_000)
    ]
    formats = [(v, d) for v in FORMAT_VALUES for d in (0, 1, 2)]
    out = run({"toys": [], "description": {}, "read": reads, "formats": formats}, tmp_path)
    assert out["read"] == [tq.read_following(r, f, c) for r, f, c in reads]
    assert out["fixed"] == [f"{v:.{d}f}" for v, d in formats]
    assert out["g"] == [f"{v:g}" for v, _ in formats]
    assert out["g3"] == [f"{v:.3g}" for v, _ in formats]
    assert out["repr"] == [repr(v) for v, _ in formats]


@pytest.mark.parametrize("toy", [replace(tq.Toy(), reserved=1000), tq.Toy(batch=150)])
def test_figures_follow_the_toy(toy: tq.Toy) -> None:
    """The server's figures change with the controls (the no-JS form draws through them)."""
    default = dv.figures_for(tq.Toy())
    moved = dv.figures_for(toy)
    assert default["boards"] != moved["boards"]
