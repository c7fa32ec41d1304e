"""What an incremental ``citeqa index`` costs in a large index: add one file, remove one, refresh with no change.

Usage (``--root`` is the checkout whose ``corpus/`` gives the sentences)::

    PYTHONPATH=src HF_HUB_OFFLINE=1 .venv/bin/python bench/incremental.py [--passages 10000] [--repeat 3]

* **Corpus**: ``--passages`` distinct synthetic passages (bench/synth.py, seed 0, ten per
  ``.txt`` document, so 10^4 passages are 10^3 files), built once with ``update_index``.
  The file added holds ten more passages made the same way (not in the index).
* **Embedder**: the keyword embedder (``citeqa.embedding.keyword``): encoding costs almost
  nothing, so the times are the indexing bookkeeping itself (hashing, parsing, language
  detection, chunking, span planning, BM25, FAISS, writing). ``encoded`` counts the texts the
  embedder was given: it must be the new file's texts only.
* **parsed** counts calls of ``citeqa.ingest.documents.load_document`` (every file read and parsed).
* ``--profile``: one more add under cProfile (after the timed steps), its top 15 on stderr.
* ``megabytes``: the size of each file or folder of the last generation.
* Each step is timed ``--repeat`` times (add then remove the same file, then a refresh);
  the median is printed. The 1-minute load average is printed: the machine is shared.

The script uses only ``update_index`` and ``load_document``, so the same file measures an
older checkout (run it with that checkout's interpreter and no ``PYTHONPATH``).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--passages", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parent.parent)
    parser.add_argument("--profile", action="store_true", help="profile one more add (cProfile, top 15 to stderr)")
    parser.add_argument("--work", type=Path, default=None, help="folder for the corpus and index (default: a temp dir)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="citeqa-incremental-") as tmp:
        print(json.dumps(run(args, args.work or Path(tmp)), indent=1))


def run(args: argparse.Namespace, work: Path) -> dict:
    import synth

    import citeqa
    from citeqa.embedding.keyword import KeywordEmbedder
    from citeqa.index.builder import update_index
    from citeqa.ingest import documents

    sentences = synth.corpus_sentences(args.root / "corpus")
    passages = synth.make_passages(sentences, args.passages + synth.PER_DOC, seed=0)
    corpus, index = work / "corpus", work / "index"
    synth.write_corpus(corpus, passages[: args.passages])
    extra = "\n\n".join(p.text for p in passages[args.passages :]) + "\n"
    parsed = [0]
    original = documents.load_document

    def counting(*a, **k):
        parsed[0] += 1
        return original(*a, **k)

    documents.load_document = counting
    embedder = KeywordEmbedder()

    def step(action=None) -> dict:
        if action is not None:
            action()
        parsed[0], before = 0, len(embedder.encoded)
        started = time.perf_counter()
        report = update_index(corpus, index, embedder)
        return {
            "seconds": time.perf_counter() - started,
            "parsed": parsed[0],
            "encoded": len(embedder.encoded) - before,
            "chunks": report.chunks,
        }

    new_file = corpus / "syn_added_en.txt"
    result = {"citeqa": str(Path(citeqa.__file__).parent), "load1_before": os.getloadavg()[0]}
    result["full_build"] = step()
    runs: dict[str, list[dict]] = {"add_1_file": [], "remove_1_file": [], "no_change": []}
    for _ in range(args.repeat):
        runs["add_1_file"].append(step(lambda: new_file.write_text(extra, encoding="utf-8")))
        runs["remove_1_file"].append(step(new_file.unlink))
        runs["no_change"].append(step())
    for name, steps in runs.items():
        result[name] = {**steps[-1], "seconds": statistics.median(s["seconds"] for s in steps)}
        result[name]["all_seconds"] = [round(s["seconds"], 3) for s in steps]
    if args.profile:
        _profile(lambda: step(lambda: new_file.write_text(extra, encoding="utf-8")))
        new_file.unlink()
    result["load1_after"] = os.getloadavg()[0]
    live = index / (index / "CURRENT").read_text(encoding="utf-8").strip()
    result["megabytes"] = {part.name: round(_size(part) / 1e6, 2) for part in sorted(live.iterdir())}
    return result


def _profile(call) -> None:
    """Run ``call`` under cProfile; the 15 functions with the most cumulative time go to stderr."""
    import cProfile
    import pstats

    profiler = cProfile.Profile()
    profiler.runcall(call)
    pstats.Stats(profiler, stream=sys.stderr).sort_stats("cumulative").print_stats(15)


def _size(path: Path) -> int:
    """Bytes of a file, or of every file under a folder."""
    return path.stat().st_size if path.is_file() else sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


if __name__ == "__main__":
    main()
