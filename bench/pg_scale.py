"""The PostgreSQL backend at 10^5 passages against the local FAISS + bm25s index on the same machine.

Usage::

    PYTHONPATH=src HF_HUB_OFFLINE=1 nice -n 19 .venv/bin/python bench/pg_scale.py \\
        --size 100000 --cache out/faiss_vectors_e5.npz --out out/pg_scale.json

The passages are bench/synth.py's (seed 0), ten to a document; each passage vector is the
normalised mean of its sentences' real multilingual-e5-small vectors (as bench/faiss_million.py;
``--cache`` keeps the sentence and question vectors), its BM25 terms its sentences' terms (as
bench/lexical_million.py). No span vectors (their size is estimated in docs/scale.md). The
local index (exact FAISS, bm25s) is built in memory, then published with
``citeqa.pg.publish`` to 1 and then 2 local nodes (``citeqa.pg.nodes``) in exact mode, and an
HNSW graph is added. Measured: publish time and size on disk per node; opening the backend;
warm p50/p95 (the second pass over the 167 benchmark and eval questions, one at a time) of
dense top 50, BM25 top 50, both (retrieval) and a whole answer (reader off, query vectors
precomputed); recall@10 of HNSW against exact search on the same shards; memory per node
(PSS of its processes) and the client's RSS.

For a run that must fit a time budget (10^6 passages: every phase ~10x that of 10^5)::

    ... bench/pg_scale.py --size 1000000 --questions 30 --hnsw-shards 2 \\
        --cache out/faiss_vectors_e5.npz --out out/pg_scale_1m.json

``--questions N`` times a fixed sample of N of the 167 questions (drawn with ``--seed``; the
indices are in the output as ``question_sample``), ``--hnsw-shards`` the shard counts that also
get the HNSW graph (default: all of ``--shards``; ``none``: exact mode only). The output is
rewritten after the local index and after each shard count, so a run stopped early keeps
what it measured.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import pct, rss_mb  # noqa: E402 - common.py sits beside this script


def synthetic_index(size: int, seed: int, sentence_vectors: np.ndarray):
    """An in-memory local index (IndexData) of ``size`` synthetic passages, ten to a document."""
    from synth import PER_DOC, compose, corpus_sentences, flat_sentences, make_passages, member_matrix

    from citeqa.index.backends import build_dense, build_lexical
    from citeqa.index.manifest import DocEntry, Manifest
    from citeqa.index.store import IndexData
    from citeqa.index.terms import Terms
    from citeqa.ingest.chunking import ChunkerSettings
    from citeqa.records import Chunk, Document, sha256_text
    from citeqa.text.analysis import terms

    sentences = corpus_sentences(ROOT / "corpus")
    flat = flat_sentences(sentences)
    lang_of = [lang for lang in sorted(sentences) for _ in sentences[lang]]
    sentence_terms = [terms(text, lang) for text, lang in zip(flat, lang_of)]
    vocab = sorted({t for ts in sentence_terms for t in ts})
    index = {t: i for i, t in enumerate(vocab)}
    sentence_ids = [[index[t] for t in ts] for ts in sentence_terms]
    passages = make_passages(sentences, size, seed)
    documents, chunks, entries = [], [], []
    for start in range(0, size, PER_DOC):
        group = passages[start : start + PER_DOC]
        doc_id, text, offset, ids = f"syn_{start // PER_DOC:06d}.txt", "", 0, []
        for i, p in enumerate(group):
            chunks.append(Chunk(f"{doc_id}#{i}", doc_id, offset, offset + len(p.text), p.text, p.lang))
            ids.append(chunks[-1].chunk_id)
            text += p.text + "\n\n"
            offset = len(text)
        documents.append(Document(doc_id, doc_id, text, group[0].lang, sha256_text(text)))
        entries.append(DocEntry(doc_id, documents[-1].sha256, doc_id, group[0].lang, "txt", tuple(ids), ""))
    rows = [[i for s in p.sentences for i in sentence_ids[s]] for p in passages]
    term_rows = Terms.of_ids(vocab, rows)
    vectors = compose(sentence_vectors, member_matrix(passages))
    manifest = Manifest("multilingual-e5-small", vectors.shape[1], ChunkerSettings(), tuple(entries), ann="flat")
    dense = build_dense(np.ascontiguousarray(vectors, dtype=np.float32), "flat")
    data = IndexData(
        manifest, {d.doc_id: d for d in documents}, tuple(chunks), dense, build_lexical(term_rows), term_rows
    )
    return data


def node_memory_mb(node) -> float:
    """PSS of a node's postmaster and its children (shared buffers counted once)."""
    pid = int((node.data / "postmaster.pid").read_text().split()[0])
    total = 0
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            ppid = int((proc / "stat").read_text().rsplit(")", 1)[1].split()[1])
            if int(proc.name) != pid and ppid != pid:
                continue
            rollup = (proc / "smaps_rollup").read_text()
        except (OSError, ValueError, IndexError):
            continue
        total += next(int(line.split()[1]) for line in rollup.splitlines() if line.startswith("Pss:"))
    return total / 1024


