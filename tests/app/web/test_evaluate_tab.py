"""The Evaluate tab without a browser: outcomes, tables, the question detail, the background runner."""

from __future__ import annotations

import html as html_lib
import json
import re
import threading
from pathlib import Path

import pytest

from citeqa.app.web.evaluate import view
from citeqa.app.web.evaluate.runner import CANCELLED, DONE, FAILED, EvaluationRunner, RunRefused
from citeqa.app.web.evaluate.tab import compare_evaluation, start_evaluation
from citeqa.app.web.holder import EngineHolder, EvalSettings, default_qa_dir
from citeqa.evaluation import QAItem, contains_answer, load_qa, score_question, summarize
from citeqa.evaluation.matching import answer_spans
from citeqa.records import Answer, Citation, Highlight, Span
from tests.paths import DATA

QA = DATA / "qa"
FIXTURE_QA = QA / "fixture_corpus.jsonl"  # questions on the fixture corpus: every outcome once or more
DOCS = {"gold.txt": "The tower was built in 1887. It is 42 metres tall.", "other.txt": "Built in 1900 by <b>Ana</b>."}

#: Only a bound on a run or a thread that never finishes: a run writes charts, slow on a busy machine.
HANG_S = 300


def cite(doc: str, start: int = 0, end: int | None = None) -> Citation:
    text = DOCS[doc]
    end = len(text) if end is None else end
    return Citation(doc, doc.upper(), "en", start, end, text[start:end], 0.5)


def graded(
    answers: tuple[str, ...],
    doc: str | None,
    given: str | None,
    citations: tuple[Citation, ...],
    qid: str = "q",
    lang: str = "en",
    confidence: float = 0.5,
    question: str = "When was it built?",
):
    item = QAItem(qid, question, answers, lang, doc)
    first = citations[0] if citations else None
    place = None  # the answer's place, as the pipeline records it: in the first passage
    if given is not None and first is not None and given in first.text:
        at = first.start + first.text.index(given)
        place = Span(first.doc_id, at, at + len(given))
    answer = Answer(question, lang, given, given is None, confidence, citations, answer_span=place)
    return score_question(item, answer, DOCS, {"en"})


def text_of(html: str) -> str:
    """What a reader sees of some HTML: the tags dropped, character references resolved."""
    return html_lib.unescape(re.sub(r"<[^>]+>", "", html.replace("<br>", "\n")))


def sample() -> list:
    return [
        graded(("1887",), "gold.txt", "The tower was built in 1887.", (cite("gold.txt"),), "right"),
        graded(("1887",), "gold.txt", "It is 42 metres tall.", (cite("gold.txt"),), "wrong-answer"),
        graded(
            ("1887",),
            "gold.txt",
            "Built in 1900 by <b>Ana</b>.",
            (cite("other.txt"), cite("gold.txt")),
            "wrong-doc",
            lang="es",
        ),
        graded(("1887",), "gold.txt", None, (cite("gold.txt"),), "false-abst"),
        graded((), None, "Built in 1900 by <b>Ana</b>.", (cite("other.txt"),), "missed", lang="pt"),
        graded((), None, None, (cite("other.txt"),), "right-abst", lang="pt"),
    ]


# --------------------------------------------------------------------------- outcomes and tables


def test_each_question_has_one_outcome():
    assert [view.outcome(r) for r in sample()] == [
        "right",
        "wrong answer",
        "wrong document",
        "false abstention",
        "missed abstention",
        "right abstention",
    ]
    assert view.outcome_counts(sample()) == dict.fromkeys(view.OUTCOMES, 1)


def test_right_counts_the_answer_as_accuracy_does_and_no_gold_document_is_never_wrong_document():
    # a correct answer cited from another document is right (as answer accuracy counts it)
    moved = graded(("1900",), "gold.txt", "Built in 1900 by <b>Ana</b>.", (cite("other.txt"),))
    assert moved.correct and view.outcome(moved) == "right"
    anywhere = graded(("1887",), None, "Built in 1900 by <b>Ana</b>.", (cite("other.txt"),))
    assert view.outcome(anywhere) == "wrong answer"
    uncited = graded(("1887",), "gold.txt", "It is 42 metres tall.", ())
    assert view.outcome(uncited) == "wrong document"


