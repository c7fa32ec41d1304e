"""Claims checked by reading (citeqa.claims.reading): the questions formed per language, the
comparison of what was read with the claim's value, the coordinated sentence, the evidence offsets."""

from __future__ import annotations

import json
import math
from dataclasses import replace

import pytest

from citeqa.claims.check import ClaimCheck, ClaimInputs, check_claim
from citeqa.claims.judge import ClaimThresholds, judge_text, unit_relation
from citeqa.claims.parts import analyse_claim
from citeqa.claims.reading import (
    DIFFERENT,
    NONE,
    SAME,
    ValueReading,
    combine,
    compare,
    read_claim,
    reading_says,
)
from citeqa.claims.rule import RULE_FILE, ReadingRule, reading_rule
from citeqa.errors import ConfigError
from citeqa.reader.decode import SpanScore
from citeqa.reader.reader import ReaderResult, Reading, placed
from citeqa.records import Chunk, Document, Hit, Span
from citeqa.text.facts import find_facts

PLAN = "Roadmap\n\nThe 960DT arrives in the first quarter of 2027 and the 960PR in the third. Both share one board."


class ScriptedReader:
    """A reader that reads, for a question naming a subject, the text scripted for that subject
    (the first occurrence after the subject's first mention, else anywhere), with a fixed score."""

    def __init__(self, answers: dict[str, str | tuple[str, ...]], score: float = 8.0, null: float = 0.0) -> None:
        self.answers, self.score, self.null = answers, score, null
        self.questions: list[str] = []

    def read(self, question, passages, top=10, max_windows=None, turn=None) -> Reading:
        """Several answers scripted for a subject are read best first, one point apart."""
        self.questions.append(question)
        spans = []
        for subject, scripted in self.answers.items():
            if subject not in question:
                continue
            for rank, answer in enumerate((scripted,) if isinstance(scripted, str) else scripted):
                for i, text in enumerate(passages):
                    at = text.find(answer, max(0, text.find(subject)))
                    at = at if at >= 0 else text.find(answer)
                    if at >= 0:
                        spans.append(SpanScore(i, at, at + len(answer), self.score - rank, self.null))
        return Reading(tuple(sorted(spans, key=lambda s: -s.score)), tuple(self.null for _ in passages))

    def run(self, question, passages, top=10, max_windows=None, turn=None) -> ReaderResult:
        """The reader's contract: the reading of the passages' texts, in document offsets."""
        return placed(question, self.read(question, [p.text for p in passages], top, max_windows, turn), passages)


def _hits(doc: Document, start: int = 0) -> list[Hit]:
    return [Hit(Chunk.make(doc.doc_id, start, len(doc.text), doc.text[start:], doc.lang), 1.0)]


def _doc(text: str, lang: str = "en", doc_id: str = "plan.md") -> Document:
    return Document(doc_id, "Plan", text, lang, "0" * 64)


# --- comparing the value read with the claim's -------------------------------------------------------


def _fact(text: str, lang: str = "en"):
    (fact,) = find_facts(text, lang)
    return fact


@pytest.mark.parametrize(
    ("claim", "doc", "relation"),
    [
        ("2027", "the first quarter of 2027", SAME),  # a coarser claim states what the document says
        ("the first quarter of 2027", "2027", None),  # a coarser document says too little
        ("the first quarter of 2027", "the third quarter of 2027", DIFFERENT),
        ("March 2027", "the first quarter of 2027", None),
        ("May 2027", "the first quarter of 2027", DIFFERENT),  # May is outside the first quarter
        ("41 hm³", "41 hm³", SAME),
        ("41 hm³", "52 hm³", DIFFERENT),
        ("41 km", "41 kg", None),  # another unit is no value of the same thing
        ("1,200 employees", "1200 employees", SAME),
        ("40 euros", "45 euros", DIFFERENT),
    ],
)
def test_values_compare_by_normalised_value_unit_and_granularity(claim, doc, relation):
    assert compare(_fact(claim), _fact(doc)) == relation


@pytest.mark.parametrize(
    ("claim", "lang", "doc", "relation"),
    [
        ("Die Zugspitze ist knapp 3000 Meter hoch.", "de", "2962 m", SAME),  # before: DIFFERENT
        ("Die Zugspitze ist knapp 3000 Meter hoch.", "de", "3100 m", DIFFERENT),
        ("La ville compte environ 40 000 habitants.", "fr", "41 500 habitants", SAME),
        ("La ville compte environ 40 000 habitants.", "fr", "52 000 habitants", DIFFERENT),
        ("More than a million people came.", "en", "1.2 million people", SAME),
        ("La ville compte 40 000 habitants.", "fr", "41 500 habitants", DIFFERENT),  # exact stays exact
    ],
)
def test_a_hedged_claim_value_is_the_same_within_its_rounding(claim, lang, doc, relation):
    assert compare(_fact(claim, lang), _fact(doc)) == relation


