"""The Typer app every command registers on and the options the commands share (output helpers are
``cli.output``, re-exported here).

Command modules import from here (light: no command, no catalog); ``servebound.cli.app`` is the same
app with every command registered, and ``servebound.cli`` runs it importing only the invoked command.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from dataclasses import MISSING, dataclass, fields
from typing import Annotated, Any, TypeVar, get_type_hints

import typer
from typer.core import TyperOption

from servebound.cli import root_app
from servebound.cli.output import checked_output, console, print_json, render_assumptions
from servebound.core.experts import ExpertTraffic
from servebound.core.workload import (
    DEFAULT_FLOOR_TOK_PER_S,
    Workload,
)

app = root_app()


def _flag_shows_no_type(self: TyperOption, ctx: Any) -> str | None:
    """A flag (--json, --help) takes no value, so its help row shows no type (it read `<bool>`)."""
    return None if getattr(self, "is_flag", False) else _OPTION_TYPE(self, ctx)


_OPTION_TYPE = TyperOption.display_type_rich
TyperOption.display_type_rich = _flag_shows_no_type  # type: ignore[method-assign]


#: --hardware's help, where a command requires it (HardwareOpt) and where it is one choice of several.
HARDWARE_HELP = "Hardware file (TOML/JSON), catalog id, NxID, or auto (this machine, detected)."
HardwareOpt = Annotated[str, typer.Option("--hardware", "-H", help=HARDWARE_HELP)]
ModelOpt = Annotated[
    str,
    typer.Option(
        "--model", "-m", help="Model file (TOML/JSON), a .gguf or .safetensors checkpoint, or a catalog id."
    ),
]
OverheadOpt = Annotated[
    float | None,
    typer.Option(
        "--overhead-gb",
        help="O: runtime memory overhead in GB, subtracted from capacity once (default: the hardware "
        "row's, the OS's share of unified memory or a card's runtime context; 8 where it states none).",
        show_default=False,
    ),
]
AllocOpt = Annotated[
    int | None,
    typer.Option(
        "--alloc-context",
        help="L_alloc: tokens of KV reserved per session (default: 100,000, capped at the model's context limit).",
        show_default=False,
    ),
]
ReadOpt = Annotated[
    int | None,
    typer.Option(
        "--read-context",
        help="L_read: average tokens of context read per step (default: 32,000, at most L_alloc).",
        show_default=False,
    ),
]
FloorOpt = Annotated[float, typer.Option("--floor", help="r*: minimum useful tok/s per session.")]
ExpertOpt = Annotated[
    ExpertTraffic,
    typer.Option("--expert-traffic", help="expected: m(n) estimate; minimum: k experts, a guaranteed bound."),
]
KVPrecisionOpt = Annotated[
    str | None,
    typer.Option("--kv-precision", help="Re-express the cache at bf16, fp16, fp8, q8_0, q4_0 or fp32."),
]
KVAllocationOpt = Annotated[
    str | None,
    typer.Option(
        "--kv-allocation",
        help="reserved: each session holds K_alloc(L_alloc) (llama.cpp's slots); paged: K_alloc(L_read), "
        "the cache grows on demand (vLLM, SGLang). Default: reserved, or the --engine's.",
        show_default=False,
    ),
]
EngineOpt = Annotated[
    str | None,
    typer.Option(
        "--engine",
        help="llama.cpp, ollama, lm-studio, mlx, vllm, sglang or trt-llm: sets the cache allocation, the "
        "runtime-overhead convention (when --overhead-gb is not given) and which weight formats it runs.",
        show_default=False,
    ),
]
CpuMoeOpt = Annotated[
    bool, typer.Option("--cpu-moe", help="Offload: every routed expert in host RAM (llama.cpp's --cpu-moe).")
]
NCpuMoeOpt = Annotated[
    int | None,
    typer.Option(
        "--n-cpu-moe",
        help="Offload: the experts of N MoE layers in host RAM (llama.cpp's --n-cpu-moe N).",
        show_default=False,
    ),
]
GpuLayersOpt = Annotated[
    int | None,
    typer.Option(
        "--gpu-layers",
        help="Offload: N layers on the device, the rest (with their caches) in host RAM (-ngl N).",
        show_default=False,
    ),
]
HostOpt = Annotated[
    str | None,
    typer.Option(
        "--host",
        help="Offload: a host memory row (desktop-ddr5-6000-2ch, epyc-9004-ddr5-4800-12ch ...).",
        show_default=False,
    ),
]
HostMemoryOpt = Annotated[
    float | None,
    typer.Option(
        "--host-memory-gb", help="Offload: host RAM in GB (default: the --host row's).", show_default=False
    ),
]
HostBandwidthOpt = Annotated[
    float | None,
    typer.Option(
        "--host-bandwidth-gb-per-s",
        help="Offload: host memory bandwidth in GB/s (default: the --host row's).",
        show_default=False,
    ),
]
HostLinkOpt = Annotated[
    float | None,
    typer.Option(
        "--host-link-gb-per-s",
        help="Offload: host-to-device link in GB/s for prefill's weight transfers (default 63, PCIe 5.0 x16).",
        show_default=False,
    ),
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print one JSON object (the contract's fields).")]

#: None: the hardware row's runtime overhead, or the derivation's 8 GB where the row states none.
DEFAULT_OVERHEAD_GB: float | None = None
#: None: the derivation's defaults (100,000 / 32,000), capped per model at its context limit.
DEFAULT_ALLOC: int | None = None
DEFAULT_READ: int | None = None
DEFAULT_FLOOR = DEFAULT_FLOOR_TOK_PER_S


@dataclass(frozen=True)
class ContextFlags:
    """The memory and floor flags (``--overhead-gb`` .. ``--floor``): the whole workload of ``rank``, and
    the start of ``WorkloadFlags``."""

    overhead_gb: OverheadOpt = DEFAULT_OVERHEAD_GB
    alloc_context: AllocOpt = DEFAULT_ALLOC
    read_context: ReadOpt = DEFAULT_READ
    floor: FloorOpt = DEFAULT_FLOOR

    def workload(self, **extra: Any) -> Workload:
        """These flags (and a command's own, e.g. ``batch``) as a validated Workload."""
        from servebound.api import make_workload

        return make_workload(
            overhead_gb=self.overhead_gb,
            alloc_context=self.alloc_context,
            read_context=self.read_context,
            floor_tok_s=self.floor,
            **extra,
        )


@dataclass(frozen=True)
class WorkloadFlags(ContextFlags):
    """The workload flags every ceiling command takes (``--overhead-gb`` .. ``--kv-precision``): one
    declaration, added to a command by ``with_workload_flags``."""

    expert_traffic: ExpertOpt = ExpertTraffic.EXPECTED
    kv_precision: KVPrecisionOpt = None
    kv_allocation: KVAllocationOpt = None
    engine: EngineOpt = None
    cpu_moe: CpuMoeOpt = False
    n_cpu_moe: NCpuMoeOpt = None
    gpu_layers: GpuLayersOpt = None
    host: HostOpt = None
    host_memory_gb: HostMemoryOpt = None
    host_bandwidth_gb_per_s: HostBandwidthOpt = None
    host_link_gb_per_s: HostLinkOpt = None

    def workload(self, *, draft: str | None = None, **extra: Any) -> Workload:
        """These flags (and a command's own, e.g. ``batch``; ``draft`` a model file or catalog id, loaded
        at ``--kv-precision``) as a validated Workload."""
        from servebound.api import load_model

        return super().workload(
            expert_traffic=self.expert_traffic,
            draft=load_model(draft, kv_precision=self.kv_precision) if draft else None,
            kv_allocation=self.kv_allocation,
            engine=self.engine,
            cpu_moe=self.cpu_moe,
            n_cpu_moe=self.n_cpu_moe,
            gpu_layers=self.gpu_layers,
            host=self.host,
            host_memory_gb=self.host_memory_gb,
            host_bandwidth_gb_per_s=self.host_bandwidth_gb_per_s,
            host_link_gb_per_s=self.host_link_gb_per_s,
            **extra,
        )


_Command = TypeVar("_Command", bound=Callable[..., Any])


def with_flags(record: type, param: str) -> Callable[[_Command], _Command]:
    """Declare the fields of the frozen dataclass ``record`` as options of a command, where its
    ``param`` parameter stands (so its help lists them in that place), and hand them to it as that one
    argument. Typer reads the rewritten signature, so the flags, their help and defaults are exactly the
    record's. Stacks: each use replaces one parameter."""

    def decorate(command: _Command) -> _Command:
        signature = inspect.signature(command, eval_str=True)
        hints = get_type_hints(record, include_extras=True)  # a base record's fields too
        names = [f.name for f in fields(record)]
        shared = [
            inspect.Parameter(
                f.name,
                inspect.Parameter.POSITIONAL_OR_KEYWORD,
                default=inspect.Parameter.empty if f.default is MISSING else f.default,
                annotation=hints[f.name],
            )
            for f in fields(record)
        ]
        own = list(signature.parameters.values())
        at = [p.name for p in own].index(param)
        parameters = own[:at] + shared + own[at + 1 :]

        @functools.wraps(command)
        def run(**kwargs: Any) -> Any:
            flags = record(**{name: kwargs.pop(name) for name in names})
            return command(**{param: flags}, **kwargs)

        run.__signature__ = signature.replace(parameters=parameters)  # type: ignore[attr-defined]
        run.__annotations__ = {p.name: p.annotation for p in parameters} | {
            "return": signature.return_annotation
        }
        return run  # type: ignore[return-value]

    return decorate


#: ``WorkloadFlags``' options on a command, in place of its ``flags`` parameter.
with_workload_flags = with_flags(WorkloadFlags, "flags")


__all__ = [
    "DEFAULT_ALLOC",
    "DEFAULT_FLOOR",
    "DEFAULT_OVERHEAD_GB",
    "DEFAULT_READ",
    "HARDWARE_HELP",
    "AllocOpt",
    "EngineOpt",
    "ExpertOpt",
    "FloorOpt",
    "HardwareOpt",
    "JsonOpt",
    "KVPrecisionOpt",
    "ModelOpt",
    "OverheadOpt",
    "ReadOpt",
    "app",
    "checked_output",
    "console",
    "print_json",
    "render_assumptions",
]
