"""Tests for citeqa.evaluation.metrics: hand-computed metrics, QA loaders, reports, thresholds."""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import citeqa
from citeqa.errors import ConfigError, QAFileError
from citeqa.evaluation import (
    METRIC_KEYS,
    QAItem,
    Scores,
    answer_language,
    check_thresholds,
    contains_answer,
    evaluate,
    exact_match,
    load_qa,
    normalize_answer,
    normalize_text,
    parse_thresholds,
    percentile,
    print_table,
    render_table,
    score_question,
    summarize,
    token_f1,
    write_predictions,
    write_report,
)
from citeqa.records import Answer, Citation
from tests.paths import DATA as TEST_DATA

DATA = TEST_DATA / "qa"

DOCS = {
    "pt.txt": "A capital de Portugal é Lisboa. O Porto fica no norte do país.",
    "es.txt": "La empresa se fundó en 1998 en Madrid. Su fundadora fue Ana Souza.",
    "en.txt": "The company was founded in 1998. Ana Souza founded it in Madrid.",
}
DOC_LANGS = {"pt.txt": "pt", "es.txt": "es", "en.txt": "en"}
LANGS = {"es", "pt", "en"}


def cite(doc_id: str, phrase: str, lang: str | None = None, shift: int = 0) -> Citation:
    """A citation of ``phrase`` in DOCS[doc_id]; ``shift`` moves the offsets (breaks them)."""
    start = DOCS[doc_id].index(phrase) + shift
    return Citation(doc_id, doc_id, lang or DOC_LANGS[doc_id], start, start + len(phrase), phrase, 1.0)


def other(n: int) -> Citation:
    """An irrelevant (but exact) citation."""
    return cite("pt.txt", "O Porto fica no norte", lang="pt") if n % 2 else cite("es.txt", "Madrid")


def ans(
    text: str | None = "Lisboa",
    citations: tuple[Citation, ...] = (),
    abstained: bool = False,
    latency: float = 10.0,
) -> Answer:
    return Answer("q?", "pt", None if abstained else text, abstained, 0.5, citations, latency)


def qa(answers: tuple[str, ...] = ("Lisboa",), lang: str = "pt", doc: str | None = "pt.txt", id: str = "q") -> QAItem:
    return QAItem(id, "Qual é a capital?", answers, lang, doc)


def score(item: QAItem, answer: Answer, **kw) -> object:
    return score_question(item, answer, DOCS, LANGS, **kw)


LISBOA = cite("pt.txt", "A capital de Portugal é Lisboa.")


# --------------------------------------------------------------------------- normalisation


def test_normalize_text_nfkc_casefold_whitespace() -> None:
    assert normalize_text("  Ｌｉｓｂｏａ\n\t１９９８  ") == "lisboa 1998"
    assert normalize_text("STRASSE") == normalize_text("Straße")


def test_contains_answer_needs_whole_words() -> None:
    assert contains_answer("Se fundó en 1998.", "1998")
    assert contains_answer("SÃO   PAULO, Brasil", "são paulo")
    assert not contains_answer("En 2023 abrió.", "2")
    assert not contains_answer("Lisboas", "Lisboa")
    assert not contains_answer("Sao Paulo", "São Paulo")  # accuracy keeps accents (spec)
    assert not contains_answer("anything", "   ")


def test_exact_match_strips_accents_articles_punctuation() -> None:
    assert normalize_answer("¡La Constitución!", "es") == "constitucion"
    assert exact_match("La Constitución.", "constitucion", "es")
    assert exact_match("o Porto", "Porto", "pt")
    assert exact_match("The Eiffel Tower", "eiffel tower", "en")
    assert exact_match("unas   Islas", "islas", "es")
    assert not exact_match("Porto", "Lisboa", "pt")


