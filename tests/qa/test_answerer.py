"""The answerer (citeqa.qa.answerer): answers from one index with exact citations, bad questions refused,
a warm-up that loads once, and every question inside its deadline; built here without an engine."""

from __future__ import annotations

from pathlib import Path

import pytest

from citeqa.embedding import encode_queries, token_counter
from citeqa.embedding.keyword import KeywordEmbedder
from citeqa.errors import QuestionError
from citeqa.index.store import load_index
from citeqa.qa.answerer import Answerer
from citeqa.qa.backend import current_deadline
from citeqa.records import Answer


def make_answerer(index: Path, calls: list[list[str]] | None = None, **kwargs) -> Answerer:
    """An answerer over ``index`` with the keyword embedder; each batch it encodes is added to ``calls``."""
    embedder = KeywordEmbedder()

    def encode(texts: list[str]):
        if calls is not None:
            calls.append(list(texts))
        return encode_queries(embedder, texts)

    return Answerer(load_index(index), encode, count_tokens=token_counter(embedder), **kwargs)


@pytest.fixture(scope="module")
def answerer(shared_index: Path) -> Answerer:
    return make_answerer(shared_index)


def assert_exact(answerer: Answerer, answer: Answer) -> None:
    """Every citation, the answer and its short answer are the documents' text at their offsets."""
    text = {doc_id: doc.text for doc_id, doc in answerer.data.documents.items()}
    for c in answer.citations:
        assert text[c.doc_id][c.start : c.end] == c.text
    if not answer.abstained:
        assert answer.answer in answer.citations[0].text
        assert len(answer.answer) < len(answer.citations[0].text)
        place, first = answer.answer_span, answer.citations[0]
        assert text[place.doc_id][place.start : place.end] == answer.answer
        assert place.doc_id == first.doc_id and first.start <= place.start and place.end <= first.end
        if answer.short_answer is not None:
            short = answer.short_answer_span
            assert text[short.doc_id][short.start : short.end] == answer.short_answer
            assert place.start <= short.start and short.end <= place.end
    else:
        assert answer.answer_span is None and answer.short_answer_span is None


@pytest.mark.parametrize(
    "question,lang,doc,fact",
    [
        ("¿En qué año se construyó el faro de Punta Brava?", "es", "faro.txt", "1887"),
        ("Quando foi inaugurado o farol da Ilha Clara?", "pt", "nested/farol.md", "1912"),
        ("When was the windmill of Greyhill restored?", "en", "mill.html", "2004"),
    ],
)
def test_answers_in_each_language_with_exact_citations(answerer: Answerer, question, lang, doc, fact):
    answer = answerer.run(question)
    assert answer.language == lang
    assert answer.citations[0].doc_id == doc and answer.citations[0].lang == lang
    assert_exact(answerer, answer)
    assert not answer.abstained and fact in answer.answer
    assert 0.0 <= answer.confidence <= 1.0 and answer.latency_ms > 0


def test_record_has_the_documented_fields(answerer: Answerer):
    record = answerer.run("How many people climb the windmill every year?", k=2).to_dict()
    assert set(record) == {
        "question",
        "language",
        "answer",
        "abstained",
        "confidence",
        "citations",
        "latency_ms",
        "highlight",
        "short_answer",
        "answer_span",
        "short_answer_span",
        "band",
        "also_in",
    }
    assert len(record["citations"]) == 2
    if not record["abstained"]:  # the band the confidence falls in, with what it means
        assert set(record["band"]) == {"name", "precision", "support"}
    if record["short_answer"] is not None:  # the short answer is the highlighted phrase of the sentence
        h = record["highlight"]
        assert record["answer"][h["start"] : h["end"]] == record["short_answer"]


def test_short_answer_is_the_fact_the_question_asks_for(answerer: Answerer):
    answer = answerer.run("¿Cuánto cuesta la entrada al museo del faro?")
    assert answer.short_answer == "6 euros" and answer.short_answer in answer.answer
    assert answerer.run("¿Por qué se construyó el faro de Punta Brava?").short_answer is None


def test_follow_up_uses_history_only_when_needed(answerer: Answerer):
    query = answerer.pipeline.retrieval_query
    assert query("¿Y cuánto cuesta la entrada?", ["¿Qué es hoy el faro?"]).startswith("¿Qué es")
    assert query("When was the windmill built?", ["Who was João Pereira?"]) == "When was the windmill built?"
    assert query("When was the windmill built?", []) == "When was the windmill built?"


@pytest.mark.parametrize("bad", ["", "   \n\t ", "\x00\x01", None, 42, "x" * 5000])
def test_bad_questions_raise_question_error(answerer: Answerer, bad):
    with pytest.raises(QuestionError):
        answerer.run(bad)


def test_k_limits_citations(answerer: Answerer):
    assert len(answerer.run("faro", k=1).citations) == 1
    with pytest.raises(QuestionError):
        answerer.run("faro", k=0)


def test_run_is_the_traced_answer(answerer: Answerer):
    question = "When was the windmill of Greyhill restored?"
    trace = answerer.trace(question, k=2)
    answer = answerer.run(question, k=2)
    assert trace.language == "en" and [h.chunk.doc_id for h in trace.hits][0] == "mill.html"
    assert (answer.answer, answer.citations) == (trace.answer.answer, trace.answer.citations)
    assert answerer.question_language(question) == "en"


def test_warm_up_loads_once_with_a_question_per_language(shared_index: Path):
    calls: list[list[str]] = []
    answerer = make_answerer(shared_index, calls)
    answerer.warm_up()
    assert calls[0] == ["warm up"]
    langs = {answerer.question_language(text) for (text,) in calls[1:]}
    assert langs == {"es", "pt", "en"}  # one passage of each language of the index, asked as a question
    done = len(calls)
    answerer.warm_up()
    assert len(calls) == done  # once: a second warm-up loads nothing


@pytest.mark.parametrize("seconds", [None, 5.0])
def test_each_question_runs_inside_its_deadline(shared_index: Path, seconds, monkeypatch: pytest.MonkeyPatch):
    answerer = make_answerer(shared_index, question_timeout_s=seconds)
    seen = []
    real = answerer.pipeline.run
    monkeypatch.setattr(answerer.pipeline, "run", lambda *a, **kw: seen.append(current_deadline()) or real(*a, **kw))
    answerer.run("faro")
    assert current_deadline() is None and len(seen) == 1
    assert (seen[0].seconds if seen[0] else None) == seconds
