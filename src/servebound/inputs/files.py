"""Hardware and model files (TOML, or JSON with the same keys): validated once, here, at the boundary.

The schemas are the contract's keys (see CONTRACT.md) plus a few optional keys of our own, which
docs/files.md lists. Every problem becomes an InputError naming the dotted field path and the fix.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any, Literal

import tomli_w
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError, model_validator

from servebound.catalog.engines import device_family
from servebound.core.economics import MemoryTier
from servebound.core.formats import KV_FORMATS
from servebound.core.hardware import ARITHMETIC_MODES, Hardware
from servebound.core.kv import KVShape
from servebound.core.model import MAX_ROUTED_EXPERTS, Experts, ModelAdapter, PrefillShape, Weights
from servebound.core.units import GB, TFLOPS
from servebound.core.workload import DEFAULT_READ_CONTEXT_TOKENS
from servebound.errors import InputError
from servebound.inputs import bounded
from servebound.views.terminal import one_line

MAX_FILE_BYTES = 4_000_000

Positive = Annotated[float, Field(gt=0, allow_inf_nan=False)]
NonNegative = Annotated[float, Field(ge=0, allow_inf_nan=False)]


def _real(what: str, low: float, high: float, *, zero: bool = False) -> AfterValidator:
    """Values beyond any real machine or model are errors, not numbers to compute with: past ``high``
    the arithmetic overflows (1e308 GB became inf) and below ``low`` it underflows (a 1e-300 byte
    weight divided by zero). The bounds sit orders of magnitude outside every real value, so only a
    unit slip or a hostile file reaches them. ``zero`` keeps 0 meaning "none" where it does."""

    def check(value: float) -> float:
        if zero and value == 0:
            return value
        if value < low:
            floor = f"{low:g}" + (" (or 0)" if zero else "")
            raise ValueError(f"{value:g} is below any real {what}; at least {floor}: check the unit")
        if value > high:
            raise ValueError(f"{value:g} is beyond any real {what}; at most {high:g}: check the unit")
        return value

    return AfterValidator(check)


#: Bounds of the file values (a petabyte of memory, 10 PB/s, 10 exaflop/s; a 0.01-byte weight is a
#: 0.08-bit one; a byte count other than 0 is at least one byte).
MemoryGB = Annotated[Positive, _real("memory size in GB", 1e-6, 1e6)]
BandwidthGB = Annotated[Positive, _real("bandwidth in GB/s", 1e-6, 1e7)]
Tflops = Annotated[Positive, _real("rate in TFLOPS", 1e-6, 1e7)]
BytesPerParam = Annotated[Positive, _real("bytes per parameter", 0.01, 64)]
Params = Annotated[Positive, _real("parameter count", 1, 1e15)]
WeightBytes = Annotated[NonNegative, _real("byte count", 1, 1e16, zero=True)]
TokenBytes = Annotated[NonNegative, _real("bytes per token", 1e-3, 1e10, zero=True)]
FlopsPerPair = Annotated[NonNegative, _real("FLOPs per token pair", 1e-3, 1e12, zero=True)]
Count = Annotated[int, Field(ge=0)]
Slug = Annotated[str, Field(pattern=r"^[a-z0-9][a-z0-9._-]*$", max_length=120)]


class _Strict(BaseModel):
    """No unknown keys, and no coercion: `true` or "128" is not a number here."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


class ComputeFile(_Strict):
    fp4: Tflops | None = None
    fp8: Tflops | None = None
    int8: Tflops | None = None
    bf16: Tflops | None = None
    fp16: Tflops | None = None
    fp16_acc16: Tflops | None = None
    fp32: Tflops | None = None


