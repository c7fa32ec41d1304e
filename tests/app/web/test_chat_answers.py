"""The chat's answer and its sources as HTML (citeqa.app.web.chat.answers): escaping, the confidence bands, the
short answer, pages, sections and context."""

from html import unescape

import pytest

from citeqa.app.cited import answer_band, hedged, place
from citeqa.app.web.chat.answers import answer_html, context_html, sources_html, supporting
from citeqa.app.web.chat.view import answer_message
from citeqa.messages import UI_LANGUAGES, labels
from citeqa.qa.scoring import BAND_NAMES, Band, headline_bands
from citeqa.records import Answer, Citation, Document, Highlight, PageSpan, SectionSpan, Span
from tests.app.web.test_escape import BAD, XSS


def _doc(doc_id: str, text: str, pages: tuple[PageSpan, ...] = ()) -> Document:
    return Document(doc_id, doc_id, text, "en", "0" * 64, "pdf" if pages else "txt", pages)


def test_answer_and_sources_escape_document_text():
    cit = Citation("x.html", XSS, "en", 0, len(XSS), XSS, 0.9)
    answer = Answer("q", "en", XSS, False, 0.9, (cit,), 1.0, Highlight(0, 8), answer_span=Span("x.html", 0, len(XSS)))
    docs = {"x.html": _doc("x.html", "intro " + XSS + " outro " + XSS)}
    for html in (answer_html(answer), sources_html(answer), sources_html(answer, docs)):
        for bad in BAD:
            assert bad not in html
        assert "<mark>" in html


def test_abstention_is_labelled_in_the_question_language():
    cit = Citation("a.txt", "T", "es", 0, 1, "x", 0.1)
    answer = Answer("q", "pt", None, True, 0.1, (cit,))
    reply = answer_html(answer)
    assert "Não encontrei isso nos documentos." in reply and "passagens mais próximas" in reply
    html = sources_html(answer)
    assert "Passagens mais próximas" in html and "outro idioma" in html and "<mark>" not in html


def test_answer_marks_key_phrase_and_numbers_supporting_sources():
    text = "It was built in 1760 by Thomas Hale."
    c1 = Citation("a.txt", "A", "en", 10, 10 + len(text) + 6, "Mill. " + text, 0.9)
    c2 = Citation("b.txt", "B", "en", 0, 20, "Built in 1760 too.", 0.5)
    c3 = Citation("c.txt", "C", "es", 0, 20, "Otra cosa.", 0.2)
    place = Span("a.txt", 16, 16 + len(text))
    answer = Answer("When?", "en", text, False, 0.8, (c1, c2, c3), 1.0, Highlight(16, 20), answer_span=place)
    assert supporting(answer) == [1, 2]
    reply = answer_html(answer, turn=4)
    assert "<mark>1760</mark>" in reply and "[1]" in reply and "[2]" in reply and "[3]" not in reply
    assert 'href="#citeqa-t4-src-2"' in reply and 'title="B: Built in 1760 too."' in reply
    assert 'title="confidence 0.80">High confidence<' in reply
    assert "onfidence" not in answer_html(answer, show_confidence=False)
    html = sources_html(answer, turn=4)
    assert "<mark>It was built in <strong>1760</strong> by Thomas Hale.</mark>" in html
    assert html.count("<mark>") == 1 and "other language: es" in html and "score" not in html
    assert "characters 10–52" in html and html.count("holds the answer") == 2
    assert 'id="citeqa-t4-src-2"' in html and html.index('id="citeqa-t4-src-2"') < html.index("citeqa-more")
    assert html.index("1 more passage,") < html.index('id="citeqa-t4-src-3"')  # [3] folded, in the singular


def test_below_the_fitted_level_the_sentence_is_a_possible_answer():
    text = "The 960DT comes in the first quarter of 2027; the 960PR in the third."
    cit = Citation("a.txt", "A", "en", 0, len(text), text, 0.9)
    answer = Answer("When?", "en", text, False, 0.81, (cit,), 1.0, Highlight(23, 44), "first quarter of 2027")
    sure = answer_html(answer, bands=headline_bands(0.8))
    assert '<strong class="citeqa-short">first quarter of 2027</strong>' in sure and "High confidence" in sure
    unsure = answer_html(answer, bands=headline_bands(0.94))
    assert "citeqa-short" not in unsure and "Possible answer" in unsure and "Unsure — check the source" in unsure
    assert 'title="confidence 0.81"' in unsure and "<mark>first quarter of 2027</mark>" in unsure


