"""Issue 19's importer reproducers: a header that contradicts its tensors or itself is refused by the one
shared check (importers/consistency.py), the same on `servebound import` and on `decode -m FILE`; and the
GGUF, safetensors and config.json fuzzers over cross-field contradictions: whatever the header says,
the import is refused or its answer is the tensors' own."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from safetensors.numpy import save_file

from servebound.errors import InputError
from servebound.importers.gguf_file import import_gguf
from servebound.importers.hf_config import import_hf_config
from servebound.importers.safetensors_headers import import_safetensors
from tests.conftest import run_cli as run
from tests.test_import_gguf import gguf_with
from tests.test_import_safetensors import LLAMA_CONFIG as CONFIG
from tests.test_import_safetensors import dense_tensors as hf_dense_tensors

ROOT = Path(__file__).resolve().parents[1]
HW = str(ROOT / "examples" / "dgx-spark.toml")


def both_paths_refuse(capsys: pytest.CaptureFixture[str], kind: str, path: str, message: str) -> None:
    """`servebound import KIND PATH` and `servebound decode -m PATH` answer the same one-line error."""
    errors = []
    for args in (["import", kind, path], ["decode", "-H", HW, "-m", path]):
        status, _, err = run(capsys, *args)
        assert status == 2 and err.count("\n") == 1 and "Traceback" not in err, (args, err)
        assert message in err, (args, err)
        errors.append(err)
    assert errors[0] == errors[1]


# GGUF ---------------------------------------------------------------------------------------------------


def test_gguf_head_count_kv_zero_beside_kv_tensors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """It imported as 0 KV bytes per token (b_mem 10^9, 560M tok/s)."""
    path = str(gguf_with(tmp_path, "kv0", head_count_kv=0))
    both_paths_refuse(
        capsys, "gguf", path, "llama.attention.head_count_kv: is 0 for layer 0, which holds key/value tensor"
    )


def test_gguf_head_count_not_dividing_the_width(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = str(gguf_with(tmp_path, "heads6", head_count=6))
    both_paths_refuse(capsys, "gguf", path, "6 heads do not divide the width embedding_length 64")
    # With the head size stated, the query projection answers for the count (6 x 16 rows is not 64).
    path = str(gguf_with(tmp_path, "heads6k", head_count=6, key_length=16))
    both_paths_refuse(capsys, "gguf", path, "layer 0's query projection holds 64 rows, not a multiple of 96")


def test_gguf_kv_heads_not_dividing_the_heads(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"head_count_kv: 3 KV heads do not divide head_count 4"):
        import_gguf(gguf_with(tmp_path, "kv3", head_count_kv=3))


#: What the tiny file really holds: 2 layers x 2 KV heads x (16 + 16) x 2 B at fp16.
GGUF_KV_BYTES = 2 * 2 * (16 + 16) * 2


@settings(max_examples=60, deadline=None)
@given(
    block_count=st.integers(1, 3),
    embedding_length=st.sampled_from([32, 64, 128]),
    head_count=st.integers(1, 8),
    head_count_kv=st.integers(0, 8),
    key_length=st.sampled_from([None, 8, 16, 32]),
)
@example(block_count=2, embedding_length=64, head_count=4, head_count_kv=0, key_length=None)  # the issue's
@example(block_count=2, embedding_length=64, head_count=6, head_count_kv=2, key_length=None)  # the issue's
@example(block_count=2, embedding_length=64, head_count=4, head_count_kv=1, key_length=None)
@example(block_count=2, embedding_length=64, head_count=2, head_count_kv=1, key_length=None)
def test_gguf_header_keys_cannot_change_the_answer(
    tmp_path_factory: pytest.TempPathFactory,
    block_count: int,
    embedding_length: int,
    head_count: int,
    head_count_kv: int,
    key_length: int | None,
) -> None:
    """Whatever shape keys the header claims over the same tensors, the import is refused or its cache
    is the tensors' own (a header that agrees with them in another factorization gives the same bytes)."""
    folder = tmp_path_factory.mktemp("gguf")
    path = gguf_with(
        folder,
        "fuzz",
        key_length=key_length,
        block_count=block_count,
        embedding_length=embedding_length,
        head_count=head_count,
        head_count_kv=head_count_kv,
    )
    try:
        model = import_gguf(path)
    except InputError:
        return
    assert model.adapter.kv_alloc.global_bytes_per_token == GGUF_KV_BYTES


# safetensors ----------------------------------------------------------------------------------------------


def checkpoint(folder: Path, config: dict[str, object] | None, tensors: dict[str, np.ndarray]) -> str:
    folder.mkdir(parents=True, exist_ok=True)
    save_file(tensors, str(folder / "model.safetensors"))
    if config is not None:
        (folder / "config.json").write_text(json.dumps(config))
    return str(folder / "model.safetensors")