def test_a_date_is_never_compared_with_a_quantity():
    assert compare(_fact("in 2027"), _fact("41 hm³")) is None


# --- the coordinated sentence -----------------------------------------------------------------------


def test_the_judge_alone_supports_a_value_that_belongs_to_the_coordinated_neighbour():
    sentence = "The 960DT arrives in the first quarter of 2027 and the 960PR in the third."
    parts = analyse_claim("The 960PR arrives in the first quarter of 2027.", "en")
    assert unit_relation(judge_text(parts, sentence, "en"), ClaimThresholds()) == "supports"


def test_reading_for_the_claims_own_subject_does_not_support_the_neighbours_value():
    doc = _doc(PLAN)
    reader = ScriptedReader({"960PR": "the third", "960DT": "first quarter of 2027"})
    wrong = read_claim(
        reader, analyse_claim("The 960PR arrives in the first quarter of 2027.", "en"), _hits(doc), ReadingRule()
    )
    assert [(r.relation, r.text, r.document_value) for r in wrong] == [(DIFFERENT, "the third", "third")]
    right = read_claim(
        reader, analyse_claim("The 960DT arrives in the first quarter of 2027.", "en"), _hits(doc), ReadingRule()
    )
    assert [r.relation for r in right] == [SAME]
    rule = ReadingRule(support="both", conflict="either")
    assert combine("supported", wrong, rule) == "conflicting"
    assert combine("supported", right, rule) == "supported"
    assert reader.questions == ["The 960PR arrives when?", "The 960DT arrives when?"]


def test_a_span_read_inside_a_longer_date_is_compared_as_the_span_says():
    doc = _doc(PLAN)
    reader = ScriptedReader({"960PR": "2027"})  # the year alone, inside "the first quarter of 2027"
    (reading,) = read_claim(
        reader, analyse_claim("The 960PR arrives in the first quarter of 2027.", "en"), _hits(doc), ReadingRule()
    )
    assert reading.relation == NONE  # the year does not tell the quarter: nothing read back


def test_an_abstaining_reader_reads_nothing_and_the_margin_decides():
    doc = _doc(PLAN)
    unsure = ScriptedReader({"960DT": "first quarter of 2027"}, score=1.0, null=3.0)
    (reading,) = read_claim(
        unsure, analyse_claim("The 960DT arrives in the first quarter of 2027.", "en"), _hits(doc), ReadingRule()
    )
    assert reading.relation == SAME and reading.margin == pytest.approx(-2.0)
    assert combine("not_found", [reading], ReadingRule(support="reader", support_margin=0.0)) == "not_found"
    assert combine("not_found", [reading], ReadingRule(support="reader", support_margin=-4.0)) == "supported"
    nothing = read_claim(
        ScriptedReader({}), analyse_claim("The 960XX arrives in 2031.", "en"), _hits(doc), ReadingRule()
    )
    assert [r.relation for r in nothing] == [NONE] and nothing[0].margin is None


def test_a_claim_without_values_keeps_the_judges_verdict():
    assert combine("supported", (), ReadingRule(support="reader")) == "supported"
    assert combine("not_found", (), ReadingRule(support="either")) == "not_found"


# --- evidence: document offsets ---------------------------------------------------------------------


def test_the_span_read_is_the_documents_text_at_its_offsets_in_a_later_passage():
    doc = _doc(PLAN)
    start = PLAN.index("The 960DT")  # a passage that starts inside the document
    reader = ScriptedReader({"960PR": "the third"})
    (r,) = read_claim(
        reader, analyse_claim("The 960PR arrives in the first quarter of 2027.", "en"), _hits(doc, start), ReadingRule()
    )
    assert r.span is not None and r.value is not None
    assert r.span.doc_id == "plan.md" and r.text == doc.text[r.span.start : r.span.end] == "the third"
    assert doc.text[r.value.start : r.value.end] == r.document_value
    at = r.value.within(r.span)  # the value as offsets into the text read
    assert at is not None and r.text[at.start : at.end] == r.document_value


