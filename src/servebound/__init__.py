"""servebound: how fast can this machine serve this LLM? Ceilings from first principles.

The public API::

    from servebound import decode, load_hardware, load_model, make_workload
    result = decode("nvidia-dgx-spark", "my-model.toml", make_workload(read_context=8000))
    result.aggregate_tok_per_s, result.batch_star, result.verdict
"""

from servebound.api import decode, load_hardware, load_model, make_workload, with_kv_precision
from servebound.core.decode import (
    BatchLimit,
    DecodeResult,
    Forced,
    Remedies,
    StepCurve,
    Verdict,
    curve,
    step_curve,
)
from servebound.core.decode_compute import ComputeStatus, DecodeCompute, decode_compute
from servebound.core.decode_range import ContextCurve, DecodeContextRange, decode_context_range
from servebound.core.experts import ExpertTraffic, expected_distinct_experts
from servebound.core.hardware import Hardware
from servebound.core.kv import KVShape
from servebound.core.model import Experts, ModelAdapter, PrefillShape, Weights
from servebound.core.prefill import (
    PrefillCurve,
    PrefillRange,
    PrefillResult,
    PrefillVerdict,
    prefill,
    prefill_curve,
    prefill_range,
)
from servebound.core.workload import MAX_BATCH, Speculation, Workload
from servebound.errors import InputError

__all__ = [
    "MAX_BATCH",
    "BatchLimit",
    "ComputeStatus",
    "ContextCurve",
    "DecodeCompute",
    "DecodeContextRange",
    "DecodeResult",
    "ExpertTraffic",
    "Experts",
    "Forced",
    "Hardware",
    "InputError",
    "KVShape",
    "ModelAdapter",
    "PrefillCurve",
    "PrefillRange",
    "PrefillResult",
    "PrefillShape",
    "PrefillVerdict",
    "Remedies",
    "Speculation",
    "StepCurve",
    "Verdict",
    "Weights",
    "Workload",
    "curve",
    "decode",
    "decode_compute",
    "decode_context_range",
    "expected_distinct_experts",
    "load_hardware",
    "load_model",
    "make_workload",
    "prefill",
    "prefill_curve",
    "prefill_range",
    "step_curve",
    "with_kv_precision",
]
