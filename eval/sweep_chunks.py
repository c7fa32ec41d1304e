"""Measure chunk sizes on split A/B of a QA file (how the default size was chosen).

    .venv/bin/python eval/sweep_chunks.py eval/qa.jsonl --sizes 400:50,600:80,800:100,1000:120

Each size gets a fresh index in a temporary folder (the embedding model is loaded
once); the engine runs with its default settings. Split A/B as in fit_scorer.py.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from fit_scorer import overall_scores, split_of

from citeqa import evaluation as ev
from citeqa.embedding import SentenceTransformerEmbedder
from citeqa.engine import Engine
from citeqa.ingest.chunking import ChunkerSettings


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("qa_file", type=Path)
    parser.add_argument("--corpus", type=Path, default=Path("corpus"))
    parser.add_argument("--sizes", default="400:50,600:80,800:100,1000:120", help="size:overlap,...")
    args = parser.parse_args()
    items = ev.load_qa(args.qa_file)
    embedder = SentenceTransformerEmbedder()
    with tempfile.TemporaryDirectory() as tmp:
        for spec in args.sizes.split(","):
            size, overlap = (int(v) for v in spec.split(":"))
            index = Path(tmp) / f"index-{size}"
            Engine.build(args.corpus, index, embedder, ChunkerSettings(size, overlap))
            engine = Engine.open(index, embedder=embedder)
            for part in ("A", "B"):
                chosen = [i for i in items if split_of(i.id) == part]
                o = overall_scores(engine, chosen)
                print(
                    f"size {size} overlap {overlap} ({engine.passage_count} passages) split {part}: "
                    f"hit@1 {o.hit1:.3f}, hit@5 {o.hit5:.3f}, accuracy {o.accuracy:.3f}"
                )
    return 0


if __name__ == "__main__":
    sys.exit(main())