def test_question_rows_filter_by_outcome_and_language():
    results = sample()
    assert [r[0] for r in view.question_rows(results)] == [r.item.id for r in results]
    assert [r[0] for r in view.question_rows(results, "wrong document")] == ["wrong-doc"]
    assert [r[0] for r in view.question_rows(results, "all", "pt")] == ["missed", "right-abst"]
    assert view.question_rows(results, "right", "pt") == []
    row = view.question_rows(results, "false abstention")[0]
    assert row == ["false-abst", "en", "false abstention", "When was it built?", "abstained", "0.50"]
    assert view.question_rows(results, "missed abstention")[0][4] == "Built in 1900 by <b>Ana</b>."  # text, not HTML


def test_cells_are_plain_text_and_long_answers_are_cut():
    long = "x" * 500
    result = graded(
        ("1887",),
        "gold.txt",
        "The tower was built in 1887.\x00" + long,
        (cite("gold.txt"),),
        question="Line\nbreak\x1b?",
    )
    row = view.question_rows([result])[0]
    assert row[3] == "Line break ?" and len(row[4]) == view.ANSWER_CELL_CHARS and row[4].endswith("…")


def test_filter_choices_carry_counts():
    results = sample()
    assert view.outcome_choices(results)[:3] == [
        ("all (6)", "all"),
        ("right (1)", "right"),
        ("wrong answer (1)", "wrong answer"),
    ]
    assert view.language_filter_choices(results) == [
        ("all (6)", "all"),
        ("es (1)", "es"),
        ("pt (2)", "pt"),
        ("en (3)", "en"),
    ]


def test_metrics_table_has_a_column_per_language():
    table = view.metrics_table(summarize(sample()))
    assert table["headers"] == ["metric", "overall", "es", "pt", "en"]
    assert table["data"][0] == ["questions", "6", "1", "2", "3"]


def test_outcome_help_names_every_outcome():
    html = view.outcome_help_html()
    assert all(f"<b>{name}</b>" in html for name in view.OUTCOMES)


# --------------------------------------------------------------------------- marking and the detail


@pytest.mark.parametrize(
    "text,gold",
    [
        ("Fundada EN  1998, y en 1998.", "en 1998"),
        ("Café ﬁnal CAFE\u0301", "café"),
        ("In 2023 and 2", "2"),
        ("nothing here", "1887"),
    ],
)
def test_answer_spans_find_what_grading_finds(text: str, gold: str):
    spans = answer_spans(text, gold)
    assert bool(spans) == contains_answer(text, gold)
    assert all(contains_answer(text[s.start : s.end], gold) for s in spans)


def test_marked_escapes_and_marks_overlaps_with_both_classes():
    html = view.answers_marked("<b>1887</b> tall", gold=[Highlight(3, 7)], given=[Highlight(0, 11)])
    assert "<b>" not in html and "&#60;b&#62;" in html
    assert '<mark class="citeqa-gold citeqa-given">1887</mark>' in html
    assert html.count('<mark class="citeqa-given">') == 2 and html.endswith(" tall")


def test_detail_marks_the_gold_and_the_given_answer_and_escapes_everything():
    evil = graded(
        ("1900",),
        "other.txt",
        "Built in 1900 by <b>Ana</b>.",
        (cite("other.txt"), cite("gold.txt")),
        qid="<script>x</script>",
        question="<img src=x onerror=alert(1)> When?",
    )
    html = view.detail_html(evil)
    for bad in ("<script", "<img", "<b>Ana"):
        assert bad not in html
    assert "<script>x</script> · en · right" in text_of(html) and "<b>Ana</b>" in text_of(html)
    assert "citeqa-outcome-right" in html and "gold document" in html and "holds a gold answer" in html
    passage = html.split("citeqa-passage", 1)[1]
    assert '<mark class="citeqa-gold citeqa-given">1900</mark>' in passage
    assert '<mark class="citeqa-given">Built in </mark>' in passage
    assert "Answer record (JSON)" in text_of(html) and '"doc_id": "other.txt"' in text_of(html)


