"""Mutation testing of servebound's core: one small wrong change at a time, and does a test notice?

Run: python bench/mutate.py [--limit 150] [--seed 0] [--jobs 1] [--report mutation-report.txt]

Needs pytest-cov beside the test extra (``pip install pytest-cov``). Two phases:

1. Map. The kill set (the suite less the site's page tests, ``KILL_SET``) runs once under coverage with
   one context per test, so every line of ``src/servebound/core`` knows the tests that execute it.
2. Mutate. Every mutation site of core/ is listed (an operator swapped, a comparison made strict or
   loose, a number moved by one, a sign or a factor dropped, min for max, ``and`` for ``or``), a
   seeded sample is drawn, and each mutant runs the tests that cover its line in a scratch copy of the
   package, stopping at the first failure. A line no test's context saw (module constants and default
   values run at import) gets the whole kill set.

A survivor named in ``bench/mutation_equivalents.toml`` (module, line, the original and the mutated
text, and why no observable answer can change) is reported as equivalent; the score counts it as
neither killed nor survived. Every other survivor is printed: each needs a test, or a reason there.
``--rescore LOG`` scores an earlier run's printed log with the equivalents file as it is now;
``--recheck LOG`` also runs that log's survivors again against the whole kill set, so a test written
for a survivor shows as its kill. Not part of CI (it takes tens of minutes); the README quotes its last
score.
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORE = ROOT / "src" / "servebound" / "core"
EQUIVALENTS = Path(__file__).resolve().parent / "mutation_equivalents.toml"
WORK = ROOT / ".mutation"


def _cheap_first(node_id: str) -> tuple[int, str]:
    """The hand-checked formulas first, then the core's unit tests, the command line's, and the
    conformance test last: with ``-x`` a killed mutant usually stops within its first few tests."""
    if node_id.startswith("tests/test_pinned_"):
        rank = 0
    elif node_id.startswith("tests/web/"):
        rank = 3
    elif node_id.startswith("tests/test_cli"):
        rank = 2
    else:
        rank = 1
    return rank, node_id


#: The kill set: the suite less the site's tests (tests/web), which render the core's records into
#: pages and build the whole site per module; the conformance test stays (calc.js against the core).
KILL_SET = (
    *sorted((str(p.relative_to(ROOT)) for p in (ROOT / "tests").glob("test_*.py")), key=_cheap_first),
    "tests/web/test_conformance.py",
)

SWAP_BINOP: dict[type[ast.operator], type[ast.operator]] = {
    ast.Add: ast.Sub,
    ast.Sub: ast.Add,
    ast.Mult: ast.Div,
    ast.Div: ast.Mult,
    ast.FloorDiv: ast.Div,
    ast.Pow: ast.Mult,
}
SWAP_COMPARE: dict[type[ast.cmpop], type[ast.cmpop]] = {
    ast.Lt: ast.LtE,
    ast.LtE: ast.Lt,
    ast.Gt: ast.GtE,
    ast.GtE: ast.Gt,
    ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq,
}
SWAP_CALL = {"max": "min", "min": "max", "maximum": "minimum", "minimum": "maximum", "floor": "ceil"}


@dataclass(frozen=True)
class Mutant:
    """One wrong change: the source span it replaces and the text it puts there."""

    module: str  # path relative to core/
    line: int
    col: int
    end_line: int
    end_col: int
    original: str
    mutated: str
    kind: str

    @property
    def key(self) -> str:
        return f"{self.module}:{self.line}: {self.original} -> {self.mutated}"


def _skipped_nodes(tree: ast.Module) -> set[int]:
    """Nodes no mutant should touch (by id): docstrings, annotations, formatted messages and the
    statements that raise or assert (the conditions guarding them are mutated; a message is no formula)."""
    roots: list[ast.AST | None] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            roots.append(node)  # docstrings
        elif isinstance(node, ast.Raise | ast.Assert | ast.JoinedStr):
            roots.append(node)
        elif isinstance(node, ast.FunctionDef):
            roots.append(node.returns)
        elif isinstance(node, ast.arg | ast.AnnAssign):
            roots.append(node.annotation)
    return {id(inner) for root in roots if root is not None for inner in ast.walk(root)}


def _call_name(node: ast.Call) -> str | None:
    if isinstance(node.func, ast.Name):
        return node.func.id
    if isinstance(node.func, ast.Attribute):
        return node.func.attr
    return None


def _segment(lines: list[str], node: ast.AST) -> str:
    return ast.get_source_segment("".join(lines), node) or ""


def _mutations(node: ast.AST) -> Iterator[tuple[str, ast.AST]]:
    """(kind, replacement node) for each wrong change of this node."""
    if isinstance(node, ast.BinOp) and type(node.op) in SWAP_BINOP:
        yield "operator", ast.BinOp(node.left, SWAP_BINOP[type(node.op)](), node.right)
        if isinstance(node.op, ast.Mult | ast.Div | ast.Add | ast.Sub):
            yield "drop operand", node.left
    elif isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in SWAP_COMPARE:
        yield "comparison", ast.Compare(node.left, [SWAP_COMPARE[type(node.ops[0])]()], node.comparators)
    elif (
        isinstance(node, ast.Constant)
        and type(node.value) in (int, float)
        and not isinstance(node.value, bool)
    ):
        value = node.value
        yield "number", ast.Constant(value + 1 if isinstance(value, int) else (value * 2 if value else 1.0))
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        yield "sign", node.operand
    elif isinstance(node, ast.BoolOp):
        yield "boolean", ast.BoolOp(ast.Or() if isinstance(node.op, ast.And) else ast.And(), node.values)
    elif isinstance(node, ast.Call) and _call_name(node) in SWAP_CALL:
        name = _call_name(node)
        func: ast.expr
        if isinstance(node.func, ast.Name):
            func = ast.Name(SWAP_CALL[name or ""], ast.Load())
        else:
            assert isinstance(node.func, ast.Attribute)
            func = ast.Attribute(node.func.value, SWAP_CALL[name or ""], ast.Load())
        yield "min/max", ast.Call(func, node.args, node.keywords)


def mutants_of(path: Path) -> list[Mutant]:
    """Every mutant of one core module, in source order."""
    source = path.read_text()
    lines = source.splitlines(keepends=True)
    tree = ast.parse(source)
    skip = _skipped_nodes(tree)
    found: list[Mutant] = []
    for node in ast.walk(tree):
        line = getattr(node, "lineno", None)
        if line is None or id(node) in skip or getattr(node, "end_lineno", line) != line:
            continue
        original = _segment(lines, node)
        if not original:
            continue
        for kind, replacement in _mutations(node):
            mutated = ast.unparse(replacement)
            if mutated == original:
                continue
            found.append(
                Mutant(
                    module=str(path.relative_to(CORE)),
                    line=line,
                    col=node.col_offset,
                    end_line=node.end_lineno or line,
                    end_col=node.end_col_offset or 0,
                    original=original,
                    mutated=mutated,
                    kind=kind,
                )
            )
    found.sort(key=lambda m: (m.module, m.line, m.col, m.kind))
    return found


def apply(source: str, mutant: Mutant) -> str:
    """The module's text with the mutant's span replaced (parenthesized, so precedence holds)."""
    lines = source.splitlines(keepends=True)
    row = lines[mutant.line - 1]
    encoded = row.encode()
    start, end = (
        len(encoded[: mutant.col].decode()),
        len(encoded[: mutant.end_col].decode()),
    )
    lines[mutant.line - 1] = row[:start] + f"({mutant.mutated})" + row[end:]
    return "".join(lines)


def _core_digest() -> str:
    digest = hashlib.sha256()
    for path in sorted((ROOT / "src" / "servebound").rglob("*.py")):
        digest.update(path.read_bytes())
    for path in sorted((ROOT / "tests").rglob("*.py")):
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def coverage_map() -> dict[str, dict[int, list[str]]]:
    """Which tests run each line of core/: {module: {line: [test node ids]}}, cached by source digest."""
    WORK.mkdir(exist_ok=True)
    cached = WORK / f"map-{_core_digest()}.json"
    if cached.is_file():
        raw = json.loads(cached.read_text())
        return {m: {int(k): v for k, v in lines.items()} for m, lines in raw.items()}
    data_file = WORK / "coverage.data"
    command = [
        sys.executable,
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        "--cov=servebound.core",
        "--cov-context=test",
        "--cov-report=",
        *KILL_SET,
    ]
    env = {
        **os.environ,
        "COVERAGE_FILE": str(data_file),
        "CI": "true",
        "HYPOTHESIS_PROFILE": "mutation",
    }
    print("mapping: the suite under coverage, one context per test ...", flush=True)
    subprocess.run(command, cwd=ROOT, env=env, check=True, stdout=subprocess.DEVNULL)
    from coverage import CoverageData

    data = CoverageData(basename=str(data_file))
    data.read()
    result: dict[str, dict[int, list[str]]] = {}
    for filename in data.measured_files():
        path = Path(filename)
        if CORE not in path.parents and path.parent != CORE:
            continue
        by_line = data.contexts_by_lineno(filename)
        result[str(path.relative_to(CORE))] = {
            line: sorted({c.rsplit("|", 1)[0] for c in contexts if c}, key=_cheap_first)
            for line, contexts in by_line.items()
        }
    cached.write_text(json.dumps(result))
    return result


def load_equivalents() -> dict[str, str]:
    """Survivors judged equivalent: key -> why."""
    if not EQUIVALENTS.is_file():
        return {}
    with EQUIVALENTS.open("rb") as f:
        entries = tomllib.load(f).get("equivalent", [])
    return {f"{e['module']}:{e['line']}: {e['original']} -> {e['mutated']}": e["why"] for e in entries}


def run_mutant(mutant: Mutant, tests: list[str], scratch: Path, timeout_s: float) -> str:
    """'killed', 'survived' or 'timeout' (a timeout counts as killed: the change broke something)."""
    target = scratch / "src" / "servebound" / "core" / mutant.module
    original = (CORE / mutant.module).read_text()
    target.write_text(apply(original, mutant))
    env = {
        **os.environ,
        "PYTHONPATH": str(scratch / "src"),
        "CI": "true",
        "PYTHONDONTWRITEBYTECODE": "1",
        "HYPOTHESIS_PROFILE": "mutation",
    }
    command = [
        sys.executable,
        "-m",
        "pytest",
        "-x",
        "-q",
        "-p",
        "no:cacheprovider",
        "-p",
        "no:randomly",
        *tests,
    ]
    try:
        done = subprocess.run(
            command,
            cwd=ROOT,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            timeout=timeout_s,
        )
        verdict = "survived" if done.returncode == 0 else "killed"
    except subprocess.TimeoutExpired:
        verdict = "timeout"
    finally:
        target.write_text(original)
    return verdict


def _scratch_copy(base: Path) -> Path:
    shutil.copytree(ROOT / "src", base / "src", ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    return base


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=150, help="mutants to run (a seeded sample)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds per mutant")
    parser.add_argument("--report", type=Path, default=None, help="also write the report to this file")
    parser.add_argument("--resume", type=Path, default=None, help="keep the verdicts an earlier log printed")
    parser.add_argument("--rescore", type=Path, default=None, help="score an earlier run's printed log")
    parser.add_argument(
        "--recheck", type=Path, default=None, help="run an earlier log's survivors again, then score it"
    )
    args = parser.parse_args()
    if args.rescore or args.recheck:
        text = rescore(args.rescore) if args.rescore else recheck(args.recheck, args.timeout)
        print(text)
        if args.report:
            args.report.write_text(text + "\n")
        return

    sites = [m for path in sorted(CORE.glob("*.py")) for m in mutants_of(path)]
    chosen = sorted(
        random.Random(args.seed).sample(sites, min(args.limit, len(sites))),
        key=lambda m: (m.module, m.line, m.col),
    )
    covering = coverage_map()
    done: dict[str, str] = {}
    if args.resume:  # verdicts an interrupted run of the same sample already printed
        found = re.findall(
            r"^\[\d+/\d+\] (killed|survived|timeout) +(.+)$", args.resume.read_text(), flags=re.M
        )
        done = {key: verdict for verdict, key in found}
    print(f"{len(sites)} mutation sites in core/; running {len(chosen)} (seed {args.seed})", flush=True)

    with tempfile.TemporaryDirectory() as tmp:
        scratches = [_scratch_copy(Path(tmp) / f"w{i}") for i in range(args.jobs)]
        free = list(scratches)
        started = time.monotonic()

        def one(mutant: Mutant) -> tuple[Mutant, str]:
            if mutant.key in done:
                return mutant, done[mutant.key]
            scratch = free.pop()
            try:
                # A line no test's context saw runs at import (a constant, a default): the whole set.
                tests = covering.get(mutant.module, {}).get(mutant.line) or list(KILL_SET)
                return mutant, run_mutant(mutant, tests, scratch, args.timeout)
            finally:
                free.append(scratch)

        with ThreadPoolExecutor(max_workers=args.jobs) as pool:
            results = []
            for i, (mutant, verdict) in enumerate(pool.map(one, chosen), 1):
                results.append((mutant, verdict))
                print(f"[{i}/{len(chosen)}] {verdict:8} {mutant.key}", flush=True)
        elapsed = time.monotonic() - started

    text = report([(v, m.key) for m, v in results], len(sites), args.seed, elapsed)
    print(text)
    if args.report:
        args.report.write_text(text + "\n")
    sys.exit(1 if "SURVIVED" in text else 0)


def report(results: list[tuple[str, str]], sites: int, seed: int, elapsed_s: float) -> str:
    """The score over (verdict, mutant key) pairs, with the equivalents file read now (a survivor
    judged equivalent after a run counts as such when its log is rescored)."""
    equivalents = load_equivalents()
    killed = sum(v in ("killed", "timeout") for v, _ in results)
    timeouts = sum(v == "timeout" for v, _ in results)
    survivors = [k for v, k in results if v == "survived"]
    equivalent = [k for k in survivors if k in equivalents]
    live = [k for k in survivors if k not in equivalents]
    scored = len(results) - len(equivalent)
    lines = [
        f"mutants run: {len(results)} of {sites} sites (seed {seed}), {elapsed_s / 60:.1f} min",
        f"killed: {killed} ({timeouts} by a timeout); equivalent: {len(equivalent)}; survived: {len(live)}",
        f"score: {killed}/{scored} = {100 * killed / max(scored, 1):.1f} % of the non-equivalent mutants",
    ]
    lines += [f"  equivalent {k}: {equivalents[k]}" for k in equivalent]
    lines += [f"  SURVIVED   {k}" for k in live]
    return "\n".join(lines)


def recheck(log: Path, timeout_s: float) -> str:
    """An earlier run's log with each survivor run again against the whole kill set as it is now
    (a test written for a survivor kills it here), then scored."""
    text = log.read_text()
    results = re.findall(r"^\[\d+/\d+\] (killed|survived|timeout) +(.+)$", text, flags=re.M)
    by_key = {m.key: m for path in sorted(CORE.glob("*.py")) for m in mutants_of(path)}
    equivalents = load_equivalents()
    with tempfile.TemporaryDirectory() as tmp:
        scratch = _scratch_copy(Path(tmp))
        again = []
        for verdict, key in results:
            if verdict == "survived" and key not in equivalents and key in by_key:
                verdict = run_mutant(by_key[key], list(KILL_SET), scratch, timeout_s)
                print(f"rechecked: {verdict:8} {key}", flush=True)
            again.append((verdict, key))
    header = re.search(r"^(\d+) mutation sites in core/; running \d+ \(seed (\d+)\)", text, flags=re.M)
    sites, seed = (int(header.group(1)), int(header.group(2))) if header else (0, 0)
    return report(again, sites, seed, 0.0)


def rescore(log: Path) -> str:
    """The report of an earlier run from the lines it printed (``[i/n] verdict key``)."""
    text = log.read_text()
    results = re.findall(r"^\[\d+/\d+\] (killed|survived|timeout) +(.+)$", text, flags=re.M)
    header = re.search(r"^(\d+) mutation sites in core/; running \d+ \(seed (\d+)\)", text, flags=re.M)
    sites, seed = (int(header.group(1)), int(header.group(2))) if header else (0, 0)
    return report(list(results), sites, seed, 0.0)


if __name__ == "__main__":
    main()
