"""A model's family on the site is its architecture's name as people write it (Qwen3 MoE, DeepSeek-V3,
gpt-oss, Llama), never the config's ``model_type``: the models index (its column and its filter), a
model page, their Markdown mirrors and search details; the JSON keeps ``family`` and adds its name."""

from __future__ import annotations

import re

import pytest
from fastapi.testclient import TestClient

from servebound.catalog.architectures import ARCHITECTURES
from servebound.catalog.hardware import get_hardware
from servebound.catalog.models import get_model
from servebound.catalog.search import browser_index, search
from servebound.web.app.server import create_app
from tests.web.test_page_words import visible

MODELS = ("qwen3-30b-a3b", "gpt-oss-20b", "deepseek-r1", "smollm2-135m", "gemma-3-27b-it-q4_k_m")
#: Config values that are not also their name (``llama`` reads ``Llama``: a word apart from case).
RAW = sorted(k for k, a in ARCHITECTURES.items() if k.lower() != a.name.lower())


def raw_types(text: str) -> list[str]:
    """The config ``model_type`` values in ``text`` as words of their own (not inside a Hub id or a
    file name: ``gemma-3-27b-it`` is no ``gemma3``), Markdown's escapes read (``qwen3\\_moe``)."""
    text = text.replace("\\_", "_")
    return [t for t in RAW if re.search(rf"(?<![\w./-]){re.escape(t)}(?![\w/-])", text)]


@pytest.fixture(scope="module")
def catalog_client() -> TestClient:
    app = create_app(
        hardware=[get_hardware("nvidia-rtx-4090")],
        models=[get_model(m) for m in MODELS],
        base_url="http://testserver",
    )
    return TestClient(app)


def test_the_models_index_names_families(catalog_client: TestClient) -> None:
    html = catalog_client.get("/models").text
    text = visible(html)
    assert not raw_types(text), raw_types(text)
    for name in ("Qwen3 MoE", "gpt-oss", "DeepSeek-V3", "Llama", "Gemma 3"):
        assert f'<td class="family">{name}</td>' in html, name
    # The filter offers names; the value a link carries stays the config's.
    assert '<option value="qwen3_moe">Qwen3 MoE</option>' in html
    picked = catalog_client.get("/models", params={"family": "qwen3_moe"}).text
    assert '<option value="qwen3_moe" selected>Qwen3 MoE</option>' in picked
    assert "1 of 5 profiles" in visible(picked)
    by_name = catalog_client.get("/models", params={"family": "Qwen3 MoE"}).text
    assert "1 of 5 profiles" in visible(by_name)


@pytest.mark.parametrize("path", ["/models.md", "/models/qwen3-30b-a3b.md", "/models/deepseek-r1.md"])
def test_the_mirrors_name_families(catalog_client: TestClient, path: str) -> None:
    text = catalog_client.get(path).text
    assert not raw_types(text), (path, raw_types(text))


@pytest.mark.parametrize(
    ("model", "name"),
    [("qwen3-30b-a3b", "Qwen3 MoE"), ("deepseek-r1", "DeepSeek-V3"), ("gpt-oss-20b", "gpt-oss")],
)
def test_a_model_page_names_its_architecture(catalog_client: TestClient, model: str, name: str) -> None:
    text = visible(catalog_client.get(f"/models/{model}").text)
    assert not raw_types(text), raw_types(text)
    assert f"{name} architecture" in text and f"architecture {name}" in text


def test_the_model_page_says_no_format_its_name_says(catalog_client: TestClient) -> None:
    """The title carries the format (``Qwen3-30B-A3B (BF16)``); the line under it does not repeat it."""
    html = catalog_client.get("/models/qwen3-30b-a3b").text
    sub = visible(re.findall(r'<p class="sub">.*?</p>', html)[0])
    assert "BF16" not in sub and "Qwen3 MoE architecture, mixture of experts" in sub, sub


def test_the_json_keeps_the_config_value_and_adds_the_name(catalog_client: TestClient) -> None:
    rows = {r["id"]: r for r in catalog_client.get("/api/models").json()["models"]}
    assert (rows["qwen3-30b-a3b"]["family"], rows["qwen3-30b-a3b"]["family_name"]) == (
        "qwen3_moe",
        "Qwen3 MoE",
    )
    one = catalog_client.get("/api/models/deepseek-r1").json()
    assert (one["family"], one["family_name"]) == ("deepseek_v3", "DeepSeek-V3")


def test_search_details_say_what_the_name_does_not() -> None:
    """A model hit's name carries its format; its detail names the architecture and the weights' size,
    served and in the static copy's index alike."""
    hits = [h for q in ("qwen3 30b a3b q4", "gpt oss", "deepseek r1") for h in search(q) if h.kind == "model"]
    assert hits
    for h in hits:
        m = get_model(h.id)
        assert h.detail.startswith(m.family_name + ", ") and h.detail.endswith(" GB of weights"), h
        assert "weights in" not in h.detail and not raw_types(h.detail), h
    index = browser_index({h.id for h in hits})
    shipped = {
        pid: e["details"][fmt]
        for e in index["entries"]
        if e["kind"] == "model"
        for fmt, pid in e["profiles"].items()
    }
    assert shipped == {h.id: h.detail for h in hits}
