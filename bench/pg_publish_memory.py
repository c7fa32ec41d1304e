"""The writer's memory and time when ``citeqa index --backend postgresql://...`` publishes a generation
folder (streamed: citeqa.pg.publish.publish_folder), at a few sizes.

Usage::

    PYTHONPATH=src HF_HUB_OFFLINE=1 nice -n 19 .venv/bin/python bench/pg_publish_memory.py \\
        --sizes 100000,200000 --cache out/faiss_vectors_e5.npz --out out/pg_publish_memory.json

For each size: bench/pg_scale.py's synthetic passages (ten to a document, real e5 vectors, no
span vectors) written as a local index generation, then published to 2 fresh local nodes by a
child process that imports nothing else first, in exact mode and then again with the HNSW graph
and the bm25 index (the same documents: only the indexes are built; ``--ann exact`` leaves that
out). Measured: each child's
wall time and its peak RSS (``VmHWM``), and the generation folder's size (removed after).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))


def write_folder(size: int, seed: int, sentence_vectors: np.ndarray, index_dir: Path) -> Path:
    """The synthetic index of ``size`` passages written as a generation of ``index_dir``."""
    from pg_scale import synthetic_index

    from citeqa.index.spans import SpanVectors
    from citeqa.index.store import current_generation, write_generation

    data = synthetic_index(size, seed, sentence_vectors)
    dim = data.manifest.dimension
    spans = SpanVectors(np.zeros((0, dim), np.float16), np.zeros(size + 1, np.int64), np.zeros((0, 2), np.int32))
    write_generation(
        index_dir,
        data.manifest,
        list(data.documents.values()),
        list(data.chunks),
        data.dense,
        data.lexical,
        data.terms,
        spans,
    )
    folder = current_generation(index_dir)
    assert folder is not None
    return folder


def child(index_dir: str, spec: str, ann: str) -> None:
    """Publish ``index_dir`` to ``spec``; print seconds and peak RSS as JSON."""
    from citeqa.pg.publish import publish_folder

    t0 = time.perf_counter()
    done = publish_folder(Path(index_dir), spec, ann=ann)
    # VmHWM, not ru_maxrss: Linux carries a forking parent's high-water mark over to the child's
    # ru_maxrss (the parent held the synthetic index), while VmHWM is this process's own
    status = Path("/proc/self/status").read_text().splitlines()
    peak = next(int(line.split()[1]) for line in status if line.startswith("VmHWM:")) / 1024
    print(
        json.dumps(
            {
                "ann": ann,
                "seconds": time.perf_counter() - t0,
                "peak_rss_mb": peak,
                "index_s": dict(done.index_s),
                "passages": done.passages,
            }
        )
    )


def measure(size: int, seed: int, sentence_vectors: np.ndarray, parent: Path, anns: list[str]) -> dict:
    from citeqa.pg.nodes import local_cluster

    index_dir = parent / f"publish-index-{size}"
    folder = write_folder(size, seed, sentence_vectors, index_dir)
    out: dict = {"size": size, "folder_mb": sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) / 2**20}
    with local_cluster(2, parent) as nodes:
        spec = ",".join(n.url for n in nodes)
        for ann in anns:
            env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
            run = subprocess.run(
                [sys.executable, __file__, "--child", str(index_dir), spec, ann],
                capture_output=True,
                text=True,
                env=env,
                check=True,
            )
            out[ann] = json.loads(run.stdout.strip().splitlines()[-1])
            out[ann]["loadavg"] = os.getloadavg()
            print(json.dumps(out[ann]), flush=True)
    shutil.rmtree(index_dir, ignore_errors=True)
    return out


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--child"]:
        child(*argv[1:4])
        return 0
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100000")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--ann", default="exact,hnsw", help="the publishes, in order (hnsw: the same documents again)")
    parser.add_argument("--cache", type=Path, required=True, help="bench/pg_scale.py's --cache (.npz)")
    parser.add_argument("--out", type=Path, default=Path("out/pg_publish_memory.json"))
    args = parser.parse_args(argv)
    sentence_vectors = np.load(args.cache)["sentences"]
    report: dict = {"loadavg_start": os.getloadavg(), "runs": []}
    for size in (int(s) for s in args.sizes.split(",") if s):
        report["runs"].append(measure(size, args.seed, sentence_vectors, args.out.parent, args.ann.split(",")))
        report["loadavg_end"] = os.getloadavg()
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(report, indent=1), encoding="utf-8")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