def test_the_check_carries_the_readings_and_the_message_quotes_the_subjects_value():
    doc = _doc(PLAN)
    hits = _hits(doc)
    claim = "The 960PR arrives in the first quarter of 2027."
    readings = read_claim(ScriptedReader({"960PR": "the third"}), analyse_claim(claim, "en"), hits, ReadingRule())
    inputs = ClaimInputs(claim, "en", tuple(hits), (), ())
    check = check_claim(inputs, {doc.doc_id: doc}, 5, ClaimThresholds(), readings, ReadingRule())
    assert check.verdict == "conflicting" and check.readings == readings
    assert check.message == "The documents say “third”, not “first quarter of 2027”."
    assert all(e.relation != "supports" for e in check.evidence)
    assert ClaimCheck.from_dict(json.loads(json.dumps(check.to_dict()))) == check


def test_the_claim_view_strikes_the_claims_value_where_the_reader_read_another():
    from citeqa.app.evidence import check_markdown
    from citeqa.app.web.chat.claims import readings_html
    from citeqa.messages import catalogue_languages, claim_labels

    reading = ValueReading(
        "first quarter of 2027",
        "date",
        "The 960PR arrives when?",
        DIFFERENT,
        span=Span("plan.md", 10, 19),
        lang="en",
        text="the third",
        value=Span("plan.md", 10, 19),
        document_value="the third",
        margin=6.0,
    )
    check = ClaimCheck("The 960PR arrives in the first quarter of 2027.", "es", "conflicting", "…", readings=(reading,))
    html = readings_html(check)
    assert "<s>first quarter of 2027</s>" in html and "<strong>the third</strong>" in html
    assert claim_labels("es")["reading"] in html and "10–19" in html
    assert "~~first quarter of 2027~~" in check_markdown(check)
    assert readings_html(ClaimCheck("x", "en", "not_found", "…")) == ""
    anothers = replace(reading, relation=SAME, holder=Span("plan.md", 0, 5), holder_text="<960DT>", holder_subject=0.0)
    shown = replace(check, readings=(anothers,))
    label = claim_labels("es")["reading_holder"]
    assert f"{label} “&#60;960DT&#62;”" in readings_html(shown) and "<960DT>" not in readings_html(shown)
    assert label in check_markdown(shown) and label not in check_markdown(check)
    for lang in catalogue_languages():
        labels = claim_labels(lang)
        assert {"reading", "reading_asked", "reading_none", "reading_holder"} <= set(labels)
        if lang != "en":
            assert labels["reading"] != claim_labels("en")["reading"]  # translated, not copied


# --- whose value: the claim's subject asked for ------------------------------------------------------


def _coordinated_reader() -> ScriptedReader:
    """Reads the 960DT's quarter first for either subject (as the shipped reader did), the third
    next; asked who arrives in a quarter, reads the name that does."""
    return ScriptedReader(
        {
            "960PR": ("first quarter of 2027", "third"),
            "960DT": "first quarter of 2027",
            "arrives in the first quarter of 2027": "960DT",
            "arrives in the third": "960PR",
        }
    )


def test_a_value_the_reader_gives_to_another_name_is_passed_over_for_the_subjects_own():
    doc, rule = _doc(PLAN), ReadingRule(holder_margin=0.0)
    reader = _coordinated_reader()
    (wrong,) = read_claim(
        reader, analyse_claim("The 960PR arrives in the first quarter of 2027.", "en"), _hits(doc), rule
    )
    assert (wrong.relation, wrong.document_value, wrong.holder_text, wrong.holder_subject) == (
        DIFFERENT,
        "third",
        "960PR",
        1.0,
    )
    assert reader.questions[1:] == [
        "Who or what arrives in the first quarter of 2027?",
        "Who or what arrives in the third?",
    ]
    assert wrong.holder is not None and doc.text[wrong.holder.start : wrong.holder.end] == "960PR"
    (right,) = read_claim(
        reader, analyse_claim("The 960DT arrives in the first quarter of 2027.", "en"), _hits(doc), rule
    )
    assert (right.relation, right.holder_text, right.is_anothers(rule)) == (SAME, "960DT", False)
    assert combine("supported", [wrong], rule) != "supported" and combine("supported", [right], rule) == "supported"


def test_the_holder_is_read_around_the_value_at_its_place_when_the_passage_starts_mid_document():
    """The window the holder is read in is cut from the passage at document offsets: a passage that
    starts after the document's first paragraph reads the same holder at the same place."""
    head = "An earlier paragraph about something else entirely, long enough to shift every offset.\n\n"
    doc, rule = _doc(head + PLAN), ReadingRule(holder_margin=0.0)
    parts = analyse_claim("The 960PR arrives in the first quarter of 2027.", "en")
    (wrong,) = read_claim(_coordinated_reader(), parts, _hits(doc, len(head)), rule)
    assert (wrong.relation, wrong.document_value, wrong.holder_text) == (DIFFERENT, "third", "960PR")
    assert wrong.holder is not None and doc.text[wrong.holder.start : wrong.holder.end] == "960PR"
    assert wrong.holder.start == doc.text.index("960PR")


