"""One question, one answer: over a few hundred sampled (hardware, model, workload) cases from the catalog
(fixed seed, the issue's pairs first), every surface gives the same verdict and the same numbers.

Besides the default cases, some set a serving engine or the paged cache allocation, and a set of
cases puts weights in host RAM (--cpu-moe, --n-cpu-moe, --gpu-layers on MoE models, with a host row or
the host's memory and bandwidth given); their pair pages' offload block and first-token wait are
compared too.

The surfaces: `servebound decode --json`, the Python API's to_dict(), /api/decode, the pair page, the
hardware page's row, the model page's row, /models?fits=, `servebound rank --json`'s row and /api/rank's,
and calc.js run on the pair page's own pair-data. The model page's class tables (class, devices, per-device
aggregate, price, USD per million output tokens) are rank's rows for the model, `rank --class` and
/api/rank's hardware_group= giving each table's rows in its order. The tables and rank answer at the default workload (and rank takes the
context, overhead and floor flags too), so those cases are compared there.
"""

from __future__ import annotations

import html as html_lib
import json
import random
import re
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import servebound
from servebound.catalog.engines import ENGINE_IDS
from servebound.catalog.hosts import cpu_rows, host_rows
from servebound.cli import main
from servebound.views.cost_view import fmt_money
from servebound.views.report import fmt_gb, fmt_int, fmt_rate, fmt_seconds
from servebound.web.app.server import create_app
from tests.conftest import cli_json
from tests.web.surfaces import (
    Shown,
    class_row,
    class_tables,
    fits_row,
    has_row,
    listing_row,
    pair_cost,
    rank_cells,
    rank_row,
)
from tests.web.test_conformance import CALC, node

RUNNER = Path(__file__).with_name("run_pair_data.js")
SEED = 18
CASES = 300
#: Machines whose tables the default cases read (each page and ranking once); rankings under a
#: non-default workload are compared for the first few such cases (a ranking costs a catalog's worth).
TABLE_MACHINES = 10
RANKED_WORKLOADS = 6

#: The issue's pairs, whose tables disagreed with their pair pages.
ISSUE_PAIRS = [
    ("nvidia-rtx-4090", "qwen3-30b-a3b-q4_k_m"),
    ("nvidia-rtx-5090", "qwen3-30b-a3b-q4_k_m"),
    ("8x-nvidia-b300", "qwen3-30b-a3b-q4_k_m"),
    ("nvidia-rtx-4090", "gemma-4-26b-a4b-nvfp4"),
]

#: The workload values a case may set: query parameter -> (CLI flag, choices).
KNOBS: dict[str, tuple[str, tuple[Any, ...]]] = {
    "overhead_gb": ("--overhead-gb", (0.5, 2.0, 8.0, 24.0)),
    "alloc_context": ("--alloc-context", (4096, 32768, 131072)),
    "floor": ("--floor", (5.0, 20.0, 60.0)),
    "batch": ("--batch", (1, 8, 64)),
    "expert_traffic": ("--expert-traffic", ("minimum",)),
    "engine": ("--engine", ENGINE_IDS),
    "kv_allocation": ("--kv-allocation", ("paged", "reserved")),
}
#: The fields a ranking row shares with decode's JSON.
RANK_KEYS = (
    "verdict",
    "batch_mem",
    "batch_star",
    "single_session_tok_s",
    "aggregate_tok_s",
    "per_session_tok_s",
)
#: The flags `rank` takes as well.
RANK_KNOBS = {"overhead_gb", "alloc_context", "read_context", "floor"}
#: Cases with weights in host RAM (on MoE models), after the sampled ones.
OFFLOAD_CASES = 30
#: The offload block's numbers as the pair page shows them (key -> the page's format).
OFFLOAD_SHOWN = (
    "device_resident_bytes",
    "host_resident_bytes",
    "host_memory_bytes",
    "device_bytes_per_token",
    "host_bytes_per_token",
)
#: Offload parameters -> their CLI flags (a true cpu_moe is the bare flag).
OFFLOAD_FLAGS = {
    "cpu_moe": "--cpu-moe",
    "n_cpu_moe": "--n-cpu-moe",
    "gpu_layers": "--gpu-layers",
    "host": "--host",
    "host_memory_gb": "--host-memory-gb",
    "host_bandwidth_gb_per_s": "--host-bandwidth-gb-per-s",
    "host_tflops": "--host-tflops",
    "host_cpu": "--host-cpu",
}


