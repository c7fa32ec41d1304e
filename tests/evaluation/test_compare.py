"""Tests for citeqa.evaluation.compare and ``citeqa eval --compare``: known fixed and broken questions."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from citeqa.errors import QAFileError
from citeqa.evaluation.compare import (
    bootstrap_interval,
    changed_provenance,
    compare_runs,
    comparison_lines,
    load_predictions,
    meta_path,
    outcomes,
    print_comparison,
    regression_lines,
    sign_test,
    write_comparison,
)

ANSWERABLE = [f"q{i:02d}" for i in range(1, 25)]
UNANSWERABLE = [f"u{i}" for i in range(1, 7)]


def record(qid: str, *, right: bool, abstained: bool = False, f1: float | None = None) -> dict:
    """A predictions line as ``--predictions`` writes it (the fields compare reads)."""
    answerable = qid.startswith("q")
    flags = (
        {
            "rank": 1 if right else None,
            "hit1": right,
            "hit5": right,
            "rr": 1.0 if right else 0.0,
            "correct": right,
            "exact": False,
            "f1": f1 if f1 is not None else (0.5 if right else 0.0),
            "lang_first": True,
        }
        if answerable
        else dict.fromkeys(("rank", "hit1", "hit5", "rr", "correct", "exact", "f1", "lang_first"))
    )
    abstained = abstained if answerable else right
    return {
        "id": qid,
        "question": f"question {qid}?",
        "language": "en",
        "answer": None if abstained else "an answer",
        "abstained": abstained,
        "confidence": 0.5,
        "citations": [],
        "latency_ms": 3.0,
        "highlight": None,
        "lang": "en",
        "gold_answers": ["x"] if answerable else [],
        "gold_doc": None,
        "answerable": answerable,
        **flags,
        "citations_exact": 0,
        "citations_total": 0,
    }


def write_jsonl(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    return path


def old_run() -> list[dict]:
    """q01-q12 right, q13-q24 wrong; abstained on u1-u3; plus "gone", only in this run."""
    return (
        [record(q, right=i < 12) for i, q in enumerate(ANSWERABLE)]
        + [record(u, right=i < 3) for i, u in enumerate(UNANSWERABLE)]
        + [record("gone", right=True)]
    )


def new_run() -> list[dict]:
    """q03-q12 broken (10), q13, q14 and u4 fixed (3); plus "new1", only in this run."""
    right = set(ANSWERABLE[:2]) | {"q13", "q14"}
    return (
        [record(q, right=q in right) for q in ANSWERABLE]
        + [record(u, right=i < 4) for i, u in enumerate(UNANSWERABLE)]
        + [record("new1", right=True)]
    )


@pytest.fixture
def runs(tmp_path: Path):
    return (
        load_predictions(write_jsonl(tmp_path / "old.jsonl", old_run())),
        load_predictions(write_jsonl(tmp_path / "new.jsonl", new_run())),
    )


def test_fixed_broken_and_unpaired_questions(runs) -> None:
    old, new = runs
    comparison = compare_runs(old.records, new.records)
    assert [c.id for c in comparison.fixed] == ["q13", "q14", "u4"]
    assert [c.id for c in comparison.broken] == [f"q{i:02d}" for i in range(3, 13)]
    assert comparison.broken[0].question == "question q03?" and comparison.broken[0].new_answer == "an answer"
    assert comparison.n_paired == 30 and comparison.only_old == ("gone",) and comparison.only_new == ("new1",)


def test_metric_deltas_counts_and_tests(runs) -> None:
    old, new = runs
    deltas = {d.metric: d for d in compare_runs(old.records, new.records).deltas}
    assert {
        "right",
        "hit1",
        "hit5",
        "rr",
        "correct",
        "exact",
        "f1",
        "abstain_right",
        "false_abstention",
        "lang_first",
    } <= set(deltas)
    correct = deltas["correct"]
    assert correct.n == 24 and correct.binary and (len(correct.better_ids), len(correct.worse_ids)) == (2, 10)
    assert correct.old == pytest.approx(0.5) and correct.new == pytest.approx(4 / 24)
    assert correct.delta == pytest.approx(-8 / 24) and correct.high < 0
    assert correct.p_value == pytest.approx(2 * (1 + 12 + 66) / 2**12)  # McNemar exact, 2 vs 10
    assert correct.regressed and not correct.improved
    right = deltas["right"]  # 3 fixed vs 10 broken: p = 0.092, not significant
    assert (len(right.better_ids), len(right.worse_ids)) == (3, 10) and not right.regressed
    assert deltas["abstain_right"].n == 6 and deltas["abstain_right"].better_ids == ("u4",)
    assert deltas["f1"].binary is False and deltas["f1"].delta == pytest.approx(-4 / 24)
    assert deltas["false_abstention"].delta == 0 and not deltas["false_abstention"].higher_is_better
    assert not deltas["lang_first"].regressed and deltas["lang_first"].low == deltas["lang_first"].high == 0


def test_comparison_is_deterministic(runs) -> None:
    old, new = runs
    assert compare_runs(old.records, new.records).to_dict() == compare_runs(old.records, new.records).to_dict()


def test_new_flags_are_compared_without_code_changes() -> None:
    old = [record(q, right=True) | {"short_correct": True} for q in ANSWERABLE]
    new = [record(q, right=True) | {"short_correct": q > "q08"} for q in ANSWERABLE]
    deltas = {d.metric: d for d in compare_runs(old, new).deltas}
    assert deltas["short_correct"].worse_ids == tuple(ANSWERABLE[:8]) and deltas["short_correct"].regressed
    assert [d.metric for d in compare_runs(old, new).regressions] == ["short_correct"]
    lines = regression_lines(compare_runs(old, new))
    assert lines == [lines[0]] and lines[0].startswith("short accuracy fell from 1.000 to 0.667")


def test_false_abstention_rising_is_a_regression() -> None:
    old = [record(q, right=True) for q in ANSWERABLE]
    new = [record(q, right=q > "q08", abstained=q <= "q08") for q in ANSWERABLE]
    deltas = {d.metric: d for d in compare_runs(old, new).deltas}
    assert deltas["false_abstention"].delta == pytest.approx(8 / 24) and deltas["false_abstention"].regressed


def test_runs_without_common_questions() -> None:
    comparison = compare_runs([record("q01", right=True)], [record("q02", right=True)])
    assert comparison.n_paired == 0 and comparison.deltas == () and comparison.fixed == comparison.broken == ()
    assert comparison.only_old == ("q01",) and comparison.only_new == ("q02",) and comparison.regressions == ()


def test_a_metric_missing_from_one_run_is_not_applicable() -> None:
    old = [record(q, right=True) for q in ANSWERABLE]
    new = [record(q, right=True) | {"short_correct": False} for q in ANSWERABLE]
    delta = {d.metric: d for d in compare_runs(old, new).deltas}["short_correct"]
    assert delta.n == 0 and delta.delta is None and delta.low is None and delta.p_value is None
    assert not delta.regressed


def test_outcomes_derive_abstention() -> None:
    assert outcomes(record("u1", right=True)) == {"right": True, "abstain_right": True, "false_abstention": None}
    values = outcomes(record("q01", right=False, abstained=True))
    assert values["right"] is False and values["false_abstention"] is True and values["abstain_right"] is None
    assert "rank" not in values and "latency_ms" not in values and "confidence" not in values


def test_sign_test_and_bootstrap() -> None:
    assert sign_test(0, 0) == 1.0 and sign_test(1, 0) == 1.0
    assert sign_test(0, 6) == pytest.approx(2 / 64) and sign_test(5, 5) == 1.0
    assert bootstrap_interval(np.array([])) == (None, None)
    assert bootstrap_interval(np.zeros(5)) == (0.0, 0.0)
    diff = np.array([-1.0] * 10 + [0.0] * 10)
    low, high = bootstrap_interval(diff)
    assert -1.0 < low < -0.5 < high < 0 and bootstrap_interval(diff) == (low, high)


def test_one_changed_question_is_not_significant() -> None:
    old, new = [record("u1", right=True)], [record("u1", right=False)]
    delta = {d.metric: d for d in compare_runs(old, new).deltas}["abstain_right"]
    assert (delta.low, delta.high) == (-1.0, -1.0) and delta.p_value == 1.0 and not delta.regressed


def test_output_table_lists_and_json(runs, tmp_path: Path) -> None:
    import io

    from rich.console import Console

    old, new = runs
    comparison = compare_runs(old.records, new.records)
    console = Console(file=io.StringIO(), width=100)
    print_comparison(comparison, "old.jsonl", console=console, limit=3)
    out = console.file.getvalue()
    assert "old.jsonl -> this run (30 questions in both)" in out and "answer accuracy" in out and "worse" in out
    assert "fixed (3):" in out and "broken (10):" in out and "... and 7 more (see --compare-report)" in out
    assert "only in the earlier run: 1 question(s): gone" in comparison_lines(comparison)
    narrow = Console(file=io.StringIO(), width=60)
    print_comparison(comparison, "old.jsonl", console=narrow, limit=3)
    assert "…" not in narrow.file.getvalue()  # a narrow terminal wraps the cells ("-0.0…" was cut before)
    data = json.loads(write_comparison(comparison, tmp_path / "c" / "cmp.json").read_text(encoding="utf-8"))
    assert data["n_paired"] == 30 and data["only_new"] == ["new1"] and len(data["broken"]) == 10
    assert "correct" in data["regressions"] and data["bootstrap"] == {"resamples": 2000, "seed": 0, "level": 0.95}


def test_sidecar_provenance_and_changed_settings(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "pred.jsonl", old_run())
    assert meta_path(path) == tmp_path / "pred.meta.json"
    meta_path(path).write_text(json.dumps({"provenance": {"model": "a", "date": "1", "settings": {"pool": 10}}}))
    run = load_predictions(path)
    assert run.provenance == {"model": "a", "date": "1", "settings": {"pool": 10}} and len(run.records) == 31
    newer = {"model": "a", "date": "2", "settings": {"pool": 12}}
    assert changed_provenance(run.provenance, newer) == ("settings.pool",)
    assert changed_provenance(None, newer) == ()


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("", "holds no records"),
        ('{"id": "a"\n', "line 1: invalid JSON"),
        ("[1]\n", "line 1: expected a JSON object"),
        ('{"answerable": true, "abstained": false}\n', "line 1: missing or empty id"),
        ('{"id": "a", "abstained": false}\n', "line 1: answerable must be true or false"),
        (
            '{"id": "a", "answerable": true, "abstained": false}\n\n{"id": "a", "answerable": true, "abstained": true}\n',
            "line 3: duplicate id 'a' (first used on line 1)",
        ),
    ],
)
def test_bad_predictions_files(tmp_path: Path, content: str, expected: str) -> None:
    path = tmp_path / "p.jsonl"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(QAFileError, match=re.escape(expected)):
        load_predictions(path)
    with pytest.raises(QAFileError, match="not found"):
        load_predictions(tmp_path / "missing.jsonl")


# --------------------------------------------------------------------------- the command


NEVER = "zqxj-never-in-the-corpus"
QUESTIONS = [
    ("¿Cuánto cuesta la entrada al museo del faro?", "es"),
    ("¿En qué año se construyó el faro de Punta Brava?", "es"),
    ("¿Quién fue la última guardiana del faro?", "es"),
    ("Quando foi inaugurado o farol da Ilha Clara?", "pt"),
    ("Quanto custa o barco até a ilha?", "pt"),
    ("When was the windmill of Greyhill built?", "en"),
    ("How much did the restoration of the mill cost?", "en"),
    ("How many people climb the windmill every year?", "en"),
]


@pytest.fixture
def current(keyword_cli, built_index: Path, tmp_path: Path):
    """A run over 8 questions whose gold answer never occurs, so every answer is wrong: (qa file, predictions)."""
    qa = tmp_path / "qa.jsonl"
    qa.write_text(
        "".join(
            json.dumps({"id": f"c{i}", "question": q, "answers": [NEVER], "lang": lang}) + "\n"
            for i, (q, lang) in enumerate(QUESTIONS)
        ),
        encoding="utf-8",
    )
    pred = tmp_path / "now.jsonl"
    assert keyword_cli(["eval", str(qa), "--index", str(built_index), "--predictions", str(pred)]) == 0
    records = [json.loads(line) for line in pred.read_text(encoding="utf-8").splitlines()]
    assert [r["correct"] for r in records] == [False] * 8  # the premise of the tests below
    return qa, records


def test_cli_compare_exit_codes(keyword_cli, current, built_index: Path, tmp_path: Path, capsys) -> None:
    qa, records = current
    better = write_jsonl(
        tmp_path / "better.jsonl", [r | {"correct": True} for r in records] + [record("gone", right=True)]
    )
    args = ["eval", str(qa), "--index", str(built_index), "--compare", str(better)]
    capsys.readouterr()
    assert keyword_cli(args) == 0  # a regression, but nobody asked to fail on it
    out = capsys.readouterr().out
    assert "broken (8):" in out and "fixed (0):" in out and "only in the earlier run: 1 question(s): gone" in out
    report = tmp_path / "cmp.json"
    assert keyword_cli([*args, "--fail-on-regression", "--compare-report", str(report)]) == 1
    captured = capsys.readouterr()
    assert "regression: answer accuracy fell from 1.000 to 0.000" in captured.err
    data = json.loads(report.read_text(encoding="utf-8"))
    assert [c["id"] for c in data["broken"]] == [f"c{i}" for i in range(8)] and "correct" in data["regressions"]
    same = write_jsonl(tmp_path / "same.jsonl", records)
    assert (
        keyword_cli(["eval", str(qa), "--index", str(built_index), "--compare", str(same), "--fail-on-regression"]) == 0
    )
    assert "fixed (0):" in capsys.readouterr().out


def test_cli_compare_reports_changed_provenance(
    keyword_cli, current, built_index: Path, tmp_path: Path, capsys
) -> None:
    qa, _ = current
    pred = tmp_path / "now.jsonl"
    meta = json.loads(meta_path(pred).read_text(encoding="utf-8"))
    meta["provenance"]["settings"]["pool"] = 99
    meta_path(pred).write_text(json.dumps(meta), encoding="utf-8")
    capsys.readouterr()
    assert keyword_cli(["eval", str(qa), "--index", str(built_index), "--compare", str(pred)]) == 0
    assert "changed between the runs: settings.pool" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("extra", "expected"),
    [
        (["--fail-on-regression"], "need --compare"),
        (["--compare", "missing.jsonl"], "predictions file not found"),
    ],
)
def test_cli_compare_errors_are_one_line(
    keyword_cli, built_index: Path, tmp_path: Path, capsys, extra: list[str], expected: str
) -> None:
    qa = tmp_path / "qa.jsonl"
    qa.write_text('{"question": "¿Qué?", "answers": [], "lang": "es"}\n', encoding="utf-8")
    extra = [str(tmp_path / e) if e.endswith(".jsonl") else e for e in extra]
    assert keyword_cli(["eval", str(qa), "--index", str(built_index), *extra]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("citeqa: error:") and expected in err and "\n" not in err
