"""Issue 19's terminal reproducers: a name is printed as written on every human output (rich markup in a
hardware file's, a model file's or a GGUF's name, in a folder's name, in a note), never read as markup."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from gguf import GGUFWriter

from tests.conftest import run_cli as run

ROOT = Path(__file__).resolve().parents[1]
HW_TEXT = (ROOT / "examples" / "dgx-spark.toml").read_text()
MODEL_TEXT = (ROOT / "examples" / "qwen3.6-35b-a3b-nvfp4.toml").read_text()
#: The issue's names: one that raised MarkupError, one rendered styled with a link, one that lost its text.
HOSTILE = ["closing [/] tag [/bold]", "[bold red]EVIL[/bold red] [link=http://evil]x[/link]", "[red]x[/]"]


def _named(text: str, old: str, name: str, path: Path) -> str:
    assert old in text
    path.write_text(text.replace(old, f"name = {json.dumps(name)}"))
    return str(path)


@pytest.mark.parametrize("name", HOSTILE)
def test_markup_in_a_hardware_name_prints_literally(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    hw = _named(HW_TEXT, 'name = "DGX Spark (derivation example)"', name, tmp_path / "hw.toml")
    model = str(ROOT / "examples" / "qwen3.6-35b-a3b-nvfp4.toml")
    for args in (
        ["decode", "-H", hw, "-m", model],
        ["prefill", "-H", hw, "-m", "llama-3.1-8b", "--prompt", "100"],
        ["cost", "-H", hw, "-m", model, "--usd-per-hour", "2"],
        ["layout", "-H", hw, "-m", model],
    ):
        status, out, err = run(capsys, *args)
        assert status == 0, err
        assert name in out, args


@pytest.mark.parametrize("name", HOSTILE)
def test_markup_in_a_model_name_prints_literally(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    model = _named(
        MODEL_TEXT, 'name = "Qwen3.6-35B-A3B (derivation example, NVFP4)"', name, tmp_path / "m.toml"
    )
    hw = str(ROOT / "examples" / "dgx-spark.toml")
    for args in (["decode", "-H", hw, "-m", model], ["layout", "-H", hw, "-m", model]):
        status, out, err = run(capsys, *args)
        assert status == 0, err
        assert name in out, args


def test_markup_in_a_gguf_general_name_prints_literally(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.test_import_gguf import dense_meta, dense_tensors, write_gguf

    def meta(writer: GGUFWriter) -> None:
        dense_meta(writer)
        writer.add_name(HOSTILE[0])

    path = str(write_gguf(tmp_path / "evil.gguf", "llama", meta, dense_tensors()))
    hw = str(ROOT / "examples" / "dgx-spark.toml")
    for args in (["decode", "-H", hw, "-m", path], ["import", "gguf", path]):
        status, out, err = run(capsys, *args)
        assert status == 0, err
        assert HOSTILE[0] in out, args


def test_decode_note_keeps_its_bracketed_word(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The model file has no [prefill] table: decode's note says so with the word in brackets."""
    model = tmp_path / "m.toml"
    model.write_text(MODEL_TEXT)
    assert "[prefill]" not in MODEL_TEXT
    status, out, err = run(
        capsys, "decode", "-H", str(ROOT / "examples" / "dgx-spark.toml"), "-m", str(model)
    )
    assert status == 0, err
    assert "the model has no [prefill] fields" in " ".join(out.split())


def test_markup_in_a_folder_name_prints_literally(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A folder named ``[red]x[/]`` printed as ``]``."""
    from tests.test_import_gguf import dense_meta, dense_tensors, write_gguf

    folder = tmp_path / "[red]x[/]"
    folder.mkdir(parents=True)  # "[red]x[" holding "]": the path reads [red]x[/]
    path = str(write_gguf(folder / "m.gguf", "llama", dense_meta, dense_tensors()))
    status, out, err = run(capsys, "import", "gguf", path, "-o", str(folder / "m.toml"))
    assert status == 0, err
    assert f"wrote {folder / 'm.toml'}" in " ".join(out.split())


def test_build_site_into_proc_is_a_clean_error(capsys: pytest.CaptureFixture[str]) -> None:
    status, _, err = run(capsys, "build-site", "/proc/x", "--base-url", "https://example.org")
    assert status == 2 and err.startswith("servebound: error: out_dir: ") and err.count("\n") == 1, err


def test_build_site_without_a_base_url_warns_first(capsys: pytest.CaptureFixture[str]) -> None:
    """Without --base-url the copy's links are relative and it has no sitemap: the build says so on
    stderr before anything else (here the folder's error follows)."""
    from servebound.web.pages.machine_files import robots_txt

    status, _, err = run(capsys, "build-site", "/proc/x")
    assert status == 2 and err.startswith("WARNING: no --base-url."), err
    assert "servebound: error: out_dir: " in err
    assert "Sitemap:" not in robots_txt("") and "Sitemap: https://e.org/sitemap.xml" in robots_txt(
        "https://e.org"
    )