@dataclass(frozen=True)
class Case:
    hardware: str
    model: str
    workload: dict[str, Any] = field(default_factory=dict)

    @property
    def flags(self) -> list[str]:
        flag = {**{k: v[0] for k, v in KNOBS.items()}, "read_context": "--read-context", **OFFLOAD_FLAGS}
        return [
            part
            for key, value in self.workload.items()
            for part in (
                (flag[key],)
                if value is True
                else (flag[key], f"{value:g}" if isinstance(value, float) else str(value))
            )
        ]

    @property
    def query(self) -> str:
        return urlencode(
            {
                k: "true" if v is True else f"{v:g}" if isinstance(v, float) else v
                for k, v in self.workload.items()
            }
        )

    @property
    def offload(self) -> bool:
        return any(key in OFFLOAD_FLAGS for key in self.workload)


def sample_cases(hardware: list[str], models: list[str]) -> list[Case]:
    """The issue's pairs, then random cases: 60 % with a random workload on any machine, the rest at the
    default answer on a pool of machines (whose pages and rankings are read once each)."""
    rng = random.Random(SEED)
    pool = sorted({h for h, _ in ISSUE_PAIRS} | set(rng.sample(hardware, TABLE_MACHINES - 3)))
    cases = [Case(h, m) for h, m in ISSUE_PAIRS]
    while len(cases) < CASES:
        workload: dict[str, Any] = {}
        if rng.random() < 0.6:
            for key, (_, choices) in KNOBS.items():
                if rng.random() < 0.35:
                    workload[key] = rng.choice(choices)
            if "alloc_context" in workload and rng.random() < 0.6:
                workload["read_context"] = rng.randint(1, workload["alloc_context"])
            if "engine" in workload and "kv_allocation" in workload:  # an engine sets the allocation
                workload.pop("kv_allocation")
        cases.append(Case(rng.choice(hardware if workload else pool), rng.choice(models), workload))
    return cases


def offload_cases(hardware: list[str], moe: dict[str, tuple[int, int]]) -> list[Case]:
    """Weights in host RAM: a MoE model (id -> (MoE layers, layers)) on any machine, one placement, the
    host as a catalog row or as its memory and bandwidth, and now and then an engine or a knob."""
    rng = random.Random(SEED + 1)
    hosts = sorted(host_rows())
    cases = []
    for _ in range(OFFLOAD_CASES):
        model = rng.choice(sorted(moe))
        moe_layers, layers = moe[model]
        workload: dict[str, Any] = rng.choice(
            [
                {"cpu_moe": True},
                {"n_cpu_moe": rng.randint(0, moe_layers)},
                {"gpu_layers": rng.randint(0, layers)},
            ]
        )
        if rng.random() < 0.5:
            workload["host"] = rng.choice(hosts)
        else:
            workload["host_memory_gb"] = rng.choice((64.0, 128.0, 256.0))
            workload["host_bandwidth_gb_per_s"] = rng.choice((51.2, 80.0, 96.0, 460.8))
        pick = rng.random()
        if pick < 0.3:
            workload["host_tflops"] = rng.choice((0.05, 2.0, 20.0))
        elif pick < 0.5:
            workload["host_cpu"] = rng.choice(sorted(cpu_rows()))
        for key in ("floor", "alloc_context", "engine"):
            if rng.random() < 0.3:
                workload[key] = rng.choice(KNOBS[key][1])
        cases.append(Case(rng.choice(hardware), model, workload))
    return cases


