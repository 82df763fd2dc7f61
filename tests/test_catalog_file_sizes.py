"""Each catalog profile against the file it names: the bytes a published file holds, to 0.1 %.

Every figure below is a size a file's own tooling printed or a checkpoint's own index states, with
where it was published:

- llama-bench's ``size`` column is the GGUF's tensor bytes in GiB (2^30). AMD's llama.cpp on ROCm 7
  post (github:ROCm/rocm-blogs@09302f5 blogs/ecosystems-and-partners/llama-cpp-oct2025/README.md)
  prints ``deepseek2 671B Q4_K - Medium | 376.65 GiB | 671.03 B`` for DeepSeek-V3 Q4_K_M and
  ``llama 70B Q4_K - Medium | 39.59 GiB | 70.55 B`` for the Llama-3.1-70B-Instruct Q4_K_M it
  quantizes itself with llama-quantize. ik_llama.cpp discussion #258 (ubergarm's quick-start guide,
  comment of 2025-03-16) runs llama-bench on unsloth/DeepSeek-R1-GGUF: ``deepseek2 671B Q4_K - Medium
  | 376.65 GiB | 671.03 B`` and ``deepseek2 671B Q8_0 | 664.29 GiB | 671.03 B``. 671.03 B, not
  DeepSeek's 685 B, because llama.cpp's converter writes no MTP layer for this family. The profile is
  0.03 % (0.12 GiB) above those files: it types MLA's attn_kv_b as an attention-value tensor (Q6_K in
  the 30 use_more_bits layers), as llama-quant.cpp does today; 30 x 512 x 32,768 weights x (6.5625 -
  4.5) / 8 bytes = 0.121 GiB is the gap, consistent with the early-2025 quantizer that made these files
  leaving attn_kv_b at the file type's Q4_K.
- A public llama-bench log (build 233d773d0, RTX PRO 6000 Blackwell; quoted in the code index, its
  repository not recorded) prints ``llama 13B Q4_K - Medium | 6.96 GiB | 12.25 B`` for
  shisa-v2-mistral-nemo-12b.i1-Q4_K_M.gguf, a fine-tune with Mistral Nemo's shapes (the importance
  matrix changes values, not Q4_K_M's tensor types).
- exo's pinned model cards (exo-explore/exo) give MLX checkpoint sizes in bytes (storage_size.in_bytes;
  more in tests/test_formats_and_releases.py). At commit bc6661e, resources/inference_model_cards/:
  mlx-community--MiniMax-M2.7-5bit.toml 157,262,619,651; mlx-community--NVIDIA-Nemotron-3-Nano-30B-A3B-
  MLX-5Bit.toml 21,721,476,864; mlx-community--GLM-4.7-8bit-gs32.toml 396,963,397,248 (GLM-4.7 has
  GLM-4.5's shapes: 92 layers, 160 experts, hidden 5120; the catalog holds GLM-4.5's config). Two
  5-bit cards do not match a plain 5-bit layout and are left out: Qwen3.6-35B-A3B-5bit (ours 3.5 %
  below: the card's repository also holds the vision tower) and GLM-4.7-Flash-5bit (ours 8.7 % below).
- Google's Gemma 3 QAT Q4_0 GGUFs (google/gemma-3-{1b,4b}-it-qat-q4_0-gguf): the token embedding,
  tied to the output, F16, every other matrix Q4_0 (stduhpf's google-gemma-3-27b-it-qat-q4_0-gguf-small
  card: Google's files keep the embedding table in fp16 instead of llama.cpp's Q6_K). A llama-bench
  log of the 4B file at revision 15f73f5e (code index, repository not recorded) prints 2.93 GiB and
  3.88 B params. The files' exact sizes are pinned, with their SHA-256, in several public manifests:
  gemma-3-4b-it-q4_0.gguf 3,155,051,328 B (revision 15f73f5eee9c28f53afefef5723e29680c2fc78a, sha256
  76aed0a8...), gemma-3-1b-it-q4_0.gguf 1,003,541,152 B (revision d1be121d36172a4b0b964657e2ee859d61138593,
  sha256 95e5b8d8...). The 12B file, gemma-3-12b-it-q4_0.gguf, is 8,074,473,920 B in LLM-Hub's model
  list (github:timmyy123/LLM-Hub app/src/main/java/com/llmhub/llmhub/data/ModelData.kt, whose 4B entry is
  the pinned 3,155,051,328 B). A file is its tensors plus its header (Gemma 3's 262k-token vocabulary with
  scores and types, the chat template, the tensor index): 0.2 % of the 4B, 0.65 % of the 1B.
- Gemma 3 12B Q4_K_M: a llama-server model report for ggml-org/gemma-3-12b-it-GGUF (code index,
  repository not recorded) prints ``"n_params": 11765788416`` and ``"size": 7294024704``, the tensor
  bytes. llama.cpp's Gemma 3 converter drops the checkpoint's 64 out-of-vocabulary embedding rows
  (262,144 written of 262,208); the profile keeps them, 64 x 3,840 weights at Q6_K = 201,600 B, 0.003 %.
- Falcon 180B: TheBloke/Falcon-180B-Chat-GGUF's provided-files table (sizes in GB, two decimals):
  Q8_0 190.76, Q6_K 147.52, Q5_K_M 130.99, Q5_0 123.80, Q4_K_S 101.48, Q4_0 101.48 (the chat model
  has the base model's shapes). llama.cpp types Falcon's output Q8_0 in every file type and has its
  own ffn_down, attn_output and attn_qkv rules (``LLM_ARCH_FALCON`` in llama_tensor_get_type). The
  table's Q4_K_M (108.48), Q3_K_M (85.18) and Q2_K (73.97) are not tested: today's rules put the
  profile +0.33 %, +0.38 % and -9.7 % from them. The files were quantized in September 2023. The
  Q4_K_M gap, 0.352 GB, is three ffn_down tensors (59,392 x 14,848) one step lower (Q5_K, not Q6_K:
  0.351 GB), and the Q3_K_M gap, 0.327 GB, three at Q4_K, not Q5_K (0.331 GB): as if the quantizer of
  the time raised only the first two ffn_down layers where today's raises the first sixteenth (5 of
  80). That rule was not read in a 2023 source, so those profiles are left out rather than fitted.
  Q3_K_S, Q3_K_L and Q5_K_S are not catalog formats.
"""

