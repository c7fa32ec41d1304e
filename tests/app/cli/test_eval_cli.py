"""``citeqa eval``'s output: the header over the table, ``--json``, the files it names, the notes on F1 with
SQuAD's official figures, and the confidence buckets' "right" (keyword embedder, fixture corpus)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from citeqa.app.cli import main
from citeqa.records import sha256_file

MIXED = [
    {"id": "es-1", "question": "¿Cuánto cuesta la entrada al museo del faro?", "answers": ["6 euros"], "lang": "es"},
    {"id": "pt-1", "question": "Quando foi inaugurado o farol da Ilha Clara?", "answers": ["1912"], "lang": "pt"},
    {"id": "en-1", "question": "When was the windmill of Greyhill built?", "answers": ["1760"], "lang": "en"},
]
ENGLISH = [
    {"id": "en-1", "question": "When was the windmill of Greyhill built?", "answers": ["1760"], "lang": "en"},
    {"id": "en-2", "question": "When was the windmill of Greyhill restored?", "answers": ["2004"], "lang": "en"},
    {"id": "en-3", "question": "Who won the 1998 football world cup?", "answers": [], "lang": "en"},
]


def _qa(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def test_the_table_is_headed_by_what_produced_it(keyword_cli, shared_index: Path, tmp_path: Path, capsys):
    qa = _qa(tmp_path / "qa.jsonl", MIXED)
    assert keyword_cli(["eval", str(qa), "--index", str(shared_index), "-k", "5", "--reader", "off"]) == 0
    out = capsys.readouterr().out
    head = out.splitlines()[:4]
    assert head == [
        f"QA file: {qa} (sha256 {sha256_file(qa)})",
        f"index: {shared_index} · model: fake-keyword",
        "reader: off",
        "settings that differ from the defaults: -k 5, --reader off",
    ]
    assert out.index("citeqa evaluation") > out.index("settings that differ")
    assert keyword_cli(["eval", str(qa), "--index", str(shared_index)]) == 0
    assert capsys.readouterr().out.splitlines()[3] == "settings: the defaults"


def test_json_prints_the_report_alone_on_stdout(keyword_cli, shared_index: Path, tmp_path: Path, capsys):
    qa, pred, report = _qa(tmp_path / "qa.jsonl", MIXED), tmp_path / "out" / "run.jsonl", tmp_path / "report"
    assert keyword_cli(["eval", str(qa), "--index", str(shared_index), "--predictions", str(pred)]) == 0
    capsys.readouterr()
    args = ["eval", str(qa), "--index", str(shared_index), "--json", "--report", str(report), "--compare", str(pred)]
    assert keyword_cli([*args, "--fail-under", "p50=0.0001"]) == 1  # no answer takes under 0.1 µs
    captured = capsys.readouterr()
    record = json.loads(captured.out)  # nothing but the JSON on stdout
    assert record["header"]["qa_file"] == str(qa) and record["header"]["model"] == "fake-keyword"
    assert record["metrics"]["overall"]["n"] == 3 and record["languages"] == ["es", "pt", "en"]
    assert record["comparison"]["n_paired"] == 3 and record["squad_v1"] is None
    assert len(record["below_threshold"]) == 1 and record["below_threshold"][0].startswith("latency_p50")
    assert record["metrics"] == json.loads((report / "report.json").read_text(encoding="utf-8"))["metrics"]
    names = ["report.json", "questions.csv", "metrics.png", "reliability.png"]
    assert record["written"] == [str(report / name) for name in names]
    assert captured.err.splitlines() == [
        *(f"wrote {report / name}" for name in names),
        f"below threshold: {record['below_threshold'][0]}",
    ]
    assert "citeqa comparison" not in captured.out + captured.err


def test_predictions_names_every_file_it_writes(keyword_cli, shared_index: Path, tmp_path: Path, capsys):
    qa, pred = _qa(tmp_path / "qa.jsonl", MIXED), tmp_path / "out" / "run.jsonl"
    assert keyword_cli(["eval", str(qa), "--index", str(shared_index), "--predictions", str(pred)]) == 0
    out = capsys.readouterr().out
    meta = tmp_path / "out" / "run.meta.json"
    assert out.splitlines()[-2:] == [f"wrote {pred}", f"wrote {meta}"] and meta.is_file()
    assert json.loads(meta.read_text(encoding="utf-8"))["predictions"] == "run.jsonl"
    assert keyword_cli(["eval", str(qa), "--index", str(shared_index), "--predictions", str(pred), "--json"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["written"] == [str(pred), str(meta)]
    assert captured.err.splitlines() == [f"wrote {pred}", f"wrote {meta}"]
    with pytest.raises(SystemExit):
        main(["eval", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert "(out/run.jsonl: out/run.meta.json)" in help_text and "PRED.meta.json" not in help_text


def test_f1_is_said_to_drop_each_language_s_articles_and_squad_s_figure_is_beside_it(
    keyword_cli, shared_index: Path, tmp_path: Path, capsys
):
    mixed, english = _qa(tmp_path / "mixed.jsonl", MIXED), _qa(tmp_path / "english.jsonl", ENGLISH)
    assert keyword_cli(["eval", str(mixed), "--index", str(shared_index)]) == 0
    out = capsys.readouterr().out
    assert "drop the articles of each answer's own language, as MLQA's evaluation script does" in out
    assert "SQuAD v1.1" not in out
    assert keyword_cli(["eval", str(english), "--index", str(shared_index)]) == 0
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if "SQuAD v1.1" in line and "│" in line]
    assert [row.split("│")[1].strip() for row in rows] == [
        "SQuAD v1.1 exact match (official)",
        "SQuAD v1.1 token F1 (official)",
    ]
    assert "The SQuAD v1.1 rows are the official script's figures" in out
    assert keyword_cli(["eval", str(english), "--index", str(shared_index), "--json"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert set(record["squad_v1"]) == {"overall", "en"} and len(record["notes"]) == 2


def test_the_confidence_buckets_say_right_is_the_sentence_measure(
    keyword_cli, shared_index: Path, tmp_path: Path, capsys
):
    qa = _qa(tmp_path / "qa.jsonl", MIXED)
    assert keyword_cli(["eval", str(qa), "--index", str(shared_index)]) == 0
    lines = capsys.readouterr().out.splitlines()
    first = next(i for i, line in enumerate(lines) if line.startswith("confidence 0.0-0.3"))
    assert "right: the answer sentence holds a gold answer" in lines[first - 1]
    buckets = lines[first : first + 3]
    assert all(", right (sentence) " in line for line in buckets) and sum(int(b.split()[2]) for b in buckets) == 3


def test_json_on_a_claim_file(keyword_cli, shared_index: Path, tmp_path: Path, capsys):
    claims = _qa(
        tmp_path / "claims.jsonl",
        [{"id": "c1", "claim": "The windmill of Greyhill was built in 1790.", "verdict": "conflicting", "lang": "en"}],
    )
    pred = tmp_path / "claims-pred.jsonl"
    assert keyword_cli(["eval", str(claims), "--index", str(shared_index), "--json", "--predictions", str(pred)]) == 0
    captured = capsys.readouterr()
    record = json.loads(captured.out)
    assert record["metrics"]["accuracy"] == 1.0 and record["header"]["qa_sha256"] == sha256_file(claims)
    assert record["written"] == [str(pred)] and captured.err.splitlines() == [f"wrote {pred}"]


def test_json_with_squad_keeps_the_index_line_off_stdout(keyword_cli, repo: Path, tmp_path: Path, capsys):
    squad = repo / "eval" / "squad_sample.json"
    assert keyword_cli(["eval", "--squad", str(squad), "--index", str(tmp_path / "idx"), "--json"]) == 0
    captured = capsys.readouterr()
    record = json.loads(captured.out)
    assert record["squad_v1"]["overall"]["f1"] is not None and record["header"]["qa_sha256"] == sha256_file(squad)
    assert captured.err.startswith("SQuAD corpus ") and "7 paragraphs" in captured.err
