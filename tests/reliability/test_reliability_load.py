"""Load: 8 concurrent API clients against the real Gradio server get the serial answers, no errors.

Each client asks a fixed number of questions (not for a fixed time), so the verdict does not depend
on how fast a busy machine answers; throughput and latency under load are bench/load.py's.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from citeqa.embedding.keyword import KeywordEmbedder
from citeqa.engine import Engine
from citeqa.pg.nodes import free_port

pytestmark = pytest.mark.slow  # 8 clients x 18 questions through the real server: a minute on a busy machine

CLIENTS = 8
ROUNDS = 2  # each client asks every question this many times
HANG_S = 600  # only a bound on a client that never returns
QUESTIONS = [
    "¿En qué año se construyó el faro de Punta Brava?",
    "Quando foi inaugurado o farol da Ilha Clara?",
    "When was the windmill of Greyhill restored?",
    "How many people climb the windmill every year?",
    "¿Cuánto cuesta la entrada al museo del faro?",
    "Wann wurde die Windmühle gebaut?",
    "¿Cuándo was the windmill construído?",
    "<script>alert(1)</script>",
    "",  # an error record, the same every time
]


def comparable(record: dict) -> dict:
    record = json.loads(json.dumps(record, ensure_ascii=False))
    record.pop("latency_ms", None)
    return record


@pytest.fixture
def served(built_index: Path):
    from citeqa.app.web.api import ask_record
    from citeqa.app.web.holder import EngineHolder
    from citeqa.app.web.ui import build_app

    engine = Engine.open(built_index, embedder=KeywordEmbedder())
    holder = EngineHolder(engine)
    serial = {q: comparable(ask_record(holder, q, [], 5)) for q in QUESTIONS}
    app = build_app(holder)
    app.queue(default_concurrency_limit=CLIENTS)
    app.launch(server_name="127.0.0.1", server_port=free_port(), prevent_thread_lock=True, quiet=True)
    try:
        yield app, serial
    finally:
        app.close()


def test_concurrent_clients_get_serial_answers(served):
    from gradio_client import Client

    app, serial = served
    assert app.server_name == "127.0.0.1"
    url = app.local_url
    assert serial[""].keys() == {"error", "field"} and all("error" not in serial[q] for q in QUESTIONS[:-1])
    errors: list[str] = []
    mismatches: list[tuple[str, dict]] = []
    counts = [0] * CLIENTS
    start = threading.Barrier(CLIENTS)  # connected first, then all ask at once

    def worker(n: int) -> None:
        try:
            client = Client(url, verbose=False)
            start.wait(timeout=HANG_S)
            for i in range(n, n + ROUNDS * len(QUESTIONS)):  # each client starts at a different question
                q = QUESTIONS[i % len(QUESTIONS)]
                record = client.predict(q, [], 5, "auto", api_name="/ask")
                if comparable(record) != serial[q]:
                    mismatches.append((q, record))
                counts[n] += 1
        except Exception as exc:
            errors.append(f"client {n}: {type(exc).__name__}: {exc}")

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(CLIENTS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=HANG_S)
    assert not any(t.is_alive() for t in threads), "a client hung"
    assert errors == []
    assert mismatches == []
    assert counts == [ROUNDS * len(QUESTIONS)] * CLIENTS  # every client asked every question