class HardwareFile(_Strict):
    """The contract's hardware file, plus provenance keys written by `servebound measure`."""

    id: Slug | None = None
    name: Annotated[str, Field(min_length=1, max_length=200), AfterValidator(one_line)]
    memory_gb: MemoryGB
    bandwidth_gb_per_s: BandwidthGB
    compute_tflops: ComputeFile = ComputeFile()
    #: O for this machine (the OS's share, the runtime's context); omitted, the workload's 8 GB applies.
    runtime_overhead_gb: Annotated[NonNegative, _real("runtime overhead in GB", 0, 1e6)] | None = None
    provenance: Literal["peak", "measured"] = "peak"
    measured_on: str | None = None
    method: str | None = None
    measurement: dict[str, float | int | str | bool] | None = None
    sources: dict[str, str] | None = None

    @model_validator(mode="after")
    def _overhead_below_memory(self) -> HardwareFile:
        if self.runtime_overhead_gb is not None and self.runtime_overhead_gb >= self.memory_gb:
            raise ValueError(
                f"runtime_overhead_gb {self.runtime_overhead_gb:g} is not below memory_gb {self.memory_gb:g} "
                "(the overhead is part of the memory): give a smaller runtime_overhead_gb"
            )
        return self

    def to_hardware(self) -> Hardware:
        rates = {mode: value * TFLOPS for mode, value in self.compute_tflops.model_dump().items() if value}
        hardware_id = self.id or _slug(self.name)
        return Hardware(
            id=hardware_id,
            name=self.name,
            memory_bytes=self.memory_gb * GB,
            bandwidth_bytes_per_s=self.bandwidth_gb_per_s * GB,
            compute_flop_per_s=rates,
            provenance=self.provenance,
            sources=self.sources or {},
            runtime_overhead_bytes=None
            if self.runtime_overhead_gb is None
            else self.runtime_overhead_gb * GB,
            family=device_family(hardware_id),
        )


class WeightsFile(_Strict):
    """Either the parameter form (bytes_per_param with counts) or the audited byte form."""

    bytes_per_param: BytesPerParam | None = None
    total_params: Params | None = None
    active_params: Params | None = None
    embedding_params: Annotated[NonNegative, _real("parameter count", 1, 1e15, zero=True)] = 0.0
    embedding_bytes: WeightBytes | None = None
    always_on_bytes: WeightBytes | None = None
    expert_bytes: WeightBytes | None = None
    resident_gb: MemoryGB | None = None
    precision: str | None = Field(default=None, max_length=40)

    @model_validator(mode="after")
    def _one_form(self) -> WeightsFile:
        param_keys = ("bytes_per_param", "total_params")
        byte_keys = ("always_on_bytes",)
        has_params = any(getattr(self, k) is not None for k in (*param_keys, "active_params"))
        has_bytes = any(
            getattr(self, k) is not None for k in ("embedding_bytes", "always_on_bytes", "expert_bytes")
        )
        if has_params and has_bytes:
            raise ValueError(
                "give either the parameter form (bytes_per_param, total_params, active_params) "
                "or the byte form (embedding_bytes, always_on_bytes, expert_bytes), not both"
            )
        if not has_params and not has_bytes:
            raise ValueError("missing: give bytes_per_param and total_params, or always_on_bytes")
        missing = [k for k in (param_keys if has_params else byte_keys) if getattr(self, k) is None]
        if missing:
            raise ValueError(f"missing key {missing[0]!r}")
        if has_params:
            assert self.total_params is not None
            active = self.active_params if self.active_params is not None else self.total_params
            if active > self.total_params:
                raise ValueError(
                    f"active_params ({active:g}) must not exceed total_params ({self.total_params:g})"
                )
            if self.embedding_params > active:
                raise ValueError(
                    f"embedding_params ({self.embedding_params:g}) must not exceed active_params ({active:g})"
                )
        return self


class ExpertsFile(_Strict):
    routed: Annotated[int, Field(ge=1, le=MAX_ROUTED_EXPERTS)]
    per_token: Annotated[int, Field(ge=1)]

    @model_validator(mode="after")
    def _k_le_e(self) -> ExpertsFile:
        if self.per_token > self.routed:
            raise ValueError(f"per_token ({self.per_token}) must not exceed routed ({self.routed})")
        return self