def node_sizes(backend) -> list[dict]:
    """Per shard: its database's size and each citeqa table's (with indexes), MB."""
    sql = (
        "SELECT pg_database_size(current_database()), json_object_agg(relname, pg_total_relation_size(oid))"
        " FROM pg_class WHERE relname LIKE 'citeqa_%' AND relkind = 'r'"
    )

    def one(shard):
        with shard.connection("measuring") as conn:
            db, tables = conn.execute(sql).fetchone()
        return {"database_mb": db / 1_048_576, "tables_mb": {k: v / 1_048_576 for k, v in tables.items()}}

    return backend.shards.each(one)


def timed(questions: list[str], work) -> dict:
    """Warm p50/p95 of ``work(i, question)``: one pass to warm, the second measured."""
    for i, q in enumerate(questions):
        work(i, q)
    times = []
    for i, q in enumerate(questions):
        t0 = time.perf_counter()
        work(i, q)
        times.append((time.perf_counter() - t0) * 1000)
    return {"p50_ms": pct(times, 0.5), "p95_ms": pct(times, 0.95)}


def latencies(data, questions: list[str], queries: np.ndarray) -> dict:
    """Dense, lexical, both, and a whole answer (reader off) for every question."""
    from citeqa.qa.pipeline import AnswerPipeline
    from citeqa.text.analysis import query_terms

    langs = tuple(sorted(data.passage_langs()))
    terms = [query_terms(q, langs) for q in questions]
    by_text = {q: queries[i] for i, q in enumerate(questions)}
    pipeline = AnswerPipeline(data, lambda texts: np.stack([by_text.get(t, queries[0]) for t in texts]))
    return {
        "dense": timed(questions, lambda i, q: data.dense_search(queries[i], 50)),
        "lexical": timed(questions, lambda i, q: data.lexical_search(terms[i], 50)),
        "retrieval": timed(
            questions, lambda i, q: (data.dense_search(queries[i], 50), data.lexical_search(terms[i], 50))
        ),
        "answer": timed(questions, lambda i, q: pipeline.run(q)),
    }


def recall_at_10(approx, exact, queries: np.ndarray) -> float:
    found = [len(set(approx.dense_search(q, 10)) & set(exact.dense_search(q, 10))) / 10 for q in queries]
    return float(np.mean(found))


def recall_at_10_ties(approx, exact, queries: np.ndarray) -> float:
    """Recall@10 where a passage scoring as high as exact search's 10th counts as found (passages
    tied at the cut are interchangeable: near-duplicate synthetic passages tie often)."""
    found = []
    for q in queries:
        truth = exact.dense_search(q, 10)
        cut = min(truth.values())
        scores = approx.dense_search(q, 10).values()
        found.append(min(10, sum(s >= cut - 1e-6 for s in scores)) / 10)
    return float(np.mean(found))


def lexical_agreement(approx, exact, data, questions: list[str]) -> dict:
    """BM25 of the ``bm25`` index (candidates rescored) against the postings (exact, bm25s's top):
    recall@10 and @50, and the share of questions whose top 10 / 50 is the same list with the same scores."""
    from citeqa.text.analysis import query_terms

    langs = tuple(sorted(data.passage_langs()))
    out: dict = {"lexical": approx.lexical}
    for n in (10, 50):
        pairs = [
            (approx.lexical_search(t, n), exact.lexical_search(t, n))
            for t in (query_terms(q, langs) for q in questions)
        ]
        out[f"recall_at_{n}"] = float(np.mean([len(set(a) & set(b)) / len(b) if b else float(not a) for a, b in pairs]))
        out[f"same_top_{n}"] = float(np.mean([list(a.items()) == list(b.items()) for a, b in pairs]))
    return out


def ef_sweep(spec: str, ef: int, exact, queries: np.ndarray) -> dict:
    """Recall@10 against ``exact`` and dense top-50 latency at one ``hnsw.ef_search``."""
    from citeqa.pg.backend import PostgresBackend

    approx = PostgresBackend(spec, ef_search=ef)
    try:
        return {"ef_search": ef, "recall_at_10": recall_at_10(approx, exact, queries)} | timed(
            [str(i) for i in range(len(queries))], lambda i, q: approx.dense_search(queries[i], 50)
        )
    finally:
        approx.close()


