"""Every workload input, declared once: its type, default, help, unit, bounds, choices and names.

``WorkloadInputs`` is the one declaration. Each field's type and default are the Python record's; its
``given(...)`` metadata holds the rest. The CLI's options (``cli.common``), the JSON API's query
parameters and their OpenAPI entries (``web.routes.api``), the pair page's form and the in-browser
calculator's input list (``web.query``), and ``make_workload``'s keywords are all derived from it.
Adding an input is one field here (plus what it does in the core). No typer or FastAPI import: a fast
parser can read this module alone.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import MISSING, dataclass, fields
from typing import Any, get_type_hints

from servebound.catalog.engines import ENGINE_IDS
from servebound.core.advice import Note, Setting, listed
from servebound.core.hardware import ARITHMETIC_MODES, HOST_BOUNDS
from servebound.core.workload import (
    DEFAULT_ALLOC_CONTEXT_TOKENS,
    DEFAULT_FLOOR_TOK_PER_S,
    DEFAULT_READ_CONTEXT_TOKENS,
    MAX_BATCH,
)
from servebound.errors import InputError
from servebound.inputs.declare import (
    MAX_DRAFT_TOKENS,
    MAX_EDGE_GB,
    MAX_EDGE_TOK_S,
    MAX_EDGE_TOKENS,
    MAX_SITE_CONTEXT_TOKENS,
    MAX_TTFT_S,
    MIN_TTFT_S,
    Form,
    Group,
    Input,
    _kind,
    given,
)

#: The declaration machinery (``inputs.declare``) is read here too, as it always was.
__all__ = [
    "BY_NAME",
    "INPUTS",
    "MAX_DRAFT_TOKENS",
    "MAX_EDGE_GB",
    "MAX_EDGE_TOKENS",
    "MAX_EDGE_TOK_S",
    "MAX_SITE_CONTEXT_TOKENS",
    "MAX_TTFT_S",
    "MIN_TTFT_S",
    "WORKLOAD_KEYWORDS",
    "Form",
    "Group",
    "Input",
    "WorkloadInputs",
    "given",
    "inputs_of",
]

_CTX = {"unit": "tokens", "minimum": 1, "maximum": MAX_EDGE_TOKENS, "site_maximum": MAX_SITE_CONTEXT_TOKENS}


def _host(name: str) -> dict[str, float]:
    """A host input's bounds, those of any real host (core.offload's HOST_BOUNDS)."""
    low, high = HOST_BOUNDS[name]
    return {"minimum": low, "maximum": high}


@dataclass(frozen=True)
class WorkloadInputs:
    """The workload as the user states it, before it meets a hardware and a model (None: a default the
    resolution fills in and records the source of)."""

    overhead_gb: float | None = given(
        None,
        "O: runtime memory overhead in GB, subtracted from capacity once (default: the hardware row's, "
        "the OS's share of unified memory or a card's runtime context; 8 where it states none).",
        "context",
        unit="GB",
        minimum=0,
        maximum=MAX_EDGE_GB,
        api_help="O: runtime overhead in GB (the hardware row's; 8 where it states none)",
        form=Form("range", "Runtime overhead O (GB)", "any", low=0),
    )
    alloc_context: int | None = given(
        None,
        "L_alloc: tokens of KV reserved per session (default: 100,000, capped at the model's context limit).",
        "context",
        **_CTX,
        api_help="L_alloc: tokens reserved per session (100,000, capped at the model's limit)",
        form=Form("range", "Reserved context L<sub>alloc</sub> (tokens)", 1, low=1000),
    )
    read_context: int | None = given(
        None,
        "L_read: average tokens of context read per step (default: 32,000, at most L_alloc).",
        "context",
        **{**_CTX, "minimum": 0},  # 0: a fresh session's first step reads no cache (--range starts there)
        api_help="L_read: tokens read per step, <= L_alloc (32,000)",
        form=Form("range", "Read context L<sub>read</sub> (tokens)", low=1),
    )
    context: int | None = given(
        None,
        "The conversation length: reserves it per session (L_alloc) and reads the derivation's default "
        "share of it per step (L_read = L_alloc x 32,000 / 100,000); give it or the two exact ones.",
        "context",
        **_CTX,
        api_help="Conversation length: L_alloc = it, L_read = 32% of it (the defaults' 32,000 / 100,000)",
    )
    floor: float = given(
        DEFAULT_FLOOR_TOK_PER_S,
        "r*: minimum useful tok/s per session.",
        "context",
        unit="tok/s",
        keyword="floor_tok_s",
        minimum=0,
        maximum=MAX_EDGE_TOK_S,
        api_help="r*: tok/s per session (20)",
        form=Form("range", "Floor r* (tok/s per session)", 0.5, low=0, top=200),
    )
    expert_traffic: str = given(
        "expected",
        "expected: m(n) estimate; minimum: k experts, a guaranteed bound.",
        "context",
        choices=("expected", "minimum"),
        api_help="expected: m(n); minimum: k experts",
        form=Form("select", "Expert traffic"),
    )
    kv_precision: str | None = given(
        None,
        "Re-express the cache at bf16, fp16, fp8, q8_0, q4_0 or fp32.",
        "workload",
        max_length=32,
        expects="one of bf16, fp16, fp8, q8_0, q4_0, fp32 or an engine's spelling (f16, fp8_e4m3, q5_1, auto, ...)",
        api_help="Re-express the cache at bf16, fp16, fp8, q8_0, q4_0, fp32 or an engine's spelling",
        form=Form("select", "KV cache precision", blank="the model's own", by_id=True),
    )
    kv_allocation: str | None = given(
        None,
        "reserved: each session holds K_alloc(L_alloc) (llama.cpp's slots); paged: K_alloc(L_read), "
        "the cache grows on demand (vLLM, SGLang). Default: reserved, or the --engine's.",
        "serving",
        choices=("reserved", "paged"),
        api_help="reserved: each session holds K_alloc(L_alloc); paged: K_alloc(L_read) (reserved)",
        form=Form("select", "KV cache", by_id=True),
    )
    engine: str | None = given(
        None,
        "llama.cpp, ollama, lm-studio, mlx, vllm, sglang or trt-llm: sets the cache allocation, the "
        "runtime-overhead convention (when --overhead-gb is not given) and which weight formats it runs.",
        "serving",
        choices=ENGINE_IDS,
        api_help="serving engine: sets the cache allocation and the overhead convention",
        form=Form("select", "Engine", blank="none", by_id=True),
    )
    cpu_moe: bool = given(
        False,
        "Offload: every routed expert in host RAM (llama.cpp's --cpu-moe).",
        "workload",
        form=Form("check", "Every routed expert in host RAM", by_id=True),
    )
    n_cpu_moe: int | None = given(
        None,
        "Offload: the experts of N MoE layers in host RAM (llama.cpp's --n-cpu-moe N).",
        "workload",
        unit="layers",
        minimum=0,
        maximum=100_000,
        form=Form("number", "or the experts of N MoE layers", bounded=False, by_id=True),
    )
    gpu_layers: int | None = given(
        None,
        "Offload: N layers on the device, the rest (with their caches) in host RAM (-ngl N).",
        "workload",
        unit="layers",
        minimum=1,
        maximum=100_000,
        form=Form("number", "or only N layers on the device", bounded=False, by_id=True),
    )
    host: str | None = given(
        None,
        "Offload: a host memory row (desktop-ddr5-6000-2ch, epyc-9004-ddr5-4800-12ch ...).",
        "workload",
        max_length=120,
        form=Form("select", "Host", blank="given below", by_id=True),
    )
    host_memory_gb: float | None = given(
        None,
        "Offload: host RAM in GB (default: the --host row's).",
        "workload",
        unit="GB",
        **_host("host_memory_gb"),
        form=Form("number", "Host RAM (GB)", "any", bounded=False, by_id=True, placeholder="the row's"),
    )
    host_bandwidth_gb_per_s: float | None = given(
        None,
        "Offload: host memory bandwidth in GB/s (default: the --host row's).",
        "workload",
        unit="GB/s",
        **_host("host_bandwidth_gb_per_s"),
        form=Form(
            "number", "Host bandwidth (GB/s)", "any", bounded=False, by_id=True, placeholder="the row's"
        ),
    )
    host_link_gb_per_s: float | None = given(
        None,
        "Offload: host-to-device link in GB/s for prefill's weight transfers (default 63, PCIe 5.0 x16).",
        "workload",
        unit="GB/s",
        **_host("host_link_gb_per_s"),
        form=Form("number", "Host-to-device link (GB/s)", "any", bounded=False, by_id=True, placeholder="63"),
    )
    host_tflops: float | None = given(
        None,
        "Offload: the host CPU's peak TFLOPS at the mode its matmuls run (llama.cpp's quantized weights: "
        "int8, AMX or VNNI). Prefill chunks under 32 tokens run the host tier on the CPU and take at "
        "least its FLOPs at this rate (default: not charged, only their host memory read).",
        "workload",
        unit="TFLOPS",
        **_host("host_tflops"),
        api_help="Offload: the host CPU's peak TFLOPS for prefill chunks under 32 tokens (not charged)",
        form=Form(
            "number", "Host CPU peak (TFLOPS)", "any", bounded=False, by_id=True, placeholder="not charged"
        ),
    )
    host_cpu: str | None = given(
        None,
        "Offload: a host CPU row (xeon-platinum-8480plus ...) whose peak rate per mode prefill charges "
        "its chunks under 32 tokens at (the model's mode, else the CPU's fastest); or --host-tflops.",
        "workload",
        max_length=120,
        api_help="Offload: a host CPU row whose per-mode rates prefill's small chunks are charged at",
        form=Form("select", "or a host CPU", blank="none", by_id=True),
    )
    batch: int | str | None = given(
        None,
        "Force the concurrency to B sessions.",
        "decode",
        "prefill",
        unit="sessions",
        minimum=1,
        maximum=MAX_BATCH,
        words=("max",),
        help_in=(("prefill", "b: prompts per batch, or 'max' to search."),),
        api_help="B: sessions forced (decode; max = b*) or prompts per batch (prefill; max searches)",
        form=Form("range", "Batch b", low=1, by_id=True),
    )
    draft: str | None = given(
        None,
        "Speculative decoding: the draft model (file or catalog id).",
        "decode",
        max_length=4096,
        form=Form("text", "Draft model id", by_id=True, placeholder="e.g. qwen3-0.6b"),
    )
    draft_tokens: int | None = given(
        None,
        "gamma: tokens drafted per step.",
        "decode",
        unit="tokens",
        minimum=1,
        maximum=MAX_DRAFT_TOKENS,
        form=Form("number", "Draft tokens &gamma;", by_id=True),
    )
    acceptance: float | None = given(
        None,
        "alpha: per-token acceptance; rho = (1-a^(g+1))/(1-a).",
        "decode",
        minimum=0,
        maximum=1,
        form=Form("number", "Acceptance &alpha;", 0.01, by_id=True),
    )
    tokens_per_step: float | None = given(
        None,
        "rho: tokens emitted per session per step, given directly.",
        "decode",
        minimum=1,
        maximum=MAX_DRAFT_TOKENS + 1,
        form=Form("number", "or tokens per step &rho;", 0.01, by_id=True),
    )
    memory_only: bool = given(
        False,
        "Drop decode's compute roof: the memory-only ceiling, for comparison.",
        "roof",
        form=Form("check", "Memory roof only (drop decode's compute roof)"),
    )
    prompt: int | None = given(
        None,
        "L: prompt tokens per request (optional with --range).",
        "prefill",
        **_CTX,
        form=Form("range", "Prompt L (tokens)", low=1),
    )
    chunk: int | None = given(
        None,
        "c: chunk width; omitted = one-shot (c = L), the ceiling.",
        "prefill",
        unit="tokens",
        minimum=1,
        maximum=MAX_EDGE_TOKENS,
    )
    linear_mode: str | None = given(
        None,
        "Arithmetic mode of the linear layers (compute_tflops key).",
        "prefill",
        choices=ARITHMETIC_MODES,
    )
    attention_mode: str | None = given(
        None, "Arithmetic mode of attention (compute_tflops key).", "prefill", choices=ARITHMETIC_MODES
    )
    ttft_budget: float | None = given(
        None,
        "tau*: seconds the batch may take to prefill.",
        "prefill",
        unit="s",
        minimum=MIN_TTFT_S,
        maximum=MAX_TTFT_S,
    )
    layout: str | None = given(
        None,
        "Parallel layout on a system, e.g. tp=8,pp=1 or tp8 (dp fills it): charges the link. Default on a "
        "system: the engine's split (llama.cpp: layers), else the best valid layout.",
        "layout",
        max_length=64,
    )

    def __post_init__(self) -> None:
        for spec in INPUTS:
            spec.check(getattr(self, spec.name))
        exact = [name for name in ("alloc_context", "read_context") if getattr(self, name) is not None]
        if self.context is not None and exact:
            raise InputError(
                "context",
                Note.of(
                    "give the conversation length (",
                    Setting("context"),
                    ") or the exact ",
                    *listed(*(Setting(name) for name in exact), last=" and "),
                    ", not both: the conversation length sets both",
                ),
            )

    def contexts(self) -> tuple[int | None, int | None]:
        """(L_alloc, L_read) as given, None where left to the defaults: ``context`` reserves its value
        and reads the derivation's default share of it (DEFAULT_READ / DEFAULT_ALLOC, 32,000 of 100,000)."""
        if self.context is None:
            return self.alloc_context, self.read_context
        return self.context, self.context * DEFAULT_READ_CONTEXT_TOKENS // DEFAULT_ALLOC_CONTEXT_TOKENS

    def changed(self) -> dict[str, Any]:
        """The values that differ from the defaults, by name."""
        return {s.name: getattr(self, s.name) for s in INPUTS if getattr(self, s.name) != s.default}


