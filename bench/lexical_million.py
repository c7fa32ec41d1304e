"""BM25 (bm25s, as citeqa builds and searches it) at 10^5 and 10^6 passages: build time, memory, p50.

Usage::

    PYTHONPATH=src HF_HUB_OFFLINE=1 .venv/bin/python bench/lexical_million.py [--sizes 100000,1000000]

The passages are bench/synth.py's (seed 0: distinct combinations of the ~240 sentences of
``corpus/``, one language each). A passage's terms are its sentences' terms
(``citeqa.text.analysis.terms`` in the passage's language; tokens never cross a sentence
boundary, so this equals stemming the passage whole), computed once per sentence to keep
the run short. The index is built from term ids the way ``backends.build_lexical`` does, and
every question of bench/questions.json and eval/qa.jsonl is searched alone with
``backends.lexical_search`` (bm25s scores of every passage, then the top 50 by partial sort),
the call answering makes. With ~2,500 distinct terms behind 10^6 passages every posting list
is long, so a query here touches more postings than it would in a real corpus of that size:
the latency is on the high side.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import pct, rss_mb  # noqa: E402 - common.py sits beside this script


def main(argv: list[str] | None = None) -> int:
    import bm25s
    from ann_sweep import query_texts
    from synth import corpus_sentences, flat_sentences, make_passages

    from citeqa.index.backends import lexical_search
    from citeqa.index.terms import Terms
    from citeqa.text.analysis import query_terms, terms

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100000,1000000")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=Path("out/lexical_million.json"))
    args = parser.parse_args(argv)
    sizes = [int(x) for x in args.sizes.split(",") if x]

    sentences = corpus_sentences(ROOT / "corpus")
    flat = flat_sentences(sentences)
    lang_of = [lang for lang in sorted(sentences) for _ in sentences[lang]]
    sentence_terms = [terms(text, lang) for text, lang in zip(flat, lang_of)]
    vocab = {t: i for i, t in enumerate(sorted({t for ts in sentence_terms for t in ts}))}
    sentence_ids = [[vocab[t] for t in ts] for ts in sentence_terms]
    questions = query_texts()
    langs = tuple(sorted(sentences))
    passages = make_passages(sentences, max(sizes), args.seed)
    report: dict = {
        "vocabulary": len(vocab),
        "questions": len(questions),
        "sizes": [],
        "loadavg_start": os.getloadavg(),
    }
    for size in sizes:
        docs = [[i for s in p.sentences for i in sentence_ids[s]] for p in passages[:size]]
        tokens = sum(map(len, docs))
        gc.collect()
        before, load = rss_mb(), round(os.getloadavg()[0], 2)
        t0 = time.perf_counter()
        bm25 = bm25s.BM25(method="lucene", k1=1.2, b=0.75)
        bm25.index((docs, dict(vocab)), show_progress=False)
        build = time.perf_counter() - t0
        lexicon = Terms.of_ids(list(vocab), docs)  # the vocabulary lexical_search looks terms up in
        del docs
        gc.collect()
        grown = rss_mb() - before
        arrays_mb = sum(a.nbytes for a in bm25.scores.values() if hasattr(a, "nbytes")) / 1_048_576
        times = []
        for question in questions:
            q = query_terms(question, langs)
            t1 = time.perf_counter()
            lexical_search(bm25, lexicon, q, 50)
            times.append((time.perf_counter() - t1) * 1000)
        row = {
            "passages": size,
            "tokens": tokens,
            "build_s": build,
            "rss_growth_mb": grown,
            "index_mb": arrays_mb,
            "p50_ms": pct(times, 0.5),
            "p95_ms": pct(times, 0.95),
            "load": (load, round(os.getloadavg()[0], 2)),
        }
        report["sizes"].append(row)
        print(
            f"{size:,} passages ({tokens:,} terms): build {build:.1f} s, index {arrays_mb:.0f} MB, "
            f"search p50 {row['p50_ms']:.2f} ms, p95 {row['p95_ms']:.2f} ms (load {row['load']})",
            flush=True,
        )
        del bm25, lexicon
    report["loadavg_end"] = os.getloadavg()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=1), encoding="utf-8")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
