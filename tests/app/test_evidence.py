"""Evidence formats: a citation as plain text, BibTeX and CSL-JSON; a conversation as Markdown and JSON."""

from __future__ import annotations

import json

from citeqa.app.evidence import (
    answer_quotes,
    bibtex_citation,
    bibtex_escape,
    check_quotes,
    citation_formats,
    citation_key,
    cited_quote,
    conversation_from_json,
    conversation_json,
    conversation_markdown,
    csl_json_citation,
    plain_citation,
)
from citeqa.claims.check import ClaimCheck, ClaimEvidence
from citeqa.qa.scoring import Band, headline_bands
from citeqa.records import Answer, Citation, Document, DocumentInfo, Highlight, PageSpan, Span

DOC_TEXT = "Intro line.\nThe windmill of Greyhill was built in 1760 by the miller Thomas Hale. Its sails span 26 m."
PASSAGE_START = DOC_TEXT.index("The windmill")
PASSAGE = DOC_TEXT[PASSAGE_START:]
ANSWER = "The windmill of Greyhill was built in 1760 by the miller Thomas Hale."
CIT = Citation("mills/mill_1.pdf", "The {Windmill} & 100% of_it", "en", PASSAGE_START, len(DOC_TEXT), PASSAGE, 0.9)
INFO = DocumentInfo("mills/mill_1.pdf", "The {Windmill} & 100% of_it", "en", "pdf", "2026-11-30T14:19:33+00:00")
DOC = Document(
    "mills/mill_1.pdf",
    INFO.title,
    DOC_TEXT,
    "en",
    "0" * 64,
    "pdf",
    (PageSpan(0, 12, 1), PageSpan(12, len(DOC_TEXT), 2)),
)
PLACE = Span(CIT.doc_id, DOC_TEXT.index(ANSWER), DOC_TEXT.index(ANSWER) + len(ANSWER))
ANS = Answer(
    "When was the *windmill* built?", "en", ANSWER, False, 0.87, (CIT,), 12.0, Highlight(38, 42), "1760", PLACE
)


def test_a_quote_is_the_document_text_at_its_range():
    q = answer_quotes(ANS, {INFO.doc_id: INFO}, {DOC.doc_id: DOC})[0]
    assert q.quote == ANSWER == DOC_TEXT[q.start : q.end]
    assert q.page == 2 and q.indexed_at.startswith("2026-11-30") and q.kind == "pdf"
    whole = cited_quote(CIT)
    assert whole.quote == PASSAGE and (whole.start, whole.end) == (CIT.start, CIT.end) and whole.page is None


def test_a_repeated_sentence_is_quoted_at_the_place_the_record_gives():
    said = "The sails span 26 m."
    passage = f"{said} They turn twice a minute. {said}"
    cit = Citation("m.txt", "M", "en", 50, 50 + len(passage), passage, 0.9)
    second = 50 + passage.rindex(said)
    answer = Answer("How wide?", "en", said, False, 0.9, (cit,), answer_span=Span("m.txt", second, second + len(said)))
    q = answer_quotes(answer)[0]
    assert q.quote == said and (q.start, q.end) == (second, second + len(said))


def test_plain_citation_names_quote_title_file_language_page_range_and_date():
    q = answer_quotes(ANS, {INFO.doc_id: INFO}, {DOC.doc_id: DOC})[0]
    text = plain_citation(q)
    assert text == (
        f"“{ANSWER}” — The {{Windmill}} & 100% of_it. mills/mill_1.pdf, language en, "
        f"page 2, characters {q.start}–{q.end}. Indexed 2026-11-30."
    )


def test_bibtex_is_escaped_and_has_a_stable_key():
    q = answer_quotes(ANS, {INFO.doc_id: INFO}, {DOC.doc_id: DOC})[0]
    entry = bibtex_citation(q)
    assert entry.startswith(f"@misc{{citeqa:mills-mill-1:{q.start}-{q.end},\n")
    assert r"title = {The \{Windmill\} \& 100\% of\_it}" in entry
    assert "urldate = {2026-11-30}" in entry and f"page 2, characters {q.start}--{q.end}" in entry
    assert entry.count("{") - entry.count(r"\{") == entry.count("}") - entry.count(r"\}")
    assert citation_key(q) == citation_key(answer_quotes(ANS, {INFO.doc_id: INFO})[0])
    assert bibtex_escape("a\\b ~ ^ $ # {x}") == r"a\textbackslash{}b \textasciitilde{} \textasciicircum{} \$ \# \{x\}"


