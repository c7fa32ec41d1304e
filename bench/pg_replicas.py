"""Answers per second over PostgreSQL shards with concurrent clients: primaries alone, then with 1 and 2
streaming replicas per shard (``?replica=HOST:PORT``).

Usage::

    PYTHONPATH=src HF_HUB_OFFLINE=1 nice -n 19 .venv/bin/python bench/pg_replicas.py \\
        --size 20000 --clients 1,4 --seconds 10 --out out/pg_replicas.json

bench/pg_scale.py's synthetic index of ``--size`` passages (ten to a document), with random unit
vectors in place of the model's (as bench/pg_open.py), is published in ``--ann`` mode to ``--shards``
local nodes (``citeqa.pg.nodes``), and up to ``--replicas`` replicas of each are made
(``pg_basebackup``). For each number of replicas per shard (0, 1, ...) one backend is opened
(``citeqa.pg.backend.PostgresBackend``, reads spread over the shard's replicas) and, for each
``--clients`` count, that many threads answer the 167 benchmark and eval questions in turn through
one ``AnswerPipeline`` (reader off, random query vectors: retrieval, fusion and the passages read)
for ``--seconds``: answers/s, the answer p50/p95 (ms), the cores the client process used, and the
one-minute load average after the run.
Every server runs on this machine: replicas add connections (a backend holds one per server, so
concurrent reads of a shard queue on it) but no CPU; the load average says how busy it was.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import ints, latency_summary, load1, machine, query_texts, write_json  # noqa: E402 - beside this script


def throughput(spec: str, questions: list[str], clients: int, seconds: float) -> dict:
    """``clients`` threads answering ``questions`` in turn for ``seconds`` through one backend."""
    from citeqa.pg.backend import PostgresBackend
    from citeqa.qa.pipeline import AnswerPipeline

    backend = PostgresBackend(spec)
    try:
        rng = np.random.default_rng(1)
        vectors = rng.standard_normal((len(questions), backend.manifest.dimension)).astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        by_text = {q: vectors[i] for i, q in enumerate(questions)}
        pipeline = AnswerPipeline(backend, lambda texts: np.stack([by_text.get(t, vectors[0]) for t in texts]))
        for q in questions[:20]:  # warm: connections made, the first records cached
            pipeline.run(q)
        times: list[list[float]] = [[] for _ in range(clients)]
        stop = time.perf_counter() + seconds

        def client(i: int) -> None:
            n = i
            while time.perf_counter() < stop:
                t0 = time.perf_counter()
                pipeline.run(questions[n % len(questions)])
                times[i].append((time.perf_counter() - t0) * 1000)
                n += clients

        threads = [threading.Thread(target=client, args=(i,)) for i in range(clients)]
        t0, cpu0 = time.perf_counter(), time.process_time()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0
        done = [ms for part in times for ms in part]
        readers = [len(s.readers) for s in backend.shards.items]
    finally:
        backend.close()
    return {
        "clients": clients,
        "answers": len(done),
        "answers_per_s": round(len(done) / wall, 1),
        **latency_summary(done),
        "client_cpu_per_s": round(cpu / wall, 2),  # cores the client process used (its threads together)
        "readers_per_shard": readers,
        "load1_after": load1(),
    }


def main(argv: list[str] | None = None) -> int:
    from contextlib import ExitStack

    from pg_scale import synthetic_index
    from synth import corpus_sentences, flat_sentences

    from citeqa.pg.nodes import local_cluster, local_replica
    from citeqa.pg.publish import publish

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=20_000, help="synthetic passages")
    parser.add_argument("--shards", type=int, default=2)
    parser.add_argument("--replicas", type=int, default=2, help="the most replicas per shard measured")
    parser.add_argument("--clients", type=ints, default=[1, 4], help="concurrent clients, comma-separated")
    parser.add_argument("--seconds", type=float, default=10.0, help="per measurement")
    parser.add_argument("--ann", choices=("exact", "hnsw"), default="exact")
    parser.add_argument("--out", type=Path, default=Path("out/pg_replicas.json"))
    args = parser.parse_args(argv)
    report: dict = {"machine": machine(), "args": {k: str(v) for k, v in vars(args).items()}, "runs": []}
    sentences = len(flat_sentences(corpus_sentences(ROOT / "corpus")))
    rng = np.random.default_rng(0)
    vectors = rng.standard_normal((sentences, 384)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    data = synthetic_index(args.size, 0, vectors)
    questions = query_texts()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with local_cluster(args.shards, args.out.parent) as nodes, ExitStack() as stack:
        t0 = time.perf_counter()
        publish(data, ",".join(n.url for n in nodes), ann=args.ann)
        report["publish_s"] = round(time.perf_counter() - t0, 1)
        del data
        replicas: list[list] = [[] for _ in nodes]
        for count in range(args.replicas + 1):
            while len(replicas[0]) < count:
                for node, made in zip(nodes, replicas):
                    made.append(stack.enter_context(local_replica(node)))
            spec = ",".join(
                n.url + ("?" + "&".join(f"replica=127.0.0.1:{r.port}" for r in made) if made else "")
                for n, made in zip(nodes, replicas)
            )
            for clients in args.clients:
                run = {"replicas_per_shard": count, **throughput(spec, questions, clients, args.seconds)}
                report["runs"].append(run)
                print(json.dumps(run), flush=True)
    report["loadavg_end"] = os.getloadavg()
    write_json(args.out, report)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