from __future__ import annotations

import pytest

from servebound.catalog.models import get_model, profile_ids
from servebound.importers.hf_config import import_hf_config
from tests.test_formats_and_releases import config

GIB = 2**30

#: profile id -> (published bytes, what published it).
PUBLISHED_FILES: dict[str, tuple[float, str]] = {
    "deepseek-v3-q4_k_m": (376.65 * GIB, "llama-bench 376.65 GiB (AMD ROCm blog, llama-cpp-oct2025)"),
    "deepseek-r1-q4_k_m": (376.65 * GIB, "llama-bench 376.65 GiB (ik_llama.cpp discussion #258)"),
    "deepseek-r1-q8_0": (664.29 * GIB, "llama-bench 664.29 GiB (ik_llama.cpp discussion #258)"),
    "llama-3.1-70b-instruct-q4_k_m": (
        39.59 * GIB,
        "llama-bench 39.59 GiB (AMD ROCm blog, llama-cpp-oct2025)",
    ),
    "mistral-nemo-base-2407-q4_k_m": (6.96 * GIB, "llama-bench 6.96 GiB, a Nemo fine-tune's Q4_K_M"),
    "llama-3.1-8b-instruct-mlx_4bit": (4_517_404_672, "exo model card, mlx-community 4bit"),
    "llama-3.3-70b-instruct-mlx_4bit": (39_688_355_840, "exo model card, mlx-community 4bit"),
    "minimax-m2.7-mlx_5bit": (157_262_619_651, "exo model card, mlx-community MiniMax-M2.7-5bit"),
    "nvidia-nemotron-3-nano-30b-a3b-bf16-mlx_5bit": (21_721_476_864, "exo model card, MLX-5Bit"),
    "glm-4.5-mlx_8bit_g32": (396_963_397_248, "exo model card, GLM-4.7-8bit-gs32 (GLM-4.5's shapes)"),
    "gemma-3-4b-it-q4_0_qat": (2.93 * GIB, "llama-bench 2.93 GiB, Google's QAT Q4_0 GGUF"),
    "gemma-3-12b-it-q4_k_m": (7_294_024_704, "llama-server size, ggml-org/gemma-3-12b-it-GGUF Q4_K_M"),
    "falcon-180b-q8_0": (190.76e9, "TheBloke/Falcon-180B-Chat-GGUF, Q8_0 190.76 GB"),
    "falcon-180b-q6_k": (147.52e9, "TheBloke/Falcon-180B-Chat-GGUF, Q6_K 147.52 GB"),
    "falcon-180b-q5_k_m": (130.99e9, "TheBloke/Falcon-180B-Chat-GGUF, Q5_K_M 130.99 GB"),
    "falcon-180b-q5_0": (123.80e9, "TheBloke/Falcon-180B-Chat-GGUF, Q5_0 123.80 GB"),
    "falcon-180b-q4_k_s": (101.48e9, "TheBloke/Falcon-180B-Chat-GGUF, Q4_K_S 101.48 GB"),
    "falcon-180b-q4_0": (101.48e9, "TheBloke/Falcon-180B-Chat-GGUF, Q4_0 101.48 GB"),
}
#: llama-bench prints two decimals of GiB: half a hundredth is the rounding, below 0.1 % here.
TOLERANCE = 0.001