@pytest.fixture(scope="module")
def client() -> Iterator[TestClient]:
    yield TestClient(create_app())


def pair_page(client: TestClient, case: Case) -> tuple[dict[str, str], str, dict[str, Any]]:
    """The pair page's shown numbers (its data-k spans), its verdict and its pair-data."""
    text = client.get(f"/pair/{case.hardware}/{case.model}?{case.query}").text
    verdict = re.search(r'<p class="verdict v ([a-z_]+)"', text)
    data = re.search(r'<script type="application/json" id="pair-data">(.*?)</script>', text, flags=re.S)
    assert verdict is not None and data is not None, case
    shown = {k: html_lib.unescape(v) for k, v in re.findall(r'data-k="([a-z_.]+)"[^>]*>([^<]*)<', text)}
    return shown, verdict.group(1), json.loads(data.group(1))


def expected_text(d: dict[str, Any]) -> dict[str, str]:
    """What the pair page shows for a decode JSON object, formatted as the page formats it; where a
    figure is absent the answer cards say why (the CLI's n/a)."""
    nothing = d["verdict"] in ("no_resident_fit", "no_session_fit")
    why = "none: " + ("nothing fits in memory" if nothing else "no batch holds the floor")

    def said(value: Any, fmt: Any) -> str:
        return why if value is None else str(fmt(value))

    out = {
        "single_session_tok_s": said(d["single_session_tok_s"], fmt_rate),
        "aggregate_tok_s": said(d["aggregate_tok_s"], fmt_rate),
        "per_session_tok_s": fmt_rate(d["per_session_tok_s"]),  # beside the big figure that says why
        "batch_mem": said(d["batch_mem"], fmt_int),
        "batch_star": fmt_int(d["batch_star"]),
    }
    if d["forced"]:
        out["forced.aggregate_tok_s"] = fmt_rate(d["forced"]["aggregate_tok_s"])
        out["forced.per_session_tok_s"] = fmt_rate(d["forced"]["per_session_tok_s"])
    return out


def close(a: float | None, b: float | None) -> bool:
    if a is None or b is None:
        return a is b
    return abs(a - b) <= 1e-9 * max(abs(a), abs(b))


