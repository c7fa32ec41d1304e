"""What the bench scripts share: paths and questions, the flags every run takes, worker
subprocesses, the machine's description, timing and memory figures, and the results file.

One definition each, so that every script's p50/p95 and MB mean the same thing (they were
written out in each script before). The percentile is the library's
(:func:`citeqa.evaluation.metrics.percentile`, the one ``citeqa eval`` reports latency with),
the free port :func:`citeqa.pg.nodes.free_port`. The scripts import this module as ``common``:
``bench/`` is on ``sys.path`` when a script of it runs. It imports citeqa only when called: a
script that times ``import citeqa...`` (bench/latency.py's query worker) must not find it loaded.

Workers: a measurement that must not share a process with another (its memory, its cold
imports) runs as ``python bench/SCRIPT.py --worker NAME SPEC OUT`` (:func:`run_worker` starts
it, :func:`parse_args` answers it: each script hands it its ``WORKERS``).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # numpy loads when used: the query worker times citeqa's imports, numpy's among them
    import numpy as np

__all__ = [
    "BENCH",
    "CORPUS",
    "ENV",
    "EVAL",
    "MODEL",
    "QUESTIONS",
    "ROOT",
    "add_common_flags",
    "citeqa_bin",
    "dir_size_mb",
    "free_port",
    "ints",
    "latency_summary",
    "load1",
    "load_questions",
    "machine",
    "maxrss_mb",
    "parse_args",
    "pct",
    "query_texts",
    "question_texts",
    "recall_at",
    "run_alone",
    "rss_mb",
    "run_worker",
    "search_each",
    "vm_hwm_mb",
    "write_json",
]

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "bench"
QUESTIONS = BENCH / "questions.json"
EVAL = ROOT / "eval" / "qa.jsonl"
CORPUS = ROOT / "corpus"
#: The environment of every measured process: offline models, quiet tokenizers and telemetry.
ENV = {
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "TOKENIZERS_PARALLELISM": "false",
    "HAYSTACK_TELEMETRY_ENABLED": "False",
    "PYTHONUNBUFFERED": "1",
}
#: The model benchmarked: citeqa's default (set BENCH_MODEL to compare another).
MODEL = os.environ.get("BENCH_MODEL", "multilingual-e5-small")

Worker = Callable[[dict], dict]


# --------------------------------------------------------------------------- questions


def load_questions() -> list[dict]:
    """bench/questions.json's items (``question``, ``lang``): 10 es, 10 pt, 10 en."""
    return json.loads(QUESTIONS.read_text(encoding="utf-8"))["questions"]


def question_texts() -> list[str]:
    """The benchmark questions' text, in file order."""
    return [q["question"] for q in load_questions()]


def query_texts() -> list[str]:
    """The benchmark questions, then eval/qa.jsonl's (the recall measurements' queries)."""
    from citeqa.evaluation import load_qa

    return question_texts() + [item.question for item in load_qa(EVAL)]


# --------------------------------------------------------------------------- flags and workers


def add_common_flags(parser: argparse.ArgumentParser, *, out: Path | None = None, rounds: int | None = 3) -> None:
    """``--out`` (where results.json and the logs go; where ``out`` is given), ``--rounds`` (rounds
    over the 30 questions; unless ``rounds`` is None) and the hidden ``--worker NAME SPEC OUT``."""
    if out is not None:
        parser.add_argument("--out", type=Path, default=out)
    if rounds is not None:
        parser.add_argument("--rounds", type=int, default=rounds, help="rounds over the 30 questions")
    parser.add_argument("--worker", nargs=3, metavar=("NAME", "SPEC", "OUT"), help=argparse.SUPPRESS)


def parse_args(
    parser: argparse.ArgumentParser, argv: Sequence[str] | None, workers: dict[str, Worker]
) -> argparse.Namespace | None:
    """The parsed flags, with :data:`ENV` set; None when this process was a worker (it ran, and wrote its result)."""
    args = parser.parse_args(argv)
    for key, value in ENV.items():
        os.environ.setdefault(key, value)
    if getattr(args, "worker", None):
        name, spec, out = args.worker
        result = workers[name](json.loads(Path(spec).read_text(encoding="utf-8")))
        Path(out).write_text(json.dumps(result), encoding="utf-8")
        return None
    return args