def test_csl_json_item():
    q = answer_quotes(ANS, {INFO.doc_id: INFO}, {DOC.doc_id: DOC})[0]
    item = csl_json_citation(q)
    assert item["type"] == "document" and item["title"] == INFO.title and item["language"] == "en"
    assert item["page"] == "2" and item["accessed"] == {"date-parts": [[2026, 11, 30]]}
    assert item["archive_location"] == "mills/mill_1.pdf" and ANSWER in item["note"]
    formats = citation_formats(q)
    assert json.loads(formats["csl-json"]) == [item] and formats["plain"] == plain_citation(q)


def _check() -> ClaimCheck:
    at = PASSAGE.index("1760")
    ev = ClaimEvidence(CIT, "conflicts", Highlight(0, len(ANSWER)), Highlight(at, at + 4), "1790", "1760")
    return ClaimCheck(
        "The windmill was built in 1790.", "en", "conflicting", "The documents say “1760”, not “1790”.", (ev,), 20.0
    )


def test_conversation_markdown_numbers_turns_and_sources():
    md = conversation_markdown(
        [ANS, _check()], {INFO.doc_id: INFO}, {DOC.doc_id: DOC}, exported_at="2026-12-01T10:00:00+00:00"
    )
    assert md.startswith("# citeqa conversation\n\nExported 2026-12-01T10:00:00+00:00 · 2 turns\n")
    assert "## 1. When was the \\*windmill\\* built?" in md  # user text shown as written
    assert "The windmill of Greyhill was built in **1760** by the miller Thomas Hale. [1]" in md
    assert "**Sources**" in md and "1. *The {Windmill} & 100% of\\_it* — `mills/mill_1.pdf`, en, page 2" in md
    assert "## 2. Claim: The windmill was built in 1790." in md
    assert "**Conflicting** — The documents say “1760”, not “1790”." in md
    assert "[conflicts (the document says “1760”, the claim says “1790”)]" in md
    assert f"   > {ANSWER}" in md and "indexed 2026-11-30" in md
    assert check_quotes(_check())[0].quote == ANSWER


def test_exports_speak_each_turn_s_language():
    es = Answer("¿Cuándo se construyó?", "es", ANSWER, False, 0.9, ANS.citations, 1.0, ANS.highlight)
    md = conversation_markdown([ANS, es], {INFO.doc_id: INFO}, {DOC.doc_id: DOC}, exported_at="2026-12-01")
    assert md.startswith("# Conversación de citeqa\n\nExportada el 2026-12-01 · 2 turnos\n")
    assert (
        "**Sources**" in md and "**Fuentes**" in md and "página 2, caracteres" in md and "indexado el 2026-11-30" in md
    )
    q = answer_quotes(ANS, {INFO.doc_id: INFO}, {DOC.doc_id: DOC})[0]
    assert ", idioma en, página 2, caracteres " in plain_citation(
        q, "es"
    ) and "Indexado el 2026-11-30." in plain_citation(q, "es")
    assert citation_formats(q, "pt")["plain"] == plain_citation(q, "pt") and "Indexado em" in plain_citation(q, "pt")


def test_a_subject_named_in_the_not_found_message_is_escaped_in_the_exports():
    from citeqa.app.web.chat.claims import check_html
    from citeqa.messages import claim_message

    said = claim_message("not_found", "en", subject="*GLM-5* <b>", value_missing=True)
    check = ClaimCheck("*GLM-5* <b> has 9 layers.", "en", "not_found", said, (), 20.0)
    md = conversation_markdown([check], {}, {}, exported_at="2026-12-01T10:00:00+00:00")
    assert "**Not found** — The documents mention “\\*GLM-5\\* \\<b\\>”, but not this value." in md
    html = check_html(check)  # markup of the claim is shown as text, never read as HTML or Markdown
    assert "mention “&#42;GLM-5&#42; &#60;b&#62;”, but not this value." in html and "<b>" not in html


def test_conversation_json_round_trip():
    turns = [ANS, _check()]
    text = conversation_json(turns, {INFO.doc_id: INFO}, exported_at="2026-12-01T10:00:00+00:00")
    data = json.loads(text)
    assert data["format"] == "citeqa-conversation" and data["version"] == 1
    assert [t["type"] for t in data["turns"]] == ["answer", "check"]
    assert data["turns"][0]["record"] == ANS.to_dict()
    assert data["documents"]["mills/mill_1.pdf"]["indexed_at"] == INFO.indexed_at
    assert conversation_from_json(text) == turns


