"""Plain ``citeqa index`` against ``citeqa index --ray`` with 1 and 2 workers: passages per second,
Ray's fixed cost on a tiny corpus, and peak memory per worker.

Usage::

    PYTHONPATH=src HF_HUB_OFFLINE=1 .venv/bin/python bench/ray_build.py \\
        [--passages 2000] [--model multilingual-e5-small] [--configs plain,ray1,ray2,ray1x2] \\
        [--repeat 1] [--tiny-repeat 3] [--out out/ray_build.json]

Needs the ray extra (``pip install -e '.[ray]'``).

* **Corpus**: ``--passages`` distinct synthetic passages of 450-790 characters made of the
  real corpus's sentences (bench/synth.py, seed 0), ten per document, one language per
  document, so the chunker keeps each as one passage. Every passage is embedded whole by the
  real model. Their spans (the sentences and clauses that also get vectors) come from only
  ~240 distinct sentences, so after the first few hundred passages almost every span is
  reused by hash: the build embeds about one text per passage, where a real corpus embeds
  about 5.6 span texts per passage too (corpus/: 55 passages, 307 spans). ``texts/s``
  counts everything embedded.
* **Configurations**, each a fresh ``update_index(rebuild=True)`` in its own subprocess:
  ``plain`` (this process, the encoder's threads on every core); ``rayN``: a local Ray with
  every core, N embedding workers of 1 CPU each (one encoder thread each); ``ray1x2``: one
  worker of 2 CPUs (two threads). Reading and chunking run as Ray tasks on every core.
* **Times**: ``wall`` is the subprocess from start to exit as the parent sees it (Python
  start, imports, Ray start and stop included: what a user waits for); ``build`` is
  ``update_index`` alone; ``read``/``encode`` are the Ray pipelines' own times.
  Passages/s = passages / build s.
* **Memory**: peak RSS (VmHWM) of each embedding worker and reading task process, as they
  report it, and ``ru_maxrss`` of the driver (the process that plans and writes the index).
* **Tiny corpus**: ``corpus/`` (4 documents, 55 passages), plain and ``ray2``, ``--tiny-repeat``
  times each: what Ray adds to a build that is small.
* **Equality**: every Ray index is compared with the plain one: documents, chunks and BM25
  byte for byte, the largest difference of any passage or span vector.

The 1-minute load average is recorded before and after every run: the machine is shared.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import ROOT, load1

CONFIGS = {"plain": None, "ray1": (1, 1), "ray2": (2, 1), "ray1x2": (1, 2)}  # name -> (workers, cpus per worker)


def worker(args: argparse.Namespace) -> None:
    """One build, in this (fresh) process; prints one JSON line."""
    started = time.perf_counter()
    load_before = load1()
    from citeqa.embedding import load_embedder
    from citeqa.index.builder import update_index

    config = CONFIGS[args.worker]
    row: dict = {"config": args.worker, "load_before": load_before}
    if config is None:
        t0 = time.perf_counter()
        report = update_index(args.corpus, args.index, load_embedder(args.model), rebuild=True)
        row["build_s"] = time.perf_counter() - t0
    else:
        from citeqa.index.ray_build import RayOptions, ray_steps

        workers, cpus = config
        t0 = time.perf_counter()
        with ray_steps(
            functools.partial(load_embedder, args.model),
            RayOptions(workers=workers, cpus_per_worker=cpus, batch_size=args.batch),
        ) as steps:
            row["ray_start_s"] = time.perf_counter() - t0
            t1 = time.perf_counter()
            report = update_index(args.corpus, args.index, load_embedder(args.model), rebuild=True, steps=steps)
            row["build_s"] = time.perf_counter() - t1
            t2 = time.perf_counter()
        row["ray_stop_s"] = time.perf_counter() - t2
        row.update(
            read_s=steps.stats.read_seconds,
            encode_s=steps.stats.encode_seconds,
            worker_peak_mb=sorted(round(v) for v in steps.stats.embed_peak_mb.values()),
            read_task_peak_mb=sorted(round(v) for v in steps.stats.read_peak_mb.values()),
            workers=workers,
            cpus_per_worker=cpus,
        )
    row.update(
        passages=report.chunks,
        embedded_passages=report.embedded,
        driver_peak_mb=round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
        in_process_s=time.perf_counter() - started,
        load_after=load1(),
    )
    print("RESULT " + json.dumps(row), flush=True)


def run_config(name: str, corpus: Path, index: Path, args: argparse.Namespace) -> dict:
    env = {
        **os.environ,
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "TOKENIZERS_PARALLELISM": "false",
        "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")]),
    }
    cmd = [
        sys.executable,
        __file__,
        "--worker",
        name,
        "--corpus",
        str(corpus),
        "--index",
        str(index),
        "--model",
        args.model,
        "--batch",
        str(args.batch),
    ]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    lines = [line for line in proc.stdout.splitlines() if line.startswith("RESULT ")]
    if proc.returncode != 0 or not lines:
        raise SystemExit(f"{name} failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    row = json.loads(lines[-1][len("RESULT ") :])
    row["wall_s"] = wall
    row["embedded_texts"] = texts_embedded(index, row)
    return row


def texts_embedded(index: Path, row: dict) -> int:
    """Passages embedded plus distinct span texts embedded (a rebuild embeds each distinct text once)."""
    from citeqa.index.store import load_index
    from citeqa.records import sha256_text

    data = load_index(index)
    passages = {sha256_text(c.text) for c in data.chunks}
    spans = set()
    for i, chunk in enumerate(data.chunks):
        for row_i in range(int(data.spans.ptr[i]), int(data.spans.ptr[i + 1])):
            a, b = data.spans.bounds[row_i]
            spans.add(sha256_text(chunk.text[a:b]))
    return len(passages | spans)


def compare(plain: Path, other: Path) -> dict:
    """Byte equality of the deterministic files, largest vector difference."""
    import numpy as np

    from citeqa.index.store import current_generation, load_index

    a, b = current_generation(plain), current_generation(other)
    same = {}
    for path in sorted(a.rglob("*")):
        name = path.relative_to(a).as_posix()
        if path.is_file() and (name in ("documents.jsonl", "chunks.jsonl") or name.startswith("bm25/")):
            same[name] = path.read_bytes() == (b / name).read_bytes()
    x, y = load_index(plain), load_index(other)
    dense = float(np.abs(x.dense.reconstruct_n(0, x.dense.ntotal) - y.dense.reconstruct_n(0, y.dense.ntotal)).max())
    spans = float(np.abs(np.asarray(x.spans.vectors, np.float32) - np.asarray(y.spans.vectors, np.float32)).max())
    return {"files_identical": all(same.values()), "files": same, "dense_max_diff": dense, "span_max_diff": spans}


def synthetic_corpus(folder: Path, count: int, seed: int) -> int:
    from synth import corpus_sentences, make_passages, write_corpus

    passages = make_passages(corpus_sentences(ROOT / "corpus"), count, seed)
    return write_corpus(folder, passages)


def summarise(rows: list[dict]) -> dict:
    def med(key: str) -> float:
        return statistics.median(r[key] for r in rows if key in r)

    out = {
        "runs": len(rows),
        "passages": rows[0]["passages"],
        "embedded_texts": rows[0]["embedded_texts"],
        "build_s": med("build_s"),
        "wall_s": med("wall_s"),
        "passages_per_s": rows[0]["passages"] / med("build_s"),
        "texts_per_s": rows[0]["embedded_texts"] / med("build_s"),
        "driver_peak_mb": max(r["driver_peak_mb"] for r in rows),
        "load": [(r["load_before"], r["load_after"]) for r in rows],
    }
    if "encode_s" in rows[0]:
        out.update(
            read_s=med("read_s"),
            encode_s=med("encode_s"),
            ray_start_s=med("ray_start_s"),
            driver_s=statistics.median(r["build_s"] - r["read_s"] - r["encode_s"] for r in rows),
            ray_stop_s=med("ray_stop_s"),
            worker_peak_mb=max(max(r["worker_peak_mb"], default=0) for r in rows),
            read_task_peak_mb=max(max(r["read_task_peak_mb"], default=0) for r in rows),
        )
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--passages", type=int, default=2000)
    parser.add_argument("--model", default="multilingual-e5-small")
    parser.add_argument("--configs", default="plain,ray1,ray2,ray1x2")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--tiny-repeat", type=int, default=3)
    parser.add_argument("--batch", type=int, default=64, help="texts per Ray embedding batch")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=Path("out/ray_build.json"))
    parser.add_argument("--worker", choices=sorted(CONFIGS), help=argparse.SUPPRESS)
    parser.add_argument("--corpus", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--index", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        worker(args)
        return 0

    import ray

    configs = [c for c in args.configs.split(",") if c]
    report: dict = {
        "machine": {
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "ray": ray.__version__,
            "loadavg_start": os.getloadavg(),
        },
        "model": args.model,
        "batch": args.batch,
        "synthetic": {},
        "tiny": {},
        "equality": {},
    }
    with tempfile.TemporaryDirectory(prefix="citeqa-raybench-") as tmp:
        tmp_path = Path(tmp)
        if args.tiny_repeat:
            for name in ("plain", "ray2"):
                rows = [
                    run_config(name, ROOT / "corpus", tmp_path / f"tiny-{name}", args) for _ in range(args.tiny_repeat)
                ]
                report["tiny"][name] = {"rows": rows, **summarise(rows)}
                print(
                    f"tiny {name}: wall {[round(r['wall_s'], 1) for r in rows]} s, build "
                    f"{[round(r['build_s'], 1) for r in rows]} s, load {[r['load_before'] for r in rows]}",
                    flush=True,
                )
        if args.passages:
            corpus = tmp_path / "corpus"
            docs = synthetic_corpus(corpus, args.passages, args.seed)
            print(f"synthetic corpus: {args.passages} passages in {docs} documents", flush=True)
            for name in configs:
                rows = []
                for _ in range(args.repeat):
                    index = tmp_path / f"index-{name}"
                    shutil.rmtree(index, ignore_errors=True)
                    rows.append(run_config(name, corpus, index, args))
                summary = summarise(rows)
                report["synthetic"][name] = {"rows": rows, **summary}
                print(
                    f"{name}: {summary['passages']} passages, {summary['embedded_texts']} texts embedded, "
                    f"build {summary['build_s']:.1f} s ({summary['passages_per_s']:.2f} passages/s, "
                    f"{summary['texts_per_s']:.2f} texts/s), wall {summary['wall_s']:.1f} s, "
                    f"worker peak {summary.get('worker_peak_mb', '-')} MB, driver {summary['driver_peak_mb']} MB, "
                    f"load {summary['load']}",
                    flush=True,
                )
            for name in configs:
                if name != "plain" and "plain" in configs:
                    report["equality"][name] = compare(tmp_path / "index-plain", tmp_path / f"index-{name}")
                    print(f"{name} vs plain: {report['equality'][name]}", flush=True)
    report["machine"]["loadavg_end"] = os.getloadavg()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=1), encoding="utf-8")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
