"""`servebound import hf|safetensors|gguf SOURCE`: real model files to the contract's model form."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Any, Literal

from servebound.cli.common import REQUIRED, command, option
from servebound.cli.output import checked_output, console, print_json, steps_json, steps_table
from servebound.errors import InputError
from servebound.importers.audit import ImportedModel
from servebound.importers.gguf_file import import_gguf
from servebound.importers.hf.hub import import_hub_gguf
from servebound.importers.hf_config import check_revision, import_hf_config
from servebound.importers.safetensors_headers import import_safetensors
from servebound.inputs.files import check_imported, dumps_model
from servebound.inputs.resolve import hub_gguf_ref


class Kind(StrEnum):
    HF = "hf"
    SAFETENSORS = "safetensors"
    GGUF = "gguf"


def resolved_source(source: str) -> str:
    """A local source as an absolute path (so ``.`` names its folder), anything else as given."""
    path = Path(source)
    try:
        return str(path.resolve()) if path.exists() else source
    except (OSError, ValueError):
        return source


def import_any(
    kind: Kind,
    source: str,
    *,
    weight_format: str | None,
    kv_precision: str | None,
    revision: str | None = None,
) -> ImportedModel:
    """Dispatch to the importer for ``kind``; each reads headers and configs only. ``org/name:QUANT``
    (for gguf, or hf) reads the header of that quantization's GGUF in the Hub repository."""
    check_revision(revision)
    source = resolved_source(source)
    hub = hub_gguf_ref(source) if not Path(source).exists() else None
    if hub is not None and kind in (Kind.GGUF, Kind.HF):
        if weight_format is not None:
            raise InputError("weight_format", f"{source} names a GGUF file, which states its own format")

        return import_hub_gguf(*hub, revision=revision, kv_precision=kv_precision or "fp16")
    if revision is not None and kind is not Kind.HF:
        raise InputError(
            "revision", "--revision applies to a Hub source (import hf org/name, or org/name:QUANT)"
        )
    if kind is Kind.HF:
        return import_hf_config(
            source, weight_format=weight_format, kv_precision=kv_precision, revision=revision
        )
    if weight_format is not None:
        raise InputError(
            "weight_format", f"--weight-format applies to `import hf`; a {kind.value} file states its own"
        )
    if kind is Kind.SAFETENSORS:
        return import_safetensors(source, kv_precision=kv_precision or "bf16")

    return import_gguf(source, kv_precision=kv_precision or "fp16")


def audit_mapping(imported: ImportedModel) -> dict[str, Any]:
    """What the importer counted, kept in the model file's [audit] table."""
    audit: dict[str, Any] = {"architecture": imported.architecture, "source": imported.source}
    if imported.total_params is not None:
        audit["total_params"] = imported.total_params
    if imported.active_params is not None:
        audit["active_params"] = imported.active_params
    if imported.checkpoint_bytes is not None:
        audit["checkpoint_bytes"] = imported.checkpoint_bytes
    return audit


@command(
    "import",
    option(
        "kind",
        str,
        REQUIRED,
        "hf (config.json), safetensors (headers) or gguf.",
        choices=tuple(k.value for k in Kind),
    ),
    option(
        "source",
        str,
        REQUIRED,
        "A file or folder (. works), an org/name Hub id for hf, or org/name:QUANT for a Hub GGUF.",
    ),
    option("output", str, None, "Write the model file here (.toml or .json).", "--output", "-o"),
    option(
        "weight_format",
        str,
        None,
        "hf only; default: the storage the release ships (its quantization_config, else bf16). "
        "Override: bf16, fp8, nvfp4, mxfp4, mlx_4bit, llama.cpp file types (q4_k_m, q4_0, q8_0, "
        "iq4_xs, mxfp4_moe ...), fp8_mxfp4_experts ...",
        "--weight-format",
    ),
    option("kv_precision", str, None, "Cache element format: bf16, fp8 ...", "--kv-precision"),
    option(
        "revision", str, None, "Hub sources: the branch, tag or commit to read (default: main).", "--revision"
    ),
    option("json_out", bool, False, "Print the model form as JSON.", "--json"),
    option("explain", bool, False, "Show the derivation of every quantity.", "--explain"),
    examples=(
        "servebound import hf Qwen/Qwen3-8B --output qwen3-8b.toml",
        "servebound import gguf ./model-Q4_K_M.gguf --json",
    ),
)
def import_command(
    kind: str,
    source: str,
    output: str | None,
    weight_format: str | None,
    kv_precision: str | None,
    revision: str | None,
    json_out: bool,
    explain: bool,
) -> None:
    path = None if output is None else Path(output)
    fmt: Literal["toml", "json"] = "toml"
    if path is not None:
        fmt = "json" if checked_output(path, {".toml": "toml", ".json": "json"}) == "json" else "toml"
    imported = import_any(
        Kind(kind), source, weight_format=weight_format, kv_precision=kv_precision, revision=revision
    )
    mapping = check_imported(imported.adapter, audit=audit_mapping(imported))  # what we write loads back
    if path is not None:
        try:
            path.write_text(dumps_model(mapping, fmt), encoding="utf-8")
        except OSError as exc:
            raise InputError("output", f"cannot write {path}: {exc.strerror or exc}") from None
    if json_out:
        payload: dict[str, Any] = {"model": mapping}
        if explain:
            payload["steps"] = steps_json(imported.steps)
        print_json(payload)
        return
    if explain:
        console.print(steps_table(imported.steps, "from the source"))
    if path is None and not explain:
        console.print(dumps_model(mapping, "toml"), markup=False)
    elif path is not None:
        console.print(f"wrote {path}")