@pytest.mark.parametrize(
    ("lang", "prediction", "gold"),
    [
        ("de", "das Washington Monument", "Washington Monument"),  # MLQA's German list
        ("de", "dem Rhein", "Rhein"),
        ("fr", "le polonium", "polonium"),  # MKQA's French list
        ("fr", "«l’Indre»", "Indre"),  # an elided article is cut off its word
        ("it", "dell'arte", "arte"),
        ("pt", "os Açores", "Açores"),
    ],
)
def test_each_language_drops_its_own_articles(lang: str, prediction: str, gold: str) -> None:
    assert exact_match(prediction, gold, lang)
    assert exact_match(prediction, gold, lang.upper())


def test_articles_of_another_language_are_words() -> None:
    assert not exact_match("das Monument", "Monument", "en")  # "das" is no English article
    assert not exact_match("de Gaulle", "Gaulle", "es")  # "de" is an article only in French and Dutch
    assert not exact_match("la tour", "tour", "en")
    assert normalize_answer("The cat", "xx") == "the cat"  # a language without a list drops none
    assert normalize_answer("O'Brien", "en") == "obrien"  # an apostrophe inside a name is punctuation (SQuAD)
    assert normalize_answer("l'", "fr") == ""


def test_token_f1_hand_computed() -> None:
    # pred tokens [cat, sat], gold [cat, on, mat]: P=1/2, R=1/3, F1=0.4
    assert token_f1("The cat sat", "a cat on mat", "en") == pytest.approx(0.4)
    assert token_f1("São Paulo", "sao paulo", "pt") == 1.0
    assert token_f1("Porto", "Lisboa", "pt") == 0.0
    assert token_f1("the", "a", "en") == 1.0  # both empty after normalisation (SQuAD convention)
    assert token_f1("", "Lisboa", "pt") == 0.0
    assert token_f1("der Kölner Dom", "Kölner Dom", "de") == 1.0


# --------------------------------------------------------------------------- retrieval


def test_relevant_citation_at_rank_3() -> None:
    result = score(qa(), ans(citations=(other(1), other(2), LISBOA, other(3))))
    assert (result.rank, result.hit1, result.hit5) == (3, False, True)
    assert result.rr == pytest.approx(1 / 3)
    assert summarize([result]).overall.mrr10 == pytest.approx(1 / 3)


def test_two_relevant_citations_first_counts() -> None:
    second = cite("pt.txt", "Lisboa")
    result = score(qa(), ans(citations=(other(1), LISBOA, other(2), second)))
    assert result.rank == 2 and result.rr == 0.5


def test_relevant_at_rank_1_and_beyond_10() -> None:
    assert score(qa(), ans(citations=(LISBOA,))).hit1 is True
    late = score(qa(), ans(citations=tuple(other(i) for i in range(10)) + (LISBOA,)))
    assert (late.rank, late.hit5, late.rr) == (None, False, 0.0)
    sixth = score(qa(), ans(citations=tuple(other(i) for i in range(5)) + (LISBOA,)))
    assert (sixth.rank, sixth.hit5) == (6, False)


def test_relevance_needs_gold_doc_unless_item_has_none() -> None:
    wrong_doc = Citation("es.txt", "es", "es", 0, 6, "Lisboa", 1.0)  # text has answer, wrong doc
    assert score(qa(), ans(citations=(wrong_doc,))).rank is None
    assert score(qa(doc=None), ans(citations=(wrong_doc,))).rank == 1


def test_empty_citations() -> None:
    result = score(qa(), ans(citations=()))
    assert (result.rank, result.hit1, result.hit5, result.rr) == (None, False, False, 0.0)
    assert result.lang_first is False
    assert (result.citations_exact, result.citations_total) == (0, 0)
    metrics = summarize([result]).overall
    assert metrics.hit1 == 0.0 and metrics.mrr10 == 0.0
    assert metrics.citation_exact is None and metrics.n_citations == 0


def test_retrieval_means_over_answerable_only() -> None:
    results = [
        score(qa(id="a"), ans(citations=(LISBOA,))),
        score(qa(id="b"), ans(citations=(other(1), other(2), LISBOA))),
        score(qa(answers=(), id="c"), ans(abstained=True)),
    ]
    m = summarize(results).overall
    assert (m.n, m.n_answerable, m.n_unanswerable) == (3, 2, 1)
    assert m.hit1 == 0.5 and m.hit5 == 1.0
    assert m.mrr10 == pytest.approx((1 + 1 / 3) / 2)


