"""Supported means stated: a claim's predicate, value names and values must be in one sentence
(with the lead it continues); the quote is that whole sentence; translations are shown once."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import numpy as np
import pytest

from citeqa.claims.check import ClaimInputs, ClaimThresholds, analyse_claim, check_claim
from citeqa.claims.judge import judge_text, unit_relation, units_of
from citeqa.claims.translations import are_translations
from citeqa.errors import ConfigError
from citeqa.qa.spans import Candidate
from citeqa.records import Chunk, Document, Hit, Span, sha256_text
from citeqa.text import lexicon

T = ClaimThresholds()


def relation(claim: str, lang: str, sentence: str, sentence_lang: str, dense: float = 0.0, lead: str = "") -> str:
    return unit_relation(judge_text(analyse_claim(claim, lang), sentence, sentence_lang, lead, dense=dense), T)


def test_a_date_elsewhere_does_not_stand_for_the_predicate():
    claim = "Alibaba compró Nvidia en 2026."
    assert relation(claim, "es", "Lo que quedó probado en 2026 no es que China alcanzó a NVIDIA.", "es") == "related"
    assert relation(claim, "es", "En 2026 Alibaba compró Nvidia por sorpresa.", "es") == "supports"


@pytest.mark.parametrize(
    "sentence,lang",
    [("In 2026 Alibaba bought Nvidia.", "en"), ("Em 2026, a Alibaba adquiriu a Nvidia.", "pt")],
)
def test_a_predicate_is_met_by_a_word_meaning_it_in_another_language(sentence, lang):
    assert relation("Alibaba compró Nvidia en 2026.", "es", sentence, lang) == "supports"
    assert lexicon.concepts(["compró"], "es") & lexicon.concepts(["bought"], "en")


def test_an_off_topic_claim_is_not_supported_by_a_similar_sounding_sentence():
    claim = "The recipe for a good paella needs saffron."
    strict = ClaimThresholds(support_cover_min_plain=0.3, support_dense_plain=0.86)
    judged = judge_text(
        analyse_claim(claim, "en"), "On top of that, Zhipu needed bespoke optimizations:", "en", dense=0.9
    )
    assert judged.cover < 0.3
    assert unit_relation(judged, strict) == "related"


@pytest.mark.parametrize(
    "claim,lang,sentence,sentence_lang",
    [
        (
            "Sales of the Punta Brava lighthouse rose 5% in 2025.",
            "en",
            "Sales of the Punta Brava lighthouse fell 5% in 2025.",
            "en",
        ),
        (
            "Las ventas de Punta Brava cayeron un 5% en 2025.",
            "es",
            "As vendas de Punta Brava subiram 5% em 2025.",
            "pt",
        ),
        (
            "Punta Brava wuchs 2025 um 5 %.",
            "de",
            "Punta Brava a baissé de 5 % en 2025.",
            "fr",
        ),
    ],
)
def test_a_sentence_saying_the_opposite_with_the_same_values_conflicts(claim, lang, sentence, sentence_lang):
    """The same values under the opposite predicate (``concept_opposites``) never support; with the
    names and values there, the unit conflicts."""
    judged = judge_text(analyse_claim(claim, lang), sentence, sentence_lang, dense=0.95)
    assert judged.opposed and judged.all_same
    assert unit_relation(judged, T) == "conflicts"


def test_a_sentence_saying_both_predicates_is_not_opposed():
    claim = analyse_claim("Sales of Punta Brava rose 5% in 2025.", "en")
    both = judge_text(claim, "Sales of Punta Brava rose 5% in 2025 after they fell in 2024.", "en")
    assert not both.opposed and unit_relation(both, T) == "supports"
    assert lexicon.opposite_concepts({"win"}) == {"lose"} and not lexicon.opposite_concepts({"buy"})


def test_a_name_that_is_the_claims_value_must_be_there():
    claim = "Larkspur Press fue fundada en Bristol en 1965."
    assert analyse_claim(claim, "es").value_names == {"bristol"}
    assert relation(claim, "es", "Larkspur Press was founded in Bath in 1965.", "en") == "related"
    assert relation(claim, "es", "Larkspur Press was founded in Bristol in 1965.", "en") == "supports"


@pytest.mark.parametrize(
    ("claim", "lang", "value"),
    [
        ("Die Brücke wurde von Gustave Eiffel entworfen.", "de", {"gustave", "eiffel"}),
        ("Larkspur Press wurde 1965 in Bristol gegründet.", "de", {"bristol"}),
        ("Le pont a été conçu par Gustave Eiffel.", "fr", {"gustave", "eiffel"}),
        ("Larkspur Press a été fondée à Bristol en 1965.", "fr", {"bristol"}),
    ],
)
def test_german_and_french_value_prepositions_make_a_name_the_claims_value(claim, lang, value):
    assert analyse_claim(claim, lang).value_names == value


def test_a_name_the_document_shortens_is_still_found():
    parts = analyse_claim("Corrington Rovers clinched the title on 20 April 2024.", "en")
    sentence = "Corrington, unbeaten since New Year, clinched the title on 20 April 2024."
    have = {"corrington", "unbeaten", "clinched", "title"}
    assert parts.names_found(have, frozenset({"corrington", "rovers"})) == 1.0
    assert parts.names_found(have, frozenset({"corrington"})) == 0.5  # never written in full: not the same name
    assert judge_text(parts, sentence, "en").names == 0.5


def test_a_count_without_the_claims_noun_or_of_another_size_is_no_conflict():
    goals = judge_text(
        analyse_claim("Sami Haddad scored 29 goals.", "en"), "Sami Haddad of Pendle Bridge, aged 19.", "en"
    )
    assert goals.different is None
    cost = judge_text(
        analyse_claim("The line cost 540 million euros.", "en"), "A single ticket on the line costs 13.80 euros.", "en"
    )
    assert cost.different is None
    other = judge_text(
        analyse_claim("The line cost 540 million euros.", "en"), "The line cost 610 million euros.", "en"
    )
    assert other.different is not None


def _doc(doc_id: str, text: str, lang: str, title: str = "T") -> Document:
    return Document(doc_id, title, text, lang, sha256_text(text))


def _hit(doc: Document, row: int = -1) -> Hit:
    return Hit(Chunk.make(doc.doc_id, 0, len(doc.text), doc.text, doc.lang), 1.0, 0.8, 0.0, row)


EN = (
    "The concrete cases\n"
    "GLM-5, by Zhipu (February 2026). The leap in scale: roughly 744 billion parameters.\n"
    "DeepSeek V4. Moved its training to the Ascend 950, dropping NVIDIA in the process.\n"
)
ES = (
    "Los casos concretos\n"
    "GLM-5, de Zhipu (febrero de 2026). El salto de escala: unos 744 mil millones de parámetros.\n"
    "DeepSeek V4. Trasladó su entrenamiento al Ascend 950, abandonando NVIDIA en el proceso.\n"
)


def test_a_sentence_continuing_a_lead_is_one_unit_and_a_heading_is_context():
    doc = _doc("en.txt", EN, "en")
    units = units_of([_hit(doc)], [], [], {doc.doc_id: doc})
    texts = [u.text for u in units]
    assert "DeepSeek V4. Moved its training to the Ascend 950, dropping NVIDIA in the process." in texts
    deep = next(u for u in units if u.text.startswith("DeepSeek V4. Moved"))
    assert EN[deep.start : deep.end] == deep.text and deep.sentence_start > deep.start
    leap = next(u for u in units if "leap" in u.text)
    assert leap.text.startswith("GLM-5, by Zhipu") and "The concrete cases" in leap.context
    plain = _doc("es.txt", "Entre los tres suman 154,5 hectómetros cúbicos. Peñagorda es el mayor.", "es")
    assert [u.text for u in units_of([_hit(plain)], [], [], {plain.doc_id: plain})] == [
        "Entre los tres suman 154,5 hectómetros cúbicos.",
        "Peñagorda es el mayor.",
    ]


def test_the_quote_is_the_whole_sentence_and_translations_are_shown_once():
    en, es = _doc("en.txt", EN, "en"), _doc("es.txt", ES, "es")
    other = _doc("other.txt", "DeepSeek V4 was trained on NVIDIA hardware in 2024, said Zhipu.", "en")
    assert are_translations(en, es) and not are_translations(en, other)
    docs = {d.doc_id: d for d in (en, es, other)}
    check = check_claim(
        ClaimInputs(
            "DeepSeek V4 moved its training to the Ascend 950.", "en", (_hit(en), _hit(es), _hit(other)), (), ()
        ),
        docs,
        k=3,
        thresholds=ClaimThresholds(support_dense_plain=1.1),
    )
    assert check.verdict == "supported"
    first = check.evidence[0]
    quote = first.citation.text[first.highlight.start : first.highlight.end]
    assert quote == "DeepSeek V4. Moved its training to the Ascend 950, dropping NVIDIA in the process."
    assert [(t.doc_id, t.lang) for t in first.translations] == [("es.txt", "es")]
    assert ES[first.translations[0].start : first.translations[0].end] == first.translations[0].text
    assert [e.citation.doc_id for e in check.evidence] == ["en.txt", "other.txt"]
    assert type(check).from_dict(check.to_dict()) == check


def test_word_lists_are_data_and_a_broken_one_is_a_config_error(tmp_path: Path, monkeypatch):
    (tmp_path / "xx.json").write_text(json.dumps({"concepts": {"buy": "not a list"}}), "utf-8")
    monkeypatch.setattr(lexicon, "_DIR", tmp_path)
    lexicon._data.cache_clear()
    try:
        with pytest.raises(ConfigError, match="must list words"):
            lexicon.concepts(["kaufen"], "xx")
    finally:
        lexicon._data.cache_clear()
        lexicon._table.cache_clear()


def test_the_fit_takes_the_middle_of_a_tie(repo: Path):
    sys.path.insert(0, str(repo / "eval"))
    try:
        import fit_claims
    finally:
        sys.path.pop(0)
    combos = np.asarray([[0.1], [0.2], [0.3], [0.4], [0.5]])
    right = np.asarray([3, 5, 5, 5, 2])
    assert fit_claims._choose(right, np.zeros(5), [combos]) == (2,)
    assert fit_claims._choose(right, np.asarray([0, 0, 1, 1, 0]), [combos]) == (1,)


def test_the_translations_are_noted_where_the_evidence_is_shown():
    from rich.console import Console

    from citeqa.app.cli.render import print_check
    from citeqa.app.evidence import check_markdown
    from citeqa.app.web.chat.claims import check_sources_html

    en, es = _doc("en.txt", EN, "en"), _doc("es.txt", ES, "es")
    docs = {d.doc_id: d for d in (en, es)}
    claim = ClaimInputs("DeepSeek V4 trasladó su entrenamiento al Ascend 950.", "es", (_hit(es), _hit(en)), (), ())
    check = check_claim(claim, docs, k=3)
    assert check.verdict == "supported" and [t.lang for t in check.evidence[0].translations] == ["en"]
    assert "también en la traducción: en (en.txt" in check_sources_html(check, docs)
    assert "también en la traducción: en (en.txt" in check_markdown(check, documents=docs)
    console = Console(record=True, width=200)
    print_check(check, console, docs)
    assert "también en la traducción: en (en.txt, chars" in console.export_text()


def test_a_lead_in_the_passage_before_is_context_not_part_of_the_quote():
    doc = _doc("en.txt", EN, "en")
    cut = EN.index("Moved its training")
    hit = Hit(Chunk.make(doc.doc_id, cut, len(EN), EN[cut:], "en"), 1.0, 0.8)
    (unit,) = units_of([hit], [], [], {doc.doc_id: doc})
    assert unit.start == cut and unit.lead == "DeepSeek V4."
    judged = judge_text(analyse_claim("DeepSeek V4 moved its training to the Ascend 950.", "en"), unit.text, "en")
    assert judged.names < 1.0  # without its lead the sentence does not name DeepSeek V4


def test_a_lead_joined_to_its_sentence_is_quoted_at_document_offsets_with_or_without_the_document():
    """A passage in the middle of its document: with the document, and without it (the passage's text
    is then all there is), the quote joins the lead and is placed, and cut, at document offsets."""
    head = "Another paragraph before the passage.\n"
    text = head + EN
    doc = _doc("en.txt", text, "en")
    cut = len(head)
    hit = Hit(Chunk.make(doc.doc_id, cut, len(text), text[cut:], "en"), 1.0, 0.8)
    want = "DeepSeek V4. Moved its training to the Ascend 950, dropping NVIDIA in the process."
    for documents in ({doc.doc_id: doc}, {}):
        deep = next(u for u in units_of([hit], [], [], documents) if u.text.startswith("DeepSeek"))
        assert deep.text == want and text[deep.start : deep.end] == want and deep.lead == ""
        assert deep.sentence_start == text.index("Moved its training")
        assert deep.span.doc_id == doc.doc_id


def test_the_evidence_of_a_passage_mid_document_is_highlighted_in_its_citation():
    """The quote and the value are shown at their place in the cited passage, not the document."""
    head = "Another paragraph before the passage.\n"
    text = head + EN
    doc = _doc("en.txt", text, "en")
    hit = Hit(Chunk.make(doc.doc_id, len(head), len(text), EN, "en"), 1.0, 0.8)
    claim = ClaimInputs("GLM-5 has roughly 744 billion parameters.", "en", (hit,), (), ())
    check = check_claim(claim, {doc.doc_id: doc}, k=1, thresholds=ClaimThresholds(support_dense_plain=1.1))
    (first,) = check.evidence
    assert first.relation == "supports" and first.citation.start == len(head)
    assert first.highlight is not None and first.value is not None
    quote = first.citation.text[first.highlight.start : first.highlight.end]
    assert quote == "GLM-5, by Zhipu (February 2026). The leap in scale: roughly 744 billion parameters."
    assert first.citation.text[first.value.start : first.value.end] == first.document_value


def test_a_units_cosine_is_the_best_of_the_spans_starting_in_its_quote():
    """A candidate starting at the lead counts for the sentence that continues it; one of another hit does not."""
    text = "Intro line here.\n" + EN
    doc = _doc("en.txt", text, "en")
    cut = len("Intro line here.\n")
    hit = Hit(Chunk.make(doc.doc_id, cut, len(text), text[cut:], "en"), 1.0, 0.1)
    lead = text.index("DeepSeek V4.")
    cands = [
        Candidate(0, Span(doc.doc_id, lead, lead + 12), "DeepSeek V4.", "en"),
        Candidate(1, Span(doc.doc_id, lead, lead + 12), "DeepSeek V4.", "en"),
    ]
    units = units_of([hit], cands, [0.9, 0.99], {})
    assert next(u for u in units if u.text.startswith("DeepSeek")).dense == 0.9
    assert {u.dense for u in units if not u.text.startswith("DeepSeek")} == {0.1}


def test_both_claim_fits_record_how_they_were_fitted_the_same_way(repo: Path, monkeypatch):
    monkeypatch.syspath_prepend(str(repo / "eval"))
    import fit_claim_reading  # imports its block from fit_claims: one definition
    import fit_claims

    block = fit_claims.fitted_block("eval/fit_claims.py", ["a.jsonl=index", "b.jsonl=idx"], 5, 9, 12)
    assert block["by"] == "eval/fit_claims.py --set a.jsonl=index --set b.jsonl=idx --folds 5 --write"
    assert block["held_out_accuracy"] == 0.75 and block["claims"] == 12
    assert fit_claim_reading.fitted_block is fit_claims.fitted_block


def test_the_reading_fits_record_names_the_holder_margins_it_was_allowed(repo: Path, monkeypatch):
    """A fit restricted to some holder margins is another fit: its record's command says so, so that
    running the recorded command gives the same rule."""
    monkeypatch.syspath_prepend(str(repo / "eval"))
    import fit_claim_reading as fcr

    restricted = fcr.fitted_block("s.py", ["a.jsonl=index"], 5, 1, 2, fcr._options("-2,0"))
    assert restricted["by"] == "s.py --set a.jsonl=index --folds 5 --holders=-2,0 --write"
    free = fcr.fitted_block("s.py", ["a.jsonl=index"], 5, 1, 2, fcr._options(fcr.DEFAULT_HOLDERS))
    assert free["by"] == "s.py --set a.jsonl=index --folds 5 --write"


def test_the_reading_fit_vetoes_a_judges_conflict_only_where_that_gets_more_right(repo: Path, monkeypatch):
    """A claim the judge calls conflicting whose value the reader reads back surely is set aside
    (veto_conflict_margin) when the judge's conflicts are needed elsewhere and the veto helps."""
    monkeypatch.syspath_prepend(str(repo / "eval"))
    import fit_claim_reading as fcr
    import fit_claims

    conflicts = np.asarray([[1, 1, 1, 1, 0, 1, 1, 0]], dtype=float)  # one sentence with another value
    way = fcr.variant("front", math.inf)

    def claims(read_back: float) -> tuple[list, dict]:
        found = [
            fit_claims.Claim("c1", "conflicting", conflicts),  # the reader reads nothing: the judge is needed
            fit_claims.Claim("c2", "conflicting", conflicts),
            fit_claims.Claim("n1", "not_found", conflicts),  # the judge is wrong; the reader reads it back
        ]
        read = {
            "c1": {way: [("none", -99.0, 0.0, 0.0, False)]},
            "c2": {way: [("none", -99.0, 0.0, 0.0, False)]},
            "n1": {way: [("same", read_back, 1.0, 1.0, False)]},
        }
        return found, read

    found, read = claims(read_back=5.0)
    _, rule, score = fcr.fit_joint(found, read, [("front", math.inf)])
    assert rule.conflict in ("judge", "either") and rule.veto_conflict_margin <= 5.0
    assert score["right"] == 3
    found, read = claims(read_back=-99.0)  # nothing read back: no veto can help, none is chosen
    _, rule, score = fcr.fit_joint(found, read, [("front", math.inf)])
    assert math.isinf(rule.veto_conflict_margin) and score["right"] == 2


@pytest.mark.parametrize(
    "text",
    [
        "Wann wurde die Brücke in Bristol eröffnet.",
        "Wie viele Menschen leben in Bristol.",
        "Quand le pont de Bristol a-t-il ouvert.",
    ],
)
def test_a_german_or_french_question_is_no_claim(text):
    from citeqa.claims.check import looks_like_claim

    assert not looks_like_claim(text)
    assert looks_like_claim("Die Brücke in Bristol wurde 1864 eröffnet.")