def test_without_a_holder_margin_no_holder_is_asked():
    reader = _coordinated_reader()
    parts = analyse_claim("The 960PR arrives in the first quarter of 2027.", "en")
    (r,) = read_claim(reader, parts, _hits(_doc(PLAN)), ReadingRule())
    assert (r.relation, r.holder, len(reader.questions)) == (SAME, None, 1)  # the old reading: fooled


def test_a_value_every_reading_gives_to_another_name_counts_for_neither():
    doc = _doc("Roadmap\n\nThe 960DT arrives in the first quarter of 2027. Both share one board.")
    reader = ScriptedReader({"960PR": "first quarter of 2027", "arrives in the first quarter of 2027": "960DT"})
    rule = ReadingRule(holder_margin=0.0)
    (r,) = read_claim(reader, analyse_claim("The 960PR arrives in the first quarter of 2027.", "en"), _hits(doc), rule)
    assert (r.relation, r.holder_text, r.is_anothers(rule)) == (SAME, "960DT", True)
    assert reading_says([r], rule) == (False, False)
    assert not replace(r, holder_margin=-1.0).is_anothers(rule)  # less sure than the rule's margin


def test_a_judges_conflict_with_a_neighbours_value_is_set_aside_with_the_holder_veto():
    anothers = ValueReading("third quarter of 2027", "date", "q", DIFFERENT, Span("p", 0, 5), margin=6.0)
    anothers = replace(anothers, holder=Span("p", 9, 14), holder_text="960DT", holder_margin=7.9, holder_subject=0.0)
    rule = ReadingRule(holder_margin=4.0, conflict="judge")
    assert combine("conflicting", [anothers], rule) == "conflicting"
    assert combine("conflicting", [anothers], replace(rule, holder_veto=True)) == "not_found"
    own = replace(anothers, holder_text="960PR", holder_subject=1.0)
    assert combine("conflicting", [own], replace(rule, holder_veto=True)) == "conflicting"


def test_the_message_never_quotes_a_value_the_reader_gave_to_another_name():
    from citeqa.claims.check import _reading_shown

    read = ValueReading(
        "third quarter of 2027", "date", "q", DIFFERENT, Span("p", 0, 5), document_value="first quarter"
    )
    anothers = replace(read, holder=Span("p", 9, 14), holder_text="960DT", holder_subject=0.0)
    assert _reading_shown([read], "conflicting") == read
    assert _reading_shown([anothers], "conflicting") is None
    assert _reading_shown([anothers, replace(read, document_value="third")], "conflicting").document_value == "third"


# --- the rule as data -------------------------------------------------------------------------------


def test_the_rule_is_data_and_unknown_settings_are_refused(tmp_path):
    assert reading_rule({}) == ReadingRule()
    assert reading_rule({"support": "reader", "support_margin": 2, "fitted": {}}).support_margin == 2.0
    with pytest.raises(ConfigError, match="no such setting"):
        reading_rule({"suport": "both"})
    with pytest.raises(ConfigError):
        reading_rule({"support": "sometimes"})
    if RULE_FILE.exists():
        data = json.loads(RULE_FILE.read_text("utf-8"))
        assert reading_rule(data).form in ("replace", "front") and "by" in data["fitted"]


def _real_readings(form: str):
    """The shipped reader and rule (the question ``form`` given) on the coordinated sentence."""
    from citeqa.reader.reader import Reader

    doc, reader, rule = _doc(PLAN), Reader(), replace(reading_rule(), form=form)
    wrong = read_claim(reader, analyse_claim("The 960PR arrives in the first quarter of 2027.", "en"), _hits(doc), rule)
    right = read_claim(reader, analyse_claim("The 960DT arrives in the first quarter of 2027.", "en"), _hits(doc), rule)
    for r in wrong + right:
        assert r.span is not None and r.text == doc.text[r.span.start : r.span.end]
    return wrong, right