def run_worker(script: Path, name: str, args: dict, work: Path, log_dir: Path, tag: str) -> dict:
    """Run ``script``'s worker ``name`` in a fresh interpreter; its JSON result (with ``worker_wall_s``),
    or ``{"error": ..., "log": ...}``. The spec and result files go in ``work``, the log in ``log_dir``."""
    spec = work / f"{tag}-{name}.json"
    out = work / f"{tag}-{name}.out.json"
    spec.write_text(json.dumps(args), encoding="utf-8")
    log = log_dir / f"{tag}-{name}.log"
    started = time.perf_counter()
    with log.open("w") as fh:
        proc = subprocess.run(
            [sys.executable, str(script), "--worker", name, str(spec), str(out)],
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


def citeqa_bin() -> str:
    """The ``citeqa`` command of this interpreter's environment."""
    return str(Path(sys.executable).parent / "citeqa")


def write_json(path: Path, report: dict) -> None:
    """``report`` as indented UTF-8 JSON (the results files bench/report.py and bench/docs.py read)."""
    path.write_text(json.dumps(report, indent=2, ensure_ascii=False), encoding="utf-8")


# --------------------------------------------------------------------------- the machine


def machine() -> dict:
    """CPU, cores, RAM, Python, the commit (and whether src/ differs from it), the load at the start."""
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


def load1() -> float:
    """The one-minute load average, to two places."""
    return round(os.getloadavg()[0], 2)


def ints(text: str) -> list[int]:
    """``"1,2,3"`` as ``[1, 2, 3]`` (a comma-separated flag)."""
    return [int(x) for x in text.split(",") if x.strip()]


# --------------------------------------------------------------------------- timing and recall


def pct(values: Sequence[float], q: float) -> float | None:
    """The ``q`` quantile (0.5: the median, 0.95: p95) with linear interpolation; None for no values.

    ``q`` is a fraction, as the scripts have always passed it; the library's percentile takes 0-100."""
    from citeqa.evaluation.metrics import percentile

    return percentile(values, q * 100)


def latency_summary(ms: Sequence[float]) -> dict:
    """``p50``, ``p95``, ``mean`` and ``n`` of a list of milliseconds."""
    return {"p50": pct(ms, 0.5), "p95": pct(ms, 0.95), "mean": statistics.fmean(ms), "n": len(ms)}


def search_each(index: object, queries: np.ndarray, k: int = 10) -> tuple[np.ndarray, list[float]]:
    """Ids of a FAISS index's top ``k`` for each query searched alone, and each search's ms."""
    import numpy as np

    ids, times = [], []
    for q in queries:
        q = np.ascontiguousarray(q.reshape(1, -1), dtype=np.float32)
        t0 = time.perf_counter()
        _, found = index.search(q, k)  # type: ignore[attr-defined]
        times.append((time.perf_counter() - t0) * 1000)
        ids.append(found[0])
    return np.array(ids), times


def recall_at(found: np.ndarray, exact: np.ndarray) -> float:
    """Mean share of the exact top-k ids that ``found`` holds (id level)."""
    return statistics.fmean(len(set(f.tolist()) & set(e.tolist())) / len(e) for f, e in zip(found, exact))


# --------------------------------------------------------------------------- memory and ports


def with_bench_path(src: Path | None = None) -> dict[str, str]:
    """This process's environment with bench/ first on ``PYTHONPATH``, then ``src`` (default: the
    ``PYTHONPATH`` already set): a measuring subprocess (``python -c SCRIPT``) imports this module."""
    rest = str(src) if src is not None else os.environ.get("PYTHONPATH", "")
    return {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (str(BENCH), rest) if p)}


def free_port() -> int:
    """A loopback TCP port nobody listens on now (the library's, which the PostgreSQL test nodes use)."""
    from citeqa.pg.nodes import free_port as library_free_port

    return library_free_port()


def rss_mb() -> float:
    """This process's resident memory now (``VmRSS``), in MB; 0.0 where ``/proc`` does not tell."""
    return _status_mb("self", "VmRSS:") or 0.0


def status_mb(pid: int | str = "self") -> dict[str, float]:
    """Resident memory now and at its peak (``VmRSS``, ``VmHWM``) of process ``pid``, in MB (0.0 where
    ``/proc`` does not tell)."""
    return {key: _status_mb(str(pid), f"{key}:") or 0.0 for key in ("VmRSS", "VmHWM")}


def maxrss_mb() -> float:
    """This process's peak resident memory so far (``ru_maxrss``), in MB."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def vm_hwm_mb(pid: int) -> float | None:
    """Peak resident memory (``VmHWM``) of process ``pid``, in MB; None when it cannot be read."""
    return _status_mb(str(pid), "VmHWM:")


def dir_size_mb(path: Path) -> float:
    """The size of the files under ``path``, in MB (an index on disk)."""
    return sum(p.stat().st_size for p in Path(path).rglob("*") if p.is_file()) / 2**20


def _status_mb(pid: str, key: str) -> float | None:
    """One ``kB`` line of ``/proc/<pid>/status``, in MB; None when the file or the line is missing."""
    try:
        lines = Path(f"/proc/{pid}/status").read_text(encoding="ascii").splitlines()
    except OSError:
        return None
    return next((int(line.split()[1]) / 1024 for line in lines if line.startswith(key)), None)


def run_alone(script: Path, name: str, spec: dict, out: Path) -> dict:
    """One worker of ``script`` on its own (the script run by hand): its result, also written to
    ``out``/results.json with the machine and the command; the log beside it."""
    import tempfile

    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="citeqa-bench-") as tmp:
        result = run_worker(script, name, spec, Path(tmp), out, Path(script).stem)
    report = {"command": " ".join(["python", f"bench/{Path(script).name}", *sys.argv[1:]]), "machine": machine()}
    report[name] = result
    write_json(out / "results.json", report)
    print(json.dumps(result, indent=2, ensure_ascii=False))
    print(f"wrote {out / 'results.json'}")
    return result