def _declared() -> tuple[Input, ...]:
    hints = get_type_hints(WorkloadInputs)
    out = []
    for f in fields(WorkloadInputs):
        meta = dict(f.metadata["input"])
        flags = meta.pop("flags", (f"--{f.name.replace('_', '-')}",))
        default = None if f.default is MISSING else f.default
        out.append(Input(name=f.name, kind=_kind(hints[f.name]), default=default, flags=flags, **meta))
    return tuple(out)


#: Every declared input, in the declaration's order.
INPUTS: tuple[Input, ...] = _declared()
BY_NAME: dict[str, Input] = {s.name: s for s in INPUTS}
#: The inputs a Workload holds: make_workload's keywords (``floor_tok_s`` for ``floor``), the KV precision
#: included (the scenario re-expresses the target and the draft at it); the prefill and layout inputs are
#: their questions' own arguments.
WORKLOAD_KEYWORDS: dict[str, Input] = {
    s.python: s for s in INPUTS if s.groups & {"context", "serving", "workload", "roof", "decode"}
}


def inputs_of(*groups: Group, without: Iterable[str] = ()) -> tuple[Input, ...]:
    """The inputs of these groups, in the declaration's order (``without``: names left out)."""
    skip = set(without)
    return tuple(s for s in INPUTS if s.groups & set(groups) and s.name not in skip)