def test_every_surface_gives_the_same_answer(client: TestClient, capsys: pytest.CaptureFixture[str]) -> None:
    site = client.app.state.site  # type: ignore[attr-defined]
    moe = {
        mid: (m.adapter.shape.moe_layers, m.adapter.shape.layers)
        for mid, m in site.models_by_id.items()
        if m.adapter.weights.experts and m.adapter.shape and m.adapter.shape.moe_layers > 0
    }
    cases = sample_cases(sorted(site.hardware_by_id), sorted(site.models_by_id))
    cases += offload_cases(sorted(site.hardware_by_id), moe)

    @cache
    def rank_by(hw: str, flags: tuple[str, ...]) -> dict[str, dict[str, Any]]:
        rows = cli_json(capsys, "rank", "-H", hw, "--all-formats", *flags)["rows"]
        if not flags:  # /api/rank answers the same rows, in the same order
            api = client.get("/api/rank", params={"hardware": hw, "all_formats": "true"}).json()
            assert api["rows"] == rows, hw
        return {r["model"]["id"]: r for r in rows}

    @cache
    def rank_for(model: str, hardware_group: str | None = None) -> list[dict[str, Any]]:
        """`rank -m MODEL [--class C] --json`'s rows, which /api/rank answers alike."""
        extra = ("--class", hardware_group) if hardware_group else ()
        rows: list[dict[str, Any]] = cli_json(capsys, "rank", "-m", model, *extra)["rows"]
        query = {"model": model, **({"hardware_group": hardware_group} if hardware_group else {})}
        assert client.get("/api/rank", params=query).json()["rows"] == rows, (model, hardware_group)
        return rows

    pages, expected, seen = (
        [],
        [],
        {
            "default": 0,
            "tables": 0,
            "ranked": 0,
            "unsupported": 0,
            "prefill": 0,
            "classes": 0,
            "engine": 0,
            "paged": 0,
            "offload": 0,
            "verdicts": set(),
        },
    )
    for case in cases:
        cli = cli_json(capsys, "decode", "-H", case.hardware, "-m", case.model, *case.flags)
        seen["verdicts"].add(cli["verdict"])  # type: ignore[union-attr]
        assert servebound.decode(case.hardware, case.model, **case.workload).to_dict() == cli, case
        api = client.get(f"/api/decode?hardware={case.hardware}&model={case.model}&{case.query}").json()
        assert api == cli, case
        shown, verdict, data = pair_page(client, case)
        assert verdict == cli["verdict"], case
        assert {k: shown[k] for k in expected_text(cli)} == expected_text(cli), case
        pages.append(data)
        expected.append(cli)
        seen["engine"] += "engine" in case.workload  # type: ignore[operator]
        seen["paged"] += cli["assumptions"]["kv_allocation"] == "paged"  # type: ignore[operator]
        if case.offload:
            seen["offload"] += check_offload(client, capsys, case, shown, data, cli)  # type: ignore[operator]
        row = Shown(
            cli["verdict"],
            fmt_rate(cli["single_session_tok_s"]),
            fmt_rate(cli["aggregate_tok_s"]),
            fmt_int(cli["batch_star"]),
        )
        if case.workload and set(case.workload) <= RANK_KNOBS and seen["ranked"] < RANKED_WORKLOADS:
            seen["ranked"] += 1  # type: ignore[operator]
            prompt = ["--prompt", str(min(8192, case.workload.get("alloc_context", 8192)))]
            ranked = rank_by(case.hardware, (*case.flags, *prompt))
            if cli["format_support"] == "unsupported":
                assert case.model not in ranked, case
            else:
                rank = ranked[case.model]
                assert {k: rank[k] for k in RANK_KEYS} == {k: cli[k] for k in RANK_KEYS}, case
                assert rank["overhead_gb"] == cli["assumptions"]["overhead_gb"], case
        if case.workload:
            continue
        seen["default"] += 1  # type: ignore[operator]
        if "prefill.time_s" in shown:
            seen["prefill"] += check_prefill(client, capsys, case, shown, data["query"]["prompt"])  # type: ignore[operator]
        if cli["format_support"] == "unsupported":  # the tables and rank list what the device runs
            seen["unsupported"] += 1  # type: ignore[operator]
            assert case.model not in rank_by(case.hardware, ()), case
            for page in (f"/hardware/{case.hardware}", f"/models/{case.model}"):
                assert not has_row(client, page, case.hardware, case.model), (case, page)
            assert fits_row(client, case.hardware, case.model) is None, case
            continue
        rank = rank_by(case.hardware, ())[case.model]
        assert {k: rank[k] for k in RANK_KEYS} == {k: cli[k] for k in RANK_KEYS}, case
        assert rank_row(client, f"/hardware/{case.hardware}", case.hardware, case.model) == row, case
        cells = rank_cells(client, f"/hardware/{case.hardware}", case.hardware, case.model)
        assert cells[6] == mtok_text(rank) and cells[7] == band_text(rank), case  # the band: decode's
        assert rank_row(client, f"/models/{case.model}", case.hardware, case.model) == row, case
        by_model = {r["hardware"]["id"]: r for r in rank_for(case.model)}[case.hardware]
        assert {k: by_model[k] for k in RANK_KEYS} == {k: cli[k] for k in RANK_KEYS}, case
        assert {k: by_model[k] for k in PER_MACHINE} == {k: rank[k] for k in PER_MACHINE}, case
        seen["classes"] += check_class_columns(client, site, case, cli, by_model)  # type: ignore[operator]
        if case.model in LISTED_MODELS and case.model not in CLASSED:
            CLASSED.add(case.model)
            check_class_tables(client, case.model, rank_for)
        fits = fits_row(client, case.hardware, case.model)
        if cli["verdict"] in ("floor_fit", "no_floor"):
            assert fits == Shown("fits", row.single, row.aggregate), case
        else:
            assert fits is None, case
        if rank["ttft_s"] is not None and rank["prefill_prompt_tokens"] == data["query"]["prompt"]:
            seen["tables"] += 1  # type: ignore[operator]
            assert shown["prefill.time_s"] == fmt_seconds(rank["ttft_s"]), case
    # calc.js on each page's own pair-data, as the page's script recomputes it
    calc = run_calc(pages)
    for case, cli, got, page in zip(cases, expected, calc, pages, strict=True):
        if page["layout"] is not None:
            # a system answers at a parallel layout, which the page's script leaves to the server (its
            # static copy says so); calc.js's pooled device is the answer's `pooled` bound
            assert page["layout"]["label"] == cli["layout"]["label"], case
            pooled = cli["pooled"]
            assert got["verdict"] == pooled["verdict"] and got["batch_star"] == pooled["batch_star"], case
            for key in ("single_session_tok_s", "aggregate_tok_s"):
                assert close(got[key], pooled[key]), (case, key, got[key], pooled[key])
            continue
        assert got["verdict"] == cli["verdict"], case
        for key in ("batch_mem", "batch_star"):
            assert got[key] == cli[key], (case, key)
        for key in ("single_session_tok_s", "aggregate_tok_s", "per_session_tok_s"):
            assert close(got[key], cli[key]), (case, key, got[key], cli[key])
    assert seen["verdicts"] == {"floor_fit", "no_floor", "no_session_fit", "no_resident_fit"}
    assert seen["default"] >= 100 and seen["tables"] >= 20 and seen["prefill"] >= 50, seen
    assert seen["classes"] >= 10 and len(CLASSED) == LISTINGS, (seen, CLASSED)
    assert seen["engine"] >= 30 and seen["paged"] >= 30 and seen["offload"] >= 20, seen


