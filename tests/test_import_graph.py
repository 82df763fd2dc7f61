"""The package's module import graph has no cycles, counting function-local imports (issue 32).

The graph is built from the source with ``ast``: every ``import`` and ``from ... import`` of a
``servebound`` module, at the top of a module or inside a function, and every literal
``importlib.import_module("servebound...")``. ``from servebound.x import y`` is an edge to
``servebound.x.y`` where that is a module, else to ``servebound.x``. Imports under
``if TYPE_CHECKING:`` count too: they never run, but two modules that each need the other's names,
even for types only, are one module split in the wrong place.

A cycle is a strongly connected component of more than one module (Tarjan's algorithm); each is
listed with its modules and one concrete loop through them.

Function-local imports are for optional or heavy packages only (``LOCAL_IMPORTS_ALLOWED``): a
function that imports one of the package's own modules hides an edge of this graph, and usually a
cycle. ``test_no_function_local_imports_of_the_package`` fails on any, except the exact imports of
``COLD_START_DEFERRED`` (each an optional path of the one resolution whose top-level import would
slow every cold command, with what it costs).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"
PACKAGE = SRC / "servebound"

#: Third-party (or slow standard-library) packages a function may import on first use: each is
#: optional at run time or costs a cold command's start-up more than it is worth where unused.
LOCAL_IMPORTS_ALLOWED = frozenset(
    {
        "numpy",  # arrays: curves and sweeps only; a cold decode evaluates on floats
        "rich",  # styled terminal output, only when styling is printed
        "typer",  # the CLI parser (until it is replaced), only when a command is parsed
        "click",
        "fastapi",  # the site and the JSON API, only for `serve` and the export
        "starlette",
        "uvicorn",
        "jinja2",
        "pydantic",  # file schemas, only where a user's or the catalog's file is validated
        "gguf",  # checkpoint importers
        "huggingface_hub",  # the Hub, only for hub references
        "httpx",
        "urllib",  # urllib.request (ssl, http.client): only where the Hub is reached
        "psutil",  # `measure`
        "pynvml",  # NVIDIA's management library, only where it is installed and a device is asked
        "sqlite3",  # `export --sqlite`
        "tomli_w",  # writing a TOML file
        "safetensors",
        "torch",
        "latex2mathml",  # the derivation page
        "markdown_it",
        "rapidfuzz",  # close-match hints, only on an unknown id
        "tomllib",  # a TOML file, only where one is read
        "difflib",  # close-match hints
        "hashlib",
        "zipfile",
        "importlib",
        "hypothesis",
    }
)


def module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def all_modules() -> dict[str, Path]:
    return {module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def import_nodes(tree: ast.AST, *, typing_too: bool) -> Iterator[tuple[ast.AST, bool]]:
    """Every import statement (and literal ``import_module`` call) of ``tree`` with whether it sits
    inside a function; ``if TYPE_CHECKING:`` bodies only where ``typing_too``."""

    def walk(node: ast.AST, local: bool) -> Iterator[tuple[ast.AST, bool]]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _is_type_checking(child) and not typing_too:
                for other in child.orelse:
                    yield from walk(other, local)
                continue
            if isinstance(child, ast.Import | ast.ImportFrom) or (
                isinstance(child, ast.Call) and _literal_import_module(child) is not None
            ):
                yield child, local
            inner = local or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)
            yield from walk(child, inner)

    yield from walk(tree, False)


def _literal_import_module(call: ast.Call) -> str | None:
    func = call.func
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    if name != "import_module" or not call.args:
        return None
    first = call.args[0]
    return first.value if isinstance(first, ast.Constant) and isinstance(first.value, str) else None


def imported_names(node: ast.AST, module: str, is_package: bool) -> list[str]:
    """The absolute names ``node`` imports (``from a import b`` gives ``a.b`` and ``a``)."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if isinstance(node, ast.Call):
        return [_literal_import_module(node) or ""]
    assert isinstance(node, ast.ImportFrom)
    base = node.module or ""
    if node.level:
        parent = module.split(".") if is_package else module.split(".")[:-1]
        parent = parent[: len(parent) - (node.level - 1)]
        base = ".".join([*parent, base] if base else parent)
    return [f"{base}.{alias.name}" for alias in node.names] + [base]


def targets(node: ast.AST, module: str, modules: dict[str, Path]) -> set[str]:
    """The package's modules ``node`` imports: ``a.b`` where that is a module, else ``a``."""
    names = imported_names(node, module, modules[module].name == "__init__.py")
    if isinstance(node, ast.ImportFrom):
        base = names.pop()
        found = {name for name in names if name in modules}
        if len(found) < len(names) and base in modules:
            found.add(base)
        return found
    return {name for name in names if name in modules}


def graph(*, typing_too: bool = True) -> dict[str, set[str]]:
    modules = all_modules()
    edges: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        tree = ast.parse(path.read_text("utf-8"))
        for node, _local in import_nodes(tree, typing_too=typing_too):
            edges[name] |= targets(node, name, modules) - {name}
    return edges