@pytest.mark.parametrize("profile", sorted(PUBLISHED_FILES))
def test_profile_is_the_published_file(profile: str) -> None:
    published, where = PUBLISHED_FILES[profile]
    resident = get_model(profile).adapter.weights.resident
    assert resident == pytest.approx(published, rel=TOLERANCE), where


def test_every_published_profile_exists() -> None:
    assert set(PUBLISHED_FILES) <= set(profile_ids())


def test_llama_cpp_deepseek_files_hold_no_mtp_layer() -> None:
    """DeepSeek's config has one MTP layer (685 B with it); the GGUF has none (671.03 B)."""
    imported = import_hf_config(config("deepseek-ai__DeepSeek-R1"), weight_format="q4_k_m")
    dropped = {s.quantity: s.value for s in imported.steps}["mix.mtp_not_written"]
    assert imported.total_params - dropped == pytest.approx(671.03e9, abs=0.005e9)  # llama-bench's params
    bf16 = get_model("deepseek-r1-bf16").adapter.weights.resident
    q4 = get_model("deepseek-r1-q4_k_m").adapter.weights.resident
    # Without the MTP layer the Q4_K_M file is 4.82 bits per weight over 671 B weights.
    assert 8 * q4 / 671.03e9 == pytest.approx(4.82, abs=0.01)
    assert bf16 > 2 * q4


@pytest.mark.parametrize(
    ("profile", "vocab", "hidden"),
    [
        ("llama-3.3-70b-instruct-fp8", 128256, 8192),
        ("llama-3.1-8b-instruct-fp8", 128256, 4096),
        ("llama-3.1-8b-instruct-nvfp4", 128256, 4096),
        ("llama-2-70b-fp8", 32000, 8192),
    ],
)
def test_synthetic_quantized_profiles_keep_embedding_and_head_bf16(
    profile: str, vocab: int, hidden: int
) -> None:
    """FP8 and NVFP4 quantizers convert linear layers only: the embedding and the (untied) output head
    stay BF16, as in the released checkpoints; the uniform layout (``--weight-format fp8``) is 1 byte."""
    weights = get_model(profile).adapter.weights
    assert weights.embedding_bytes == vocab * hidden * 2
    fmt = profile.rsplit("-", 1)[1]
    folder = {
        "llama-3.3-70b-instruct": "meta-llama__Llama-3.3-70B-Instruct",
        "llama-3.1-8b-instruct": "meta-llama__Llama-3.1-8B-Instruct",
        "llama-2-70b": "meta-llama__Llama-2-70b-hf",
    }[profile.rsplit("-", 1)[0]]
    uniform = import_hf_config(config(folder), weight_format=fmt).adapter.weights
    per_element = {"fp8": 1.0, "nvfp4": 4.5 / 8}[fmt]
    # Embedding and head each at 2 bytes instead of the layout's: 70B FP8 = 70.56 + 2.10 GB.
    gained = 2 * vocab * hidden * (2 - per_element)
    assert weights.resident - uniform.resident == pytest.approx(gained, rel=1e-9)