def test_the_given_answer_is_marked_at_its_recorded_place_not_at_an_earlier_copy():
    said = "It is 42 metres tall."
    passage = f"{said} The tower was built in 1887. {said}"
    cit = Citation("twice.txt", "T", "en", 10, 10 + len(passage), passage, 0.5)
    second = 10 + passage.rindex(said)
    item = QAItem("t", "How tall?", ("42 metres",), "en", "twice.txt")
    answer = Answer(
        "How tall?", "en", said, False, 0.9, (cit,), answer_span=Span("twice.txt", second, second + len(said))
    )
    result = score_question(item, answer, {"twice.txt": "x" * 10 + passage}, {"en"})
    assert view.given_spans(cit, result) == [Highlight(second - 10, second - 10 + len(said))]
    other = Citation("twice.txt", "T", "en", 0, 10, "x" * 10, 0.4)
    assert view.given_spans(other, result) == []


def test_detail_of_abstentions_unanswerable_and_follow_ups():
    results = sample()
    assert "<em>abstained</em>" in view.detail_html(results[3]) and "citeqa-given" not in view.detail_html(results[3])
    missed = view.detail_html(results[4])
    assert "the documents do not answer" in text_of(missed) and "Gold document: any" in text_of(missed)
    follow = score_question(
        QAItem("f", "And who?", ("Ana",), "en", None, ("When was it built?",)),
        Answer("And who?", "en", "Built in 1900 by <b>Ana</b>.", False, 0.4, (cite("other.txt"),)),
        DOCS,
        {"en"},
    )
    html = view.detail_html(follow)
    assert "<ol><li>When was it built?</li></ol>" in html and "first relevant citation: [1]" in text_of(html)
    assert "Click a question" in view.detail_html(None)


def test_status_lines():
    assert "citeqa-eval-error" in view.status_html(None, "qa.jsonl: line 3: <missing> question")
    assert text_of(view.status_html(None, "qa.jsonl: line 3: <missing> question")) == (
        "qa.jsonl: line 3: <missing> question"
    )
    from citeqa.app.web.evaluate.runner import RunStatus

    running = view.status_html(RunStatus(1, "qa.jsonl", 10, 4, "running"))
    assert '<progress class="citeqa-eval-progress" max="10" value="4">' in running and "4 of 10" in running
    assert "Cancelling" in view.status_html(RunStatus(1, "qa.jsonl", 10, 4, "running", cancelling=True))
    assert "in 2.5 s" in view.status_html(RunStatus(1, "qa.jsonl", 10, 10, "done", seconds=2.5))
    failed = view.status_html(RunStatus(1, "qa.jsonl", 10, 3, "failed", error="index damaged"))
    assert "after 3 of 10 questions: index damaged" in text_of(failed) and "citeqa-eval-error" in failed


# --------------------------------------------------------------------------- QA folder


def test_default_qa_dir_is_eval_beside_the_corpus(tmp_path: Path):
    (tmp_path / "corpus").mkdir()
    assert default_qa_dir(tmp_path / "corpus") is None and default_qa_dir(None) is None
    (tmp_path / "eval").mkdir()
    assert default_qa_dir(tmp_path / "corpus") == (tmp_path / "eval").resolve()


def test_serve_has_an_eval_dir_option():
    from citeqa.app.cli import args as cli_args

    assert cli_args.parser().parse_args(["serve", "--eval-dir", "qa"]).eval_dir == Path("qa")
    assert cli_args.parser().parse_args(["serve"]).eval_dir is None


# --------------------------------------------------------------------------- the runner


@pytest.fixture
def holder(tmp_path: Path, make_holder) -> EngineHolder:
    return make_holder(tmp_path)[0]


@pytest.fixture
def runner(holder: EngineHolder, tmp_path: Path):
    runner = EvaluationRunner(holder, root=tmp_path / "runs")
    yield runner
    runner.close()


