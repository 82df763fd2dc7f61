"""`servebound catalog lint`: the catalog's checks (the hardware file and the model index, each
config imported again)."""

from __future__ import annotations

from servebound.catalog.lint import lint_hardware_catalog
from servebound.catalog.model_build import lint_model_catalog
from servebound.cli.common import JSON, command, group
from servebound.cli.output import console, print_json

catalog_app = group("catalog", examples=("servebound catalog lint", "servebound catalog lint --json"))


@command(
    "lint",
    JSON,
    parent=catalog_app,
    help="Report every catalog number without a source and every inconsistent unit or id; exit 1 if any.",
    examples=("servebound catalog lint", "servebound catalog lint --json"),
)
def catalog_lint(json_out: bool) -> int:
    problems = lint_hardware_catalog()
    problems = [*problems, *lint_model_catalog()]
    if json_out:
        print_json({"problems": problems})
    else:
        for line in problems:
            console.print(f"- {line}")
        console.print(f"{len(problems)} problems")
    return 1 if problems else 0
