"""The arithmetic mode a weight storage format's matrix multiplies run in (a compute_tflops key).

One table for every importer: the config.json importer names its formats (fp32, bf16, fp16, fp8,
nvfp4, mxfp4, q8_0, q4_k, the q4_k_m mix ...), the GGUF importer names ggml types (F32, F16, BF16,
MXFP4, Q4_1, Q6_K, IQ4_XS ...); both ask :func:`linear_mode`.

- Float formats multiply in their own precision: fp32/F32 -> fp32, bf16/BF16 -> bf16, fp16/F16 ->
  fp16, fp8 -> fp8.
- FP4 formats (nvfp4, mxfp4/MXFP4) -> fp4, the tensor-core rate of their element type.
- llama.cpp block formats (names starting with q, iq or tq: q4_0, q4_k, q6_k, iq4_xs, tq1_0, the
  q4_k_m mix) -> int8: llama.cpp quantizes the activations to 8-bit blocks and takes integer dot
  products against the unpacked weights, so the integer rate bounds them.
"""

from __future__ import annotations

__all__ = ["FLOAT_LINEAR_MODES", "LLAMA_CPP_IF_PUBLISHED", "if_published_note", "linear_mode"]

#: Float and FP4 storage formats, by lower-case name, and the mode they multiply in.
FLOAT_LINEAR_MODES: dict[str, str] = {
    "fp32": "fp32",
    "f32": "fp32",
    "bf16": "bf16",
    "fp16": "fp16",
    "f16": "fp16",
    "fp8": "fp8",
    "fp8_block": "fp8",
    "nvfp4": "fp4",
    "mxfp4": "fp4",
    # Weight-only 4-bit integers (compressed-tensors W4A16) are widened to BF16 before the multiply.
    "int4_g32": "bf16",
    # MLX's affine formats are widened to the activations' 16-bit float type before the multiply.
    "mlx_4bit": "fp16",
    "mlx_6bit": "fp16",
    "mlx_5bit": "fp16",
    "mlx_8bit": "fp16",
    "mlx_8bit_g32": "fp16",
    "mlx_4bit_g32": "fp16",
    "mlx_5bit_g32": "fp16",
    "mlx_6bit_g32": "fp16",
}

#: Modes llama.cpp runs a ggml type's matrix multiplies at where the hardware row publishes them, over
#: :func:`linear_mode`'s (``PrefillShape.linear_mode_if_published``): its CUDA backend multiplies F16
#: weights through cuBLAS with FP16 accumulate (``fp16_acc16``); its Metal and CPU paths accumulate in
#: FP32 (``fp16``), and rows without an ``fp16_acc16`` rate (Apple, AMD, DGX Spark) are charged that.
LLAMA_CPP_IF_PUBLISHED: dict[str, str] = {"f16": "fp16_acc16"}

_BLOCK_PREFIXES = ("q", "iq", "tq")


def linear_mode(storage: str) -> str:
    """The compute_tflops key the linear layers of weights stored as ``storage`` run at.

    ``storage`` is a format name in either importer's spelling, any case. Raises KeyError for a
    name that is neither a float format nor a llama.cpp block format (callers turn it into an
    InputError that names their field).
    """
    name = storage.lower()
    if name in FLOAT_LINEAR_MODES:
        return FLOAT_LINEAR_MODES[name]
    if name.startswith(_BLOCK_PREFIXES) and any(ch.isdigit() for ch in name):
        return "int8"
    raise KeyError(storage)


def if_published_note(mode_if_published: str, weight_type: str, mode: str) -> str:
    """The audit words for :data:`LLAMA_CPP_IF_PUBLISHED`, one sentence for both importers:
    ``weight_type`` as the importer names it (F16), ``mode`` the mode charged elsewhere."""
    return (
        f"{mode_if_published} where the hardware publishes it (llama.cpp's CUDA backend multiplies "
        f"{weight_type} weights with FP16 accumulate; elsewhere {mode})"
    )
