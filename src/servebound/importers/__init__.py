"""Importers: real model files (config.json, safetensors headers, GGUF metadata) to adapter form."""