class KVPartFile(_Strict):
    global_bytes_per_token: TokenBytes = 0.0
    local_bytes_per_token: TokenBytes = 0.0
    window: Count = 0
    state_bytes: WeightBytes = 0.0

    @model_validator(mode="after")
    def _window_for_local(self) -> KVPartFile:
        if self.local_bytes_per_token > 0 and self.window == 0:
            raise ValueError("local_bytes_per_token needs a window > 0 (the sliding-window length in tokens)")
        return self

    def to_shape(self) -> KVShape:
        return KVShape(**_record_fields(self, _KV_RENAMED))


class KVFile(_Strict):
    precision: str | None = None
    alloc: KVPartFile
    read: KVPartFile | None = None

    @model_validator(mode="after")
    def _known_precision(self) -> KVFile:
        if self.precision is not None and self.precision not in KV_FORMATS:
            raise ValueError(f"unknown precision {self.precision!r}; known: {', '.join(KV_FORMATS)}")
        if self.read is not None:
            # A step cannot read more cache than a session holds: K_read(L) <= K_alloc(L) at every
            # context L. Both are g L + l min(L, w) + s, so it holds for all L when it holds at L = 0,
            # at either window and as L grows (the per-token global bytes).
            read, alloc = self.read.to_shape(), self.alloc.to_shape()
            edges = sorted({0, read.window_tokens, alloc.window_tokens})
            worse = [L for L in edges if read.bytes_at(L) > alloc.bytes_at(L) * (1 + 1e-12)]
            if read.global_bytes_per_token > alloc.global_bytes_per_token * (1 + 1e-12) or worse:
                at = max(edges[-1], DEFAULT_READ_CONTEXT_TOKENS)
                raise ValueError(
                    f"[kv.read] gives {read.bytes_at(at) / GB:.4g} GB at {at:,} tokens, more than the "
                    f"{alloc.bytes_at(at) / GB:.4g} GB [kv.alloc] reserves there (global "
                    f"{read.global_bytes_per_token:g} against {alloc.global_bytes_per_token:g} B/token): a step "
                    "cannot read more cache than a session holds; lower [kv.read] or raise [kv.alloc]"
                )
        return self


class PrefillFile(_Strict):
    linear_active_params: Params
    attention_global_flops_per_pair: FlopsPerPair = 0.0
    attention_local_flops_per_pair: FlopsPerPair = 0.0
    attention_window: Count = 0
    attention_state_flops_per_token: Annotated[
        NonNegative, _real("FLOPs per token", 1e-3, 1e15, zero=True)
    ] = 0.0
    kv_write_bytes_per_token: TokenBytes = 0.0
    linear_mode: str = "bf16"
    attention_mode: str = "bf16"
    linear_mode_if_published: str | None = None
    #: Mixed-precision weights: linear parameters per arithmetic mode (they sum to linear_active_params).
    linear_params_by_mode: dict[str, Params] | None = None

    @model_validator(mode="after")
    def _known_modes(self) -> PrefillFile:
        modes = [
            (key, getattr(self, key)) for key in ("linear_mode", "attention_mode", "linear_mode_if_published")
        ]
        modes += [("linear_params_by_mode", mode) for mode in self.linear_params_by_mode or {}]
        for key, mode in modes:
            if mode is not None and mode not in ARITHMETIC_MODES:
                raise ValueError(
                    f"{key} {mode!r} is not an arithmetic mode; use one of {', '.join(ARITHMETIC_MODES)}"
                )
        if self.linear_params_by_mode:
            total = sum(self.linear_params_by_mode.values())
            if abs(total - self.linear_active_params) > 1e-9 * self.linear_active_params:
                raise ValueError(
                    f"linear_params_by_mode sums to {total:g}, not linear_active_params {self.linear_active_params:g}"
                )
        return self

    def to_shape(self) -> PrefillShape:
        fields = _record_fields(self, _PREFILL_RENAMED)
        fields["linear_params_by_mode"] = tuple((self.linear_params_by_mode or {}).items())
        return PrefillShape(**fields)


class SourceFile(_Strict):
    kind: str | None = None
    path: str | None = None
    repository: str | None = None
    revision: str | None = None
    url: str | None = None


