"""The layout a question on a system answers at: the system from what a person typed, a layout from its
text, and the one layout chosen for the question (``resolve_scenario`` calls ``choose_layout`` once).

A system of N devices does not run as one pooled device: a layout (tp x ep x pp x dp, ``core.layout``)
splits the model over it, and every question on a system answers at one layout and says which:

* the one given (``--layout tp=8``, ``layout=tp8`` on the API, ``layout="tp=8"`` in Python);
* else the one the engine asked runs by default: llama.cpp and the engines built on it split a model's
  layers over the devices (``--split-mode layer``), a pipeline that one session passes device by device;
* else the best valid layout, the one ``servebound layout`` ranks first.

A single device is a system of one: it answers as itself, with no search.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from servebound.catalog import snapshot
from servebound.catalog.engines import format_class
from servebound.catalog.hardware_names import hardware_row, system_hardware
from servebound.core.advice import Note, Setting
from servebound.core.decode_compute import decode_compute
from servebound.core.hardware import Hardware
from servebound.core.layout import Layout, LayoutResult, System, evaluate_layout, layout_problem
from servebound.core.layout_search import best_layout
from servebound.core.model import ModelAdapter
from servebound.core.system import Interconnect
from servebound.core.workload import Workload
from servebound.errors import InputError
from servebound.inputs.resolve import _looks_like_file, hardware_ref, resolve_hardware

_LAYOUT_PART = re.compile(r"^\s*(tp|ep|pp|dp)\s*=?\s*(\d+)\s*$", re.IGNORECASE)

#: The engines that split a model's layers over the devices by default: llama.cpp and those built on it.
LAYER_SPLIT_ENGINES = frozenset({"llama.cpp", "ollama", "lm-studio"})
LAYER_SPLIT_SOURCE = (
    "llama.cpp docs/multi-gpu.md: --split-mode layer, the default, is pipeline parallelism, each GPU "
    "holding a contiguous slice of layers"
)


@dataclass(frozen=True)
class ResolvedSystem:
    """A system with the id and name it was asked by, and the sources of its link's numbers."""

    id: str
    name: str
    system: System
    link_sources: dict[str, str]


#: What names a system: a reference (catalog id, ``Nx-<id>``, hardware file), a record or a resolved system.
SystemRef = str | Hardware | System | ResolvedSystem


def resolve_system(ref: object) -> ResolvedSystem:
    """A catalog system (its member device, count and link), ``Nx-<id>``, a single catalog device or a
    hardware file (one device), by reference or as the catalog row; a resolved system passes through."""
    if isinstance(ref, ResolvedSystem):
        return ref
    if isinstance(ref, System):
        return ResolvedSystem(ref.device.id, ref.device.name, ref, {})
    if isinstance(ref, Hardware):
        return ResolvedSystem(ref.id, ref.name, System(ref, 1, Interconnect.ideal_for(1)), {})
    if isinstance(ref, str):
        ref = hardware_ref(ref)
        if _looks_like_file(ref):
            return resolve_system(resolve_hardware(ref))
        return _catalog_system(ref)
    row_system = getattr(ref, "system", None)
    row_id, row_name = str(getattr(ref, "id", "")), str(getattr(ref, "name", ""))
    if row_system is not None:
        return ResolvedSystem(
            row_id, row_name, row_system.parallel_system(), dict(row_system.interconnect_sources)
        )
    device = getattr(ref, "hardware", None)
    if not isinstance(device, Hardware):
        raise InputError("hardware", f"give a hardware id, file or record (got {type(ref).__name__})")
    return ResolvedSystem(row_id, row_name, System(device, 1, Interconnect.ideal_for(1)), {})


def _catalog_system(ref: str) -> ResolvedSystem:
    """A catalog device, declared system or NxID system, read from the snapshot as ``inputs.resolve``
    reads its hardware (``hardware_names.hardware_row``): no catalog record is built."""
    row_id, count = hardware_row(ref, snapshot.hardware_index(), snapshot.system_of)
    device = snapshot.core_hardware(row_id)
    if count is not None:  # N of a catalog device: no link stated, the ideal upper bound
        pooled = system_hardware(device, count)
        return ResolvedSystem(
            pooled.id, pooled.name, System(device, count, Interconnect.ideal_for(count)), {}
        )
    declared = snapshot.system_parts(row_id)
    if declared is None:
        return ResolvedSystem(row_id, device.name, System(device, 1, Interconnect.ideal_for(1)), {})
    member, members, link, sources = declared
    system = System(member, members, link or Interconnect.ideal_for(members))
    return ResolvedSystem(row_id, device.name, system, sources)


