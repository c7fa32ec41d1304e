from citeqa.records import (
    Answer,
    AnswerBand,
    Chunk,
    Citation,
    Corroboration,
    Document,
    Highlight,
    PageSpan,
    SectionSpan,
    Span,
    content_id,
    from_dict,
    to_dict,
)


def test_answer_round_trip_keeps_every_field():
    cit = Citation("a.txt", "Title", "es", 3, 9, "passage", 0.5)
    answer = Answer(
        "q?",
        "es",
        "pass",
        False,
        0.75,
        (cit,),
        12.5,
        Highlight(0, 4),
        "pass",
        Span("a.txt", 3, 7),
        Span("a.txt", 3, 7),
        AnswerBand("likely", 0.9, 120),
        (Corroboration("b.txt", "pt", 10, 14, "pass"),),
    )
    data = answer.to_dict()
    assert list(data) == [
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
    ]
    assert data["band"] == {"name": "likely", "precision": 0.9, "support": 120}
    assert data["also_in"] == [{"doc_id": "b.txt", "lang": "pt", "start": 10, "end": 14, "text": "pass"}]
    assert data["answer_span"] == {"doc_id": "a.txt", "start": 3, "end": 7}
    assert list(data["citations"][0]) == ["doc_id", "title", "lang", "start", "end", "text", "score"]
    assert Answer.from_dict(data) == answer


def test_abstained_answer_round_trip_with_null_fields():
    answer = Answer("q?", "pt", None, True, 0.1, ())
    assert Answer.from_dict(answer.to_dict()) == answer


def test_document_with_pages_round_trip():
    doc = Document("x.pdf", "T", "one\n\ntwo", "en", "abc", "pdf", (PageSpan(0, 3, 1), PageSpan(5, 8, 2)))
    back = from_dict(Document, to_dict(doc))
    assert back == doc
    assert back.page_at(6) == 2 and back.page_at(0) == 1
    assert back.section_at(0) is None


def test_document_with_sections_round_trip():
    doc = Document(
        "x.docx",
        "T",
        "Intro\n\nOne\n\nbody\n\nTwo",
        "en",
        "abc",
        "docx",
        sections=(SectionSpan(7, 17, "One"), SectionSpan(19, 22, "Two")),
    )
    data = to_dict(doc)
    assert data["sections"] == [{"start": 7, "end": 17, "title": "One"}, {"start": 19, "end": 22, "title": "Two"}]
    back = from_dict(Document, data)
    assert back == doc and isinstance(back.sections[0], SectionSpan)
    assert [back.section_at(i) for i in (0, 7, 16, 17, 19, 21, 22)] == [None, "One", "One", None, "Two", "Two", None]
    old = {k: v for k, v in data.items() if k != "sections"}  # a record written before sections existed
    assert from_dict(Document, old).sections == ()


def test_chunk_ids_are_stable_content_hashes():
    a = Chunk.make("d.txt", 0, 5, "hello", "en")
    b = Chunk.make("d.txt", 0, 5, "hello", "en")
    c = Chunk.make("d.txt", 1, 6, "hello", "en")
    assert a.chunk_id == b.chunk_id != c.chunk_id
    assert content_id("x") == content_id("x") and len(content_id("x")) == 16


def test_from_dict_ignores_unknown_keys():
    data = Answer("q", "en", None, True, 0.0).to_dict() | {"extra": 1}
    assert Answer.from_dict(data).question == "q"


def test_a_span_within_another_is_offsets_into_the_outer_text():
    outer = Span("a.txt", 10, 19)
    assert Span("a.txt", 14, 19).within(outer) == Highlight(4, 9)
    assert Span("a.txt", 10, 10).within(outer) == Highlight(0, 0)
    assert Span("a.txt", 9, 12).within(outer) is None  # starts before
    assert Span("a.txt", 14, 20).within(outer) is None  # ends after
    assert Span("b.txt", 14, 19).within(outer) is None  # another document


def test_a_part_of_a_span_is_placed_back_in_its_document():
    outer = Span("a.txt", 10, 20)
    assert outer.part(Highlight(4, 9)) == Span("a.txt", 14, 19)
    assert outer.part(Span("a.txt", 14, 19).within(outer) or Highlight(0, 0)) == Span("a.txt", 14, 19)


def test_a_chunks_span_is_where_its_text_lies():
    chunk = Chunk.make("a.txt", 10, 15, "hello", "en")
    assert chunk.span == Span("a.txt", 10, 15) and chunk.text_at(chunk.span.start, chunk.span.end) == "hello"
