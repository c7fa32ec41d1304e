"""The claim checker (citeqa.claims.checker): verdicts with exact citations over an answerer's index,
thresholds read once when none are given, a warm-up, and each check inside its deadline; built here
without an engine."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from citeqa.claims.check import CONFLICTING, SUPPORTED
from citeqa.claims.checker import ClaimChecker
from citeqa.claims.thresholds import ClaimThresholds, fitted_thresholds
from citeqa.errors import QuestionError
from citeqa.qa.backend import current_deadline
from tests.qa.test_answerer import make_answerer


@pytest.fixture(scope="module")
def checker(shared_index: Path) -> ClaimChecker:
    return ClaimChecker(make_answerer(shared_index))


def test_a_claim_the_documents_state_is_supported_with_an_exact_citation(checker: ClaimChecker):
    check = checker.run("El faro de Punta Brava se construyó en 1887.", k=3)
    assert check.verdict == SUPPORTED and check.language == "es" and check.latency_ms > 0
    first = check.evidence[0]
    assert first.citation.doc_id == "faro.txt"
    doc = checker.answerer.data.documents["faro.txt"].text
    assert first.citation.text == doc[first.citation.start : first.citation.end]
    assert first.citation.text[first.value.start : first.value.end] == "1887"


def test_a_claim_with_another_value_conflicts(checker: ClaimChecker):
    check = checker.run("The windmill of Greyhill was built in 1790.")
    assert check.verdict == CONFLICTING and check.evidence[0].document_value == "1760"


def test_claim_inputs_are_the_cleaned_claim_and_every_sentence_of_its_passages(checker: ClaimChecker):
    inputs = checker.claim_inputs("  El faro de Punta Brava\n se construyó en 1887. ", k=2)
    assert inputs.claim == "El faro de Punta Brava se construyó en 1887." and inputs.language == "es"
    assert len(inputs.candidates) == len(inputs.similarities) > 0
    with pytest.raises(QuestionError, match="claim is empty"):
        checker.run("  ")


def test_without_thresholds_those_fitted_are_read_with_the_first_check(shared_index: Path):
    checker = ClaimChecker(make_answerer(shared_index))
    assert checker.given_thresholds is None
    checker.run("El faro de Punta Brava se construyó en 1887.", k=2)
    fitted = fitted_thresholds(checker.answerer.data.model)
    assert checker.given_thresholds == fitted and checker.claim_thresholds == fitted


def test_thresholds_given_are_kept(shared_index: Path):
    given = ClaimThresholds(support_names_facts=0.5)
    checker = ClaimChecker(make_answerer(shared_index), given)
    assert checker.claim_thresholds is given and checker.given_thresholds is given


def test_warm_up_loads_the_claims_modules_and_thresholds(shared_index: Path):
    checker = ClaimChecker(make_answerer(shared_index))
    checker.warm_up()
    assert checker.given_thresholds is not None
    assert {"citeqa.claims.check", "citeqa.claims.reading"} <= set(sys.modules)


def test_a_check_runs_inside_the_answerers_deadline(shared_index: Path, monkeypatch: pytest.MonkeyPatch):
    checker = ClaimChecker(make_answerer(shared_index, question_timeout_s=5.0))
    seen = []
    real = checker.pipeline.sentences
    monkeypatch.setattr(
        checker.pipeline, "sentences", lambda *a, **kw: seen.append(current_deadline()) or real(*a, **kw)
    )
    checker.run("The windmill of Greyhill was built in 1790.", k=2)
    assert [d.seconds for d in seen] == [5.0] and current_deadline() is None
