"""Claim checking: the claim's parts, one sentence against a claim, the verdict, and Engine.check."""

from __future__ import annotations

import pytest

from citeqa.claims.check import (
    CONFLICTING,
    NOT_FOUND,
    SUPPORTED,
    ClaimCheck,
    ClaimThresholds,
    analyse_claim,
    clean_claim,
)
from citeqa.claims.judge import decide, judge_text, unit_relation
from citeqa.claims.parts import without
from citeqa.errors import QuestionError
from citeqa.messages import claim_message
from citeqa.records import Highlight

T = ClaimThresholds()


def judge_sentence(parts, sentence: str, lang: str, lead: str = "", context: str = ""):
    return judge_text(parts, sentence, lang, lead, context)


def relation(claim: str, lang: str, sentence: str, sentence_lang: str | None = None, lead: str = "") -> str:
    parts = analyse_claim(claim, lang)
    return unit_relation(judge_sentence(parts, sentence, sentence_lang or lang, lead), T)


def test_claim_parts_names_facts_and_words():
    parts = analyse_claim("Huawei lanzó el Kunlun P800 y GLM-5 con 744 mil millones de parámetros en 2026.", "es")
    assert {"kunlun", "p800", "glm-5"} <= parts.names
    assert [f.text for f in parts.facts] == ["744 mil millones de parámetros", "2026"]
    assert "huawei" in parts.soft_names  # the first word: a name only where the evidence has it
    assert "lanzo" in parts.keys  # cognate keys: folded, five letters


@pytest.mark.parametrize(
    "claim,lang,sentence,sentence_lang",
    [
        (
            "GLM-5 tiene unos 744 mil millones de parámetros.",
            "es",
            "GLM-5 es un modelo de lenguaje de aproximadamente 744 mil millones de parámetros.",
            "es",
        ),
        ("O GLM-5 tem 744 bilhões de parâmetros.", "pt", "GLM-5 is a model of roughly 744 billion parameters.", "en"),
        (
            "The Punta Brava lighthouse was built in 1887.",
            "en",
            "El faro de Punta Brava se construyó en 1887 con piedra traída de una cantera cercana.",
            "es",
        ),
        (
            "O farol da Ilha Clara foi inaugurado a 3 de maio de 1912.",
            "pt",
            "The lighthouse of Ilha Clara opened on May 3, 1912.",
            "en",
        ),
    ],
)
def test_the_same_facts_support_across_languages(claim, lang, sentence, sentence_lang):
    assert relation(claim, lang, sentence, sentence_lang) == "supports"


@pytest.mark.parametrize(
    "claim,lang,sentence,other",
    [
        (
            "GLM-5 tiene unos 800 mil millones de parámetros.",
            "es",
            "GLM-5 es un modelo de lenguaje de aproximadamente 744 mil millones de parámetros.",
            "744 mil millones de parámetros",
        ),
        (
            "The API of GLM-Image charges 0.5 yuan per image.",
            "en",
            "La API de GLM-Image cuesta 0,1 yuan por imagen generada.",
            "0,1 yuan",
        ),
        (
            "O farol da Ilha Clara foi inaugurado em 1920.",
            "pt",
            "O farol da Ilha Clara foi inaugurado em 1912 e tem 35 metros de altura.",
            "1912",
        ),
    ],
)
def test_another_value_for_the_same_thing_conflicts(claim, lang, sentence, other):
    parts = analyse_claim(claim, lang)
    judged = judge_sentence(parts, sentence, lang if "GLM-Image" not in claim else "es")
    assert unit_relation(judged, T) == "conflicts"
    assert judged.different is not None and judged.different.doc.text == other


def test_a_hedged_value_supports_the_value_it_rounds():
    parts = analyse_claim("Die Zugspitze ist knapp 3000 Meter hoch.", "de")
    assert judge_sentence(parts, "Die Zugspitze ist 2962 Meter hoch.", "de").matches[0].relation == "same"
    assert judge_sentence(parts, "Die Zugspitze ist 3100 Meter hoch.", "de").matches[0].relation == "different"
    french = analyse_claim("Lyon compte environ 520 000 habitants.", "fr")
    assert judge_sentence(french, "Lyon compte 522 250 habitants en 2021.", "fr").matches[0].relation == "same"