def test_a_run_grades_every_question_and_writes_the_downloads(runner: EvaluationRunner):
    items = load_qa(FIXTURE_QA)
    status = runner.start(items, "fixture_corpus.jsonl", FIXTURE_QA)
    assert status.running and status.total == len(items)
    assert runner.wait(HANG_S)
    status = runner.status()
    assert status.state == DONE and status.done == len(items) and status.seconds > 0
    run = runner.finished()
    assert run is not None and run.run_id == status.run_id and len(run.results) == len(items)
    counts = view.outcome_counts(run.results)
    assert set(counts) == set(view.OUTCOMES) and sum(counts.values()) == len(items)  # one outcome per question
    names = {
        "report.json",
        "questions.csv",
        "metrics.png",
        "reliability.png",
        "predictions.jsonl",
        "predictions.meta.json",
    }
    assert names <= set(run.files) and all(run.files[n].is_file() for n in names)
    meta = json.loads(run.files["predictions.meta.json"].read_text(encoding="utf-8"))
    assert meta["provenance"]["qa_file"]["name"] == "fixture_corpus.jsonl" and meta["provenance"]["run"]["k"] == 10
    lines = run.files["predictions.jsonl"].read_text(encoding="utf-8").splitlines()
    assert [json.loads(line)["id"] for line in lines] == [i.id for i in items]


def test_one_run_at_a_time_and_cancel_between_questions(holder: EngineHolder, runner: EvaluationRunner, gated_engine):
    gated = gated_engine(holder.engine)
    holder.swap(gated)
    items = load_qa(FIXTURE_QA)
    runner.start(items, "fixture_corpus.jsonl")
    assert gated.waiting.wait(HANG_S)
    with pytest.raises(RunRefused, match=r"already running \(fixture_corpus.jsonl, 0 of 13 questions\)"):
        runner.start(items, "again.jsonl")
    assert runner.cancel() and runner.status().cancelling
    gated.gate.set()
    assert runner.wait(HANG_S)
    status = runner.status()
    assert status.state == CANCELLED and status.done == 1 and runner.finished() is None
    assert not runner.cancel()  # nothing runs now


def test_the_engine_is_taken_once_per_run(holder: EngineHolder, runner: EvaluationRunner, gated_engine):
    gated = gated_engine(holder.engine)
    holder.swap(gated)
    runner.start(load_qa(FIXTURE_QA), "fixture_corpus.jsonl")
    assert gated.waiting.wait(HANG_S)

    class Broken:
        def __getattr__(self, name):
            raise AssertionError("the run used the engine swapped in after it started")

    holder.swap(Broken())
    gated.gate.set()
    assert runner.wait(HANG_S) and runner.status().state == DONE


def test_a_failing_engine_ends_the_run_with_its_message(holder: EngineHolder, runner: EvaluationRunner, gated_engine):
    from citeqa.errors import CiteqaError

    class Failing(gated_engine):
        def ask(self, *args, **kwargs):
            raise CiteqaError("the index is damaged")

    holder.swap(Failing(holder.engine))
    runner.start(load_qa(FIXTURE_QA), "fixture_corpus.jsonl")
    assert runner.wait(HANG_S)
    status = runner.status()
    assert status.state == FAILED and status.error == "the index is damaged" and status.done == 0


def test_the_next_run_removes_the_last_runs_files_and_close_removes_all(runner: EvaluationRunner, tmp_path: Path):
    """The shown run keeps its files until the next one finishes (a failed or cancelled one leaves them:
    test_server_low.py); then they go, and close() removes every run's."""
    items = load_qa(FIXTURE_QA)[:2]
    runner.start(items, "first.jsonl")
    assert runner.wait(HANG_S)
    first = runner.finished()
    runner.start(items, "second.jsonl")
    assert runner.wait(HANG_S)
    assert not first.files["report.json"].exists()
    assert runner.previous() is first and runner.before(runner.finished()) is first
    assert runner.finished().source == "second.jsonl"
    runner.close()
    assert not any((tmp_path / "runs").glob("run-*"))


def test_start_evaluation_refuses_a_bad_file_with_its_line_and_reason(runner: EvaluationRunner, tmp_path: Path):
    settings = EvalSettings(QA)
    bad = tmp_path / "upload" / "mine.jsonl"
    bad.parent.mkdir()
    bad.write_text(
        '{"question": "q", "answers": ["a"], "lang": "en"}\n{"question": "q2", "lang": "en"}\n', encoding="utf-8"
    )
    message = start_evaluation(runner, settings, {"path": str(bad), "orig_name": "my questions.jsonl"})
    assert message == "my questions.jsonl: line 2: missing answers (use [] for an unanswerable question)"
    assert runner.status() is None
    assert start_evaluation(runner, settings) == "Upload a QA file or choose one from the list first."
    assert "not a QA file of the eval folder" in start_evaluation(runner, settings, None, "../../etc/passwd")
    assert start_evaluation(runner, settings, None, "sample.jsonl") is None
    assert runner.wait(HANG_S) and runner.status().source == "sample.jsonl"


