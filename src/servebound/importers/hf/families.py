"""Architecture families: model_type -> the builder that turns its config into layers of blocks.

One module per family (dense, gemma, moe, mla, deepseek_v4, hybrid, recurrent, nemotron_nas,
parallel_blocks); what they share (typed config access, the Arch record, softmax attention read from
the config) lives in :mod:`servebound.importers.hf.config`. Every shape is read from the config by name. Where a family's
published config relies on a library default (Gemma 3's sparse text_config, Llama's absent
num_key_value_heads), the default is written in the family's module with the class it comes from and
recorded as a note in the audit; anything else absent is an InputError naming the field.
"""

from __future__ import annotations

from collections.abc import Callable

from servebound.importers.hf.config import Arch, Cfg
from servebound.importers.hf.deepseek_v4 import deepseek_v4
from servebound.importers.hf.dense import dense_decoder
from servebound.importers.hf.gemma import gemma3_text, gemma4_text
from servebound.importers.hf.hybrid import granite_hybrid, nemotron_h, qwen_hybrid
from servebound.importers.hf.mla import mla_moe
from servebound.importers.hf.moe import gqa_moe, llama4_text
from servebound.importers.hf.nemotron_nas import nemotron_nas
from servebound.importers.hf.parallel_blocks import falcon, gptj
from servebound.importers.hf.recurrent import jamba, mamba, minimax, minimax_m2

__all__ = ["FAMILIES", "SUPPORTED_MODEL_TYPES", "WRAPPERS", "Arch", "Builder", "Cfg"]

Builder = Callable[[Cfg, str], Arch]

#: model_type (of the language model) -> builder. Multimodal wrappers map to their text model.
FAMILIES: dict[str, Builder] = {
    **dict.fromkeys(
        [
            "llama",
            "mistral",
            "ministral3",
            "qwen2",
            "qwen3",
            "phi3",
            "granite",
            "olmo",
            "olmo2",
            "gemma",
            "gemma2",
            "smollm3",
            "olmo3",
            "exaone4",
            "glm4",
        ],
        dense_decoder,
    ),
    "gemma3_text": gemma3_text,
    "gemma4_text": gemma4_text,
    **dict.fromkeys(["mixtral", "qwen2_moe", "qwen3_moe", "gpt_oss", "glm4_moe", "laguna"], gqa_moe),
    "minimax_m2": minimax_m2,
    "minimax": minimax,
    "llama4_text": llama4_text,
    **dict.fromkeys(
        ["deepseek_v2", "deepseek_v3", "deepseek_v32", "kimi_k2", "glm4_moe_lite", "glm_moe_dsa"], mla_moe
    ),
    **dict.fromkeys(["qwen3_next", "qwen3_5_text", "qwen3_5_moe_text"], qwen_hybrid),
    "deepseek_v4": deepseek_v4,
    "nemotron_h": nemotron_h,
    "granitemoehybrid": granite_hybrid,
    "mamba": mamba,
    "jamba": jamba,
    "nemotron-nas": nemotron_nas,
    "gptj": gptj,
    "falcon": falcon,
}

#: Multimodal wrappers whose language model sits under text_config; the value is the text
#: model_type to assume when text_config does not name one.
WRAPPERS: dict[str, str] = {
    "gemma3": "gemma3_text",
    "gemma4": "gemma4_text",
    "llama4": "llama4_text",
    "mistral3": "mistral",
    "qwen3_5": "qwen3_5_text",
    "qwen3_5_moe": "qwen3_5_moe_text",
    "kimi_k25": "kimi_k2",
}

SUPPORTED_MODEL_TYPES: tuple[str, ...] = tuple(sorted({*FAMILIES, *WRAPPERS}))
