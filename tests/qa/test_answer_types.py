"""Facts of a kind in a sentence (the short answer's rules: test_short_answer.py), invented es/pt/en text."""

import pytest

from citeqa.qa.answer_types import find_entities, find_entity, type_match
from citeqa.qa.questions import AnswerType
from citeqa.text.analysis import word_tokens


def entities(text: str, kind: AnswerType, avoid: frozenset[str] = frozenset()) -> list[str]:
    return [text[h.start : h.end] for h in find_entities(text, kind, avoid)]


# --- facts in a text -------------------------------------------------------------------


def test_years_before_1900_are_dates_after_a_date_word_but_counts_are_not():
    assert entities("La iglesia se terminó en 1887 tras un incendio.", AnswerType.DATE) == ["1887"]
    assert entities("The shop sold 1500 hats last winter.", AnswerType.DATE) == []
    assert entities("The shop sold 1500 hats last winter.", AnswerType.QUANTITY) == ["1500"]


def test_old_years_do_not_change_the_type_match_feature():
    # the ranker was fitted when only 19xx/20xx were dates; see answer_types.type_match
    assert type_match("The mill was built in 1760 by a miller.", "en", AnswerType.DATE, frozenset(), {"mill"}) == 0.0


@pytest.mark.parametrize(
    "text,date",
    [
        ("El puerto abrirá en el primer trimestre de 2027, según la autoridad.", "primer trimestre de 2027"),
        ("The plant will open in the first quarter of 2027.", "first quarter of 2027"),
        ("A obra termina no segundo semestre de 2026.", "segundo semestre de 2026"),
        ("Shipments start in Q3 2026 for most buyers.", "Q3 2026"),
        ("La línea se cerrará a finales de 2025.", "finales de 2025"),
        ("The museum reopens in mid-2024.", "mid-2024"),
        ("A ponte foi inaugurada em 19 set 2026 pelo autarca.", "19 set 2026"),
        ("The bakery opened on March 3, 2021.", "March 3, 2021"),
        ("O mercado abriu em março.", "março"),
    ],
)
def test_date_patterns(text: str, date: str):
    assert entities(text, AnswerType.DATE) == [date]


def test_may_the_verb_and_marco_the_frame_are_not_months():
    assert entities("It may rain during the fair.", AnswerType.DATE) == []
    assert entities("Aprobaron el marco legal del puerto.", AnswerType.DATE) == []


@pytest.mark.parametrize(
    "text,quantity",
    [
        ("Plantaron 100 mil árboles junto al río.", "100 mil"),
        ("They trained a 12-million-parameter tagger on the archive.", "12-million"),
        ("O servidor entrega 4 teraFLOPS com pouca energia.", "4 teraFLOPS"),
        ("The drive holds 512 GB of photos.", "512 GB"),
        ("El río lleva 30 metros cúbicos por segundo en primavera.", "30 metros cúbicos por segundo"),
        ("A viagem demorou 1 hora a mais.", "1 hora"),
        ("La reforma duró tres trimestres completos.", "tres trimestres"),
    ],
)
def test_quantity_patterns(text: str, quantity: str):
    assert entities(text, AnswerType.QUANTITY)[0] == quantity


def test_model_numbers_are_names_not_quantities():
    text = "Se lanzó el Falcon 9 con 60 satélites a bordo."
    assert entities(text, AnswerType.QUANTITY) == ["60"]
    assert entities("El 960DT llega con 48 GB.", AnswerType.QUANTITY) == ["48 GB"]
    assert "Falcon 9" in entities(text, AnswerType.NAME)


@pytest.mark.parametrize(
    "text,name",
    [
        ("La tienda vende el Galaxy Tab 3.5 desde ayer.", "Galaxy Tab 3.5"),
        ("The lab moved its code to cuDNN last year.", "cuDNN"),
        ("O crédito veio do Banco de Portugal na semana passada.", "Banco de Portugal"),
        ("El Nexus 7 llegó tarde a las tiendas.", "Nexus 7"),
        ("She finished The Silent Valley in a single summer.", "The Silent Valley"),
        ("La unidad de IA Norlax diseñó el sensor.", "Norlax"),
    ],
)
def test_name_patterns(text: str, name: str):
    assert entities(text, AnswerType.NAME) == [name]


def test_a_name_ending_in_a_question_word_is_the_question_s_own_thing():
    text = "La aerolínea opera el Boeing 737 y el Airbus A320 en la ruta."
    asked = frozenset(word_tokens("¿Qué otro avión opera junto al A320?"))
    assert entities(text, AnswerType.NAME, asked) == ["Boeing 737"]


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