def test_mlx_layouts_by_hand() -> None:
    """5-bit: 64 values in 40 bytes plus a BF16 scale and bias, 5.5 bits; group 32 at 8 bits: 32 bytes
    plus 4, 9 bits per weight."""
    from servebound.core.formats import FORMATS

    assert FORMATS["mlx_5bit"].bits_per_element == 5.5
    assert FORMATS["mlx_8bit_g32"].bits_per_element == 9.0


#: Google's QAT GGUFs, whole files in bytes (revision, file), from the pinned manifests above.
GEMMA_QAT_FILES = {
    "gemma-3-4b-it-q4_0_qat": 3_155_051_328,  # 15f73f5e gemma-3-4b-it-q4_0.gguf
    "gemma-3-1b-it-q4_0_qat": 1_003_541_152,  # d1be121d gemma-3-1b-it-q4_0.gguf
    "gemma-3-12b-it-q4_0_qat": 8_074_473_920,  # main gemma-3-12b-it-q4_0.gguf (LLM-Hub's list)
}


def test_gemma_qat_embedding_is_f16_and_the_rest_q4_0() -> None:
    """Against llama.cpp's own Q4_0 file type the QAT file differs only in the tied embedding: F16 (2
    bytes) where llama-quantize writes the output Q6_K (6.5625 bits), or Q8_0 (8.5 bits) where the
    row is not a whole number of 256-element blocks (the 1B's 1,152)."""
    for profile, folder, vocab, hidden, head_bits in [
        ("gemma-3-4b-it-q4_0_qat", "google__gemma-3-4b-it", 262208, 2560, 6.5625),
        ("gemma-3-1b-it-q4_0_qat", "google__gemma-3-1b-it", 262144, 1152, 8.5),
    ]:
        qat = get_model(profile).adapter.weights.resident
        llama_cpp = import_hf_config(config(folder), weight_format="q4_0").adapter.weights.resident
        assert qat - llama_cpp == pytest.approx(vocab * hidden * (2 - head_bits / 8), rel=1e-12)
    assert get_model("gemma-3-4b-it-q4_0_qat").total_params == pytest.approx(3.88e9, abs=0.005e9)


def test_gemma_qat_profiles_are_the_files_with_their_header() -> None:
    """The 4B file less its tensors is its header, 6.21 MB; the tokenizer alone holds at least
    262,208 x (8 B string length + 4 B score + 4 B type) = 4.20 MB of it. The same header on the 1B's
    tensors (the same tokenizer and template) is the 1B file to 0.1 %: -0.03 %, the 1B's own header
    being 0.32 MB the larger for all its 104 fewer tensor entries (its metadata is not byte for byte
    the 4B's). On the 12B's tensors it is the 12B file to 0.002 % (the 12B's header 6.06 MB)."""
    tensors = {p: get_model(p).adapter.weights.resident for p in GEMMA_QAT_FILES}
    header = GEMMA_QAT_FILES["gemma-3-4b-it-q4_0_qat"] - tensors["gemma-3-4b-it-q4_0_qat"]
    assert 262208 * 16 < header < 0.003 * GEMMA_QAT_FILES["gemma-3-4b-it-q4_0_qat"]
    one_b = GEMMA_QAT_FILES["gemma-3-1b-it-q4_0_qat"]
    assert tensors["gemma-3-1b-it-q4_0_qat"] + header == pytest.approx(one_b, rel=TOLERANCE)
    # Without the header the 1B profile is 0.65 % short of its file: the check above is not vacuous.
    assert tensors["gemma-3-1b-it-q4_0_qat"] != pytest.approx(one_b, rel=TOLERANCE)
    twelve_b = GEMMA_QAT_FILES["gemma-3-12b-it-q4_0_qat"]
    assert tensors["gemma-3-12b-it-q4_0_qat"] + header == pytest.approx(twelve_b, rel=0.0001)


