"""The core imports nothing of the package outside ``servebound.core`` (issue 32): its records and
formulas take what they need as arguments and records; catalog data comes in from ``catalog/``.

Every import of every core module counts: at the top, inside a function, under ``if TYPE_CHECKING:``,
and a literal ``importlib.import_module("servebound...")``. ``OUTSIDE_TODAY`` lists what is left, each
with why; the test fails on any other, and ``test_the_core_is_pure`` holds the list empty.
"""

from __future__ import annotations

import ast

from tests.test_import_graph import PACKAGE, all_modules, import_nodes, imported_names, module_name, targets

#: What the core still imports from outside it, each with why (empty: the engine table comes in as
#: records, a hardware record's family and a resolved workload's format verdict).
OUTSIDE_TODAY: frozenset[str] = frozenset()


def outside_imports() -> set[str]:
    """``core.module: imported module`` for each import of a servebound module outside the core."""
    modules = all_modules()
    found = set()
    for path in sorted((PACKAGE / "core").rglob("*.py")):
        name = module_name(path)
        for node, _local in import_nodes(ast.parse(path.read_text("utf-8")), typing_too=True):
            named = targets(node, name, modules) or set(imported_names(node, name, False)[-1:])
            for imported in named:
                if imported.startswith("servebound") and not imported.startswith("servebound.core"):
                    found.add(f"{name.removeprefix('servebound.')}: {imported}")
    return found


def test_the_walk_sees_the_core() -> None:
    assert len(list((PACKAGE / "core").rglob("*.py"))) > 20
    tree = ast.parse("def f():\n    from servebound.inputs import bounded\n")
    (node, _), *_ = list(import_nodes(tree, typing_too=True))
    assert imported_names(node, "servebound.core.x", False)[-1] == "servebound.inputs"


def test_the_core_imports_nothing_new_from_outside() -> None:
    new = outside_imports() - OUTSIDE_TODAY
    assert not new, f"the core imports from outside it (pass records in instead): {sorted(new)}"


def test_the_list_of_what_is_left_is_current() -> None:
    gone = OUTSIDE_TODAY - outside_imports()
    assert not gone, f"remove from OUTSIDE_TODAY: {sorted(gone)}"


def test_the_core_is_pure() -> None:
    assert outside_imports() == set()


def test_every_result_record_has_a_json_view() -> None:
    """Each result record's view registers itself (the core loads no view by name); importing the API
    registers every one."""
    import servebound.api  # noqa: F401
    from servebound.core import fields
    from servebound.core.decode import DecodeResult
    from servebound.core.prefill_records import PrefillResult
    from servebound.questions.cost import CostReport
    from servebound.questions.layout import LayoutSearch
    from servebound.questions.plan import PlanResult
    from servebound.questions.system_cost import LayoutCost
    from servebound.questions.system_decode import SystemDecode
    from servebound.questions.system_prefill import SystemPrefill

    records = (DecodeResult, PrefillResult, CostReport, LayoutSearch, PlanResult, LayoutCost, SystemDecode)
    for record in (*records, SystemPrefill):
        assert fields.qualified_name(record) in fields._JSON_VIEWS, record
