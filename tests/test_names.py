"""Model names as people type them (issue 34): each resolves offline to one catalog profile, on the
command line, in Python and through the JSON API; ambiguous ones are refused with the candidates."""

from __future__ import annotations

import json

import pytest
from fastapi.testclient import TestClient

import servebound
from servebound.catalog.models import get_model, profile_ids
from servebound.catalog.names import NameChoiceError, ollama_tags, profile_id_for
from servebound.cli import main
from servebound.errors import InputError

#: (what a person types, the profile it means).
NAMES = [
    # Hub ids, with and without a quantization, and their GGUF / MLX repositories
    ("meta-llama/Llama-3.3-70B-Instruct", "llama-3.3-70b-instruct"),
    ("Qwen/Qwen3-30B-A3B", "qwen3-30b-a3b"),
    ("openai/gpt-oss-120b", "gpt-oss-120b"),
    ("google/gemma-3-27b-it", "gemma-3-27b-it"),
    ("deepseek-ai/DeepSeek-R1", "deepseek-r1"),
    ("unsloth/Qwen3-30B-A3B-GGUF:Q4_K_M", "qwen3-30b-a3b-q4_k_m"),
    ("unsloth/Llama-3.3-70B-Instruct-GGUF:Q8_0", "llama-3.3-70b-instruct-q8_0"),
    ("bartowski/Qwen_Qwen3-30B-A3B-GGUF", "qwen3-30b-a3b-q4_k_m"),
    ("lmstudio-community/gemma-3-27b-it-GGUF", "gemma-3-27b-it-q4_k_m"),
    ("mlx-community/Qwen3-8B-4bit", "qwen3-8b-mlx_4bit"),
    ("mlx-community/Llama-3.3-70B-Instruct-8bit", "llama-3.3-70b-instruct-mlx_8bit"),
    # LM Studio keys
    ("qwen/qwen3-30b-a3b", "qwen3-30b-a3b"),
    ("google/gemma-3-27b", "gemma-3-27b-it"),
    ("openai/gpt-oss-20b", "gpt-oss-20b"),
    # Ollama tags: the library's default quantization
    ("llama3.3:70b", "llama-3.3-70b-instruct-q4_k_m"),
    ("llama3.3:latest", "llama-3.3-70b-instruct-q4_k_m"),
    ("qwen3:30b", "qwen3-30b-a3b-q4_k_m"),
    ("gemma3:27b", "gemma-3-27b-it-q4_k_m"),
    ("gemma3:27b-it-qat", "gemma-3-27b-it-q4_0_qat"),
    ("deepseek-r1:671b", "deepseek-r1-q4_k_m"),
    ("deepseek-r1:32b", "deepseek-r1-distill-qwen-32b-q4_k_m"),
    ("gpt-oss:120b", "gpt-oss-120b"),
    ("gpt-oss:20b", "gpt-oss-20b"),
    ("llama3.1:8b", "llama-3.1-8b-instruct-q4_k_m"),
    ("llama2:7b", "llama-2-7b-chat-q4_0"),
    ("phi4:14b", "phi-4-q4_k_m"),
    ("library/qwen3:8b", "qwen3-8b-q4_k_m"),
    # a quantization in the tag picks that format of the same model
    ("llama3.3:70b-instruct-q8_0", "llama-3.3-70b-instruct-q8_0"),
    ("qwen3:30b-a3b-q8_0", "qwen3-30b-a3b-q8_0"),
    # GGUF file names (no such file here)
    ("Qwen3-30B-A3B-Q4_K_M.gguf", "qwen3-30b-a3b-q4_k_m"),
    ("Llama-3.3-70B-Instruct-Q4_K_M.gguf", "llama-3.3-70b-instruct-q4_k_m"),
    ("gemma-3-27b-it-Q8_0.gguf", "gemma-3-27b-it-q8_0"),
    ("Llama-3.3-70B-Instruct-Q6_K-00001-of-00002.gguf", "llama-3.3-70b-instruct-q6_k"),
    # loose words: case, spaces, dots and dashes, size and quantization in any order
    ("gemma 3 27b", "gemma-3-27b-it"),
    ("Gemma 3 27B instruct", "gemma-3-27b-it"),
    ("qwen3 30b a3b q4", "qwen3-30b-a3b-q4_k_m"),
    ("q4 30b qwen3 a3b", "qwen3-30b-a3b-q4_k_m"),
    ("llama 70b q4", "llama-3.3-70b-instruct-q4_k_m"),
    ("llama 70b", "llama-3.3-70b-instruct"),
    ("Llama 3.3 70B Instruct", "llama-3.3-70b-instruct"),
    ("llama 2 70b q4_0", "llama-2-70b-q4_0"),
    ("GPT-OSS 120B", "gpt-oss-120b"),
    ("gpt oss 120b mxfp4", "gpt-oss-120b-mxfp4_moe"),
    ("qwen3 8b mlx 4bit", "qwen3-8b-mlx_4bit"),
    ("qwen 32b", "qwen3-32b"),
    ("qwen3 32b fp8", "qwen3-32b-fp8"),
    ("deepseek r1", "deepseek-r1"),
    ("olmo 32b", "olmo-3.1-32b-instruct"),
    ("mixtral 8x7b instruct", "mixtral-8x7b-instruct-v0.1"),
    ("phi 4", "phi-4"),
    ("minimax", "minimax-m2.7"),
    ("  Qwen3-30B-A3B  ", "qwen3-30b-a3b"),
    ("QWEN3-30B-A3B-Q4_K_M", "qwen3-30b-a3b-q4_k_m"),
]