@pytest.mark.parametrize(
    "claim,lang,sentence,relation_said,doc_value",
    [
        ("Acme's sales rose by a third.", "en", "In 2026 Acme's sales rose 33 % to 4 million.", "supports", "33 %"),
        ("Acme's sales rose by a third.", "en", "In 2026 Acme's sales rose 12 % to 4 million.", "conflicts", "12 %"),
        ("Acme's sales rose 12 %.", "en", "In 2026, Acme's sales rose by a third.", "conflicts", "a third"),
        ("Las ventas de Acme cayeron un tercio.", "es", "Acme's sales fell 33 % in 2026.", "supports", "33 %"),
        ("As vendas da Acme caíram um quarto.", "pt", "Acme's sales fell 40 % in 2026.", "conflicts", "40 %"),
        ("Les ventes d'Acme ont augmenté d'un tiers.", "fr", "Acme's sales rose 33 % in 2026.", "supports", "33 %"),
    ],
)
def test_a_change_by_a_fraction_in_words_is_compared_as_a_share(claim, lang, sentence, relation_said, doc_value):
    """A change "by a third." is 33.3 %: the same value as "33 %", another than "12 %" (both ways)."""
    judged = judge_sentence(analyse_claim(claim, lang), sentence, "en")
    assert unit_relation(judged, T) == relation_said
    assert judged.matches[0].doc.text == doc_value


def test_an_ordinal_in_portuguese_is_no_fraction_of_the_claim():
    parts = analyse_claim("O quarto capítulo do livro saiu em 2026.", "pt")
    assert [f.text for f in parts.facts] == ["2026"]


def test_the_value_in_place_of_the_claims_is_compared_not_any_value():
    sentence = (
        "Arquitectura híbrida: un modelo autorregresivo de 9 mil millones de parámetros y un "
        "decodificador de difusión de 7 mil millones responsable del detalle fino."
    )
    decoder_9 = analyse_claim("El decodificador de difusión de GLM-Image tiene 9 mil millones de parámetros.", "es")
    decoder_7 = analyse_claim("El decodificador de difusión de GLM-Image tiene 7 mil millones de parámetros.", "es")
    lead = "GLM-Image, de Zhipu AI (enero de 2026)."
    assert judge_sentence(decoder_9, sentence, "es", lead).matches[0].relation == "different"
    assert judge_sentence(decoder_7, sentence, "es", lead).matches[0].relation == "same"


def test_nearest_words_tie_a_value_to_its_subject():
    sentence = "La cadencia anual pasó a ser regla — Ascend 970 en 2028, 980 en 2029."
    for claim, value in (("El Ascend 980 llegará en 2031.", "2029"), ("El Ascend 970 llegará en 2030.", "2028")):
        match = judge_sentence(analyse_claim(claim, "es"), sentence, "es").matches[0]
        assert match.relation == "different" and match.doc.text == value


@pytest.mark.parametrize(
    "claim,lang,sentence",
    [
        # a missing name: the sentence is about another thing
        ("El Huawei Connect 2026 se celebró en Shanghái.", "es", "En el Huawei Connect 2026, celebrado en septiembre."),
        # a value of another kind or unit is no conflict
        ("Training GLM-5 took about four months.", "en", "GLM-5 was trained on around 100,000 chips in 2026."),
        # another subject with another value: not the same thing
        ("DeepSeek V4 has 1.2 trillion parameters.", "en", "GLM-5 is a model of roughly 744 billion parameters."),
        ("The Eiffel Tower is 330 metres tall.", "en", "The windmill of Greyhill was built in 1760."),
    ],
)
def test_unrelated_sentences_neither_support_nor_conflict(claim, lang, sentence):
    assert relation(claim, lang, sentence) == "related"


def test_names_in_the_lead_of_the_paragraph_count():
    claim = "GLM-Image obtuvo una precisión de 0,9116 en CVTG-2K."
    sentence = "Lideró el benchmark CVTG-2K (precisión de palabra de 0,9116)."
    assert relation(claim, "es", sentence) == "related"
    assert relation(claim, "es", sentence, lead="GLM-Image, de Zhipu AI (enero de 2026).") == "supports"


def test_decide_prefers_support_then_conflict():
    parts = analyse_claim("O farol da Ilha Clara foi inaugurado em 1912.", "pt")
    same = judge_sentence(parts, "O farol da Ilha Clara foi inaugurado em 1912.", "pt")
    other = judge_sentence(parts, "O farol da Ilha Clara foi inaugurado em 1913.", "pt")
    nothing = judge_sentence(parts, "A ilha recebe cerca de 8 mil visitantes por ano.", "pt")
    assert decide([nothing, other, same], T) == SUPPORTED
    assert decide([nothing, other], T) == CONFLICTING
    assert decide([nothing], T) == NOT_FOUND
    assert decide([], T) == NOT_FOUND


def test_messages_in_the_claims_language_name_both_values():
    assert (
        claim_message("conflicting", "es", "800 mil millones", "744 billion")
        == "Los documentos dicen «744 billion», no «800 mil millones»."
    )
    assert claim_message("conflicting", "pt", "0,14", "0,014").startswith("Os documentos dizem «0,014»")
    assert claim_message("not_found", "en") == "Nothing in the documents speaks to this claim."
    assert "respaldan" in claim_message("supported", "es")


