from citeqa.ingest.sentences import clause_spans, sentence_spans


def sentences(text: str) -> list[str]:
    return [text[s.start : s.end] for s in sentence_spans(text)]


def test_decimals_and_abbreviations_do_not_split():
    text = (
        "Lideró el benchmark CVTG-2K (precisión de 0,9116) y el LongText-Bench (0.952 en inglés). "
        "Las restricciones de EE. UU. se endurecieron. ¿Qué pasó después? Nadie lo sabe."
    )
    assert sentences(text) == [
        "Lideró el benchmark CVTG-2K (precisión de 0,9116) y el LongText-Bench (0.952 en inglés).",
        "Las restricciones de EE. UU. se endurecieron.",
        "¿Qué pasó después?",
        "Nadie lo sabe.",
    ]


def test_quotes_and_newlines_end_sentences():
    text = "Dijo: «La competencia ha llegado». Luego se fue.\nTítulo\nOtra línea"
    assert sentences(text) == ["Dijo: «La competencia ha llegado».", "Luego se fue.", "Título", "Otra línea"]


def test_spans_are_exact_offsets():
    text = "  Uno dos tres.  Cuatro cinco.  "
    for s in sentence_spans(text):
        assert text[s.start : s.end].strip() == text[s.start : s.end] and text[s.start : s.end]


def test_clauses_split_long_sentences_at_semicolons():
    text = (
        "El stack tiene tres pisos: los NPUs Ascend en el hardware; CANN, la capa que traduce "
        "instrucciones; y MindSpore como framework de entrenamiento."
    )
    parts = [text[s.start : s.end] for s in clause_spans(text, 0, len(text))]
    assert len(parts) >= 2 and all(p in text for p in parts)


def test_a_german_ordinal_date_does_not_end_a_sentence():
    """ "am 21. März 1685": the day's period is no sentence end; a version number's period still is."""
    from citeqa.ingest.sentences import sentence_spans

    text = "Bach wurde am 21. März 1685 in Eisenach geboren. Er starb 1750. Das Modell GLM-5. April kam."
    assert [text[s.start : s.end] for s in sentence_spans(text)] == [
        "Bach wurde am 21. März 1685 in Eisenach geboren.",
        "Er starb 1750.",
        "Das Modell GLM-5.",
        "April kam.",
    ]