#: The models whose /hardware?model= listing is compared too (filled with the first default cases').
LISTED_MODELS: set[str] = set()
LISTINGS = 6

#: The models whose class tables are compared whole with `rank --class` (each class a ranking).
CLASSED: set[str] = set()
#: A ranking row's machine fields, the same whichever way the pair is ranked.
PER_MACHINE = (
    "hardware_group",
    "devices",
    "aggregate_tok_s_per_device",
    "usd_per_hour",
    "price_basis",
    "usd_per_mtok_output",
)
#: The model page's class headings by rank's hardware_group.
CLASS_TITLES = {
    "consumer": "Consumer GPUs",
    "workstation": "Workstations",
    "apple": "Apple silicon",
    "datacenter": "Datacenter, one device",
    "systems": "Multi-device systems",
    "files": "Hardware files",
}


def price_text(rank: dict[str, Any]) -> str:
    """A ranking row's price as the tables write it."""
    usd = rank["usd_per_hour"]
    return "no price" if usd is None else f"${fmt_money(usd)}/h {rank['price_basis']}"


def band_text(answer: dict[str, Any]) -> str:
    """A table's Expected tok/s cell for an answer's band (p10-p90 of one session, or -)."""
    band = answer["expected"]
    return "-" if band is None else f"{fmt_rate(band['p10_tok_s'], '')}-{fmt_rate(band['p90_tok_s'], '')}"


def mtok_text(rank: dict[str, Any]) -> str:
    """A ranking row's USD per million output tokens at b* as the tables write it."""
    if rank["usd_per_hour"] is None:
        return "no price"
    per = rank["usd_per_mtok_output"]
    return "nothing at the floor" if per is None else f"${fmt_money(per)}"