# --------------------------------------------------------------------------- answers & abstention


def test_answer_accuracy_exact_and_f1() -> None:
    item = qa(answers=("1998", "en 1998"), lang="es", doc="es.txt")
    result = score(item, ans("La empresa se fundó en 1998."))
    assert result.correct is True and result.exact is False
    # best gold "en 1998": pred tokens [empresa, se, fundo, en, 1998] -> P=2/5, R=1 -> 4/7
    assert result.f1 == pytest.approx(4 / 7)
    assert score(item, ans("1998")).exact is True
    assert score(item, ans("1999")).correct is False


def test_answers_are_matched_in_the_language_they_are_written_in() -> None:
    """A Portuguese question whose gold answer is copied from a French document: French articles go."""
    item = qa(answers=("la tour Eiffel",), lang="pt", doc="fr.txt")
    assert score(item, ans("Tour Eiffel"), doc_langs={"fr.txt": "fr"}).exact is True
    assert score(item, ans("Tour Eiffel")).exact is False  # without the document's language: Portuguese
    assert answer_language(item, {"fr.txt": "fr"}) == "fr"
    assert answer_language(item, {}) == answer_language(item, None) == "pt"


def test_abstention_on_answerable_is_wrong() -> None:
    result = score(qa(), ans(abstained=True, citations=(LISBOA,)))
    assert (result.correct, result.exact, result.f1) == (False, False, 0.0)
    assert result.rank == 1  # retrieval is still judged on the cited evidence
    assert summarize([result]).overall.false_abstention == 1.0


def test_unanswerable_question_values_not_applicable() -> None:
    result = score(qa(answers=()), ans(abstained=True))
    assert (result.rank, result.hit1, result.correct, result.f1, result.lang_first) == (None,) * 5
    m = summarize([result]).overall
    assert m.hit1 is None and m.accuracy is None and m.false_abstention is None
    assert m.abstain_precision == 1.0 and m.abstain_recall == 1.0


def test_abstention_precision_recall_arithmetic() -> None:
    answerable = [score(qa(id=f"a{i}"), ans(abstained=i == 0)) for i in range(4)]
    unanswerable = [score(qa(answers=(), id=f"u{i}"), ans(abstained=i == 0)) for i in range(2)]
    m = summarize(answerable + unanswerable).overall
    # abstained: a0 (wrong), u0 (right) -> precision 1/2; recall 1/2; false 1/4
    assert m.n_abstained == 2
    assert (m.abstain_precision, m.abstain_recall, m.false_abstention) == (0.5, 0.5, 0.25)
    assert m.accuracy == 0.75


def test_no_abstentions_and_empty_results_give_none() -> None:
    m = summarize([score(qa(), ans())]).overall
    assert m.abstain_precision is None and m.abstain_recall is None
    assert m.false_abstention == 0.0
    empty = summarize([])
    assert empty.by_lang == {} and empty.overall.n == 0
    assert all(getattr(empty.overall, k) is None for k in METRIC_KEYS if not (k == "n" or k.startswith("n_")))


def test_answer_len_counts_non_abstained_answers() -> None:
    results = [score(qa(id="a"), ans("Lisboa")), score(qa(id="b"), ans("Lisboa, Portugal")),
               score(qa(id="c"), ans(abstained=True))]  # fmt: skip
    assert summarize(results).overall.answer_len == pytest.approx((6 + 16) / 2)


# --------------------------------------------------------------------------- citations, language, latency


