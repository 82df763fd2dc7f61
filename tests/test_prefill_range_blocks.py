"""prefill_range scans every prompt length in blocks (bounded memory for 10M-token contexts): the
answer must not depend on the block size."""

from __future__ import annotations

import pytest

from servebound.api import load_hardware, load_model, make_workload
from servebound.core import prefill as prefill_module
from tests.conftest import resolved


@pytest.mark.parametrize(
    ("hardware", "model"),
    [
        ("nvidia-h100-sxm", "llama-3.1-8b"),
        ("nvidia-dgx-spark", "qwen3.6-35b-a3b-nvfp4"),
        ("nvidia-rtx-4090", "gemma-3-4b-it"),
    ],
)
@pytest.mark.parametrize("block", [1, 997, 4096])
def test_blocks_give_the_one_pass_answer(
    monkeypatch: pytest.MonkeyPatch, hardware: str, model: str, block: int
) -> None:
    hw, m = load_hardware(hardware), load_model(model)
    workload = make_workload(alloc_context=None)
    monkeypatch.setattr(prefill_module, "RANGE_BLOCK_LENGTHS", 1 << 40)
    whole = prefill_module.prefill_range(hw, m, workload=resolved(hw, m, workload))
    if block == 1:  # one length per block would take minutes at 131,072 lengths: cut the context
        from dataclasses import replace

        m = replace(m, context_limit_tokens=3000)
        whole = prefill_module.prefill_range(hw, m, workload=resolved(hw, m, workload))
    monkeypatch.setattr(prefill_module, "RANGE_BLOCK_LENGTHS", block)
    blocked = prefill_module.prefill_range(hw, m, workload=resolved(hw, m, workload))
    assert blocked == whole
    assert whole.max_prompt_tokens > block