def strongly_connected(edges: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components of more than one module, each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(start: str) -> None:  # iterative: the graph is deep enough for Python's recursion limit
        work = [(start, iter(sorted(edges[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))

    for name in sorted(edges):
        if name not in index:
            visit(name)
    return sorted(found)


def one_loop(component: list[str], edges: dict[str, set[str]]) -> list[str]:
    """A concrete loop through the component's first module (breadth-first, so a shortest one)."""
    members = set(component)
    start = component[0]
    paths = {start: [start]}
    queue = [start]
    while queue:
        node = queue.pop(0)
        for child in sorted(edges[node] & members):
            if child == start:
                return [*paths[node], start]
            if child not in paths:
                paths[child] = [*paths[node], child]
                queue.append(child)
    raise AssertionError(f"{component} is not strongly connected")


def describe(components: list[list[str]], edges: dict[str, set[str]]) -> str:
    short = [[name.removeprefix("servebound.") for name in one_loop(c, edges)] for c in components]
    return "\n".join(" -> ".join(loop) for loop in short)


def test_the_graph_sees_the_package() -> None:
    edges = graph()
    assert len(edges) > 100
    assert "servebound.core.decode" in edges["servebound.questions.decode"]  # a top-level `from ... import`
    assert "servebound.inputs.workload" in edges["servebound.questions.decode"]
    assert "servebound.questions.decode" in edges["servebound.api"]


def test_the_cycle_finder_finds_a_cycle() -> None:
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert strongly_connected(edges) == [["a", "b", "c"]]
    assert one_loop(["a", "b", "c"], edges) == ["a", "b", "c", "a"]
    assert strongly_connected({"a": {"b"}, "b": set()}) == []


def test_function_local_imports_are_edges() -> None:
    tree = ast.parse("def f():\n    from servebound.inputs import bounded\n")
    modules = all_modules()
    (node, local), *_ = list(import_nodes(tree, typing_too=False))
    assert local
    assert targets(node, "servebound.api", modules) == {"servebound.inputs.bounded"}


def test_no_import_cycles() -> None:
    edges = graph()
    components = strongly_connected(edges)
    assert components == [], (
        f"import cycles (break each by moving the shared piece):\n{describe(components, edges)}"
    )


def local_imports() -> list[str]:
    """``module: name`` for each function-local import of something outside the allow-list."""
    modules = all_modules()
    out = []
    for name, path in modules.items():
        for node, local in import_nodes(ast.parse(path.read_text("utf-8")), typing_too=False):
            if not local:
                continue
            for imported in imported_names(node, name, path.name == "__init__.py")[:1] or [""]:
                top = imported.split(".")[0]
                if top not in LOCAL_IMPORTS_ALLOWED:
                    out.append(f"{name.removeprefix('servebound.')}: {imported}")
    return sorted(out)


#: The optional paths of a question's one resolution (``inputs.resolve``, ``inputs.scenario``), each imported
#: where it is taken: at the top they would load for every cold command (a decode by catalog id: about 100 ms
#: of CPU) what only a file, ``auto``, a Hub reference, an engine or a system needs. Measured as the CPU time
#: each adds to what ``decode --json`` on a catalog pair already loads (median of 7 processes): the user-file
#: schemas (inputs.files, pydantic) 110-140 ms, the GGUF importer with them 110 ms, the safetensors importer
#: with them 140 ms (one module for every checkpoint kind would add the safetensors importer's 25 ms to a GGUF
#: file's decode), the device probes (measure.auto) 24 ms; by import time (median of 11 processes) the format
#: an engine runs 5 ms (inputs.engine_formats: it builds every profile of the model as a
#: catalog.models.CatalogModel, whose module defines five frozen dataclasses, CatalogModel, IndexEntry,
#: ImportedModel, Step and PublishedCheck, most of that). A system's layouts (inputs.layout, about 2 ms beyond
#: the core's layout model that the decode question loads anyway) are no longer here. The catalog's name search and its NxID and unknown-id
#: rows are no longer here: inputs.resolve reads them at the top with catalog.names.profile_id_for and
#: hardware_names.hardware_row over the snapshot (about 1 ms, catalog.names and inputs.bounded; catalog.models
#: and catalog.hardware stay unloaded). Exact entries: a new one fails, and so does a stale one.
COLD_START_DEFERRED = (
    "inputs.resolve: servebound.importers.gguf_file.import_gguf",
    "inputs.resolve: servebound.importers.hf.hub.import_hub_gguf",
    "inputs.resolve: servebound.importers.safetensors_headers.import_safetensors",
    "inputs.resolve: servebound.inputs.files.check_imported",
    "inputs.resolve: servebound.inputs.files.load_hardware_file",
    "inputs.resolve: servebound.inputs.files.load_model_file",
    "inputs.resolve: servebound.measure.auto.detected_hardware_id",
    "inputs.resolve: servebound.measure.auto.this_machine_cpu",
    "inputs.scenario: servebound.inputs.engine_formats.engine_format",
)


def test_no_function_local_imports_of_the_package() -> None:
    found = local_imports()
    hidden = [entry for entry in found if entry not in COLD_START_DEFERRED]
    listing = "\n".join(hidden)
    assert not hidden, (
        f"{len(hidden)} function-local imports of the package's own modules (import at the top; where "
        f"that makes a cycle, move the shared piece to the module whose job it is):\n{listing}"
    )
    assert found == sorted(COLD_START_DEFERRED), "COLD_START_DEFERRED lists each deferred import, once each"


def test_the_local_import_rule_sees_a_local_import() -> None:
    tree = ast.parse("def f():\n    from servebound.catalog import snapshot\n    import numpy\n")
    (first, local), (second, _) = list(import_nodes(tree, typing_too=False))
    assert (
        local and imported_names(first, "servebound.inputs.resolve", False)[0].split(".")[0] == "servebound"
    )
    assert imported_names(second, "servebound.inputs.resolve", False)[0] in LOCAL_IMPORTS_ALLOWED