def test_citation_exactness_with_wrong_offset() -> None:
    shifted = cite("pt.txt", "Lisboa", shift=1)
    missing_doc = Citation("nope.txt", "x", "pt", 0, 6, "Lisboa", 1.0)
    out_of_range = Citation("pt.txt", "x", "pt", 60, 200, "Lisboa", 1.0)
    result = score(qa(), ans(citations=(LISBOA, shifted, missing_doc, out_of_range)))
    assert (result.citations_exact, result.citations_total) == (1, 4)
    other_result = score(qa(id="b"), ans(citations=(LISBOA, other(1))))
    assert summarize([result, other_result]).overall.citation_exact == pytest.approx(3 / 6)
    assert summarize([other_result]).overall.citation_exact == 1.0


def test_lang_first_rules() -> None:
    es_item = qa(answers=("1998",), lang="es", doc="es.txt")
    assert score(es_item, ans(citations=(cite("es.txt", "1998"),))).lang_first is True
    assert score(es_item, ans(citations=(cite("en.txt", "1998"),))).lang_first is False
    assert score_question(es_item, ans(), DOCS, {"pt"}).lang_first is None  # no es documents
    cross = qa(answers=("1998",), lang="es", doc="en.txt")
    assert score(cross, ans(citations=(cite("en.txt", "1998"),)), doc_langs=DOC_LANGS).lang_first is None
    assert score(cross, ans(citations=(cite("en.txt", "1998"),))).lang_first is False  # no doc_langs
    results = [score(es_item, ans(citations=(cite("es.txt", "1998"),))),
               score(qa(id="b"), ans(citations=(cite("es.txt", "Madrid", lang="es"),))),
               score(cross, ans(), doc_langs=DOC_LANGS)]  # fmt: skip
    m = summarize(results).overall
    assert (m.lang_first, m.n_lang_first) == (0.5, 2)


def test_lang_detected_compares_the_answer_language_with_the_item() -> None:
    results = [score(qa(id="a"), ans()), score(qa(id="b", lang="es"), ans())]  # ans() detects "pt"
    assert summarize(results).overall.lang_detected == 0.5


def test_latency_percentiles() -> None:
    assert percentile([40.0, 10.0, 30.0, 20.0], 50) == 25.0
    assert percentile([10.0, 20.0, 30.0, 40.0], 95) == pytest.approx(38.5)
    assert percentile([7.0], 95) == 7.0 and percentile([], 50) is None
    results = [score(qa(id=str(i)), ans(latency=float(ms))) for i, ms in enumerate(range(1, 101))]
    m = summarize(results).overall
    assert m.latency_p50 == pytest.approx(50.5) and m.latency_p95 == pytest.approx(95.05)


def test_summarize_groups_by_question_language_in_display_order() -> None:
    results = [score(qa(lang="en", id="1"), ans()), score(qa(lang="de", id="2"), ans()),
               score(qa(lang="pt", id="3"), ans()), score(qa(lang="es", id="4"), ans())]  # fmt: skip
    metrics = summarize(results)
    assert list(metrics.by_lang) == ["es", "pt", "en", "de"]
    assert [name for name, _ in metrics.columns()] == ["overall", "es", "pt", "en", "de"]
    data = json.loads(json.dumps(metrics.to_dict()))
    assert data["overall"]["n"] == 4 and data["pt"]["n"] == 1
    assert set(data["es"]) == set(METRIC_KEYS) == {f for f in Scores.__dataclass_fields__}


# --------------------------------------------------------------------------- evaluate


def test_evaluate_asks_with_history_in_order() -> None:
    items = [qa(id="a"), QAItem("b", "And the north?", ("Porto",), "pt", "pt.txt", ("Capital?",))]
    calls: list[tuple[str, tuple[str, ...]]] = []

    def ask(question: str, history: tuple[str, ...]) -> Answer:
        calls.append((question, history))
        return ans(citations=(LISBOA,))

    results = evaluate(ask, items, DOCS, LANGS, progress=False, doc_langs=DOC_LANGS)
    assert calls == [("Qual é a capital?", ()), ("And the north?", ("Capital?",))]
    assert [r.item.id for r in results] == ["a", "b"]
    assert [r.correct for r in results] == [True, False]