@pytest.mark.slow
@pytest.mark.parametrize("form", ["front", "replace"])
def test_the_real_reader_reads_the_coordinated_subjects_own_value(form):
    """The shipped reader and rule: the 960PR's quarter is the third, not the 960DT's first (the
    reader reads the 960DT's first, then asked who arrives in it reads the 960DT)."""
    wrong, right = _real_readings(form)
    assert [(r.relation, r.document_value) for r in wrong] == [(DIFFERENT, "third")]
    assert [r.relation for r in right] == [SAME]
    rule = reading_rule()
    assert combine("supported", wrong, rule) != "supported" and combine("supported", right, rule) == "supported"


def test_a_span_that_holds_the_value_and_another_reads_neither():
    doc = _doc("Survey\n\nThe seagrass meadow held 63 species and the sand beside it 39 species.")
    reader = ScriptedReader({"sand": "63 species and the sand beside it 39 species"})
    parts = analyse_claim("The sand beside the meadow held 39 species.", "en")
    (reading,) = read_claim(reader, parts, _hits(doc), ReadingRule())
    assert reading.relation == NONE


def test_support_unless_a_value_is_read_as_another():
    other = ValueReading("first quarter of 2027", "date", "q", DIFFERENT, margin=9.0, names=1.0)
    same = ValueReading("first quarter of 2027", "date", "q", SAME, margin=9.0, names=1.0)
    none = ValueReading("first quarter of 2027", "date", "q", NONE)
    rule = ReadingRule(support="unless", support_margin=8.0, conflict="judge")
    assert combine("supported", [same], rule) == "supported"
    assert combine("supported", [none], rule) == "supported"  # nothing read: the judge's support stands
    assert combine("supported", [other], rule) == "not_found"  # the judge alone does not conflict here
    assert combine("supported", [other], ReadingRule(support="unless", support_margin=10.0)) == "supported"


def test_engine_check_reads_each_value_and_cites_the_span_by_document_offsets(built_index, embedder):
    from citeqa.engine import Engine

    plain = Engine.open(built_index, embedder=embedder)  # the keyword model: no reader of its own
    reader = ScriptedReader({"Punta Brava": "1887"})
    engine = plain.adjusted(reader=reader)  # type: ignore[arg-type]
    check = engine.check("El faro de Punta Brava se construyó en 1887.", k=3)
    asked = {  # one question for the one value, in the form the shipped rule was fitted to use
        "replace": "¿El faro de Punta Brava se construyó en qué año?",
        "front": "¿En qué año el faro de Punta Brava se construyó?",
    }
    holder = ["¿El faro de quién o qué se construyó en 1887?"] if math.isfinite(reading_rule().holder_margin) else []
    assert reader.questions == [asked[reading_rule().form], *holder]  # and who holds the value read
    (r,) = check.readings
    assert r.relation == SAME and r.span is not None and r.value is not None
    assert r.span.doc_id == r.value.doc_id == "faro.txt" and r.text == "1887"
    assert engine.doc_text(r.span.doc_id)[r.span.start : r.span.end] == r.text
    assert engine.doc_text(r.value.doc_id)[r.value.start : r.value.end] == r.document_value == "1887"
    assert r.names == 1.0  # the sentence read names the claim's subject
    assert ClaimCheck.from_dict(check.to_dict()) == check
    assert plain.check("El faro de Punta Brava se construyó en 1887.", k=3).readings == ()


def test_a_reading_round_trips_with_its_offsets_as_document_spans():
    reading = ValueReading(
        "first quarter of 2027",
        "date",
        "The 960PR arrives when?",
        DIFFERENT,
        span=Span("plan.md", 40, 49),
        lang="en",
        text="the third",
        value=Span("plan.md", 44, 49),
        document_value="third",
        margin=6.0,
        names=1.0,
        cover=0.5,
    )
    check = ClaimCheck("The 960PR arrives in the first quarter of 2027.", "en", "conflicting", "…", readings=(reading,))
    data = json.loads(json.dumps(check.to_dict()))
    assert data["readings"][0]["span"] == {"doc_id": "plan.md", "start": 40, "end": 49}
    assert data["readings"][0]["value"] == {"doc_id": "plan.md", "start": 44, "end": 49}
    assert ClaimCheck.from_dict(data) == check and isinstance(ClaimCheck.from_dict(data).readings[0].span, Span)
    nothing = ValueReading("first quarter of 2027", "date", "q", NONE)
    # strict JSON, as `citeqa check --json`, /check and the conversation export must write it: a
    # reading of nothing has no margin, not an infinite one
    back = ClaimCheck.from_dict(json.loads(json.dumps(replace(check, readings=(nothing,)).to_dict(), allow_nan=False)))
    assert back.readings == (nothing,) and back.readings[0].span is None and back.readings[0].margin is None