def test_safetensors_config_of_3_layers_over_28_layers_of_tensors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """25 of the 28 layers were counted as MTP layers, resident but never swept."""
    tensors = hf_dense_tensors(tied=False)
    layer = {
        k.removeprefix("model.layers.0."): v for k, v in tensors.items() if k.startswith("model.layers.0.")
    }
    for n in range(2, 28):
        tensors |= {f"model.layers.{n}.{k}": v for k, v in layer.items()}
    path = checkpoint(tmp_path / "deep", CONFIG | {"num_hidden_layers": 3}, tensors)
    both_paths_refuse(
        capsys,
        "safetensors",
        path,
        "num_hidden_layers: is 3 but the tensors hold layers model.layers.0 to model.layers.27",
    )


def test_decode_refuses_unrecognised_tensor_names_as_import_does(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`decode -m model.safetensors` answered W_resident 0 for names `import safetensors` refused."""
    tensors = {"foo.bar": np.zeros((4, 4), np.float16), "baz": np.zeros(8, np.float32)}
    path = checkpoint(tmp_path / "odd", CONFIG, tensors)
    both_paths_refuse(
        capsys, "safetensors", path, "num_hidden_layers: is 2 but the file lists no model.layers.N"
    )
    # Names under layers but too small to be a model: the model form's checks answer on both paths alike.
    tiny = {
        "model.layers.0.x.weight": np.zeros(4, np.float16),
        "model.layers.1.x.weight": np.zeros(4, np.float16),
    }
    path = checkpoint(tmp_path / "tiny", CONFIG, tiny)
    both_paths_refuse(capsys, "safetensors", path, "model.weights.resident_gb")


#: What the safetensors stack really holds: 2 layers x 1 KV head x 8 x 2 (K, V) x 2 B at bf16.
ST_KV_BYTES = 2 * 1 * 8 * 2 * 2


@settings(max_examples=60, deadline=None)
@given(
    layers=st.integers(1, 4),
    hidden=st.sampled_from([8, 16, 32]),
    heads=st.integers(1, 4),
    kv_heads=st.integers(0, 4),
    head_dim=st.sampled_from([None, 4, 8, 16]),
)
@example(layers=3, hidden=16, heads=2, kv_heads=1, head_dim=8)
@example(layers=2, hidden=16, heads=2, kv_heads=2, head_dim=8)
@example(layers=2, hidden=16, heads=4, kv_heads=1, head_dim=4)
def test_safetensors_config_keys_cannot_change_the_answer(
    tmp_path_factory: pytest.TempPathFactory,
    layers: int,
    hidden: int,
    heads: int,
    kv_heads: int,
    head_dim: int | None,
) -> None:
    config = CONFIG | {
        "num_hidden_layers": layers,
        "hidden_size": hidden,
        "num_attention_heads": heads,
        "num_key_value_heads": kv_heads,
    }
    if head_dim is None:
        config.pop("head_dim")
    else:
        config["head_dim"] = head_dim
    path = checkpoint(tmp_path_factory.mktemp("st"), config, hf_dense_tensors(tied=False))
    try:
        model = import_safetensors(path)
    except InputError:
        return
    assert model.adapter.kv_alloc.global_bytes_per_token == ST_KV_BYTES


# config.json ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kv_heads", "message"),
    [
        (16, "num_key_value_heads: 16 KV heads exceed num_attention_heads 8"),
        (3, "num_key_value_heads: 3 KV heads do not divide num_attention_heads 8"),
        (0, "num_key_value_heads: is 0 beside 8 query heads"),
    ],
)
def test_config_kv_heads_above_or_not_dividing_the_heads(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], kv_heads: int, message: str
) -> None:
    from tests.test_import_hf import llama, write

    path = str(write(tmp_path, llama(num_key_value_heads=kv_heads)))
    status, _, err = run(capsys, "import", "hf", path)
    assert status == 2 and err.count("\n") == 1, err
    assert message in err


@settings(max_examples=100, deadline=None)
@given(heads=st.integers(0, 16), kv_heads=st.integers(0, 16))
def test_config_head_counts_accepted_only_when_they_agree(
    tmp_path_factory: pytest.TempPathFactory, heads: int, kv_heads: int
) -> None:
    from tests.test_import_hf import llama, write

    path = write(
        tmp_path_factory.mktemp("cfg"), llama(num_attention_heads=heads, num_key_value_heads=kv_heads)
    )
    with contextlib.suppress(InputError):
        model = import_hf_config(path)
        assert 0 < kv_heads <= heads and heads % kv_heads == 0
        assert model.adapter.kv_alloc.global_bytes_per_token == 2 * 4 * kv_heads * 32 * 2
