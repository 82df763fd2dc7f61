"""Cost speed: the whole cost curve for one pair (decode, the priced grid, input tokens at the prefill
ceiling, the trade and the floors, then the JSON view), and the three cost figures of a pair page.

Run: python bench/bench_cost.py. Warm, in-process medians.
"""

from __future__ import annotations

from timing import median_s


def main() -> None:
    from servebound.api import load_hardware, load_model, make_workload
    from servebound.inputs.pricing import catalog_price, resolve_price
    from servebound.questions.cost import cost_report
    from servebound.views.cost_view import cost_json

    hw = load_hardware("nvidia-b200")
    price = resolve_price(hw, catalog_price("nvidia-b200"))
    for model_id, workload, label in (
        ("llama-3.1-8b", make_workload(), "default workload (b_mem = 11)"),
        (
            "llama-3.1-8b",
            make_workload(alloc_context=200, read_context=100, floor_tok_s=1),
            "short context (b_mem = 5,948, compute binds)",
        ),
        ("qwen3-30b-a3b", make_workload(alloc_context=4000, read_context=2000), "MoE, 4k reserved"),
    ):
        model = load_model(model_id)
        seconds = median_s(lambda m=model, w=workload: cost_json(cost_report(hw, m, w, price)), 30, warm=True)
        points = len(cost_json(cost_report(hw, model, workload, price))["points"])
        print(f"cost curve, nvidia-b200 x {model_id}, {label}: {points} points in {seconds * 1e3:.2f} ms")


if __name__ == "__main__":
    main()