#: (an ambiguous name, candidates its error must list).
AMBIGUOUS = [
    ("gemma 3", ["gemma-3-27b-it", "gemma-3-1b-it"]),
    ("gpt-oss", ["gpt-oss-20b", "gpt-oss-120b"]),
    ("mixtral", ["mixtral-8x7b-v0.1", "mixtral-8x22b-v0.1"]),
    ("deepseek", ["deepseek-v4-flash", "deepseek-v4-pro"]),
]


def test_there_are_enough_names() -> None:
    assert len(NAMES) >= 40 and len({name for name, _ in NAMES}) == len(NAMES)


@pytest.mark.parametrize(("name", "profile"), NAMES)
def test_a_name_resolves_to_its_profile(name: str, profile: str) -> None:
    assert profile_id_for(name) == profile
    assert get_model(name).id == profile


@pytest.mark.parametrize(("name", "candidates"), AMBIGUOUS)
def test_an_ambiguous_name_lists_the_candidates(name: str, candidates: list[str]) -> None:
    with pytest.raises(NameChoiceError, match="more than one catalog model") as caught:
        profile_id_for(name)
    assert all(c in caught.value.problem for c in candidates)


def test_the_newer_model_is_preferred() -> None:
    """`llama 70b q4` names Llama 3.3, never Llama 2, whose ids it also matches."""
    assert profile_id_for("llama 70b q4").startswith("llama-3.3")
    assert profile_id_for("llama 2 70b").startswith("llama-2")


def test_refusals_say_why() -> None:
    with pytest.raises(NameChoiceError, match=r"no awq format.*q4_k_m"):
        profile_id_for("llama 70b awq")
    with pytest.raises(NameChoiceError, match="qwen3:30b"):
        profile_id_for("qwen3:14b")  # the catalog knows other qwen3 tags
    with pytest.raises(InputError, match="not in the catalog"):
        profile_id_for("zzz unknown model")
    assert profile_id_for("someone/not-a-catalog-model", missing_ok=True) is None


def test_every_ollama_tag_is_a_profile_with_a_source() -> None:
    ids = set(profile_ids())
    for tag, row in ollama_tags().items():
        assert row.profile in ids, tag
        assert row.source.startswith("https://ollama.com/library/"), tag
        if tag.endswith(":latest"):
            assert row.latest


@pytest.mark.parametrize(("name", "profile"), NAMES[::3])
def test_python_decode_takes_the_names(name: str, profile: str) -> None:
    assert servebound.decode("nvidia-h200-sxm", name) == servebound.decode("nvidia-h200-sxm", profile)


@pytest.mark.parametrize(("name", "profile"), NAMES[::5])
def test_cli_decode_takes_the_names(capsys: pytest.CaptureFixture[str], name: str, profile: str) -> None:
    answers = []
    for ref in (name, profile):
        assert main(["decode", "--hardware", "nvidia-h200-sxm", "--model", ref, "--json"]) == 0
        answers.append(json.loads(capsys.readouterr().out))
    assert answers[0] == answers[1] and answers[0]["model"]["id"] == profile


def test_cli_refuses_an_ambiguous_name(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["decode", "--hardware", "nvidia-h200-sxm", "--model", "gemma 3"]) == 2
    assert "gemma-3-27b-it" in capsys.readouterr().err
    assert main(["decode", "--hardware", "nvidia-h200-sxm", "--model", "someorg/unknown-model"]) == 2
    assert "no catalog model has that Hub id" in capsys.readouterr().err


@pytest.fixture(scope="module")
def client() -> TestClient:
    from servebound.web.app.server import create_app

    return TestClient(create_app())


@pytest.mark.parametrize(("name", "profile"), NAMES[::2])
def test_api_decode_takes_the_names(client: TestClient, name: str, profile: str) -> None:
    by_name = client.get("/api/decode", params={"hardware": "h200", "model": name})
    by_id = client.get("/api/decode", params={"hardware": "h200", "model": profile})
    assert by_name.status_code == by_id.status_code == 200
    assert by_name.json() == by_id.json() and by_name.json()["model"]["id"] == profile


def test_api_refuses_an_ambiguous_name_with_the_candidates(client: TestClient) -> None:
    answer = client.get("/api/decode", params={"hardware": "h200", "model": "gpt-oss"})
    assert answer.status_code == 404
    assert "gpt-oss-120b" in json.dumps(answer.json())


