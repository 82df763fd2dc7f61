"""Regenerate the expected-band calibration in docs/band.md from the reported runs.

Run: python scripts/docs_band.py. The block sits between ``<!-- band-calibration -->`` and
``<!-- /band-calibration -->``; tests/test_band.py fails when it differs from what this writes (a new
reported run moves the figures: rerun this and commit docs/band.md).
"""

from __future__ import annotations

import re
from pathlib import Path

from servebound.runs.band_fit import band_calibration

BAND = Path(__file__).resolve().parents[1] / "docs" / "band.md"
_BLOCK = re.compile(r"(<!-- band-calibration -->\n)(.*?)(<!-- /band-calibration -->)", re.S)


def calibration_text() -> str:
    """The calibration sentence and its per-group table, measured now."""
    c = band_calibration()
    share = 0 if c.share is None else round(100 * c.share)
    lines = [
        "Calibration, measured by leaving each run out (the band from the other runs of its group, for every",
        f"group with more than 5 runs): {c.inside} of {c.evaluated} runs ({share} %) land inside their own",
        "p10-p90 band, against 80 % for a band of known quantiles. By group (the fit's a and t_0 on all its",
        "runs; the median width p90 / p10 of the left-out bands):",
        "",
        "| engine | hardware class | phase | runs | a | t_0 (ms) | inside their own band | median p90/p10 |",
        "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for row in c.groups:
        group, model = row.group, row.model
        fit = "no band | -" if model is None else f"{model.slope:.2f} | {1000 * model.fixed_s:.2f}"
        inside = (
            "-" if row.coverage is None else f"{row.inside} of {row.evaluated} ({100 * row.coverage:.0f} %)"
        )
        width = "-" if row.median_width is None else f"{row.median_width:.2f}"
        lines.append(
            f"| {group.engine} | {group.hardware_class} | {group.name} | {len(group.run_ids)} | {fit} | "
            f"{inside} | {width} |"
        )
    return "\n".join(lines) + "\n"


def render(text: str) -> str:
    """docs/band.md's text with the calibration block regenerated."""
    return _BLOCK.sub(lambda m: f"{m[1]}{calibration_text()}{m[3]}", text)


def main() -> None:
    BAND.write_text(render(BAND.read_text(encoding="utf-8")), encoding="utf-8")


if __name__ == "__main__":
    main()