@pytest.mark.parametrize("lang", ["ca", "de", "en", "es", "fr", "it", "pt"])
def test_a_conflict_without_both_values_is_said_without_placeholders(lang: str):
    """A conflict the judge finds on a sentence may have no value read on either side: it is said
    plainly, never as "the documents say “?”, not “?”"."""
    for claim_value, doc_value in [(None, None), ("800", None), (None, "744")]:
        said = claim_message("conflicting", lang, claim_value, doc_value)
        assert said and "?" not in said and "{" not in said


def test_clean_claim_refuses_empty_and_long_claims_in_one_line():
    with pytest.raises(QuestionError, match="^the claim is empty; type a claim$"):
        clean_claim(" \n\t ")
    with pytest.raises(QuestionError, match=r"^the claim is too long \(100000 characters; the limit is 2000\)$"):
        clean_claim("x" * 100_000)
    with pytest.raises(QuestionError, match="must be text"):
        clean_claim(None)
    assert clean_claim("  A   claim\n") == "A claim"


def test_engine_check_on_the_fixture_corpus(shared_index, embedder):
    from citeqa.engine import Engine

    engine = Engine.open(shared_index, embedder=embedder)
    supported = engine.check("El faro de Punta Brava se construyó en 1887.", k=3)
    assert supported.verdict == SUPPORTED and supported.language == "es"
    first = supported.evidence[0]
    assert first.relation == "supports" and first.citation.doc_id == "faro.txt"
    doc = engine.documents["faro.txt"].text
    assert first.citation.text == doc[first.citation.start : first.citation.end]
    assert "1887" in first.citation.text[first.highlight.start : first.highlight.end]
    assert first.citation.text[first.value.start : first.value.end] == "1887"

    conflicting = engine.check("The windmill of Greyhill was built in 1790.")
    assert conflicting.verdict == CONFLICTING and conflicting.evidence[0].document_value == "1760"
    assert conflicting.message == "The documents say “1760”, not “1790”."

    absent = engine.check("O farol da Ilha Clara tem um elevador de vidro construído pela Siemens.", k=2)
    assert absent.verdict == NOT_FOUND and len(absent.evidence) == 2
    assert {e.relation for e in absent.evidence} == {"related"}
    assert ClaimCheck.from_dict(absent.to_dict()) == absent
    # the subject is in the documents, not the value: the message says so, not "nothing speaks to it"
    subject = engine.check("Marta Ruiz tenía 3 perros en el faro.", k=2)
    assert subject.verdict == NOT_FOUND
    assert subject.message == "Los documentos mencionan «Marta Ruiz», pero no este valor."
    unknown = engine.check("Regular stretching helps prevent running injuries.", k=2)
    assert unknown.verdict == NOT_FOUND and unknown.message == "Nothing in the documents speaks to this claim."
    with pytest.raises(QuestionError, match="claim is empty"):
        engine.check("")
    # a question and a sentence with nothing to check: a verdict and a message, in the page's language
    asked = engine.check("How many windmills are in Greyhill?", k=2, page_lang="es")
    assert asked.verdict == NOT_FOUND and asked.message.startswith("Esto es una pregunta, no una afirmación")
    assert not asked.evidence
    vague = engine.check("Greyhill is nice.", k=2)
    assert vague.verdict == NOT_FOUND and vague.message.startswith("Nothing in this sentence can be checked")


def test_checking_a_claim_encodes_it_once_and_runs_no_answer_stage(shared_index, embedder, monkeypatch):
    import citeqa.engine as engine_module
    from citeqa.engine import Engine

    engine = Engine.open(shared_index, embedder=embedder)
    calls = []
    real = engine_module.encode_queries
    monkeypatch.setattr(engine_module, "encode_queries", lambda e, texts: calls.append(list(texts)) or real(e, texts))
    for stage in ("extract", "choose", "record", "read"):  # a claim is retrieved and judged, never answered
        monkeypatch.setattr(engine.pipeline, stage, lambda *a, stage=stage, **kw: pytest.fail(f"{stage} ran"))
    first = engine.check("El faro de Punta Brava se construyó en 1887.", k=2)
    assert calls == [["El faro de Punta Brava se construyó en 1887."]] and first.verdict == SUPPORTED
    inputs = engine.claim_inputs("El faro de Punta Brava se construyó en 1887.", k=2)
    assert len(calls) == 2 and len(inputs.candidates) == len(inputs.similarities)
    assert {c.hit_index for c in inputs.candidates} == set(range(len(inputs.hits)))  # every hit, every sentence
    assert len(inputs.hits) == min(engine.passage_count, max(2, engine.settings.pool))


def test_without_blanks_highlights_and_keeps_offsets():
    text = "The 960PR arrives in 2027."
    blanked = without(text, [Highlight(4, 9), Highlight(21, 25)])
    assert blanked == "The       arrives in     ." and len(blanked) == len(text)
