"""Architecture names (``catalog.architectures``): every ``model_type`` of the catalog's configs has the
name its family writes, and the table names no architecture the catalog lacks."""

from __future__ import annotations

import re

from servebound.catalog.architectures import ARCHITECTURES, architecture_name
from servebound.catalog.models import all_profiles, list_models

#: The facts of an import that hold a config's model type.
TYPE_FACTS = ("model_type", "language_model_type")


def catalog_types() -> set[str]:
    found: set[str] = set()
    for m in all_profiles():
        found |= {str(m.imported.facts[k]) for k in TYPE_FACTS if m.imported.facts.get(k)}
        found.add(m.family)
    return found


def test_every_catalog_model_type_has_a_name() -> None:
    missing = sorted(t for t in catalog_types() if t not in ARCHITECTURES)
    assert not missing, f"add these model_types to catalog.architectures.ARCHITECTURES: {missing}"


def test_the_table_names_only_catalog_architectures() -> None:
    assert not sorted(set(ARCHITECTURES) - catalog_types())


def test_names_are_words_not_config_values() -> None:
    """A name is not the config's spelling (no underscore) and its source is a Hub repository."""
    for key, arch in ARCHITECTURES.items():
        assert "_" not in arch.name and arch.name != key, (key, arch)
        assert re.fullmatch(r"[\w.-]+/[\w.-]+", arch.card), (key, arch)
    assert architecture_name("qwen3_moe") == "Qwen3 MoE"
    assert architecture_name("deepseek_v3") == "DeepSeek-V3"
    assert architecture_name("gpt_oss") == "gpt-oss"
    assert architecture_name("llama") == "Llama"


def test_a_family_filter_takes_the_config_value_or_the_name() -> None:
    by_type = {m.id for m in list_models(family="qwen3_moe")}
    assert by_type and by_type == {m.id for m in list_models(family="Qwen3 MoE")}
    assert all(m.family_name == "Qwen3 MoE" for m in list_models(family="qwen3 moe"))