def check_class_tables(client: TestClient, model: str, rank_for: Any) -> None:
    """The model page's class tables are `rank -m MODEL --class C`'s rows, in order, for every class."""
    tables = class_tables(client, model)
    for key, title in CLASS_TITLES.items():
        ids = [r["hardware"]["id"] for r in rank_for(model, key)]
        assert tables.get(title, []) == ids, (model, key)
    every = [r["hardware"]["id"] for r in rank_for(model)]
    assert sorted(every) == sorted(i for ids in tables.values() for i in ids), model


#: The model page's class headings by the catalog's device class (a system is a multi-device system,
#: an Apple part Apple silicon, whatever its class says).
CLASS_HEADINGS = {
    "consumer GPU": "Consumer GPUs",
    "workstation GPU": "Workstations",
    "unified-memory SoC": "Workstations",
    "datacenter GPU": "Datacenter, one device",
    "accelerator": "Datacenter, one device",
}


def check_class_columns(
    client: TestClient, site: Any, case: Case, cli: dict[str, Any], rank: dict[str, Any]
) -> int:
    """The model page's row sits under its class and shows the pair's aggregate per device, the pair
    page's price and the pair page's cost per million output tokens at b*, each as rank's row for the
    model (``rank``) has it; 1 when a price was compared."""
    hw = site.hardware_by_id[case.hardware]
    if len(LISTED_MODELS) < LISTINGS:
        LISTED_MODELS.add(case.model)
    heading, shown = class_row(client, case.model, case.hardware)
    assert heading == CLASS_TITLES[rank["hardware_group"]], case
    assert (shown.devices, shown.per_device) == (
        str(rank["devices"]),
        fmt_rate(rank["aggregate_tok_s_per_device"]),
    )
    assert (shown.price, shown.usd_per_mtok) == (price_text(rank), mtok_text(rank)), case
    devices = hw.system.count if hw.system is not None else 1
    if hw.system is not None or hw.device_class in ("multi-device system", "rack-scale system"):
        assert heading == "Multi-device systems", case
    elif hw.vendor == "Apple":
        assert heading == "Apple silicon", case
    else:
        assert heading == CLASS_HEADINGS[hw.device_class], case
    assert shown.devices == str(devices), case
    aggregate = cli["aggregate_tok_s"]
    assert shown.per_device == fmt_rate(aggregate / devices if aggregate else None), case
    if case.model in LISTED_MODELS:  # /hardware?model= shows the same row (a few models: a page each)
        cells = listing_row(client, case.model, case.hardware)
        # the model's columns next to the name: verdict, aggregate, per device, per token; then the row's own
        assert cells[2:6] == [fmt_rate(aggregate), shown.per_device, shown.usd_per_mtok, band_text(cli)], case
        # the price in its own column: rented, then owned
        assert cells[7] == str(devices) and cells[14:16] == [shown.rented, shown.owned], case
    priced = pair_cost(client, case.hardware, case.model, cli["batch_star"])
    if priced is None:
        assert shown.price == "no price" or aggregate is None, case
        return 0
    assert (shown.price, shown.usd_per_mtok) == priced, case
    return 1


def check_prefill(
    client: TestClient, capsys: pytest.CaptureFixture[str], case: Case, shown: dict[str, str], prompt: int
) -> int:
    """The pair page's first-token wait for its prompt equals `servebound prefill --json`, /api/prefill
    and the Python API's to_dict() for the same prompt; 1 when compared."""
    cli = cli_json(capsys, "prefill", "-H", case.hardware, "-m", case.model, "--prompt", str(prompt))
    assert servebound.prefill(case.hardware, case.model, prompt).to_dict() == cli, case
    api = client.get(
        "/api/prefill", params={"hardware": case.hardware, "model": case.model, "prompt": prompt}
    )
    assert api.json() == cli, case
    wait = "nothing fits" if cli["time_s"] is None else fmt_seconds(cli["time_s"])
    assert shown["prefill.time_s"] == wait, case
    if cli["time_s"] is not None:
        assert shown["prefill.tok_s"] == fmt_rate(cli["tok_s"]), case
    return 1