def test_evaluate_with_progress_bar_and_bad_return(capsys: pytest.CaptureFixture[str]) -> None:
    assert len(evaluate(lambda q, h: ans(), [qa()], DOCS, LANGS, progress=True)) == 1
    with pytest.raises(TypeError, match="expected Answer"):
        evaluate(lambda q, h: "Lisboa", [qa()], DOCS, LANGS, progress=False)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- loaders


def test_load_good_jsonl_and_csv_agree() -> None:
    items = load_qa(DATA / "sample.jsonl")
    assert [i.id for i in items] == ["es-1", "pt-1", "en-1", "en-2"]
    assert items[0].answers == ("1998", "en 1998") and items[0].doc == "empresa.txt"
    assert items[2].doc is None and items[2].history == ("When was the company founded?",)
    assert items[3].answers == () and not items[3].answerable
    csv_items = load_qa(DATA / "sample.csv")
    assert csv_items[:2] == items[:2] and csv_items[3] == items[3]
    assert csv_items[2].history == ("When was the company founded?", "Where is it?")


def test_load_ids_default_and_numeric(tmp_path: Path) -> None:
    path = tmp_path / "qa.json"
    path.write_text(
        '{"id": 7, "question": "Q1", "answers": [], "lang": "EN"}\n'
        '{"question": "Q2", "answers": [" a "], "lang": "es", "doc": ""}\n',
        encoding="utf-8-sig",
    )
    items = load_qa(path)
    assert [i.id for i in items] == ["7", "line-2"]
    assert items[0].lang == "en" and items[1].answers == ("a",) and items[1].doc is None


GOOD = '{"id": "q1", "question": "Q?", "answers": ["a"], "lang": "es"}'


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ('{"id": "q2", "question": "Q?", "answers": ["a"], "lang": "es"', "invalid JSON"),
        ('[{"id": "q2"}]', "one JSON object per line"),
        ('[{"id": "q2"},', "invalid JSON"),
        ('"just a string"', "expected a JSON object"),
        ('{"id": "q2", "answers": ["a"], "lang": "es"}', "missing question"),
        ('{"id": "q2", "question": "  ", "answers": ["a"], "lang": "es"}', "empty question"),
        ('{"id": "q2", "question": 3, "answers": ["a"], "lang": "es"}', "question must be a string"),
        ('{"id": "q2", "question": "Q?", "answers": "a", "lang": "es"}', "answers must be a list of strings"),
        ('{"id": "q2", "question": "Q?", "answers": ["a", 1], "lang": "es"}', "answers must be a list of strings"),
        ('{"id": "q2", "question": "Q?", "answers": ["a", " "], "lang": "es"}', "answers[1] is empty"),
        ('{"id": "q2", "question": "Q?", "lang": "es"}', "missing answers"),
        ('{"id": "q2", "question": "Q?", "answers": ["a"]}', "missing lang"),
        ('{"id": "q1", "question": "Q?", "answers": ["a"], "lang": "es"}', "duplicate id 'q1' (first used on line 1)"),
        ('{"id": "q2", "question": "Q?", "answers": ["a"], "lang": "es", "history": "x"}', "history must be a list"),
        ('{"id": "q2", "question": "Q?", "answers": ["a"], "lang": "es", "doc": 5}', "doc must be a string"),
        ('{"id": true, "question": "Q?", "answers": ["a"], "lang": "es"}', "id must be"),
    ],
)  # fmt: skip
def test_bad_jsonl_row_names_file_and_line(tmp_path: Path, line: str, expected: str) -> None:
    path = tmp_path / "qa.jsonl"
    path.write_text(f"{GOOD}\n\n{line}\n", encoding="utf-8")
    with pytest.raises(QAFileError) as err:
        load_qa(path)
    message = str(err.value)
    assert "qa.jsonl" in message and "line 3" in message and expected in message


def test_many_bad_rows_are_summarised(tmp_path: Path) -> None:
    path = tmp_path / "qa.jsonl"
    path.write_text("{\n" * 5, encoding="utf-8")
    message = str(pytest.raises(QAFileError, load_qa, path).value)
    assert "line 1" in message and "line 3" in message and "and 2 more problems" in message