class ModelFile(_Strict):
    """The contract's model file (adapter form), plus optional provenance keys of our own."""

    id: Slug | None = None
    name: Annotated[str, Field(min_length=1, max_length=200), AfterValidator(one_line)]
    context_limit: Annotated[int, Field(ge=1, le=10**9)] | None = None
    weights: WeightsFile
    experts: ExpertsFile | None = None
    kv: KVFile
    prefill: PrefillFile | None = None
    source: SourceFile | None = None
    audit: dict[str, float | int | str | bool] | None = None

    @model_validator(mode="after")
    def _experts_match_form(self) -> ModelFile:
        w, experts = self.weights, self.experts
        total, stated = w.total_params, w.active_params
        if experts is None:
            if total is not None and stated is not None and stated != total:
                raise ValueError(
                    f"active_params ({stated:g}) differs from total_params ({total:g}) "
                    "but [experts] is missing: add routed and per_token, or drop active_params for a dense model"
                )
            if w.expert_bytes:
                raise ValueError("weights.expert_bytes is set but [experts] is missing (routed, per_token)")
            return self
        if total is None:
            return self
        k, e = experts.per_token, experts.routed
        if k == e:  # every expert is active
            if stated is not None and stated < total:
                raise ValueError(
                    "per_token equals routed (every expert is active) but active_params is below total_params"
                )
            return self
        active = stated if stated is not None else total
        always_on = active - k * (total - active) / (e - k) - w.embedding_params
        if always_on < -1e-9 * total:
            raise ValueError(
                f"active_params ({active:g}) leaves a negative always-on part ({always_on:g} params = "
                "active - per_token x (total - active)/(routed - per_token) - embedding); "
                "check the parameter counts and the expert numbers"
            )
        if stated is not None and stated >= total:
            raise ValueError("an MoE model needs active_params below total_params")
        return self

    @model_validator(mode="after")
    def _resident_covers_the_sweep(self) -> ModelFile:
        if self.weights.resident_gb is not None:
            adapter = self.to_adapter()
            if adapter.weights.resident < adapter.weights.active * (1 - 1e-9):
                raise ValueError(
                    f"resident_gb ({self.weights.resident_gb:g}) is below the weights swept per token "
                    f"({adapter.weights.active / GB:.4g} GB): the resident weights must hold what is read"
                )
        return self

    @model_validator(mode="after")
    def _real_cache_and_linear(self) -> ModelFile:
        alloc = self.kv.alloc
        stated_state = "state_bytes" in alloc.model_fields_set  # a recurrent model's own (tiny) state
        if not (
            alloc.global_bytes_per_token or alloc.local_bytes_per_token or alloc.state_bytes or stated_state
        ):
            raise ValueError(
                "[kv.alloc] holds 0 bytes per token and no state: an attention model caches keys and values "
                "(a recurrent one its state); give global_bytes_per_token (or local_bytes_per_token with a "
                "window, or state_bytes)"
            )
        total = self.weights.total_params
        if (
            self.prefill is not None
            and total is not None
            and self.prefill.linear_active_params > total * (1 + 1e-9)
        ):
            raise ValueError(
                f"[prefill] linear_active_params ({self.prefill.linear_active_params:g}) exceeds total_params "
                f"({total:g}): the linear layers are part of the weights; fix one of them"
            )
        return self

    def to_adapter(self) -> ModelAdapter:
        w = self.weights
        experts = Experts(self.experts.routed, self.experts.per_token) if self.experts else None
        resident = w.resident_gb * GB if w.resident_gb is not None else None
        if w.bytes_per_param is not None:
            assert w.total_params is not None
            weights = Weights.from_params(
                bytes_per_param=w.bytes_per_param,
                total_params=w.total_params,
                active_params=w.active_params if w.active_params is not None else w.total_params,
                embedding_params=w.embedding_params,
                experts=experts,
                resident_bytes=resident,
            )
        else:
            assert w.always_on_bytes is not None
            weights = Weights(
                embedding_bytes=w.embedding_bytes or 0.0,
                always_on_bytes=w.always_on_bytes,
                expert_bytes=w.expert_bytes or 0.0,
                experts=experts if (w.expert_bytes or 0) > 0 else None,
                resident_bytes=resident,
            )
        alloc = self.kv.alloc.to_shape()
        read = self.kv.read.to_shape() if self.kv.read is not None else alloc
        prefill = None if self.prefill is None else self.prefill.to_shape()
        kv_precision = self.kv.precision
        return ModelAdapter(
            id=self.id or _slug(self.name),
            name=self.name,
            weights=weights,
            kv_alloc=alloc,
            kv_read=read,
            prefill=prefill,
            context_limit_tokens=self.context_limit,
            weight_precision=w.precision
            or (f"{w.bytes_per_param:g} bytes/param" if w.bytes_per_param else None),
            kv_precision=kv_precision,
            kv_bytes_per_element=KV_FORMATS[kv_precision].bytes_per_element if kv_precision else None,
            sources={k: v for k, v in (self.source.model_dump() if self.source else {}).items() if v},
        )


