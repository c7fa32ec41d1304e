"""The shape of the code: no import cycle between citeqa's modules, claims built on qa and not the reverse, no
module too long to hold in a head."""

from __future__ import annotations

import ast
import graphlib
from pathlib import Path

import pytest

#: Lines past which a module is split by concern.
MAX_LINES = 500


def modules(src: Path) -> dict[str, Path]:
    """Every module under src/, by dotted name (a package by its own name)."""
    found = {}
    for path in sorted(src.rglob("*.py")):
        parts = path.relative_to(src).with_suffix("").parts
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def imported(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The citeqa modules ``name`` imports anywhere in its body (inside functions too)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package.split(".")[: len(package.split(".")) - node.level + 1] if node.level else []
            module = ".".join([*base, *([node.module] if node.module else [])])
            out.add(module)
            out.update(f"{module}.{a.name}" for a in node.names)
    return {m for m in out if m in known and m != name}


def test_no_import_cycle(repo: Path) -> None:
    known = modules(repo / "src")
    # The top package re-exports the public API, so every module "reaches" it; that is no cycle.
    graph = {n: imported(n, p, known) - {"citeqa"} for n, p in known.items() if n != "citeqa"}
    try:
        graphlib.TopologicalSorter(graph).prepare()
    except graphlib.CycleError as exc:
        pytest.fail(f"import cycle: {' -> '.join(exc.args[1])}")


def test_no_module_over_the_limit(repo: Path) -> None:
    lengths = {n: len(p.read_text(encoding="utf-8").splitlines()) for n, p in modules(repo / "src").items()}
    assert not {n: k for n, k in lengths.items() if k > MAX_LINES}


#: Test folders that cut across packages: the whole product through its front doors.
ACROSS = {"browser", "e2e", "reliability", "bench"}


def test_tests_mirror_the_packages(repo: Path) -> None:
    """A unit test lives in the folder of the package it tests (tests/qa/ for citeqa/qa/); only the
    public API, the engine and the repository's shape are tested at the top."""
    tests, src = repo / "tests", repo / "src" / "citeqa"
    misplaced = [
        str(p.relative_to(tests))
        for p in tests.rglob("test_*.py")
        if p.parent != tests
        and p.relative_to(tests).parts[0] not in ACROSS
        and not (src / p.parent.relative_to(tests)).is_dir()
    ]
    assert not misplaced, f"tests outside a package's folder: {misplaced}"
    top = {p.stem.removeprefix("test_") for p in tests.glob("test_*.py")}
    assert top <= {"api", "engine", "records", "messages", "layout"}, top


def test_qa_does_not_import_claims(repo: Path) -> None:
    """Claims are built on answering, never the other way: no module of citeqa.qa imports citeqa.claims,
    at the top, inside a function or for type checking only."""
    known = modules(repo / "src")
    reached = {
        name: sorted(m for m in imported(name, path, known) if m == "citeqa.claims" or m.startswith("citeqa.claims."))
        for name, path in known.items()
        if name == "citeqa.qa" or name.startswith("citeqa.qa.")
    }
    assert reached and not {name: found for name, found in reached.items() if found}
