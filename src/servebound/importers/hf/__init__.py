"""Hugging Face config.json importer internals: block arithmetic and architecture families.

``HUB_GGUF`` (the Hub's ``org/name:QUANT`` reference) lives here, not in ``hub``, so that telling a
reference apart never imports the network stack (start-up time)."""

import re

#: ``org/name:QUANT`` as llama.cpp's -hf takes it (the tag names the quantization, e.g. Q4_K_M).
HUB_GGUF = re.compile(r"^(?P<repo>[A-Za-z0-9][\w.-]*/[\w.-]+):(?P<quant>[\w.+-]+)$")