def test_conversation_from_json_refuses_other_files():
    import pytest

    with pytest.raises(ValueError, match="not a citeqa-conversation"):
        conversation_from_json('{"turns": []}')


def test_a_possible_answer_stays_hedged_in_the_markdown_export():
    """Issue [3/7] item 7: an answer at 0.70, shown in the chat as a possible answer to check, was written
    to the Markdown file as a plain answer. It keeps the hedge and the confidence in words."""
    unsure = Answer(ANS.question, "en", ANSWER, False, 0.70, ANS.citations, 1.0, ANS.highlight, "1760", PLACE)
    md = conversation_markdown([unsure, ANS], {INFO.doc_id: INFO}, {DOC.doc_id: DOC}, bands=headline_bands(0.8))
    first, second = md.split("## 2. ")
    assert "*Possible answer (check it in the source):* The windmill of Greyhill was built in **1760**" in first
    assert "*Unsure — check the source (confidence 0.70) · en*" in first
    assert "Possible answer" not in second and "*High confidence (confidence 0.87) · en*" in second
    es = Answer("¿Cuándo?", "es", ANSWER, False, 0.70, ANS.citations, 1.0, ANS.highlight, "1760", PLACE)
    assert "*Posible respuesta (compruébala en la fuente):* " in conversation_markdown([es], bands=headline_bands(0.8))


BANDS = (Band("high", 0.82, 0.93, 120), Band("likely", 0.55, 0.78, 60), Band("unsure", 0.0, 0.31, 45))


def test_the_exports_name_each_answer_by_the_chat_band_word():
    likely = Answer(ANS.question, "en", ANSWER, False, 0.70, ANS.citations, 1.0, ANS.highlight, "1760", PLACE)
    low = Answer(ANS.question, "en", ANSWER, False, 0.20, ANS.citations, 1.0, ANS.highlight, "1760", PLACE)
    none = Answer("When was the moon built?", "en", None, True, 0.05, ANS.citations)
    md = conversation_markdown([likely, low, none], {INFO.doc_id: INFO}, {DOC.doc_id: DOC}, bands=BANDS)
    first, second, third = md.split("\n## ")[1:]
    assert "Possible answer" not in first and "**1760**" in first
    assert "*Likely right (confidence 0.70) · en · in testing, 78% of answers like this were right (60 answers)*" in (
        first
    )
    assert (
        "*Possible answer (check it in the source):*" in second
        and "*Unsure — check the source (confidence 0.20)" in (second)
    )
    assert "*No answer (confidence 0.05) · en*" in third and "**Closest passages (not an answer)**" in third
    data = json.loads(conversation_json([likely, low, none, _check()], {INFO.doc_id: INFO}, bands=BANDS))
    bands = [t.get("band") for t in data["turns"]]
    assert bands[0] == {"name": "likely", "word": "Likely right", "above": 0.55, "precision": 0.78, "support": 60}
    assert bands[1]["name"] == "unsure" and bands[1]["word"] == "Unsure — check the source"
    assert bands[2] == {"name": "none", "word": "No answer", "above": None, "precision": None, "support": None}
    assert bands[3] is None  # a claim check has its verdict, not a band
    assert conversation_from_json(json.dumps(data))[0] == likely  # the band is beside the record, not in it


def test_a_translation_note_stays_inside_the_numbered_list_of_passages():
    """Issue [3/7] item 7: "also in the translation:" lines broke the numbered list of a claim's passages
    (each source after one started a new list at 1)."""
    from markdown_it import MarkdownIt

    from citeqa.claims.check import Translation

    at = ANSWER.index("1760")
    also = (Translation("mills/molino.pdf", "es", 5, 60, "El molino se construyó en 1760."),)
    first = ClaimEvidence(CIT, "supports", Highlight(0, len(ANSWER)), Highlight(at, at + 4), "1760", "1760", also)
    second = ClaimEvidence(CIT, "related", Highlight(0, len(ANSWER)))
    check = ClaimCheck("It was built in 1760.", "es", "supported", "Sí.", (first, second), 20.0)
    html = MarkdownIt("commonmark").render(conversation_markdown([check]))
    assert html.count("<ol") == 1 and html.count("<li>") == 2, html
    assert "también en la traducción: es (mills/molino.pdf, 5–60)" in html.split("<ol>")[1].split("</li>")[0]
