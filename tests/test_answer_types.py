"""Facts of a kind in a sentence and the short answer: one test per rule, invented es/pt/en text."""

import pytest

from citeqa.qa.answer_types import AnswerType, expected_type, find_entities, short_answer_in, type_match
from citeqa.text.analysis import fold_accents, query_terms, words


def entities(text: str, kind: AnswerType, avoid: frozenset[str] = frozenset()) -> list[str]:
    return [text[a:b] for a, b in find_entities(text, kind, avoid)]


def short(question: str, answer: str, lang: str, query: str | None = None) -> str | None:
    """The short answer as the pipeline asks for it (``query`` adds a previous turn)."""
    query = query or question
    asked = frozenset(fold_accents(w) for w in words(query))
    span = short_answer_in(
        answer, lang, expected_type(question), asked, set(query_terms(query, (lang,))), question=question
    )
    return answer[span[0] : span[1]] if span else None


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
    asked = frozenset(words("¿Qué otro avión opera junto al A320?"))
    assert entities(text, AnswerType.NAME, asked) == ["Boeing 737"]


# --- the short answer ------------------------------------------------------------------


def test_the_number_that_counts_the_question_s_noun_wins():
    answer = "La ciudad tiene 3 millones de habitantes y unos 200 mil coches matriculados."
    assert short("¿Cuántos coches tiene la ciudad?", answer, "es") == "200 mil"
    assert short("¿Cuántos habitantes tiene la ciudad?", answer, "es") == "3 millones"


def test_the_unit_the_question_names_wins_even_when_glued_into_a_name():
    answer = "O X5 tem 16 GB de memória e entrega 5 teraFLOPS em FP16."
    assert short("Quantos teraFLOPS o X5 entrega?", answer, "pt") == "5 teraFLOPS"
    assert short("Quantos GB de memória tem o X5?", answer, "pt") == "16 GB"


def test_the_currency_the_question_asks_for_wins():
    answer = "El billete cuesta 40 euros, unos US$ 43 al cambio."
    assert short("¿Cuánto cuesta el billete en dólares?", answer, "es") == "US$ 43"
    assert short("¿Cuánto cuesta el billete en euros?", answer, "es") == "40 euros"


def test_list_items_separated_by_commas_keep_their_own_dates():
    answer = "The Q7 chip arrives in 2026, the Q9 in 2027."
    assert short("In what year is the Q9 due?", answer, "en") == "2027"
    assert short("In what year is the Q7 due?", answer, "en") == "2026"


def test_a_quarter_is_the_short_answer_to_when():
    answer = "El astillero entregará el primer buque en el primer trimestre de 2027 y el segundo en 2028."
    assert short("¿Cuándo entregará el astillero el primer buque?", answer, "es") == "primer trimestre de 2027"


def test_the_name_next_to_the_question_s_noun_wins():
    answer = "La empresa compró la fábrica de Vigo y su filial Norlax, según Reuters."
    assert short("¿Qué filial compró la empresa?", answer, "es") == "Norlax"
    answer = "The order went to Zentra, the bakery that supplies the hotel, and not to Harbor Mall."
    assert short("Which bakery supplies the hotel?", answer, "en") == "Zentra"


def test_a_question_for_several_gets_the_coordinated_list():
    answer = "El museo exhibe obras de Goya, Velázquez y Murillo en la sala norte."
    assert short("¿De qué pintores exhibe obras el museo?", answer, "es") == "Goya, Velázquez y Murillo"
    answer = "Os dados foram publicados no GitLab, Zenodo e Figshare."
    assert short("Em quais plataformas os dados foram publicados?", answer, "pt") == "GitLab, Zenodo e Figshare"


def test_a_name_with_nothing_of_the_question_near_it_is_no_short_answer():
    answer = "Según Reuters, la decisión sorprendió a los analistas del sector naval."
    assert short("¿Qué banco financió la obra del puerto?", answer, "es") is None


def test_who_takes_the_person_even_across_an_apposition():
    answer = "Marta Ribeiro, antiga diretora financeira, assumiu a presidência em 2019."
    assert short("Quem assumiu a presidência em 2019?", answer, "pt") == "Marta Ribeiro"


def test_a_common_noun_phrase_question_has_no_short_answer():
    answer = "Usaron la fermentación lenta, como en Baviera."
    assert short("¿Qué técnica usaron los panaderos?", answer, "es") is None


def test_a_follow_up_weighs_its_own_terms_over_the_previous_turn():
    answer = "The R9 has 12 GB of memory and 256 GB of storage."
    question = "And how much storage?"
    assert short(question, answer, "en", query=f"How much memory does the R9 have? {question}") == "256 GB"