def test_compare_with_uploaded_predictions_and_with_the_previous_run(runner: EvaluationRunner, tmp_path: Path):
    items = load_qa(FIXTURE_QA)
    assert compare_evaluation(runner, None) == (None, "Run an evaluation first; the comparison is with its results.")
    runner.start(items[:6], "part.jsonl")
    assert runner.wait(HANG_S)
    first = runner.finished()
    assert compare_evaluation(runner, first, use_previous=True) == (None, "There is no earlier run on this server yet.")
    runner.start(items, "all.jsonl")
    assert runner.wait(HANG_S)
    run = runner.finished()
    table, html = compare_evaluation(runner, run, use_previous=True)
    assert compare_evaluation(runner, first, use_previous=True)[0] is None  # only the last run has one before it
    assert table["headers"][:3] == ["metric", "n", "before"] and table["data"][0][0] == "right outcome"
    assert "part.jsonl → this run (6 questions in both)" in text_of(html) and "only in this run: 7" in text_of(html)

    earlier = tmp_path / "up" / "old.jsonl"
    earlier.parent.mkdir()
    earlier.write_bytes(run.files["predictions.jsonl"].read_bytes())
    meta = tmp_path / "up2" / "old.meta.json"
    meta.parent.mkdir()
    meta.write_text(json.dumps({"provenance": {**run.provenance, "model": "another"}}), encoding="utf-8")
    table, html = compare_evaluation(runner, run, [str(earlier), str(meta)])
    shown = text_of(html)
    assert "old.jsonl → this run (13 questions in both)" in shown and "changed between the runs: model" in shown
    assert "fixed (0)" in shown and "broken (0)" in shown

    earlier.write_text('{"id": "x"}\n', encoding="utf-8")
    table, message = compare_evaluation(runner, run, [str(earlier)])
    assert table is None and text_of(message).startswith("old.jsonl: line 1: answerable must be true or false")
    assert compare_evaluation(runner, run, []) == (None, "Upload an earlier predictions file (.jsonl) first.")


def test_the_chat_answers_while_a_run_waits(holder: EngineHolder, runner: EvaluationRunner, gated_engine):
    from citeqa.app.web.chat.turns import chat_turn

    gated = gated_engine(holder.engine)
    holder.swap(gated)
    runner.start(load_qa(FIXTURE_QA), "fixture_corpus.jsonl")
    assert gated.waiting.wait(HANG_S)
    done = threading.Event()
    reply: list = []
    worker = threading.Thread(
        target=lambda: (
            reply.append(chat_turn(holder, "When was the windmill of Greyhill built?", [], [], 3)),
            done.set(),
        )
    )
    worker.start()
    assert done.wait(HANG_S) and runner.status().running
    assert "1760" in reply[0][0][-1]["content"]
    gated.gate.set()
    assert runner.wait(HANG_S)


def test_headline_cards_show_each_target_met_or_missed_in_words():
    from citeqa.evaluation.targets import TARGETS, Target

    cards = text_of(view.cards_html(summarize(sample())))
    assert "hit@1" in cards and "target ≥ 0.90" in cards and "target ≤ 0.05" in cards
    assert cards.count("missed") + cards.count("met") + cards.count("no questions") == len(TARGETS)
    assert "false abstention0.250target ≤ 0.05 · missed" in cards  # 1 of 4 answerable questions
    assert (
        Target("x", 0.5).met(0.5) and not Target("x", 0.05, at_most=True).met(0.06) and Target("x", 1).met(None) is None
    )


# --------------------------------------------------------------------------- a file for another corpus (issue [3/7] item 5)


