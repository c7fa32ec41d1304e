"""Server memory over many ``/ask`` API calls (issue [1/6] item 6): Gradio's session states.

Starts the guarded server in this process over ``tests/data/corpus`` (keyword embedder, no
model), makes N calls to ``/gradio_api/call/ask`` (a new session each, as curl and most
clients make them) and prints, every ``--every`` calls, the process RSS and the number of
session states Gradio holds:

    PYTHONPATH=src .venv/bin/python bench/api_sessions.py --calls 1500

Figures, not assertions.
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
import time
from pathlib import Path

import httpx
from common import rss_mb

REPO = Path(__file__).resolve().parent.parent


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=1500)
    parser.add_argument("--every", type=int, default=250)
    args = parser.parse_args()

    from citeqa import Engine, build_index
    from citeqa.app.web import serving
    from citeqa.app.web.evaluate.runner import EvaluationRunner
    from citeqa.app.web.guard import rules as guard_rules
    from citeqa.app.web.holder import EngineHolder, UploadSettings
    from citeqa.app.web.server import mounted_blocks
    from citeqa.app.web.ui import guarded_app
    from citeqa.embedding.keyword import KeywordEmbedder

    with tempfile.TemporaryDirectory(prefix="citeqa-bench-sessions-") as tmp:
        corpus = Path(tmp) / "corpus"
        shutil.copytree(REPO / "tests" / "data" / "corpus", corpus)
        build_index(corpus, Path(tmp) / "index", embedder=KeywordEmbedder())
        holder = EngineHolder(Engine.open(Path(tmp) / "index", embedder=KeywordEmbedder()))
        sock = serving.bind("127.0.0.1", 0)
        policy = guard_rules.policy_for("127.0.0.1", sock.getsockname()[1])
        runner = EvaluationRunner(holder)
        app = guarded_app(holder, UploadSettings(corpus), policy, runner=runner)
        states = mounted_blocks(app).state_holder
        running = serving.Running(app, sock, "127.0.0.1")
        print(f"{'calls':>6} {'RSS MB':>8} {'session states':>15} {'s':>6}")
        started = time.monotonic()
        try:
            with httpx.Client(base_url=running.url, trust_env=False, timeout=60) as client:
                print(f"{0:>6} {rss_mb():>8.0f} {len(states.session_data):>15} {0.0:>6.1f}", flush=True)
                for n in range(1, args.calls + 1):
                    body = {"data": [f"When was the windmill built? {n}", [], 2, "auto"]}
                    event = client.post("/gradio_api/call/ask", json=body).json()["event_id"]
                    answer = client.get(f"/gradio_api/call/ask/{event}").text
                    assert "1760" in json.dumps(answer), answer[:200]
                    if n % args.every == 0:
                        seconds = time.monotonic() - started
                        print(f"{n:>6} {rss_mb():>8.0f} {len(states.session_data):>15} {seconds:>6.1f}", flush=True)
        finally:
            running.close()
            runner.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