#: Bands as python -m citeqa.fitting.scorer --write records them: bound, share right out of fold, answers.
BANDS = (Band("high", 0.82, 0.93, 120), Band("likely", 0.55, 0.78, 60), Band("unsure", 0.0, 0.31, 45))


def _at(confidence: float, lang: str = "en") -> Answer:
    text = "The 960DT comes in the first quarter of 2027; the 960PR in the third."
    cit = Citation("a.txt", "A", lang, 0, len(text), text, 0.9)
    return Answer("When?", lang, text, False, confidence, (cit,), 1.0, Highlight(23, 44), "first quarter of 2027")


@pytest.mark.parametrize(
    "confidence,band,word,hedge",
    [
        (0.97, "high", "High confidence", False),
        (0.70, "likely", "Likely right", False),
        (0.3, "unsure", "Unsure", True),
    ],
)
def test_each_band_has_its_word_and_only_the_lowest_is_hedged(confidence: float, band: str, word: str, hedge: bool):
    """Issue item "a confidence people read right": a right answer at 0.70 no longer reads like a wrong one
    at 0.11; the hedge and the open source are for the lowest band only."""
    answer = _at(confidence)
    assert answer_band(answer, BANDS).name == band and hedged(answer, BANDS) is hedge
    reply = answer_html(answer, bands=BANDS)
    assert f'data-band="{band}"' in reply and f">{word}" in reply
    assert ("Possible answer" in reply) is hedge and ('class="citeqa-short"' in reply) is not hedge
    message = answer_message(answer, 1, {}, {}, bands=BANDS)
    assert message["label"].endswith(f"({labels('en')['band_' + band]})")
    assert message["label"].startswith("citeqa: Possible answer" if hedge else "citeqa: first quarter of 2027")


def test_the_band_word_speaks_the_answer_language_and_says_how_often_such_answers_were_right():
    reply = unescape(answer_html(_at(0.70, "es"), bands=BANDS))
    assert ">Probablemente correcta<" in reply and "Possible" not in reply
    assert 'title="confianza 0.70 · en las pruebas, el 78% de las respuestas así fueron correctas (60 respuestas)"' in (
        reply
    )
    unmeasured = answer_html(_at(0.70), bands=headline_bands(0.9))  # a weights file without bands
    assert 'title="confidence 0.70">Unsure — check the source<' in unmeasured


def test_every_language_has_a_word_for_every_band():
    words = {lang: [labels(lang)[f"band_{name}"] for name in BAND_NAMES] for lang in UI_LANGUAGES}
    assert len(words) >= 7 and all(len(set(w)) == len(BAND_NAMES) for w in words.values())
    assert len({w[1] for w in words.values()}) == len(words)  # each language its own word for "likely"


def test_an_abstention_shows_the_closest_passages_and_no_holds_the_answer_badge():
    text = "The 960DT comes in the first quarter of 2027."
    cit = Citation("a.txt", "A", "en", 0, len(text), text, 0.4)
    answer = Answer("When does the 970 come?", "en", None, True, 0.08, (cit, cit))
    assert answer_band(answer, BANDS) is None and not hedged(answer, BANDS)
    reply, html = answer_html(answer, bands=BANDS), sources_html(answer)
    assert "find this in the documents." in reply and 'data-band="none"' in reply
    assert "holds the answer" not in html and "citeqa-holds" not in html and "citeqa-primary" not in html
    assert "Closest passages (not an answer)" in unescape(html) and "citeqa-closest" in html
    given = sources_html(_at(0.3))  # a possible answer given: its source holds it
    assert given.count("holds the answer") == 1 and "Closest passages" not in given


def test_sources_show_page_and_context_from_the_document():
    text = "A" * 900 + " The answer sits here. " + "B " * 500
    start = text.index("The answer")
    end = start + len("The answer sits here.")
    doc = _doc("r.pdf", text, (PageSpan(0, 500, 1), PageSpan(500, len(text), 2)))
    cit = Citation("r.pdf", "Report <b>", "en", start, end, text[start:end], 0.7)
    html = sources_html(Answer("q", "en", None, True, 0.1, (cit,)), {"r.pdf": doc})
    assert "page 2" in html and "<details" in html and "Show in context" in html
    assert "Report &#60;b&#62;" in html


