"""How long a question over PostgreSQL takes when one node hangs (SIGSTOP: alive, holding its
connections, answering nothing), against ``--question-timeout``.

Usage::

    PYTHONPATH=src HF_HUB_OFFLINE=1 nice -n 19 .venv/bin/python bench/pg_hung.py \\
        --limit 5 --questions 4 --out out/pg_hung.json

``corpus/`` is indexed with the keyword embedder (no model needed) and published to 2 local nodes
(``citeqa.pg.nodes``); shard 1 gets one streaming replica. For each state an engine over them
(reader off, ``question_timeout_s=--limit``) is opened and warmed with one question, the node is
stopped (``citeqa.pg.nodes.paused``: the server and its children), and ``--questions`` benchmark
questions are asked in turn, each on a thread given up after ``--cap`` seconds (so the code before,
which waited for ever, is measured too); then the node is continued. States: ``none`` (nothing
stopped: the baseline), ``replica`` (shard 1's replica stopped: the primary answers once the
replica's share of the question's time is out, and later questions skip it), ``primary`` (shard 2's
server, which has no replica, stopped: each question is one error). Per question: seconds and
``answered``, the error's class, or ``no answer after CAP s``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import load1, machine, query_texts, write_json  # noqa: E402 - beside this script


def timed(call: Any, cap: float) -> tuple[float, str]:
    """Seconds ``call()`` took on a thread (at most ``cap``), and what it ended with."""
    outcome: list[str] = []

    def run() -> None:
        try:
            call()
            outcome.append("answered")
        except Exception as exc:  # the outcome measured
            outcome.append(type(exc).__name__)

    thread = threading.Thread(target=run, daemon=True)
    t0 = time.perf_counter()
    thread.start()
    thread.join(cap)
    seconds = time.perf_counter() - t0
    return round(seconds, 3), outcome[0] if outcome else f"no answer after {cap:g} s"


def measure(folder: Path, spec: str, node: Any, questions: list[str], limit: float, cap: float) -> list[dict]:
    """``questions`` asked in turn with ``node`` stopped (None: nothing stopped), one engine warmed first."""
    from contextlib import nullcontext

    from citeqa.embedding.keyword import KeywordEmbedder
    from citeqa.engine import Engine
    from citeqa.pg.nodes import paused

    engine = Engine.open(
        folder / "absent", embedder=KeywordEmbedder(), reader="off", backend=spec, question_timeout_s=limit
    )
    try:
        engine.ask(questions[0])  # connections open to every server
        with paused(node) if node is not None else nullcontext():
            rows = []
            for question in questions:
                seconds, outcome = timed(lambda q=question: engine.ask(q), cap)
                rows.append({"seconds": seconds, "outcome": outcome})
        return rows
    finally:
        engine.close()


def main(argv: list[str] | None = None) -> int:
    from citeqa.embedding.keyword import KeywordEmbedder
    from citeqa.index.builder import update_index
    from citeqa.index.store import load_index
    from citeqa.pg.nodes import local_cluster, local_replica
    from citeqa.pg.publish import publish

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=float, default=5.0, help="--question-timeout, seconds")
    parser.add_argument("--questions", type=int, default=4, help="questions asked in each state")
    parser.add_argument("--cap", type=float, default=None, help="seconds before a question counts as hung (limit + 30)")
    parser.add_argument("--states", default="none,replica,primary")
    parser.add_argument("--out", type=Path, default=Path("out/pg_hung.json"))
    args = parser.parse_args(argv)
    cap = args.limit + 30 if args.cap is None else args.cap
    questions = query_texts()[: args.questions]
    report: dict = {"machine": machine(), "args": {k: str(v) for k, v in vars(args).items()}, "states": {}}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="pg-hung-", dir=args.out.parent))
    try:
        shutil.copytree(ROOT / "corpus", work / "corpus")
        update_index(work / "corpus", work / "index", KeywordEmbedder())
        with local_cluster(2, work) as nodes:
            primaries = [n.url for n in nodes]
            publish(load_index(work / "index"), ",".join(primaries))
            with local_replica(nodes[0]) as replica:
                spec = f"{primaries[0]}?replica=127.0.0.1:{replica.port},{primaries[1]}"
                stopped = {"none": None, "replica": replica, "primary": nodes[1]}
                for state in args.states.split(","):
                    rows = measure(work, spec, stopped[state], questions, args.limit, cap)
                    report["states"][state] = {"questions": rows, "load1_after": load1()}
                    print(json.dumps({"state": state, "limit_s": args.limit, "questions": rows}), flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    report["loadavg_end"] = os.getloadavg()
    write_json(args.out, report)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
