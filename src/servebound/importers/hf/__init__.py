"""Hugging Face config.json importer internals: block arithmetic and architecture families."""
