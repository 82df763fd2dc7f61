"""Measured runs against their ceilings, one module per job.

``measured``: a run (what was measured, at which setting) and its check record; ``ceiling``: the
ceiling for a run's own setting and the efficiency (``servebound check``); ``llama_bench`` and ``vllm``:
the two engines' result files; ``result_files``: either, told apart by content; ``reported``: the
reported-run catalog (``catalog/data/reported_runs.toml``); ``validation``: those runs evaluated and
summarised (``servebound validate``, the /validation page).
"""