def check_offload(
    client: TestClient,
    capsys: pytest.CaptureFixture[str],
    case: Case,
    shown: dict[str, str],
    data: dict[str, Any],
    cli: dict[str, Any],
) -> int:
    """A case with weights in host RAM: the pair page's offload block shows decode's ``offload`` object,
    and its first-token wait equals `servebound prefill --json` (and /api/prefill, the Python API) for
    the page's prompt under the same flags; 1 when the host tier fits and so was compared."""
    off = cli["offload"]
    assert off is not None, case
    for key in OFFLOAD_SHOWN:
        assert shown[f"offload.{key}"] == fmt_gb(off[key]), (case, key)
    assert shown["offload.mode"] == off["mode"], case
    prompt = data["query"]["prompt"]
    if prompt is None or "prefill.time_s" not in shown:
        return 0
    pre = cli_json(
        capsys, "prefill", "-H", case.hardware, "-m", case.model, "--prompt", str(prompt), *case.flags
    )
    assert servebound.prefill(case.hardware, case.model, prompt, **case.workload).to_dict() == pre, case
    api = client.get(f"/api/prefill?hardware={case.hardware}&model={case.model}&prompt={prompt}&{case.query}")
    assert api.json() == pre, case
    wait = "nothing fits" if pre["time_s"] is None else fmt_seconds(pre["time_s"])
    assert shown["prefill.time_s"] == wait, case
    return int(off["host_fits"])