def test_falcon_output_is_q8_0_in_every_file_type() -> None:
    """llama.cpp's quantizer writes a Falcon output head Q8_0 whatever the file type; without that
    rule (Q6_K) every Falcon file above would be 965 M x 1.9375 bits = 0.234 GB short, 0.23 % of Q4_0."""
    from servebound.core.formats import FORMATS
    from servebound.importers.hf.llama_cpp import TensorPlace, llama_cpp_type

    falcon = TensorPlace(falcon=True)
    for mix in ("q4_0", "q4_k_s", "q5_0", "q5_k_m", "q6_k"):
        assert llama_cpp_type(mix, "output", 14848, falcon) == FORMATS["q8_0"]
        assert llama_cpp_type(mix, "output", 14848) == FORMATS["q6_k"]
    q4 = get_model("falcon-180b-q4_0").adapter.weights.resident
    assert abs(q4 - 101.48e9) / 101.48e9 < 0.0001
    assert (q4 - 65024 * 14848 * (8.5 - 6.5625) / 8) != pytest.approx(101.48e9, rel=TOLERANCE)


def test_falcon_q4_k_m_ffn_down_rule() -> None:
    """Falcon's Q4_K_M ffn_down: Q6_K in the first sixteenth of layers, Q5_K where use_more_bits,
    else Q4_K (the other families: Q6_K where use_more_bits, else Q4_K)."""
    from servebound.core.formats import FORMATS
    from servebound.importers.hf.llama_cpp import TensorPlace, llama_cpp_type

    def down(layer: int, falcon: bool) -> object:
        place = TensorPlace(layer=layer, layers=80, falcon=falcon)
        return llama_cpp_type("q4_k_m", "ffn_down", 59392, place)

    q4, q5, q6 = FORMATS["q4_k"], FORMATS["q5_k"], FORMATS["q6_k"]
    assert [down(i, True) for i in (0, 4, 5, 11, 12)] == [q6, q6, q5, q4, q5]
    assert [down(i, False) for i in (0, 4, 5, 11, 12)] == [q6, q6, q6, q4, q6]


def test_gemma_3_12b_text_tower_by_hand() -> None:
    """48 layers of hidden 3840: 16 query and 8 KV heads of 256, a 15,360-wide gated MLP, four
    RMSNorms and the q/k norms; with keras-hub's 262,144-row embedding that is its preset count
    11,765,788,416 exactly; the catalog's config keeps transformers' 262,208 rows."""
    hidden, heads, kv, head_dim, inner, layers = 3840, 16, 8, 256, 15360, 48
    attention = 2 * hidden * heads * head_dim + 2 * hidden * kv * head_dim
    per_layer = attention + 3 * hidden * inner + 4 * hidden + 2 * head_dim
    keras_hub = layers * per_layer + 262144 * hidden + hidden
    assert keras_hub == 11_765_788_416
    model = get_model("gemma-3-12b-it")
    assert model.total_params == keras_hub + 64 * hidden


def test_gemma_3_27b_qat_is_googles_file() -> None:
    """google/gemma-3-27b-it-qat-q4_0-gguf's gemma-3-27b-it-q4_0.gguf is listed at 17.2 GB (stduhpf's
    google-gemma-3-27b-it-qat-q4_0-gguf-small README, its size table): the profile's tensor bytes, with
    the few MB of metadata the 4B file carries beyond its tensors (3,155,051,328 B whole), round to it."""
    resident = get_model("gemma-3-27b-it-q4_0_qat").adapter.weights.resident
    small = get_model("gemma-3-4b-it-q4_0_qat").adapter.weights.resident
    metadata = GEMMA_QAT_FILES["gemma-3-4b-it-q4_0_qat"] - small
    assert 0 < metadata < 10e6
    assert round((resident + metadata) / 1e9, 1) == 17.2