def test_search_finds_models_and_hardware(capsys: pytest.CaptureFixture[str]) -> None:
    """`servebound search`, servebound.search and /api/search give the same hits, best first."""
    first = {
        "qwen3 30b q4": "qwen3-30b-a3b-q4_k_m",
        "llama 70b q4": "llama-3.3-70b-instruct-q4_k_m",
        "llama3.3:70b": "llama-3.3-70b-instruct-q4_k_m",
        "4090": "nvidia-rtx-4090",
        "dgx spark": "nvidia-dgx-spark",
        "m4 max": "apple-m4-max-36gb",
    }
    for words, wanted in first.items():
        hits = servebound.search(words)
        assert hits and hits[0].id == wanted, (words, hits[:3])
        assert main(["search", *words.split(), "--json"]) == 0
        assert json.loads(capsys.readouterr().out)["hits"] == [h.as_dict() for h in hits]
    assert {h.kind for h in servebound.search("apple")} == {"hardware"}
    assert all(h.kind == "model" for h in servebound.search("qwen3", kind="model"))
    assert not servebound.search("rtx 409")  # a number matches whole: 409 is not 4090
    with pytest.raises(InputError, match="give one or more words"):
        servebound.search("  ")


def test_api_search_answers_as_python(client: TestClient) -> None:
    answer = client.get("/api/search", params={"q": "gemma 3 27b", "limit": 5}).json()
    assert answer["hits"] == [h.as_dict() for h in servebound.search("gemma 3 27b", limit=5)]
    assert client.get("/api/search", params={"q": "gemma", "limit": 0}).status_code == 400


def test_python_lists_the_catalog_with_filters() -> None:
    every = servebound.models(all_formats=True)
    assert len(every) == len(profile_ids()) and len(servebound.models()) < len(every)
    q4 = servebound.models(format="q4_k_m")
    assert q4 and all(m.weight_format == "q4_k_m" for m in q4)
    gemma = servebound.models(family="gemma3", format="q4_0_qat")
    assert sorted(m.id for m in gemma) == sorted(
        p for p in profile_ids() if p.startswith("gemma-3-") and p.endswith("qat")
    )
    assert servebound.models("qwen3 30b a3b")[0].id == "qwen3-30b-a3b"
    with pytest.raises(InputError, match="not a catalog format"):
        servebound.models(format="q4")
    rows = servebound.hardware(min_memory_gb=64, max_memory_gb=128, systems=False)
    assert rows and all(64 <= h.memory_gb <= 128 and h.system is None for h in rows)
    apple = servebound.hardware(vendor="Apple")
    assert apple and all(h.vendor == "Apple" for h in apple)
    spark = servebound.hardware("dgx spark")[0]
    model = servebound.models("gpt oss 120b")[0]
    # records pass to decode as ids do
    assert servebound.decode(spark, model) == servebound.decode("nvidia-dgx-spark", "gpt-oss-120b")


@pytest.mark.parametrize(
    ("name", "profile"),
    [("llama3.3:70b", "llama-3.3-70b-instruct-q4_k_m"), ("qwen3 30b a3b q4", "qwen3-30b-a3b-q4_k_m")],
)
def test_the_site_picker_takes_the_names(client: TestClient, name: str, profile: str) -> None:
    """The pair picker's form (GET /pair) redirects a typed name to the profile's pair page."""
    answer = client.get("/pair", params={"hardware": "4090", "model": name}, follow_redirects=False)
    assert answer.status_code == 303
    assert answer.headers["location"].startswith(f"/pair/nvidia-rtx-4090/{profile}")


def test_the_draft_takes_the_names(capsys: pytest.CaptureFixture[str]) -> None:
    answers = []
    for model, draft in (
        ("llama 70b", "llama 3.2 1b instruct"),
        ("llama-3.3-70b-instruct", "llama-3.2-1b-instruct"),
    ):
        args = ["decode", "-H", "nvidia-h100-sxm", "-m", model, "--draft", draft, "--draft-tokens", "4"]
        assert main([*args, "--acceptance", "0.7", "--json"]) == 0
        answers.append(json.loads(capsys.readouterr().out))
    assert answers[0] == answers[1]


def test_every_profile_under_its_hub_gguf_and_spaced_names() -> None:
    """Across the whole catalog: each release's Hub id is its native profile, each llama.cpp profile is
    named by its GGUF file name and its GGUF repository's quantization tag, and each profile id typed
    with spaces is itself (quantization words inside a release's name, as Qwen3-32B-FP8, included)."""
    from servebound.catalog.models import _profile_ids
    from servebound.catalog.names import hub_ids
    from servebound.importers.hf.llama_cpp import LLAMA_CPP_MIXES

    checked = 0
    for profile, (model, fmt, native) in _profile_ids().items():
        hub = hub_ids()[model]
        repo = hub.split("/")[1]
        cases = [profile.replace("-", " ")]
        if native:
            cases += [hub, hub.lower()]
        if fmt in LLAMA_CPP_MIXES and fmt not in ("mxfp4_moe", "q4_0_qat"):
            cases += [f"{repo}-{fmt.upper()}.gguf", f"someone/{repo}-GGUF:{fmt.upper()}"]
        for name in cases:
            assert profile_id_for(name) == profile, name
            checked += 1
    assert checked > 1_000