def run_calc(pages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "pages.json"
        path.write_text(json.dumps(pages, allow_nan=False))
        done = subprocess.run(
            [node(), str(RUNNER), str(path), str(CALC)],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    assert done.returncode == 0, done.stderr
    result: list[dict[str, Any]] = json.loads(done.stdout)
    return result


# --- drawn scenarios: every input spelt as a person may spell it, every surface one answer -----------

#: Pairs the drawn scenarios sit on: a dense model with a draft of its family, an MoE model (offload),
#: on consumer, workstation and datacenter devices.
DRAWN_PAIRS = [
    ("nvidia-rtx-4090", "qwen3-8b"),
    ("nvidia-rtx-5090", "qwen3-30b-a3b-q4_k_m"),
    ("nvidia-h100-sxm", "llama-3.1-8b"),
    ("apple-m4-max-128gb", "qwen3-8b"),
]
DRAFTS = {"qwen3-8b": "qwen3-0.6b", "qwen3-30b-a3b-q4_k_m": "qwen3-0.6b", "llama-3.1-8b": "llama-3.2-1b"}
KV_PRECISIONS = ("bf16", "fp16", "fp8", "q8_0", "q4_0", "fp32", "f16", "fp8_e4m3", "q5_1", "auto")


def spellings(tokens: int) -> st.SearchStrategy[str]:
    """The ways a person writes a token count that the grammar takes: plain, grouped, k, M, exponent."""
    options = [str(tokens), f"{tokens:,}", f"{tokens:_}"]
    if tokens % 1000 == 0:
        options += [f"{tokens // 1000}k", f"{tokens // 1000}K", f"{tokens // 1000}e3"]
    if tokens % 100 == 0 and tokens % 1000:
        options.append(f"{tokens / 1000:g}k")
    if tokens % 1_000_000 == 0:
        options.append(f"{tokens // 1_000_000}M")
    return st.sampled_from(options)


@st.composite
def drawn_scenario(draw: st.DrawFn) -> tuple[str, str, dict[str, str]]:
    """A pair and its inputs as text (what a flag or a query parameter carries)."""
    hardware, model = draw(st.sampled_from(DRAWN_PAIRS))
    given: dict[str, str] = {}
    alloc = draw(st.one_of(st.none(), st.sampled_from([4096, 8000, 16_000, 32_000, 40_000, 131_072])))
    if alloc is not None:
        given["alloc_context"] = draw(spellings(alloc))
        if draw(st.booleans()):
            read = draw(st.sampled_from([k for k in (1000, 1500, 2048, 4000, 8000, 32_000) if k <= alloc]))
            given["read_context"] = draw(spellings(read))
    if draw(st.integers(0, 7)) == 0:  # now and then a spelling every surface refuses, naming the field
        given["read_context"] = draw(st.sampled_from(["32kk", "1.0005k", "0x10", "1e3k", "32 k"]))
    if draw(st.booleans()):
        given["kv_precision"] = draw(st.sampled_from(KV_PRECISIONS))
    if draw(st.booleans()):
        given |= {"draft": DRAFTS[model], "draft_tokens": str(draw(st.integers(1, 8)))}
        given["acceptance"] = f"{draw(st.sampled_from([0.5, 0.7, 0.9])):g}"
    if draw(st.booleans()):
        given["engine"] = draw(st.sampled_from(ENGINE_IDS))
    if ("moe" in model or "a3b" in model) and draw(st.booleans()):
        given |= {
            "n_cpu_moe": str(draw(st.integers(0, 24))),
            "host": draw(st.sampled_from(sorted(host_rows()))),
        }
    for key, choices in (
        ("floor", ["5", "20", "1e1"]),
        ("batch", ["1", "8", "1,000"]),
        ("overhead_gb", ["0.5", "2"]),
    ):
        if draw(st.booleans()):
            given[key] = draw(st.sampled_from(choices))
    return hardware, model, given


def _flags(given: dict[str, str]) -> list[str]:
    return [part for key, text in given.items() for part in (f"--{key.replace('_', '-')}", text)]


def _keywords(given: dict[str, str]) -> dict[str, Any]:
    """The same inputs as Python keywords: typed, as a notebook passes them (the parser read once)."""
    from servebound.inputs.workload import BY_NAME

    return {key: BY_NAME[key].parse(text) for key, text in given.items()}


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(case=drawn_scenario())
def test_drawn_scenarios_answer_alike(
    client: TestClient, capsys: pytest.CaptureFixture[str], case: tuple[str, str, dict[str, str]]
) -> None:
    """Drawn scenarios (drafts, every KV precision and engine spellings, engines, offload, every spelling
    of a token count): the CLI's --json, the Python API's to_dict(), /api/decode and the pair page's
    record give the same verdict and numbers, or the same refusal naming the same field."""
    from servebound.errors import InputError
    from servebound.web.app.query import parse_workload_query
    from servebound.web.pages.site import compute_pair

    hardware, model, given = case
    status = main(["decode", "-H", hardware, "-m", model, *_flags(given), "--json"])
    out, err = capsys.readouterr()
    api = client.get("/api/decode", params={"hardware": hardware, "model": model, **given})
    try:
        python = servebound.decode(hardware, model, **_keywords(given)).to_dict()
    except InputError as exc:
        assert status == 2 and api.status_code == 400, (case, err, api.json())
        assert api.json()["error"]["field"] == exc.field and exc.field in err, (case, err)
        return
    assert status == 0, (case, err)
    cli = json.loads(out)
    assert python == cli == api.json(), case
    site = client.app.state.site  # type: ignore[attr-defined]
    query = parse_workload_query(given)
    draft = site.models_by_id[given["draft"]] if "draft" in given else None
    # the pair page of the profile answered: a bare release under an engine that runs another format
    # redirects there (the route resolves the same scenario)
    page = client.get(f"/pair/{hardware}/{model}", params=given, follow_redirects=False)
    answered = cli["model"]["id"]
    assert page.status_code == (200 if answered == model else 307), case
    pair = compute_pair(
        site.hardware_by_id[hardware], site.models_by_id[answered], query, with_range=False, draft=draft
    )
    if answered != model:  # the redirected page is that profile's own; the CLI says why it was chosen
        why = cli["assumptions"].pop("weight_precision_source")
        assert why.startswith(f"chosen for {given['engine']}: {answered}"), case
        pair.decode["assumptions"].pop("weight_precision_source", None)
    assert pair.decode == cli, case