def shards_run(
    data, count: int, questions: list[str], queries: np.ndarray, parent: Path, efs=(), hnsw: bool = True
) -> dict:
    from citeqa.pg.backend import PostgresBackend
    from citeqa.pg.nodes import local_cluster
    from citeqa.pg.publish import publish

    out: dict = {"shards": count}
    with local_cluster(count, parent) as nodes:
        spec = ",".join(n.url for n in nodes)
        t0 = time.perf_counter()
        publish(data, spec, ann="exact")
        out["publish_s"] = time.perf_counter() - t0
        before = rss_mb()
        t0 = time.perf_counter()
        backend = PostgresBackend(spec)
        out["open_s"], out["client_rss_growth_mb"] = time.perf_counter() - t0, rss_mb() - before
        out["sizes"] = node_sizes(backend)
        out["exact"] = latencies(backend, questions, queries)
        out["node_pss_mb_exact"] = [node_memory_mb(n) for n in nodes]
        print(json.dumps({"shards": count, "exact": out["exact"], "publish_s": out["publish_s"]}), flush=True)
        if not hnsw:
            backend.close()
            return out
        t0 = time.perf_counter()
        done = publish(data, spec, ann="hnsw")  # the same documents: only the graph and the bm25 index are built
        out["hnsw_build_s"] = time.perf_counter() - t0
        out["index_build_s"] = dict(done.index_s)
        approx = PostgresBackend(spec)
        out["hnsw"] = latencies(approx, questions, queries)
        out["recall_at_10"] = recall_at_10(approx, backend, queries)
        out["recall_at_10_ties"] = recall_at_10_ties(approx, backend, queries)
        out["bm25_index"] = lexical_agreement(approx, backend, data, questions)
        out["ef_search"] = [ef_sweep(spec, ef, backend, queries) for ef in efs]
        out["sizes_hnsw"] = node_sizes(approx)
        out["node_pss_mb_hnsw"] = [node_memory_mb(n) for n in nodes]
        approx.close(), backend.close()
    print(json.dumps({k: v for k, v in out.items() if k not in ("exact",)}), flush=True)
    return out


def sample(questions: list[str], queries: np.ndarray, count: int, seed: int) -> tuple[list[str], np.ndarray, list]:
    """``count`` of the questions (and their vectors), drawn with ``seed``, in their order; all when 0."""
    if not count or count >= len(questions):
        return questions, queries, list(range(len(questions)))
    chosen = sorted(np.random.default_rng(seed).choice(len(questions), count, replace=False).tolist())
    return [questions[i] for i in chosen], queries[chosen], chosen


def main(argv: list[str] | None = None) -> int:
    from ann_sweep import query_texts
    from faiss_million import embed
    from synth import corpus_sentences, flat_sentences

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--shards", default="1,2")
    parser.add_argument("--hnsw-shards", help="the shard counts that also get HNSW (default: all; none: no HNSW)")
    parser.add_argument("--questions", type=int, default=0, help="time a sample of this many questions (0: all)")
    parser.add_argument("--ef-search", default="", help="also recall@10 and dense latency at these hnsw.ef_search")
    parser.add_argument("--hnsw-m", type=int, default=None, help="the graph's m (default: citeqa.pg.publish's)")
    parser.add_argument("--hnsw-ef-construction", type=int, default=None)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--cache", type=Path, help="reuse/save the sentence and query vectors here (.npz)")
    parser.add_argument("--model", default="multilingual-e5-small")
    parser.add_argument("--out", type=Path, default=Path("out/pg_scale.json"))
    args = parser.parse_args(argv)
    questions = query_texts()
    if args.cache and args.cache.exists():
        cached = np.load(args.cache)
        sentence_vectors, queries = cached["sentences"], cached["queries"]
    else:
        sentence_vectors, queries = embed(args.model, flat_sentences(corpus_sentences(ROOT / "corpus")), questions)
        if args.cache:
            args.cache.parent.mkdir(parents=True, exist_ok=True)
            np.savez(args.cache, sentences=sentence_vectors, queries=queries)
    all_questions = len(questions)
    questions, queries, chosen = sample(questions, queries, args.questions, args.seed)
    shard_counts = [int(n) for n in args.shards.split(",") if n]
    hnsw_counts = (
        shard_counts if args.hnsw_shards is None else [int(n) for n in args.hnsw_shards.split(",") if n and n != "none"]
    )
    from citeqa.pg import publish as publish_module

    publish_module.HNSW_M = args.hnsw_m or publish_module.HNSW_M
    publish_module.HNSW_EF_CONSTRUCTION = args.hnsw_ef_construction or publish_module.HNSW_EF_CONSTRUCTION
    report: dict = {
        "hnsw": [publish_module.HNSW_M, publish_module.HNSW_EF_CONSTRUCTION],
        "size": args.size,
        "questions": len(questions),
        "questions_of": all_questions,
        "question_sample": chosen if len(chosen) < all_questions else None,
        "hnsw_shards": hnsw_counts,
        "loadavg_start": os.getloadavg(),
        "runs": [],
    }
    started = time.perf_counter()

    def save() -> None:  # after each phase: a run stopped early keeps what it measured
        report["wall_s"], report["loadavg_end"] = time.perf_counter() - started, os.getloadavg()
        report["client_peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(report, indent=1), encoding="utf-8")

    t0 = time.perf_counter()
    data = synthetic_index(args.size, args.seed, sentence_vectors)
    report["local_build_s"] = time.perf_counter() - t0
    report["local"] = latencies(data, questions, queries)
    print(json.dumps({"local": report["local"], "build_s": report["local_build_s"]}), flush=True)
    save()
    efs = [int(e) for e in args.ef_search.split(",") if e]
    for n in shard_counts:
        report["runs"].append(shards_run(data, n, questions, queries, args.out.parent, efs, n in hnsw_counts))
        report["runs"][-1]["loadavg_end"] = os.getloadavg()
        save()
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
