"""servebound: how fast can this machine serve this LLM? Ceilings from first principles.

The public API::

    from servebound import decode, prefill
    result = decode("nvidia-dgx-spark", "my-model.toml", read_context=8000)  # ids or records
    result.aggregate_tok_s, result.batch_star, result.verdict
    result.to_dict() == json.loads(`servebound decode ... --json`)

These names (``__all__``) are the public surface; every module under the package is internal and may
change. The names are imported on first use, so ``import servebound`` and the CLI start fast.
"""

import importlib as _importlib
import typing as _typing

if _typing.TYPE_CHECKING:
    from servebound.api import (
        cost,
        decode,
        default_workload,
        layout,
        load_hardware,
        load_model,
        make_workload,
        plan,
        prefill,
        with_kv_precision,
    )
    from servebound.catalog.browse import hardware, models, search
    from servebound.catalog.hardware import CatalogHardware
    from servebound.catalog.models import CatalogModel
    from servebound.catalog.search import SearchHit
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
        prefill_curve,
        prefill_range,
    )
    from servebound.core.workload import MAX_BATCH, Speculation, Workload
    from servebound.errors import InputError
    from servebound.importers.audit import ImportedModel
    from servebound.importers.gguf_file import import_gguf
    from servebound.importers.hf_config import import_hf_config
    from servebound.importers.safetensors_headers import import_safetensors
    from servebound.questions.cost import CostReport
    from servebound.questions.layout import LayoutSearch
    from servebound.questions.plan import PlanResult
    from servebound.questions.rank import RankRow, rank_hardware, rank_models
    from servebound.runs.ceiling import check_run
    from servebound.runs.measured import MeasuredRun, RunCheck, make_run

#: Where each public name lives; imported on first use, so `import servebound` (and the CLI) stay fast.
_HOMES = {
    "cost": "servebound.api",
    "decode": "servebound.api",
    "default_workload": "servebound.api",
    "hardware": "servebound.catalog.browse",
    "models": "servebound.catalog.browse",
    "search": "servebound.catalog.browse",
    "CatalogHardware": "servebound.catalog.hardware",
    "CatalogModel": "servebound.catalog.models",
    "SearchHit": "servebound.catalog.search",
    "layout": "servebound.api",
    "plan": "servebound.api",
    "prefill": "servebound.api",
    "CostReport": "servebound.questions.cost",
    "ImportedModel": "servebound.importers.audit",
    "import_gguf": "servebound.importers.gguf_file",
    "import_hf_config": "servebound.importers.hf_config",
    "import_safetensors": "servebound.importers.safetensors_headers",
    "LayoutSearch": "servebound.questions.layout",
    "PlanResult": "servebound.questions.plan",
    "RankRow": "servebound.questions.rank",
    "rank_hardware": "servebound.questions.rank",
    "rank_models": "servebound.questions.rank",
    "check_run": "servebound.runs.ceiling",
    "MeasuredRun": "servebound.runs.measured",
    "RunCheck": "servebound.runs.measured",
    "make_run": "servebound.runs.measured",
    "load_hardware": "servebound.api",
    "load_model": "servebound.api",
    "make_workload": "servebound.api",
    "with_kv_precision": "servebound.api",
    "BatchLimit": "servebound.core.decode",
    "DecodeResult": "servebound.core.decode",
    "Forced": "servebound.core.decode",
    "Remedies": "servebound.core.decode",
    "Verdict": "servebound.core.decode",
    "curve": "servebound.core.decode",
    "StepCurve": "servebound.core.decode",
    "step_curve": "servebound.core.decode",
    "ComputeStatus": "servebound.core.decode_compute",
    "DecodeCompute": "servebound.core.decode_compute",
    "decode_compute": "servebound.core.decode_compute",
    "ContextCurve": "servebound.core.decode_range",
    "DecodeContextRange": "servebound.core.decode_range",
    "decode_context_range": "servebound.core.decode_range",
    "ExpertTraffic": "servebound.core.experts",
    "expected_distinct_experts": "servebound.core.experts",
    "Hardware": "servebound.core.hardware",
    "KVShape": "servebound.core.kv",
    "Experts": "servebound.core.model",
    "ModelAdapter": "servebound.core.model",
    "PrefillShape": "servebound.core.model",
    "Weights": "servebound.core.model",
    "PrefillCurve": "servebound.core.prefill",
    "PrefillRange": "servebound.core.prefill",
    "PrefillResult": "servebound.core.prefill",
    "PrefillVerdict": "servebound.core.prefill",
    "prefill_curve": "servebound.core.prefill",
    "prefill_range": "servebound.core.prefill",
    "MAX_BATCH": "servebound.core.workload",
    "Speculation": "servebound.core.workload",
    "Workload": "servebound.core.workload",
    "InputError": "servebound.errors",
}


def __getattr__(name: str) -> _typing.Any:
    """Import a public name from its home module on first use (PEP 562)."""
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'servebound' has no attribute {name!r}")
    value = getattr(_importlib.import_module(home), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


__all__ = [
    "MAX_BATCH",
    "BatchLimit",
    "CatalogHardware",
    "CatalogModel",
    "ComputeStatus",
    "ContextCurve",
    "CostReport",
    "DecodeCompute",
    "DecodeContextRange",
    "DecodeResult",
    "ExpertTraffic",
    "Experts",
    "Forced",
    "Hardware",
    "ImportedModel",
    "InputError",
    "KVShape",
    "LayoutSearch",
    "MeasuredRun",
    "ModelAdapter",
    "PlanResult",
    "PrefillCurve",
    "PrefillRange",
    "PrefillResult",
    "PrefillShape",
    "PrefillVerdict",
    "RankRow",
    "Remedies",
    "RunCheck",
    "SearchHit",
    "Speculation",
    "StepCurve",
    "Verdict",
    "Weights",
    "Workload",
    "check_run",
    "cost",
    "curve",
    "decode",
    "decode_compute",
    "decode_context_range",
    "default_workload",
    "expected_distinct_experts",
    "hardware",
    "import_gguf",
    "import_hf_config",
    "import_safetensors",
    "layout",
    "load_hardware",
    "load_model",
    "make_run",
    "make_workload",
    "models",
    "plan",
    "prefill",
    "prefill_curve",
    "prefill_range",
    "rank_hardware",
    "rank_models",
    "search",
    "step_curve",
    "with_kv_precision",
]
