import pytest

from citeqa.ingest.sentences import clause_spans, sentence_spans
from citeqa.qa.answer_types import find_entities, find_entity
from citeqa.qa.questions import AnswerType, expected_type


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


@pytest.mark.parametrize(
    "question,kind",
    [
        ("¿Cuántos chips usó?", AnswerType.QUANTITY),
        ("Quantos parâmetros tem o modelo?", AnswerType.QUANTITY),
        ("How many NPUs?", AnswerType.QUANTITY),
        ("¿Cuándo se abrió CANN?", AnswerType.DATE),
        ("Em que ano chega o Ascend 970?", AnswerType.DATE),
        ("When was it released?", AnswerType.DATE),
        ("¿Cuánto cuesta la API?", AnswerType.PRICE),
        ("Quanto custa a API por imagem?", AnswerType.PRICE),
        ("How much does the API cost?", AnswerType.PRICE),
        ("Which chip is Baidu testing?", AnswerType.NAME),
        ("¿Qué framework usaron?", AnswerType.NAME),
        ("¿En qué ciudad se celebró?", AnswerType.PLACE),
        ("Onde fica a sede?", AnswerType.PLACE),
        ("Which country buys most?", AnswerType.PLACE),
        ("Por que isso importa?", AnswerType.OTHER),
    ],
)
def test_expected_answer_types(question: str, kind: AnswerType):
    assert expected_type(question) is kind


def test_find_entity_skips_what_the_question_said():
    text = "GLM-5 usó unos 100 mil chips en 2026."
    found = find_entity(text, AnswerType.QUANTITY, frozenset({"5"}))
    assert found is not None and text[found.start : found.end].startswith("100 mil")
    price = "API a 0,1 yuan — unos US$ 0,014 — por imagen"
    found = find_entity(price, AnswerType.PRICE)
    assert found is not None and "0,1 yuan" in price[found.start : found.end]


def test_a_single_capitalised_word_mid_sentence_is_a_name_but_not_a_sentence_start():
    text = "The company had no plan B; it had to build one, in partnership with Huawei."
    assert [text[h.start : h.end] for h in find_entities(text, AnswerType.NAME)] == ["Huawei"]
    assert find_entities("Later the team moved on.", AnswerType.NAME) == []


def test_a_place_is_a_name_after_a_locative_preposition_but_not_a_month():
    assert [
        t
        for t in ("Se celebró en Shenzhen, en septiembre.", "O evento foi em São Paulo.")
        for h in [find_entity(t, AnswerType.PLACE)]
        if h is not None
        for t in [t[h.start : h.end]]
    ] == ["Shenzhen", "São Paulo"]
    assert find_entity("It was held in September at the fair.", AnswerType.PLACE) is None


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