def test_cards_of_a_run_for_another_corpus_say_so_and_show_no_target_met():
    metrics = summarize(sample())
    plain = view.cards_html(metrics)
    assert "citeqa-card-met" in plain and "another corpus" not in text_of(plain)  # this sample meets some target
    other = view.cards_html(metrics, mismatch=(0, 4))
    assert "citeqa-card-met" not in other and "citeqa-card-mismatch" in other
    said = text_of(other)
    assert said.startswith("This run's QA file is for another corpus: only 0 of its 4 gold documents")
    assert "not comparable" in said and " met" not in said.split("no target counts as met")[1]


def test_a_file_for_another_corpus_runs_only_once_confirmed(holder: EngineHolder, runner: EvaluationRunner):
    from citeqa.app.web.evaluate.files import file_fit, fit_html

    sample_qa = QA
    documents = holder.engine.documents
    refused = start_evaluation(runner, EvalSettings(sample_qa), shipped="sample.jsonl", documents=documents)
    assert refused is not None and refused.startswith("sample.jsonl: only 0 of its")
    assert runner.status() is None  # nothing started
    warning = fit_html(file_fit(sample_qa / "sample.jsonl", "sample.jsonl", documents), "es")
    assert 'class="citeqa-fit citeqa-fit-warning" role="alert"' in warning and "ninguno de sus" in text_of(warning)
    fits = fit_html(file_fit(sample_qa / "fixture_corpus.jsonl", "fixture_corpus.jsonl", documents))
    assert "citeqa-fit-warning" not in fits and 'role="alert"' not in fits
    settings = EvalSettings(sample_qa)
    assert start_evaluation(runner, settings, shipped="sample.jsonl", documents=documents, confirmed=True) is None
    assert runner.wait(HANG_S) and runner.status().total == 4


def test_metric_names_follow_the_page_language():
    """Issue [3/7] item 3: the Evaluate tab's metric names were English on every page."""
    metrics = summarize(sample())
    table = view.metrics_table(metrics, "de")
    assert table["headers"][:2] == ["Kennzahl", "gesamt"] and table["data"][0][:2] == ["Fragen", "6"]
    assert view.metrics_table(metrics)["headers"][:2] == ["metric", "overall"]  # as `citeqa eval` prints them
    assert "Antwortgenauigkeit (Satz)" in text_of(view.cards_html(metrics, "de"))
    assert view.chart_alt(metrics, "fr").startswith("Diagramme en barres") and "questions 6" in view.chart_alt(
        metrics, "fr"
    )


# --------------------------------------------------------------------------- issue [3/6] item 5: a cap and an estimate


def _copy_of(source: Path, folder: Path, name: str) -> dict:
    """``source`` as an upload named ``name`` (the FileData a page sends)."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_bytes(source.read_bytes())
    return {"path": str(path), "orig_name": name}


def test_a_file_over_the_question_limit_is_refused_before_it_runs(runner: EvaluationRunner, tmp_path: Path):
    """Issue [3/6] item 5: a 60,000-question file was accepted and would have held the server's one run for
    hours. A file of more questions than ``max_questions`` is refused in one line, in the page's language,
    naming the limit and the server's option; one at the limit runs."""
    questions = len(load_qa(FIXTURE_QA))  # 13
    upload = _copy_of(FIXTURE_QA, tmp_path / "up", "big.jsonl")
    refused = start_evaluation(runner, EvalSettings(QA, max_questions=questions - 1), upload, lang="es")
    assert refused == (
        f"big.jsonl tiene {questions} preguntas; una evaluación desde esta página admite como máximo {questions - 1} "
        "(opción --eval-max-questions del servidor). Divide el archivo o evalúalo con citeqa eval."
    )
    assert runner.status() is None  # nothing started
    english = start_evaluation(runner, EvalSettings(QA, max_questions=5), shipped="fixture_corpus.jsonl")
    assert english is not None and "has 13 questions; a run from this page takes at most 5" in english
    assert "--eval-max-questions" in english and runner.status() is None
    assert start_evaluation(runner, EvalSettings(QA, max_questions=questions), shipped="fixture_corpus.jsonl") is None
    assert runner.wait(HANG_S) and runner.status().state == DONE


