"""How long building an index takes: the real corpus embedded whole, or a synthetic size whose vectors are composed.

Usage (the real corpus; bench/run.py runs it for every ``--sizes`` entry, synthetic ones too)::

    HF_HUB_OFFLINE=1 .venv/bin/python bench/indexing.py [--out out/bench-indexing]

``build_index(..., rebuild=True)`` (:func:`citeqa.build_index`) runs in a fresh subprocess with the
real model already loaded (model load reported apart). For the synthetic sizes embedding 10^4-10^5
passages on 2 cores takes hours, so their corpus is made by bench/synth.py and :func:`prepare_pool`
embeds each unique corpus sentence once (a measured step); :class:`SynthEmbedder` composes a
synthetic passage's vector from its sentences' (see bench/run.py's docstring for the method and the
projection to a corpus embedded whole). The index's size on disk and its builder's peak RSS are
reported too.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import (
    CORPUS,
    MODEL,
    ROOT,
    add_common_flags,
    dir_size_mb,
    load_questions,
    machine,
    maxrss_mb,
    parse_args,
    run_worker,
    write_json,
)

SCRIPT = Path(__file__).resolve()


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

    from citeqa import build_index, load_embedder
    from citeqa.index.store import load_index

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
    report = build_index(Path(args["corpus"]), Path(args["index"]), embedder=emb, rebuild=True)  # type: ignore[arg-type]
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


WORKERS = {"embed_sentences": worker_embed_sentences, "index": worker_index}


def count_real_chunks() -> int:
    """How many passages ``corpus/`` makes with the default chunker (without embedding them)."""
    from citeqa import ChunkerSettings
    from citeqa.ingest.chunking import chunk_document
    from citeqa.ingest.documents import scan_corpus

    return sum(len(chunk_document(d, ChunkerSettings())) for d in scan_corpus(CORPUS).documents)


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
        SCRIPT,
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


def index_size(size: str, work: Path, log_dir: Path, pool: dict | None, real_chunks: int | None) -> tuple[dict, Path]:
    """Make the corpus of ``size`` ("real" or a number of chunks) and index it in a worker: the
    size's result so far (``index``, and for a synthetic size ``synthetic_documents`` and
    ``generate_s``) and the index's folder."""
    from synth import write_corpus

    tag = f"s-{size}"
    result: dict = {"size": size}
    if size == "real":
        corpus = CORPUS
    else:
        assert pool is not None, "a synthetic size needs prepare_pool's passages"
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
    ix = run_worker(SCRIPT, "index", idx_args, work, log_dir, tag)
    result["index"] = ix
    if "error" in ix:
        return result, index
    ix["chunks_per_s"] = ix["chunks"] / ix["seconds"]
    ix["disk_mb"] = dir_size_mb(index)
    if size != "real" and pool and pool.get("rate"):
        projected = ix["seconds"] - ix["encode_seconds"] + ix["chunks"] / pool["rate"]
        ix["projected_unique_s"] = projected
        ix["projected_chunks_per_s"] = ix["chunks"] / projected
    return result, index


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_common_flags(parser, out=ROOT / "out" / "bench-indexing", rounds=None)
    args = parse_args(parser, argv, WORKERS)
    if args is None:
        return 0
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="citeqa-bench-") as tmp:
        result, _ = index_size("real", Path(tmp), args.out, None, None)
    report = {"command": "python bench/indexing.py " + " ".join(sys.argv[1:]), "machine": machine(), "sizes": [result]}
    write_json(args.out / "results.json", report)
    print(json.dumps(result["index"], indent=2))
    return 0 if "error" not in result["index"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
