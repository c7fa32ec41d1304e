"""What a server over PostgreSQL holds: opening the backend and answering, with and without the records loaded.

Usage::

    PYTHONPATH=src HF_HUB_OFFLINE=1 nice -n 19 .venv/bin/python bench/pg_open.py \\
        --size 100000 --before 13b594b --out out/pg_open.json

bench/pg_scale.py's synthetic index of ``--size`` passages (ten to a document), with random unit
vectors in place of the model's (what is measured here does not depend on their values), is
published in exact mode to two local nodes. Then, each in a fresh process and ``--repeat``
times in turn, the backend of this checkout and the one of commit ``--before`` (``git archive`` of its ``src/``: it loaded every
passage and document record at open) open the generation and answer the 167 benchmark and
eval questions (reader off, random query vectors): open time, the process's RSS growth at
open and after answering, answer p50/p95 (second pass; the new one's record caches emptied
before it, so it reads every hit's passages again), and how many passage records the new one
read from the shards in both passes.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import with_bench_path  # noqa: E402 - common.py sits beside this script

#: Run in a fresh process with the backend to measure on PYTHONPATH: argv[1] the spec, argv[2] the questions file.
_MEASURE = r"""
import json, sys, time
import numpy as np
import faiss, psycopg, pgvector.psycopg  # imported before the first reading: what open adds is the records
from citeqa.qa.pipeline import AnswerPipeline
from citeqa.pg.backend import PostgresBackend

from common import rss_mb as rss  # bench/ is on the measuring process's path

spec, questions = sys.argv[1], json.load(open(sys.argv[2]))
before = rss()
t0 = time.perf_counter()
backend = PostgresBackend(spec)
out = {"open_s": time.perf_counter() - t0, "rss_growth_open_mb": rss() - before}
rng = np.random.default_rng(1)
vectors = rng.standard_normal((len(questions), backend.manifest.dimension)).astype(np.float32)
vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
by_text = {q: vectors[i] for i, q in enumerate(questions)}
pipeline = AnswerPipeline(backend, lambda texts: np.stack([by_text.get(t, vectors[0]) for t in texts]))
times = []
for rep in range(2):
    for records in (getattr(backend, "chunks", None), getattr(backend, "documents", None)):
        if hasattr(records, "cache"):  # measured without the records the warm pass read
            records.cache = type(records.cache)(records.cache.size)
    for q in questions:
        t0 = time.perf_counter()
        pipeline.run(q)
        if rep:
            times.append((time.perf_counter() - t0) * 1000)
out.update(
    answer_p50_ms=float(np.percentile(times, 50)),
    answer_p95_ms=float(np.percentile(times, 95)),
    rss_growth_answered_mb=rss() - before,
    passages_read=getattr(backend.chunks, "read", None),
)
backend.close()
print(json.dumps(out))
"""


def measure(src: Path, spec: str, questions: Path) -> dict:
    env = with_bench_path(src)
    done = subprocess.run(
        [sys.executable, "-c", _MEASURE, spec, str(questions)], env=env, capture_output=True, text=True, check=True
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    from ann_sweep import query_texts
    from pg_scale import synthetic_index
    from synth import corpus_sentences, flat_sentences

    from citeqa.pg.nodes import local_cluster
    from citeqa.pg.publish import publish

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--shards", type=int, default=2)
    parser.add_argument("--before", default="13b594b", help="the commit whose backend loaded every record")
    parser.add_argument("--repeat", type=int, default=2, help="measure both this many times, alternating")
    parser.add_argument("--out", type=Path, default=Path("out/pg_open.json"))
    args = parser.parse_args(argv)
    report: dict = {"size": args.size, "shards": args.shards, "loadavg_start": os.getloadavg()}
    sentences = len(flat_sentences(corpus_sentences(ROOT / "corpus")))
    rng = np.random.default_rng(0)
    vectors = rng.standard_normal((sentences, 384)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    data = synthetic_index(args.size, 0, vectors)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=args.out.parent) as tmp:
        work = Path(tmp)
        questions = work / "questions.json"
        questions.write_text(json.dumps(query_texts()), encoding="utf-8")
        old = work / "before"
        old.mkdir()
        archive = subprocess.run(
            ["git", "-C", str(ROOT), "archive", args.before, "src"], capture_output=True, check=True
        )
        subprocess.run(["tar", "-x", "-C", str(old)], input=archive.stdout, check=True)
        with local_cluster(args.shards, work) as nodes:
            spec = ",".join(n.url for n in nodes)
            t0 = time.perf_counter()
            publish(data, spec, ann="exact")
            report["publish_s"] = time.perf_counter() - t0
            del data
            for turn in range(args.repeat):  # alternated: the machine's load moves between runs
                for name, src in (("before", old / "src"), ("now", ROOT / "src")):
                    report.setdefault(name, []).append(measure(src, spec, questions))
                    print(json.dumps({name: report[name][-1], "turn": turn}), flush=True)
    report["loadavg_end"] = os.getloadavg()
    args.out.write_text(json.dumps(report, indent=1), encoding="utf-8")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