@pytest.mark.parametrize("bad", [0, -1, 2.5, True, "2000", None])
def test_the_question_limit_is_a_whole_number_of_at_least_one(bad):
    """Issue [3/6] item 5: 0 or a negative limit would refuse every file; it is refused where it is set."""
    from citeqa.errors import ConfigError

    with pytest.raises(ConfigError, match="at least 1"):
        EvalSettings(max_questions=bad)
    assert EvalSettings(max_questions=1).max_questions == 1 and EvalSettings().max_questions == 2000


def test_the_estimate_takes_the_last_runs_time_per_question_or_the_typical_one(runner: EvaluationRunner):
    """Issue [3/6] item 5: before a run the page shows its estimated time (questions × a time per question),
    said to be an estimate: this server's last run's time per question once it has one, else the typical
    time (runner.SECONDS_PER_QUESTION, bench/eval_rate.py)."""
    from citeqa.app.web.evaluate.files import FileFit, duration_text, estimate_note, fit_html
    from citeqa.app.web.evaluate.runner import SECONDS_PER_QUESTION, Pace

    assert runner.pace() == Pace(SECONDS_PER_QUESTION, measured=False)
    assert estimate_note(137, Pace(0.5, False)) == (
        "Estimated time: about 1 min (137 questions × 0.5 s, a typical time per question; "
        "this server has not run an evaluation yet)."
    )
    assert estimate_note(60_000, Pace(0.144, True), "de") == (
        "Geschätzte Dauer: etwa 2 h 24 min (60000 Fragen × 0.14 s, die Zeit pro Frage der letzten Auswertung "
        "dieses Servers)."
    )
    assert [duration_text(s) for s in (0.2, 45, 1020, 3599, 7200, 8640)] == [
        "1 s",
        "45 s",
        "17 min",
        "1 h",
        "2 h",
        "2 h 24 min",
    ]
    fit = FileFit("qa.jsonl", 13, 0, 0)
    shown = text_of(fit_html(fit, "en", 2000, runner.pace()))
    assert shown.startswith("13 questions; the file names no gold documents") and "Estimated time: about" in shown
    over = fit_html(fit, "fr", 12, runner.pace())
    assert "Durée estimée" not in over and 'role="alert"' in over
    assert "qa.jsonl compte 13 questions ; une évaluation depuis cette page en prend au plus 12" in text_of(over)

    runner.start(load_qa(FIXTURE_QA)[:3], "three.jsonl")
    assert runner.wait(HANG_S) and runner.status().state == DONE
    pace = runner.pace()
    assert pace.measured and pace.seconds > 0 and pace.estimate(10) == 10 * pace.seconds
    assert "the time per question of this server's last run" in text_of(fit_html(fit, "en", 2000, pace))


def test_a_cancelled_run_measures_its_pace_too(holder: EngineHolder, runner: EvaluationRunner, gated_engine):
    gated = gated_engine(holder.engine)
    holder.swap(gated)
    runner.start(load_qa(FIXTURE_QA), "fixture_corpus.jsonl")
    assert gated.waiting.wait(HANG_S) and runner.cancel()
    gated.gate.set()
    assert runner.wait(HANG_S) and runner.status().state == CANCELLED and runner.status().done == 1
    assert runner.pace().measured and runner.pace().seconds > 0


def test_run_is_disabled_for_a_file_over_the_limit(holder: EngineHolder, runner: EvaluationRunner):
    """Issue [3/6] item 5: the page's Run stays disabled for a file it would refuse (nor is the "run it
    anyway" tick offered for one); the server refuses it too (above)."""
    from types import SimpleNamespace

    from citeqa.app.web.evaluate.files import FileFit
    from citeqa.app.web.evaluate.tab import _Page

    gr = SimpleNamespace(update=lambda **kwargs: kwargs)
    page = _Page(gr, holder, runner, EvalSettings(max_questions=100), tab=None)
    assert page.runnable(FileFit("ok.jsonl", 100, 0, 0)) == {"interactive": True}
    assert page.runnable(FileFit("big.jsonl", 101, 0, 0)) == {"interactive": False}
    assert page.runnable(FileFit("big.jsonl", 101, 3, 0), ticked=True) == {"interactive": False}
    assert page.confirming(FileFit("other.jsonl", 100, 3, 0))["visible"] is True
    assert page.confirming(FileFit("big.jsonl", 101, 3, 0))["visible"] is False
