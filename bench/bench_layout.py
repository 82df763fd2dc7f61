"""The whole layout search for one (system, model) pair, and one fleet plan.

Run: python bench/bench_layout.py. Prints the median of in-process runs (catalogs loaded once first).
"""

from __future__ import annotations

from servebound.catalog.models import get_model
from servebound.core.workload import Workload
from servebound.questions.layout import run_layouts
from servebound.questions.plan import run_plan
from timing import median_s


def main() -> None:
    cases = (
        ("nvidia-gb200-nvl72", "deepseek-v3"),
        ("nvidia-gb200-nvl72", "kimi-k2-instruct"),
        ("8x-nvidia-h100-sxm", "llama-3.1-405b"),
        ("4x-apple-m3-ultra-512gb", "deepseek-v3"),
        ("1024x-nvidia-b200", "deepseek-v3"),  # the largest system a reference may name
        ("1024x-nvidia-b200", "glm-4.5"),  # the most layouts of any catalog model there (2,771)
    )
    for system, model_id in cases:
        model = get_model(model_id).adapter
        workload = Workload()
        _, results = run_layouts(system, model, workload)
        seconds = median_s(
            lambda system=system, model=model, workload=workload: run_layouts(system, model, workload), 20
        )
        best = results[0]
        print(
            f"layout search {system} x {model_id}: {len(results)} layouts, median {seconds * 1e3:.1f} ms (best {best.layout.label})"
        )
    model = get_model("llama-3.1-70b").adapter

    def plan() -> object:
        return run_plan(
            "8x-nvidia-h100-sxm",
            model,
            prompt_tokens=2000,
            output_tokens=500,
            floor_tok_s=20,
            requests_per_s=10,
        )

    print(f"plan 8x-nvidia-h100-sxm x llama-3.1-70b, 10 req/s: median {median_s(plan, 20) * 1e3:.1f} ms")


if __name__ == "__main__":
    main()