def test_sources_show_the_section_of_the_answer_in_the_question_language():
    text = "Report\n\nChapter 1\n\nThe tower is 32 m high.\n\nChapter 2\n\nThe lamp became electric in 1954."
    one, two = text.index("Chapter 1"), text.index("Chapter 2")
    doc = Document(
        "r.docx",
        "R",
        text,
        "en",
        "0" * 64,
        "docx",
        sections=(SectionSpan(one, two - 2, "Chapter 1"), SectionSpan(two, len(text), "Chapter <2>")),
    )
    first = Citation("r.docx", "R", "en", 0, len(text), text, 0.9)  # a passage from the title into chapter 2
    second = Citation("r.docx", "R", "en", 0, two - 2, text[: two - 2], 0.5)  # starts before any section
    lamp = text.index("The lamp")
    at = Span("r.docx", lamp, lamp + len("The lamp became electric in 1954."))
    answer = Answer("q", "es", "The lamp became electric in 1954.", False, 0.9, (first, second), answer_span=at)
    html = sources_html(answer, {"r.docx": doc})
    assert html.count("sección: Chapter &#60;2&#62;") == 1  # where the answer is, escaped
    assert html.count("sección: Chapter 1") == 1  # the first section that begins inside the passage
    assert place(first, answer, 1, None) == (None, None)


def test_context_is_about_600_characters_cut_at_spaces():
    text = " ".join(f"w{i:03d}" for i in range(400))
    start = text.index("w200")
    out = context_html(text, start, start + 4)
    assert out.startswith("…") and out.endswith("…")
    assert '<span class="citeqa-cited">w200</span>' in out
    inner = out.replace('<span class="citeqa-cited">', "").replace("</span>", "").strip("…")
    assert 500 <= len(inner) <= 610 and not inner.startswith(" ")
    assert context_html("short text", 0, 5) == '<span class="citeqa-cited">short</span> text'


def test_short_answer_comes_first_with_its_sentence_as_context():
    sentence = "El faro de Punta Brava mide 42 metros <b>de altura</b>."
    cit = Citation("faro.txt", "Faro", "es", 0, len(sentence), sentence, 0.9)
    answer = Answer("¿Cuánto mide?", "es", sentence, False, 0.9, (cit,), 1.0, Highlight(28, 37), "42 metros")
    reply = answer_html(answer)
    short, context = reply.index('class="citeqa-short">42 metros</strong>'), reply.index('class="citeqa-sentence"')
    assert short < context and "<mark>42 metros</mark>" in reply[context:] and "<b>" not in reply
    no_short = answer_html(Answer("¿Por qué?", "es", sentence, False, 0.9, (cit,), 1.0, None, None))
    assert "citeqa-short" not in no_short and "<mark>42 metros</mark>" not in no_short
    xss = answer_html(Answer("q", "en", XSS, False, 0.9, (cit,), 1.0, Highlight(0, 8), XSS[:8]))
    assert all(bad not in xss for bad in BAD)


def test_markdown_headings_in_a_source_are_shown_as_section_labels():
    from citeqa.app.web.chat.answers import citation_html

    text = "## Fleet <b>\n\nThe line runs 45 Remodelado cars."
    doc = Document("tram.md", "Tram", text, "en", "0" * 64, "md", sections=(SectionSpan(0, len(text), "Fleet <b>"),))
    cit = Citation("tram.md", "Tram", "en", 0, len(text), text, 0.9)
    answer = Answer("How many cars?", "en", "The line runs 45 Remodelado cars.", False, 0.9, (cit,), 1.0)
    html = citation_html(1, cit, answer, doc)
    assert '<span class="citeqa-heading">Fleet &#60;b&#62;</span>' in html and "&#35;&#35;" not in html
    assert "section: Fleet &#60;b&#62;" in html
    txt = Citation("notes.txt", "Notes", "en", 0, len(text), text, 0.9)
    assert "&#35;&#35; Fleet" in citation_html(1, txt, answer)  # a .txt file shows its text as written


def test_a_sentence_said_twice_is_marked_where_the_record_places_it():
    said = "The tower is 32 m high."
    passage = f"{said} It was painted red. {said}"
    cit = Citation("t.txt", "T", "en", 100, 100 + len(passage), passage, 0.9)
    second = 100 + passage.rindex(said)
    answer = Answer(
        "How high?", "en", said, False, 0.9, (cit,), 1.0, answer_span=Span("t.txt", second, second + len(said))
    )
    html = sources_html(answer)
    assert f"{said} It was painted red. <mark>{said}</mark>" in html
    pages = (PageSpan(0, second, 1), PageSpan(second, second + 100, 2))
    assert place(cit, answer, 1, _doc("t.txt", "x" * 100 + passage, pages))[0] == 2
    unplaced = Answer("How high?", "en", said, False, 0.9, (cit,), 1.0)  # a record without a place marks nothing
    assert "<mark>" not in sources_html(unplaced)