@pytest.mark.parametrize(
    ("name", "content", "expected"),
    [
        ("qa.txt", GOOD, "unsupported QA file type '.txt'"),
        ("qa.jsonl", "", "empty"),
        ("qa.jsonl", "\n  \n", "empty"),
        ("qa.csv", "id,question,answers,lang\n", "no questions"),
        ("qa.jsonl", b"\xff\xfe{}", "not UTF-8"),
    ],
)
def test_bad_files(tmp_path: Path, name: str, content: str | bytes, expected: str) -> None:
    path = tmp_path / name
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    with pytest.raises(QAFileError, match=expected) as err:
        load_qa(path)
    assert name in str(err.value)


def test_missing_file_and_directory(tmp_path: Path) -> None:
    with pytest.raises(QAFileError, match="not found"):
        load_qa(tmp_path / "nope.jsonl")
    folder = tmp_path / "dir.jsonl"
    folder.mkdir()
    with pytest.raises(QAFileError, match="not a file"):
        load_qa(folder)


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("id,question,lang\nq1,Q?,es\n", "line 1: CSV header lacks column(s) answers"),
        ("id,question,answers,lang,lang\nq1,Q?,a,es,es\n", "line 1: CSV header repeats column(s) lang"),
        ("id,question,answers,lang\nq1,Q?,a,es\nq2,Q?,a\n", "line 3: expected 4 fields, got 3"),
        ("id,question,answers,lang\nq1,Q?,a||b,es\n", "line 2: answers[1] is empty"),
        ("id,question,answers,lang\n\nq1,,a,es\n", "line 3: empty question"),
        ('id,question,answers,lang\nq1,"multi\nline",a,es\nq1,Q?,a,es\n', "line 4: duplicate id 'q1'"),
        ("id,question,answers,lang\nq1,Q?,a,\n", "line 2: empty lang"),
    ],
)
def test_bad_csv_names_line(tmp_path: Path, content: str, expected: str) -> None:
    path = tmp_path / "qa.csv"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(QAFileError) as err:
        load_qa(path)
    assert "qa.csv" in str(err.value) and expected in str(err.value)


# --------------------------------------------------------------------------- outputs


def _sample_results() -> list:
    return [
        score(qa(id="pt-1"), ans("Lisboa", citations=(LISBOA, other(1)), latency=12.0)),
        score(qa(("1998",), "es", "es.txt", "es-1"), ans("1998", citations=(cite("es.txt", "1998"),))),
        score(qa((), "en", None, "en-1"), ans(abstained=True, latency=30.0)),
    ]


def test_write_predictions(tmp_path: Path) -> None:
    results = _sample_results()
    path = write_predictions(results, tmp_path / "out" / "predictions.jsonl")
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert [r["id"] for r in records] == ["pt-1", "es-1", "en-1"]
    assert records[0]["hit1"] is True and records[0]["citations_total"] == 2
    assert records[2]["hit1"] is None and records[2]["answerable"] is False
    assert Answer.from_dict(records[0]) == results[0].answer  # the answer record round-trips


