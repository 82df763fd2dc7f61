"""Split by job: no module of the package over 600 lines, no function over 120 (issue 13). The site's
browser scripts (web/static/*.js) are modules too and keep the same 600. Generated data (catalog TOML,
JSON) is not code and is not counted."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "servebound"
SCRIPTS = PACKAGE / "web" / "static"
MAX_MODULE_LINES = 600
MAX_FUNCTION_LINES = 120


def modules() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def test_the_package_has_modules() -> None:
    assert len(modules()) > 50  # the walk sees the tree (a wrong root would pass every size check)


def too_long(paths: list[Path], root: Path) -> dict[str, int]:
    """The files of ``paths`` over MAX_MODULE_LINES, named below ``root``, with their line counts."""
    counts = {str(path.relative_to(root)): len(path.read_text("utf-8").splitlines()) for path in paths}
    return {name: n for name, n in counts.items() if n > MAX_MODULE_LINES}


def test_no_module_over_600_lines() -> None:
    long = too_long(modules(), PACKAGE)
    assert long == {}, f"split these by job: {long}"


def scripts() -> list[Path]:
    return sorted(SCRIPTS.rglob("*.js"))


def test_the_site_has_scripts() -> None:
    assert {"calc.js", "site.js", "derivation.js"} <= {path.name for path in scripts()}


def test_no_script_over_600_lines() -> None:
    long = too_long(scripts(), SCRIPTS)
    assert long == {}, f"split these by job: {long}"


def test_no_function_over_120_lines() -> None:
    long = {}
    for path in modules():
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                assert node.end_lineno is not None
                lines = node.end_lineno - node.lineno + 1
                if lines > MAX_FUNCTION_LINES:
                    long[f"{path.relative_to(PACKAGE)}:{node.name}"] = lines
    assert long == {}, f"name the steps of these: {long}"
