"""Always a number: where no session fits, the nearest settings that do, each with its speed.

Each suggestion is one change to the question, answered by :func:`servebound.core.decode.decode` at
that setting (one path: no second formula):

* no session fits at the asked reservation: the longest reservation that fits (``alloc_context``;
  ``read_context`` under a paged cache, which holds what it reads), from the gate's own remedy;
* the weights do not fit: the heaviest catalog format of the same model that an engine runs on the
  device and where a session fits (``weight_format``), and the offload llama.cpp offers, with a catalog host row for the device's
  class (``host``): every routed expert in host RAM for a mixture of experts (``cpu_moe``), else the
  most layers that fit on the device (``gpu_layers``).

Suggestions are listed best first: those that clear the floor, then by aggregate and single-session
speed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from servebound.catalog import snapshot
from servebound.catalog.engines import FormatSupport, format_support
from servebound.catalog.hosts import offload_spec
from servebound.core.decode import DecodeResult, Verdict, decode
from servebound.core.nearest_records import NearestFit, register
from servebound.core.workload import KVAllocation, Workload
from servebound.inputs.engine_choice import catalog_facts

if TYPE_CHECKING:
    from servebound.core.hardware import Hardware
    from servebound.core.model import ModelAdapter

#: The catalog host row (``catalog/data/hosts.toml``) an offload suggestion reads, by the device's
#: catalog class: a desktop beside a GeForce or workstation card, a server socket beside a datacenter
#: part. Unified-memory parts have no separate host memory to offload to.
HOST_FOR_CLASS: dict[str, str] = {
    "consumer GPU": "desktop-ddr5-6000-2ch",
    "workstation GPU": "desktop-ddr5-6000-2ch",
    "datacenter GPU": "epyc-9004-ddr5-4800-12ch",
    "accelerator": "epyc-9004-ddr5-4800-12ch",
    "multi-device system": "epyc-9004-ddr5-4800-12ch",
}
#: The host row where the device's class is unknown (a hardware file).
DEFAULT_HOST = "desktop-ddr5-6000-2ch"
#: Engines that place weights in host RAM this way (llama.cpp's flags; Ollama and LM Studio run it).
_OFFLOADING = (None, "llama.cpp", "ollama", "lm-studio")


def applied(result: DecodeResult, fit: NearestFit) -> tuple[Hardware, ModelAdapter, Workload]:
    """The (hardware, model, workload) of ``result`` with the suggestion ``fit`` applied."""
    hardware, model, workload = result.hardware, result.model, result.workload
    if fit.change == "alloc_context":
        assert isinstance(fit.value, int)
        read = min(workload.read_context_tokens, fit.value)
        return hardware, model, workload._with(alloc_context_tokens=fit.value, read_context_tokens=read)
    if fit.change == "read_context":
        assert isinstance(fit.value, int)
        return hardware, model, workload._with(read_context_tokens=fit.value)
    if fit.change == "weight_format":
        other = snapshot.adapter(str(fit.value))
        return hardware, other, _for_weights(workload, hardware, other)

    if fit.change == "cpu_moe":
        spec = offload_spec(cpu_moe=True, host=fit.host)
    else:
        assert isinstance(fit.value, int)
        spec = offload_spec(gpu_layers=fit.value, host=fit.host)
    return hardware, model, workload._with(offload=spec)


def _for_weights(workload: Workload, hardware: Hardware, model: ModelAdapter) -> Workload:
    """The workload for another format of the same model: the format's own verdict, and an engine whose
    O is a fraction of what the weights leave recomputes it for these weights (the contexts' cap is the
    model's, the same)."""
    verdict = format_support(hardware.id, model.weight_precision, workload.engine)
    if workload.engine_overhead is None or workload.engine_overhead[0] != "fraction_of_free":
        return workload._with(format_support=verdict)
    fraction = workload.engine_overhead[1]
    return workload._with(
        format_support=verdict,
        overhead_bytes=max(0.0, (1.0 - fraction) * (hardware.memory_bytes - model.weights.resident)),
    )


def _answer(
    result: DecodeResult, change: str, value: int | str | bool, host: str | None = None
) -> NearestFit | None:
    """The suggestion with decode's speeds at it, or None where a session does not fit there."""
    probe = NearestFit(change, value, None, None, None, host)
    there = decode(*applied(result, probe))
    if not there.fits:
        return None
    return NearestFit(
        change,
        value,
        there.single_session_tok_s,
        there.aggregate_tok_s,
        there.batch_star,
        host,
        there.verdict is Verdict.FLOOR_FIT,
    )


def _context(result: DecodeResult) -> NearestFit | None:
    tokens = result.remedies.max_alloc_context_tokens
    if tokens is None or tokens < 1 or result.workload.speculation is not None:
        return None
    paged = result.workload.kv_allocation is KVAllocation.PAGED
    return _answer(result, "read_context" if paged else "alloc_context", tokens)


def _format(result: DecodeResult) -> NearestFit | None:
    """The heaviest catalog format of the same model, lighter than this one, where a session fits."""
    places = snapshot.places()
    if result.model.id not in places:
        return None  # not a catalog profile: no sibling formats to offer
    base = places[result.model.id][0]
    here = result.model.weights.resident
    siblings = [(pid, snapshot.adapter(pid)) for pid, place in places.items() if place[0] == base]
    lighter = sorted(
        (
            (pid, adapter)
            for pid, adapter in siblings
            if adapter.weights.resident < here
            and format_support(result.hardware.id, adapter.weight_precision, result.workload.engine)[0]
            is not FormatSupport.UNSUPPORTED
        ),
        key=lambda sibling: -sibling[1].weights.resident,
    )
    for pid, _ in lighter:
        found = _answer(result, "weight_format", pid)
        if found is not None:
            return found
    return None


def host_for(hardware: Hardware) -> str | None:
    """The catalog host row an offload on this hardware reads (None: unified memory, nothing to gain)."""
    facts = catalog_facts(hardware.id)
    if facts is None:
        return DEFAULT_HOST
    return HOST_FOR_CLASS.get(facts[0])


def _offload(result: DecodeResult) -> NearestFit | None:
    """Experts in host RAM for a mixture of experts, else the most layers that fit on the device."""
    model, workload = result.model, result.workload
    host = host_for(result.hardware)
    if host is None or workload.engine not in _OFFLOADING or workload.offload is not None:
        return None
    if model.weights.experts is not None:
        return _answer(result, "cpu_moe", True, host)
    layers = model.shape.layers if model.shape is not None else 0
    low, high, best = 1, layers - 1, None
    while low <= high:  # sessions fit for every count up to the largest: bisect it
        middle = (low + high) // 2
        found = _answer(result, "gpu_layers", middle, host)
        if found is None:
            high = middle - 1
        else:
            best, low = found, middle + 1
    return best


def nearest_fit(result: DecodeResult) -> tuple[NearestFit, ...]:
    """The nearest settings under which a session fits, best first (empty where one already fits)."""
    if result.fits:
        return ()
    if result.verdict is Verdict.NO_SESSION_FIT:
        found = [_context(result)]
    else:
        found = [_format(result), _offload(result)]
    kept = [f for f in found if f is not None]
    return tuple(
        sorted(
            kept,
            key=lambda f: (
                not f.floor_fit,
                -(f.aggregate_tok_s or 0.0),
                -(f.single_session_tok_s or 0.0),
            ),
        )
    )


register(nearest_fit)