def _slug(name: str) -> str:
    out = "".join(ch if ch.isalnum() else "-" for ch in name.lower()).strip("-")
    while "--" in out:
        out = out.replace("--", "-")
    return out or "unnamed"


def _field_path(loc: tuple[int | str, ...]) -> str:
    return ".".join(str(part) for part in loc if not str(part).startswith("function-")) or "file"


def validation_to_input_error(error: ValidationError, prefix: str = "") -> InputError:
    """The first pydantic problem as one InputError naming the dotted field."""
    first = error.errors(include_url=False)[0]
    loc = tuple(first.get("loc", ()))
    field = _field_path(loc)
    message = str(first.get("msg", "invalid"))
    kind = first.get("type", "")
    if kind == "extra_forbidden":
        message = "unknown key (check the spelling against the file reference, docs/files.md)"
    elif kind == "missing":
        message = "missing required key"
    message = message.removeprefix("Value error, ")
    if (
        "input" in first
        and kind not in ("missing", "extra_forbidden")
        and not isinstance(first["input"], dict)
    ):
        message += f" (got {first['input']!r})"
    return InputError(f"{prefix}{field}" if field != "file" else prefix.rstrip(".") or "file", message)


def read_mapping(path: Path, what: str) -> dict[str, Any]:
    """Read a TOML or JSON file (by suffix; TOML otherwise), bounded, as a mapping (see bounded.py)."""
    raw = bounded.read_bytes(path, what, max_bytes=MAX_FILE_BYTES)
    as_json = path.suffix.lower() == ".json"
    data = bounded.parse_json(raw, what) if as_json else bounded.parse_toml(raw, what, origin=str(path))
    return bounded.require_object(data, what)


def parse_hardware(data: dict[str, Any]) -> HardwareFile:
    try:
        return HardwareFile.model_validate(data)
    except ValidationError as exc:
        raise validation_to_input_error(exc, "hardware.") from None


def parse_model(data: dict[str, Any]) -> ModelFile:
    try:
        return ModelFile.model_validate(data)
    except ValidationError as exc:
        raise validation_to_input_error(exc, "model.") from None


def check_imported(model: ModelAdapter, *, audit: dict[str, Any] | None = None) -> dict[str, Any]:
    """An imported adapter held to the model file's checks (its model form must load back); returns
    that form. `servebound import` writes it; a checkpoint given to --model is checked the same way, so
    the two paths accept and refuse the same files."""
    mapping = model_to_mapping(model, audit=audit)
    parse_model(mapping)
    return mapping


class TierFile(_Strict):
    """One memory tier of a ``--tiers`` file: capacity and read bandwidth of one device of the tier."""

    name: str = Field(min_length=1, max_length=60)
    device: str = Field(default="", max_length=200)
    capacity_gb: MemoryGB
    bandwidth_gb_per_s: BandwidthGB
    source: str = Field(default="", max_length=500)


class TiersFile(_Strict):
    tier: list[TierFile] = Field(min_length=1, max_length=32)


