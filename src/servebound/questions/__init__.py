"""The questions: one module per question servebound answers, each taking a resolved scenario
(``inputs.scenario.resolve_scenario``) and returning a record.

decode, prefill, cost, layout, plan, fit, rank, check and economics. The Python API
(``servebound.api``), the CLI's commands, the JSON API and the pages call these and nothing below them;
``views/`` renders the records they return (terminal text, JSON, words)."""