def parse_layout(text: str, system: System, model: ModelAdapter) -> Layout:
    """``tp=8,ep=1,pp=1[,dp=1]`` (or ``tp8,pp2``): keys omitted are 1, except dp, which fills the system.
    A layout the system or the model cannot take is an InputError naming ``layout`` and the fix."""
    values: dict[str, int] = {}
    for part in text.split(","):
        if not part.strip():
            continue
        match = _LAYOUT_PART.match(part)
        if match is None:
            raise InputError(
                "layout",
                f"{part.strip()!r} is not KEY=N with KEY one of tp, ep, pp, dp (e.g. tp=8,pp=1 or tp8)",
            )
        key, value = match.group(1).lower(), int(match.group(2))
        if key in values:
            raise InputError("layout", f"{key} is given twice")
        if value < 1:
            raise InputError("layout", f"{key}={value}: every degree must be at least 1")
        values[key] = value
    if not values:
        raise InputError(
            "layout", Note.of("give at least one of tp, ep, pp, dp (e.g. ", Setting("layout", "tp=8"), ")")
        )
    tp, ep, pp = values.get("tp", 1), values.get("ep", 1), values.get("pp", 1)
    dp = values.get("dp", max(1, system.count // (max(tp, ep) * pp)))
    layout = Layout(tp=tp, ep=ep, pp=pp, dp=dp)
    problem = layout_problem(system, model, layout)
    if problem is not None:
        raise InputError("layout", problem)
    return layout


def compute_seconds_per_session_step(
    device: Hardware, model: ModelAdapter, workload: Workload
) -> float | None:
    """c: one session's decode-step compute time at one device's rates, from the compute roof (the one
    definition, ``core.decode_compute``); None when compute is not charged (no rate, no prefill fields,
    or ``--memory-only``)."""
    roof = decode_compute(device, model, workload)
    seconds = roof.seconds_per_session_step if roof.available else None
    return None if seconds is None else float(seconds)


@dataclass(frozen=True)
class LayoutChoice:
    """The layout a question on a system answers at, and where it came from: ``source`` is ``given``
    (the layout input), ``engine`` (the engine's default split) or ``best`` (the first of the valid
    layouts ranked as ``servebound layout`` ranks them); ``why`` says it in words. ``result`` is the
    layout's decode ceilings under the scenario's workload; ``notes`` explain the choice."""

    system: ResolvedSystem
    result: LayoutResult
    source: str
    why: str
    compute_s_per_session_step: float | None
    notes: tuple[Note, ...] = ()

    @property
    def layout(self) -> Layout:
        return self.result.layout

    @property
    def label(self) -> str:
        return self.result.layout.label


def choose_layout(
    ref: object, model: ModelAdapter, workload: Workload, given: str | None = None
) -> LayoutChoice:
    """The layout a question on the system ``ref`` answers at (see the module docstring), under the
    workload the scenario resolved against the system's pooled row (its O and capped contexts)."""
    resolved = resolve_system(ref)
    system = resolved.system
    c = compute_seconds_per_session_step(system.device, model, workload)
    if given is not None:
        layout = parse_layout(given, system, model)
        result = evaluate_layout(system, model, layout, workload, compute_s_per_session_step=c)
        return LayoutChoice(resolved, result, "given", f"given: {layout.label}", c)
    best = best_layout(system, model, workload, compute_s_per_session_step=c)
    if best is None:
        raise InputError("layout", f"no valid layout of {resolved.id} for {model.id}")
    gguf = format_class(model.weight_precision) == "gguf"
    split = (
        _layer_split(system, model, workload, c) if gguf or workload.engine in LAYER_SPLIT_ENGINES else None
    )
    if workload.engine in LAYER_SPLIT_ENGINES and split is not None:
        why = f"{workload.engine}'s default split of the layers over the {system.count} devices"
        note = Note.of(
            f"{workload.engine} splits the layers over the devices by default ({LAYER_SPLIT_SOURCE}): "
            f"a session passes them one after another, so it answers at {split.layout.label}, not at the "
            f"summed bandwidth; the best layout is {best.layout.label} (servebound layout lists them all)",
        )
        return LayoutChoice(resolved, split, "engine", why, c, (note,))
    why = "the best valid layout: servebound layout ranks it first"
    notes: tuple[Note, ...] = ()
    if split is not None and split.layout != best.layout and gguf:
        notes = (_layer_split_note(split),)
    return LayoutChoice(resolved, best, "best", why, c, notes)


def _layer_split(
    system: System, model: ModelAdapter, workload: Workload, c: float | None
) -> LayoutResult | None:
    """The layout of llama.cpp's default layer split (one pipeline over every device), where valid."""
    split = Layout(pp=system.count)
    if layout_problem(system, model, split) is not None:
        return None
    return evaluate_layout(system, model, split, workload, compute_s_per_session_step=c)


def _layer_split_note(split: LayoutResult) -> Note:
    """What llama.cpp's default layer split gives, beside the best layout answered."""
    rate = split.single_session_tok_s
    said = "no session fits" if rate is None else f"one session runs at most {rate:,.1f} tok/s"
    return Note.of(
        f"llama.cpp, which runs this GGUF format, splits the layers over the devices by default "
        f"({split.layout.label}; {LAYER_SPLIT_SOURCE}): there {said}; ",
        Setting("engine", "llama.cpp"),
        " answers at that split",
    )