def load_tiers_file(path: str | Path) -> tuple[MemoryTier, ...]:
    """A memory-tier file (TOML ``[[tier]]`` tables or JSON ``{"tier": [...]}``) as core MemoryTier rows,
    in the file's order (for ``servebound economics cache-tier --tiers``)."""
    try:
        parsed = TiersFile.model_validate(read_mapping(Path(path), "tiers"))
    except ValidationError as exc:
        raise validation_to_input_error(exc, "tiers.") from None
    return tuple(
        MemoryTier(
            t.name, t.device or t.name, t.capacity_gb * GB, t.bandwidth_gb_per_s * GB, t.source or str(path)
        )
        for t in parsed.tier
    )


def load_hardware_file(path: str | Path) -> Hardware:
    """A hardware file (TOML or JSON) as a core Hardware record."""
    return parse_hardware(read_mapping(Path(path), "hardware")).to_hardware()


def load_model_file(path: str | Path) -> ModelAdapter:
    """A model file (TOML or JSON) as a core ModelAdapter."""
    return parse_model(read_mapping(Path(path), "model")).to_adapter()


def model_to_mapping(model: ModelAdapter, *, audit: dict[str, Any] | None = None) -> dict[str, Any]:
    """The contract's model form of an adapter (byte form for the weights), ready for TOML or JSON."""
    w = model.weights
    weights: dict[str, Any] = {
        "embedding_bytes": w.embedding_bytes,
        "always_on_bytes": w.always_on_bytes,
    }
    if w.experts is not None:
        weights["expert_bytes"] = w.expert_bytes
    if w.resident_bytes is not None:
        weights["resident_gb"] = w.resident_bytes / GB
    if model.weight_precision:
        weights["precision"] = model.weight_precision
    out: dict[str, Any] = {"id": model.id, "name": model.name}
    if model.context_limit_tokens:
        out["context_limit"] = model.context_limit_tokens
    out["weights"] = weights
    if w.experts is not None:
        out["experts"] = {"routed": w.experts.routed, "per_token": w.experts.per_token}
    kv: dict[str, Any] = {}
    if model.kv_precision:
        kv["precision"] = model.kv_precision
    kv["alloc"] = _file_keys(model.kv_alloc, KVPartFile, _KV_RENAMED)
    if model.kv_read != model.kv_alloc:
        kv["read"] = _file_keys(model.kv_read, KVPartFile, _KV_RENAMED)
    out["kv"] = kv
    if model.prefill is not None:
        out["prefill"] = _file_keys(model.prefill, PrefillFile, _PREFILL_RENAMED)
        out["prefill"]["linear_params_by_mode"] = dict(model.prefill.linear_params_by_mode) or None
        if out["prefill"]["linear_params_by_mode"] is None:
            del out["prefill"]["linear_params_by_mode"]
    if model.sources:
        out["source"] = {k: v for k, v in model.sources.items() if k in SourceFile.model_fields}
    if audit:
        out["audit"] = {k: v for k, v in audit.items() if v is not None}
    return out


#: File keys whose core record's field names the unit (``window`` is ``window_tokens``); every other
#: key is the record's field of the same name.
_KV_RENAMED = {"window": "window_tokens"}
_PREFILL_RENAMED = {"attention_window": "attention_window_tokens"}


def _record_fields(part: BaseModel, renamed: dict[str, str]) -> dict[str, Any]:
    """A file table's values by the core record's field names."""
    return {renamed.get(key, key): value for key, value in part.model_dump().items()}


def _file_keys(record: Any, part: type[BaseModel], renamed: dict[str, str]) -> dict[str, Any]:
    """A core record in the file table ``part``'s keys (in its order; a None value left out)."""
    values = {key: getattr(record, renamed.get(key, key)) for key in part.model_fields}
    return {key: value for key, value in values.items() if value is not None}


def dumps_model(mapping: dict[str, Any], fmt: Literal["toml", "json"] = "toml") -> str:
    """Serialize a model mapping as TOML or JSON text."""
    if fmt == "json":
        return json.dumps(mapping, indent=2) + "\n"
    return tomli_w.dumps(mapping)
