"""Runs that can be reproduced: the provenance block, and two runs on the same inputs giving the same records."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from citeqa.embedding.keyword import KeywordEmbedder
from citeqa.engine import Engine
from citeqa.evaluation import (
    collect_provenance,
    evaluate_engine,
    load_qa,
    prediction_record,
    summarize,
    write_predictions,
    write_report,
)
from citeqa.evaluation.provenance import file_record, git_state, index_manifest_sha256, settings_record
from citeqa.index.manifest import MANIFEST_NAME
from citeqa.index.store import current_generation
from citeqa.records import sha256_file

QA = [
    {
        "id": "es-1",
        "question": "¿Cuánto cuesta la entrada al museo del faro?",
        "answers": ["6 euros"],
        "lang": "es",
        "doc": "faro.txt",
    },
    {
        "id": "es-2",
        "question": "¿Y quién fue la última guardiana?",
        "answers": ["Marta Ruiz"],
        "lang": "es",
        "doc": "faro.txt",
        "history": ["¿Cuánto cuesta la entrada al museo del faro?"],
    },
    {
        "id": "pt-1",
        "question": "Quando foi inaugurado o farol da Ilha Clara?",
        "answers": ["1912"],
        "lang": "pt",
        "doc": "nested/farol.md",
    },
    {
        "id": "en-1",
        "question": "When was the windmill of Greyhill built?",
        "answers": ["1760"],
        "lang": "en",
        "doc": "mill.html",
    },
    {"id": "en-2", "question": "Who won the 1998 football world cup?", "answers": [], "lang": "en"},
]


@pytest.fixture
def qa_file(tmp_path: Path) -> Path:
    path = tmp_path / "qa.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in QA), encoding="utf-8")
    return path


def _records(index: Path, qa_file: Path) -> list[dict]:
    """One run with a freshly opened engine; the answer records without their timing."""
    engine = Engine.open(index, embedder=KeywordEmbedder())
    results = evaluate_engine(engine, load_qa(qa_file))
    return [{k: v for k, v in prediction_record(r).items() if k != "latency_ms"} for r in results]


def test_two_runs_on_the_same_inputs_give_the_same_records(shared_index: Path, qa_file: Path) -> None:
    first, second = _records(shared_index, qa_file), _records(shared_index, qa_file)
    assert len(first) == len(QA) and first == second
    assert any(r["correct"] for r in first)  # the run answers something, so equality is not vacuous


def test_provenance_block(shared_index: Path, qa_file: Path) -> None:
    engine = Engine.open(shared_index, embedder=KeywordEmbedder())
    block = collect_provenance(engine, qa_file, run={"k": 10})
    again = collect_provenance(engine, qa_file, run={"k": 10})
    assert {k: v for k, v in block.items() if k != "date"} == {k: v for k, v in again.items() if k != "date"}
    assert block["model"] == "fake-keyword" and block["backend"] == engine.manifest.backend
    live = current_generation(shared_index) / MANIFEST_NAME
    assert block["index"] == {
        "manifest_sha256": sha256_file(live),
        "documents": 3,
        "passages": engine.passage_count,
        "chunker": {"size": 800, "overlap": 100},
    }
    assert block["qa_file"] == {"name": "qa.jsonl", "sha256": sha256_file(qa_file)} and block["run"] == {"k": 10}
    assert block["settings"]["retrieval"]["fusion"] == "weighted" and block["settings"]["pool"] == 10
    scoring = block["settings"]["scoring"]
    assert len(scoring["weights_sha256"]) == 64 and scoring["abstain_below"] == engine.settings.abstain_below
    assert "weights" not in scoring and "features" not in scoring
    assert block["citeqa_version"] and block["python"] and "numpy" in block["libraries"]
    assert block["date"].endswith("+00:00")
    json.dumps(block)  # plain JSON data


def test_provenance_is_stored_with_the_report_and_beside_the_predictions(
    shared_index: Path, qa_file: Path, tmp_path: Path
) -> None:
    engine = Engine.open(shared_index, embedder=KeywordEmbedder())
    results = evaluate_engine(engine, load_qa(qa_file))
    block = collect_provenance(engine, qa_file)
    pred = write_predictions(results, tmp_path / "out" / "pred.jsonl", block)
    lines = pred.read_text(encoding="utf-8").splitlines()
    assert len(lines) == len(QA) and all("provenance" not in json.loads(line) for line in lines)
    meta = json.loads((tmp_path / "out" / "pred.meta.json").read_text(encoding="utf-8"))
    assert meta == {"predictions": "pred.jsonl", "provenance": block}
    report = write_report(results, summarize(results), tmp_path / "report", {"k": 10}, block)[0]
    assert json.loads(report.read_text(encoding="utf-8"))["provenance"] == block


def test_provenance_never_fails(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert git_state(tmp_path) == (None, None)  # not a repository
    monkeypatch.setenv("PATH", str(tmp_path))  # no git at all
    assert git_state(Path(__file__).parent) == (None, None)
    assert index_manifest_sha256(None) is None and index_manifest_sha256(tmp_path) is None
    assert file_record(None) is None and file_record(tmp_path / "missing.jsonl") == {
        "name": "missing.jsonl",
        "sha256": None,
    }


def test_settings_record_changes_with_the_scorer() -> None:
    from dataclasses import replace

    from citeqa.qa.settings import AnswerSettings

    settings = AnswerSettings.for_model("multilingual-e5-small")
    moved = replace(settings, scoring=replace(settings.scoring, abstain_below=0.9))
    a, b = settings_record(settings), settings_record(moved)
    assert a["scoring"]["weights_sha256"] != b["scoring"]["weights_sha256"]
    assert {k: v for k, v in a.items() if k != "scoring"} == {k: v for k, v in b.items() if k != "scoring"}
