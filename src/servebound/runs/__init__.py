"""Measured runs against their ceilings, one module per job.

``measured``: a run (what was measured, at which setting) and its check record; ``ceiling``: the
ceiling for a run's own setting and the efficiency (``servebound check``); ``llama_bench`` and ``vllm``:
the two engines' result files; ``result_files``: either, told apart by content; ``reported``: the
reported-run catalog (``catalog/data/reported_runs.toml``); ``validation``: those runs evaluated and
summarised (``servebound validate``, the /validation page).
"""

from functools import cache

from servebound.inputs import package_data


@cache
def reported_runs_text() -> str:
    """The reported-run catalog's file, read once per process: a server reads it as it starts, and
    ``reported.load_reported_runs`` parses it on first use."""
    return package_data.read_text("servebound.catalog", "data", "reported_runs.toml")
