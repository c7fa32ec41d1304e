"""Where a BM25 query over pg_textsearch's ``bm25`` index spends its time, on one shard of two.

Usage::

    PYTHONPATH=src HF_HUB_OFFLINE=1 nice -n 5 .venv/bin/python bench/pg_bm25_probe.py \\
        --size 100000 --cache out/faiss_vectors_e5.npz

bench/pg_scale.py's synthetic passages published to 2 local nodes with the bm25 index (a token
HNSW graph, m 4: only BM25 is probed), then p50 over 3 passes of its 30-question sample, top 50:
bm25s in process, the backend's whole lexical search (both shards), and on shard 1 alone the
index scan only, the scan with the query's term frequencies counted in SQL (a subplan per
passage and token, as first written) and with them counted in the client (as the backend does);
and shard 1's sizes: the bm25 index, the passages' heap, both with every index.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

#: The first version: each query token's frequency counted in SQL, one subplan per passage and token.
SQL_COUNTED = """
SELECT c.pid, c.dl, ARRAY(
    SELECT (SELECT count(*) FROM unnest(c.words) AS w WHERE w = q.t)::int
    FROM unnest(%(tokens)s::text[]) WITH ORDINALITY AS q(t, i) ORDER BY q.i) AS tfs
FROM (SELECT pid, dl, string_to_array(terms, ' ') AS words FROM citeqa_passages
      WHERE born <= %(gen)s AND died > %(gen)s
      ORDER BY terms <@> to_bm25query(%(query)s, 'citeqa_passages_bm25') LIMIT %(m)s) AS c
"""
SCAN_ONLY = (
    "SELECT pid, dl FROM citeqa_passages WHERE born <= %(gen)s AND died > %(gen)s"
    " ORDER BY terms <@> to_bm25query(%(query)s, 'citeqa_passages_bm25') LIMIT %(m)s"
)


def p50(questions: int, work, passes: int = 3) -> float:
    times = []
    for _ in range(passes):
        for i in range(questions):
            t0 = time.perf_counter()
            work(i)
            times.append((time.perf_counter() - t0) * 1000)
    return float(np.median(times))


def main(argv: list[str] | None = None) -> int:
    from ann_sweep import query_texts
    from pg_scale import sample, synthetic_index

    from citeqa.pg import bm25
    from citeqa.pg import publish as publishing
    from citeqa.pg.backend import PostgresBackend, fetch_rows
    from citeqa.pg.nodes import local_cluster
    from citeqa.text.analysis import query_terms

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--cache", type=Path, required=True)
    parser.add_argument("--out", type=Path, default=Path("out/pg_bm25_probe.json"))
    args = parser.parse_args(argv)
    vectors = np.load(args.cache)
    questions, _, _ = sample(query_texts(), vectors["queries"], 30, 0)
    data = synthetic_index(args.size, 0, vectors["sentences"])
    publishing.HNSW_M, publishing.HNSW_EF_CONSTRUCTION = 4, 8
    report: dict = {"size": args.size, "loadavg_start": os.getloadavg()}
    with local_cluster(2, args.out.parent) as nodes:
        spec = ",".join(n.url for n in nodes)
        publishing.publish(data, spec, ann="hnsw")
        pg = PostgresBackend(spec)
        langs = tuple(sorted(data.passage_langs()))
        terms = [[t for t in query_terms(q, langs) if t in pg.collection.df] for q in questions]
        shard = pg.shards.items[0]
        params = [pg.collection.text_params(t, 50, pg.generation) for t in terms]

        def counted_here(i: int) -> list:
            tokens = params[i]["tokens"]
            rows = fetch_rows(shard, bm25.TEXT_SQL, params[i], "probing")
            return [(pid, dl, [Counter(text.split(" "))[t] for t in tokens]) for pid, dl, text in rows]

        n = len(questions)
        report["p50_ms"] = {
            "local_bm25s": p50(n, lambda i: data.lexical_search(terms[i], 50)),
            "backend_two_shards": p50(n, lambda i: pg.lexical_search(terms[i], 50)),
            "shard_scan_only": p50(n, lambda i: fetch_rows(shard, SCAN_ONLY, params[i], "probing")),
            "shard_counted_in_sql": p50(n, lambda i: fetch_rows(shard, SQL_COUNTED, params[i], "probing")),
            "shard_counted_in_client": p50(n, counted_here),
        }
        with shard.connection("measuring") as conn:
            sizes = conn.execute(
                "SELECT pg_relation_size('citeqa_passages_bm25'), pg_relation_size('citeqa_passages'),"
                " pg_total_relation_size('citeqa_passages'), count(*) FROM citeqa_passages"
            ).fetchone()
        report["shard_1"] = dict(zip(("bm25_index_mb", "heap_mb", "with_indexes_mb"), (v / 2**20 for v in sizes[:3])))
        report["shard_1"]["passages"] = sizes[3]
        pg.close()
    report["loadavg_end"] = os.getloadavg()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=1), encoding="utf-8")
    print(json.dumps(report))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
