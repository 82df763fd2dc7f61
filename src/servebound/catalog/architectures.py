"""Architecture names as people write them: a config's ``model_type`` (``qwen3_moe``, ``deepseek_v3``,
``gpt_oss``) read as its family writes it (Qwen3 MoE, DeepSeek-V3, gpt-oss).

An architecture is named after the family's first release of it, as that release's model card or Hub
repository writes it: ``deepseek_v3`` is DeepSeek-V3 (DeepSeek-R1 and V3.1 run it too), ``glm4_moe``
is GLM-4.5. A ``*_text`` type is the language model of a multimodal one, read as its name with
"(text)". Every surface that shows a model's family (the models index and its filter, a model page,
search details, the static copy, the Markdown mirrors, the CLI) shows :func:`architecture_name`;
the JSON keeps the ``model_type`` under ``family`` and adds the name beside it.
"""

from __future__ import annotations

from typing import NamedTuple


class Architecture(NamedTuple):
    """An architecture's name and the Hub repository whose model card writes it so."""

    name: str
    card: str


#: Every ``model_type`` (and ``language_model_type``) of the catalog's configs, with its name.
ARCHITECTURES: dict[str, Architecture] = {
    "deepseek_v2": Architecture("DeepSeek-V2", "deepseek-ai/DeepSeek-V2"),
    "deepseek_v3": Architecture("DeepSeek-V3", "deepseek-ai/DeepSeek-V3"),
    "deepseek_v32": Architecture("DeepSeek-V3.2", "deepseek-ai/DeepSeek-V3.2"),
    "deepseek_v4": Architecture("DeepSeek-V4", "deepseek-ai/DeepSeek-V4-Flash"),
    "exaone4": Architecture("EXAONE 4.0", "LGAI-EXAONE/EXAONE-4.0-32B"),
    "falcon": Architecture("Falcon", "tiiuae/falcon-180B"),
    "gemma3": Architecture("Gemma 3", "google/gemma-3-27b-it"),
    "gemma3_text": Architecture("Gemma 3 (text)", "google/gemma-3-1b-it"),
    "gemma4": Architecture("Gemma 4", "google/gemma-4-26B-A4B"),
    "gemma4_text": Architecture("Gemma 4 (text)", "google/gemma-4-26B-A4B"),
    "glm4": Architecture("GLM-4", "zai-org/GLM-4-9B-0414"),
    "glm4_moe": Architecture("GLM-4.5", "zai-org/GLM-4.5"),
    "glm4_moe_lite": Architecture("GLM-4.7-Flash", "zai-org/GLM-4.7-Flash"),
    "glm_moe_dsa": Architecture("GLM-5", "zai-org/GLM-5"),
    "gpt_oss": Architecture("gpt-oss", "openai/gpt-oss-120b"),
    "gptj": Architecture("GPT-J", "EleutherAI/gpt-j-6b"),
    "kimi_k2": Architecture("Kimi K2", "moonshotai/Kimi-K2-Instruct"),
    "kimi_k25": Architecture("Kimi K2.5", "moonshotai/Kimi-K2.5"),
    "laguna": Architecture("Laguna", "poolside/Laguna-XS.2-FP8"),
    "llama": Architecture("Llama", "meta-llama/Llama-2-13b-hf"),
    "llama4": Architecture("Llama 4", "meta-llama/Llama-4-Scout-17B-16E-Instruct"),
    "llama4_text": Architecture("Llama 4 (text)", "meta-llama/Llama-4-Scout-17B-16E-Instruct"),
    "mamba": Architecture("Mamba", "state-spaces/mamba-130m-hf"),
    "minimax_m2": Architecture("MiniMax-M2", "MiniMaxAI/MiniMax-M2.1"),
    "ministral3": Architecture("Ministral 3", "mistralai/Devstral-2-123B-Instruct-2512"),
    "mistral": Architecture("Mistral", "mistralai/Mistral-7B-Instruct-v0.3"),
    "mistral3": Architecture("Mistral 3", "mistralai/Mistral-Small-3.1-24B-Instruct-2503"),
    "mixtral": Architecture("Mixtral", "mistralai/Mixtral-8x7B-v0.1"),
    "nemotron-nas": Architecture("Llama-Nemotron (NAS)", "nvidia/Llama-3_3-Nemotron-Super-49B-v1"),
    "nemotron_h": Architecture("Nemotron-H", "nvidia/Nemotron-H-56B-Base-8K"),
    "olmo2": Architecture("OLMo 2", "allenai/OLMo-2-1124-7B"),
    "olmo3": Architecture("Olmo 3", "allenai/Olmo-3-32B-Think"),
    "phi3": Architecture("Phi-3", "microsoft/phi-4"),
    "qwen2": Architecture("Qwen2", "Qwen/Qwen2.5-14B"),
    "qwen3": Architecture("Qwen3", "Qwen/Qwen3-32B"),
    "qwen3_5": Architecture("Qwen3.5", "Qwen/Qwen3.5-27B"),
    "qwen3_5_text": Architecture("Qwen3.5 (text)", "Qwen/Qwen3.5-27B"),
    "qwen3_5_moe": Architecture("Qwen3.5 MoE", "Qwen/Qwen3.5-35B-A3B"),
    "qwen3_5_moe_text": Architecture("Qwen3.5 MoE (text)", "Qwen/Qwen3.5-35B-A3B"),
    "qwen3_moe": Architecture("Qwen3 MoE", "Qwen/Qwen3-30B-A3B"),
    "qwen3_next": Architecture("Qwen3-Next", "Qwen/Qwen3-Next-80B-A3B-Thinking"),
    "smollm3": Architecture("SmolLM3", "HuggingFaceTB/SmolLM3-3B"),
}

#: The family of a model read from a file of the user's, not from the catalog.
CUSTOM = "custom"


def architecture_name(model_type: str) -> str:
    """``qwen3_moe`` reads ``Qwen3 MoE``; a model read from a file (``custom``) reads ``model file``;
    a type the catalog has no config of (a user's import) is shown as its config writes it."""
    if model_type == CUSTOM:
        return "model file"
    found = ARCHITECTURES.get(model_type)
    return model_type if found is None else found.name