def test_write_report(tmp_path: Path) -> None:
    results = _sample_results()
    metrics = summarize(results)
    paths = write_report(results, metrics, tmp_path / "report", settings={"index": tmp_path, "k": 0})
    assert [p.name for p in paths] == ["report.json", "questions.csv", "metrics.png", "reliability.png"]
    assert all(p.is_file() for p in paths)
    report = json.loads(paths[0].read_text(encoding="utf-8"))
    assert report["metrics"]["overall"]["n"] == 3 and report["languages"] == ["es", "pt", "en"]
    assert report["settings"] == {"index": str(tmp_path), "k": 0}
    rows = list(csv.DictReader(io.StringIO(paths[1].read_text(encoding="utf-8"))))
    assert [r["id"] for r in rows] == ["pt-1", "es-1", "en-1"]
    assert rows[0]["hit1"] == "1" and rows[0]["first_doc"] == "pt.txt" and rows[2]["rank"] == ""
    assert rows[1]["gold_answers"] == "1998" and rows[2]["abstained"] == "1"
    assert all(p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" for p in paths[2:])


def test_render_and_print_table() -> None:
    metrics = summarize(_sample_results())
    text = render_table(metrics)
    header = text.splitlines()[0].split()
    assert header == ["metric", "overall", "es", "pt", "en"]
    assert "hit@1" in text and "n/a" in text and "ms" in text
    from rich.console import Console

    console = Console(file=io.StringIO(), width=200)
    print_table(metrics, console=console)
    assert "MRR@10" in console.file.getvalue()


# --------------------------------------------------------------------------- thresholds


def test_parse_thresholds() -> None:
    assert parse_thresholds("hit1=0.9, answer=0.85") == {"hit1": 0.9, "accuracy": 0.85}
    assert parse_thresholds("MRR=0.5,p95=800,citations=1") == {
        "mrr10": 0.5, "latency_p95": 800.0, "citation_exact": 1.0
    }  # fmt: skip
    assert parse_thresholds("") == {} and parse_thresholds(None) == {}


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("recall=0.5", "unknown metric 'recall'"),
        ("hit1=high", "not a number"),
        ("hit1=nan", "finite"),
        ("hit1=1.5", "between 0 and 1"),
        ("p95=-1", "negative"),
        ("hit1", "metric=value"),
        ("answer=0.8,accuracy=0.9", "given twice"),
    ],
)
def test_parse_thresholds_errors(spec: str, expected: str) -> None:
    with pytest.raises(ConfigError, match=expected):
        parse_thresholds(spec)


def test_check_thresholds() -> None:
    metrics = summarize(_sample_results())  # hit1 1.0, accuracy 1.0, p95 ~28 ms, no lang for en
    assert check_thresholds(metrics, parse_thresholds("hit1=1,answer=0.9,p95=100")) == []
    failures = check_thresholds(metrics, {"hit1": 1.0, "latency_p95": 20.0, "false_abstention": 0.0})
    assert failures == ["latency_p95 = 28 ms is above the maximum 20 ms"]
    lonely = summarize([score(qa(answers=()), ans(abstained=True))])
    assert check_thresholds(lonely, {"hit1": 0.5}) == ["hit1 is not applicable on this QA file (threshold 0.500)"]
    low = summarize([score(qa(), ans("Porto"))])
    assert check_thresholds(low, {"answer": 0.85}) == ["accuracy = 0.000 is below the required 0.850"]


def test_import_is_light() -> None:
    code = (
        "import sys, citeqa.evaluation; print([m for m in ('matplotlib', 'rich', 'tqdm', 'torch') if m in sys.modules])"
    )
    src = str(Path(citeqa.__file__).resolve().parents[1])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([src, os.environ.get("PYTHONPATH", "")])}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env)
    assert out.stdout.strip() == "[]"


def test_reliability_buckets_by_hand():
    from citeqa.evaluation import reliability

    gold = QAItem("q", "¿?", ("x",), "es", "d.txt")
    none = QAItem("u", "¿?", (), "es", None)
    doc = {"d.txt": "x y"}

    def result(item, text, conf):
        cit = (Citation("d.txt", "T", "es", 0, 3, "x y", 1.0),)
        ans = Answer("¿?", "es", text, text is None, conf, cit)
        return score_question(item, ans, doc, {"es"})

    rows = reliability(
        [result(gold, "x", 0.9), result(gold, "y", 0.85), result(none, None, 0.1), result(gold, "x", 0.5)]
    )
    assert [(b.n, b.right) for b in rows] == [(1, 1.0), (1, 1.0), (2, 0.5)]


def test_plot_reliability_writes_a_png_with_empty_bins(tmp_path: Path) -> None:
    from citeqa.evaluation.report import plot_reliability

    path = plot_reliability(_sample_results(), tmp_path / "deep" / "reliability.png")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert plot_reliability([], tmp_path / "none.png").stat().st_size > 1000  # no questions: axes only
