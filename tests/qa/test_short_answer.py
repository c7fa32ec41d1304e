"""The short answer's rules (citeqa.qa.rules.short_answer), asked as the pipeline asks: one test per
rule, invented es/pt/en text."""

from citeqa.qa.answer_types import Wanted
from citeqa.qa.rules import rule_answer


def short(question: str, answer: str, lang: str, query: str | None = None) -> str | None:
    """The short answer as the pipeline asks for it (``query`` adds a previous turn)."""
    span = rule_answer(Wanted.of(question, query or question), answer, lang).short
    return answer[span.start : span.end] if span else None


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
