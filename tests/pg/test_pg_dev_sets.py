"""Every dev set through PostgreSQL in exact mode: the same answer record as the local index, question by question.

Each set's corpus (eval/dev2, eval/de, eval/fr) is indexed once with the real model in tmp_path,
published to the two nodes as an exact-mode generation, and questions of its qa.jsonl (with
their history, k = 10 as ``citeqa eval`` asks) are answered by an engine over the local folder
and by one over ``--backend postgresql://...``: the records (answer, confidence, band,
citations with document ids and offsets, short answer) must be equal except for the latency.

A seeded sample of :data:`SAMPLE` questions per set is answered without the reader and
:data:`READER_SAMPLE` more with it: 3 min 20 s to 4 min on this loaded 2-core machine, 1.5 to
2.5 min of it building the three indexes (an answer takes ~0.75 s without the reader, ~1.4 s with it).
``CITEQA_PG_EVERY_QUESTION=1`` asks all 187 questions without the reader (all equal,
2026-12-02, 5 min 42 s: docs/scale.md).
"""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest

from citeqa.embedding import DEFAULT_MODEL, load_embedder
from citeqa.engine import Engine
from citeqa.evaluation.qa_file import QAItem, load_qa
from citeqa.index.builder import update_index
from citeqa.index.store import IndexData, load_index

pytestmark = [pytest.mark.postgres, pytest.mark.slow]

SETS = ("dev2", "de", "fr")
#: Questions per set answered without the reader, and with it (it runs a model per question).
SAMPLE = 12
READER_SAMPLE = 2
EVERY = os.environ.get("CITEQA_PG_EVERY_QUESTION") == "1"


@pytest.fixture(scope="module")
def embedder():
    return load_embedder(DEFAULT_MODEL)


@pytest.fixture(scope="module")
def indexes(tmp_path_factory: pytest.TempPathFactory, repo: Path, embedder) -> dict[str, Path]:
    """Each dev set's local index, built once for the module."""
    folder = tmp_path_factory.mktemp("pg-dev-sets")
    for name in SETS:
        update_index(repo / "eval" / name / "corpus", folder / name, embedder)
    return {name: folder / name for name in SETS}


def _record(engine: Engine, item: QAItem) -> dict:
    record = engine.ask(item.question, history=item.history, k=10).to_dict()
    record.pop("latency_ms")
    return record


@pytest.mark.parametrize("name", SETS)
def test_exact_mode_answers_dev_questions_as_the_local_index(
    name: str, indexes: dict[str, Path], embedder, pg_spec: str, repo: Path
):
    from citeqa.pg.publish import publish

    local: IndexData = load_index(indexes[name])
    assert publish(local, pg_spec, ann="exact").ann == "exact"
    items = load_qa(repo / "eval" / name / "qa.jsonl")
    assert len(items) > 40
    shuffled = random.Random(name).sample(items, len(items))
    picked = {"off": shuffled[:SAMPLE], "on": shuffled[SAMPLE : SAMPLE + READER_SAMPLE]}
    for reader in ("off", "on"):
        chosen = items if EVERY and reader == "off" else picked[reader]
        direct = Engine.open(indexes[name], embedder=embedder, reader=reader)
        remote = Engine.open(embedder=embedder, reader=reader, backend=pg_spec)
        try:
            assert remote._data.generation == 1 and remote._data.ann == "exact"
            for item in chosen:
                assert _record(remote, item) == _record(direct, item), (item.id, reader)
        finally:
            remote._data.close()
