"""bench/ measures citeqa through its public names: no script imports or reads a ``_private`` one.

The scripts' embedded programs (a string run with ``python -c``, such as bench/cold_start.py's
``ONE_RUN``) are read too. Also: the shared worker protocol of bench/common.py, in-process.
"""

from __future__ import annotations

import ast
import json
import sys
from pathlib import Path

from tests.paths import REPO

sys.path.insert(0, str(REPO / "bench"))

from common import parse_args
from latency import STAGES, stage_times

BENCH = REPO / "bench"


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _programs(tree: ast.Module) -> list[ast.Module]:
    """The module and every string constant in it that parses as a program importing citeqa."""
    found = [tree]
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and "citeqa" in node.value:
            try:
                program = ast.parse(node.value)
            except SyntaxError:
                continue
            if any(isinstance(n, ast.Import | ast.ImportFrom) for n in ast.walk(program)):
                found.append(program)
    return found


def private_uses(source: str) -> list[str]:
    """``line: code`` of each import of a private citeqa name or module, each read of a private
    attribute (other than a class's own, through ``self``/``cls``) and each ``getattr`` of one."""
    out = []
    for program in _programs(ast.parse(source)):
        for node in ast.walk(program):
            bad = False
            if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "citeqa":
                bad = any(_private(p) for p in node.module.split(".")) or any(_private(a.name) for a in node.names)
            elif isinstance(node, ast.Import):
                bad = any(
                    a.name.split(".")[0] == "citeqa" and any(map(_private, a.name.split("."))) for a in node.names
                )
            elif isinstance(node, ast.Attribute) and _private(node.attr):
                bad = not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"))
            elif (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id in ("getattr", "setattr")
            ):
                bad = (
                    len(node.args) > 1
                    and isinstance(node.args[1], ast.Constant)
                    and isinstance(node.args[1].value, str)
                    and _private(node.args[1].value)
                )
            if bad:
                out.append(f"{node.lineno}: {ast.unparse(node)}")
    return out


def test_no_script_reaches_into_private_names() -> None:
    found = {p.name: uses for p in sorted(BENCH.glob("*.py")) if (uses := private_uses(p.read_text(encoding="utf-8")))}
    assert not found, f"bench/ uses private citeqa names (add a public one, or use the public API): {found}"


def test_the_check_sees_each_kind_of_private_use() -> None:
    source = '''
from citeqa.text.language import _detector
from citeqa._internal import thing
import citeqa._internal
engine._data.dense
getattr(engine, "_lock")
ONE = """
from citeqa.app.cli import commands
commands._process_defaults()
"""
self._own = 1
engine.__class__
from citeqa import __version__
'''
    assert sorted(private_uses(source)) == [
        "2: from citeqa.text.language import _detector",
        "3: commands._process_defaults",
        "3: from citeqa._internal import thing",
        "4: import citeqa._internal",
        "5: engine._data",
        "6: getattr(engine, '_lock')",
    ]


def test_a_worker_runs_in_process_and_writes_its_result(tmp_path: Path) -> None:
    import argparse

    spec, out = tmp_path / "spec.json", tmp_path / "out.json"
    spec.write_text(json.dumps({"n": 2}), encoding="utf-8")
    parser = argparse.ArgumentParser()
    parser.add_argument("--worker", nargs=3)
    assert (
        parse_args(parser, ["--worker", "double", str(spec), str(out)], {"double": lambda a: {"n": a["n"] * 2}}) is None
    )
    assert json.loads(out.read_text(encoding="utf-8")) == {"n": 4}
    assert parse_args(parser, [], {}).worker is None


def test_stage_times_add_up_to_the_total() -> None:
    timings = {name: 1.0 for name in STAGES} | {"total": 12.5}
    stages = stage_times(timings)
    assert list(stages) == [*STAGES, "other"]
    assert sum(stages.values()) == 12.5
    assert stage_times({"total": 3.0})["other"] == 3.0
