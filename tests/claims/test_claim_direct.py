"""Direct evidence (citeqa.claims.direct): a sentence that states the claim's subject and each of its
values for it, in any language; and the messages for input that is no claim."""

from __future__ import annotations

import pytest

from citeqa.claims.check import is_question, nothing_to_check, unchecked
from citeqa.claims.direct import DIFFERENT, NONE, SAME, DirectRule, about_claim, find_values, unit_says
from citeqa.claims.judge import Unit, judge_text
from citeqa.claims.parts import analyse_claim
from citeqa.messages import claim_labels
from citeqa.records import Span

COORDINATED = (
    "At Huawei Connect 2026, held in September, the company pulled the Ascend 960 forward by three "
    "quarters: the 960DT arrives in the first quarter of 2027 and the 960PR in the third."
)


def _unit(text: str, lang: str, lead: str = "") -> Unit:
    start = len(lead) + 1 if lead else 0
    whole = f"{lead} {text}" if lead else text
    return Unit(0, Span("d", 0, len(whole)), start, whole, lang, "", "", 0.9)


def _says(claim: str, lang: str, unit: Unit) -> str:
    parts = analyse_claim(claim, lang)
    j = judge_text(parts, unit.text, unit.lang, dense=unit.dense)
    return unit_says(find_values(parts, unit), j, DirectRule(names=1.0, cover=1.1, dense=0.85))


def test_a_value_belongs_to_the_name_nearest_before_it():
    unit = _unit(COORDINATED, "en")
    assert _says("The 960PR arrives in the third quarter of 2027.", "en", unit) == SAME
    assert _says("The 960DT arrives in the first quarter of 2027.", "en", unit) == SAME
    # the 960DT's quarter is not the 960PR's: another value for the 960PR, not its support
    assert _says("The 960PR arrives in the first quarter of 2027.", "en", unit) == DIFFERENT


@pytest.mark.parametrize(
    ("claim", "lang"),
    [
        ("GLM-5 has roughly 744 billion parameters.", "en"),
        ("GLM-5 tiene unos 744 mil millones de parámetros.", "es"),
        ("GLM-5 hat rund 744 Milliarden Parameter.", "de"),
        ("GLM-5 ha circa 744 miliardi di parametri.", "it"),
        ("GLM-5 té uns 744 mil milions de paràmetres.", "ca"),
        ("GLM-5 a environ 744 milliards de paramètres.", "fr"),
        ("O GLM-5 tem cerca de 744 bilhões de parâmetros.", "pt"),
    ],
)
def test_a_sentence_in_another_language_states_the_claim_through_its_lead(claim, lang):
    lead = "GLM-5, by Zhipu (February 2026)."
    unit = _unit(
        "The leap in scale: a language model of roughly 744 billion parameters, trained on Ascend.", "en", lead
    )
    assert _says(claim, lang, unit) == SAME
    wrong = claim.replace("744", "800")
    assert _says(wrong, lang, unit) == DIFFERENT


def test_a_sentence_without_the_subject_states_nothing_for_it():
    unit = _unit("A mixture of experts with 505 billion parameters, trained on Ascend NPUs.", "en", "openPangu 2.0.")
    assert _says("GLM-5 has 505 billion parameters.", "en", unit) == NONE


def test_memory_written_go_conflicts_with_another_size():
    unit = _unit("The Atlas 950 server has 256 GB of memory per card.", "en")
    assert _says("L'Atlas 950 a 512 Go de mémoire par carte.", "fr", unit) == DIFFERENT
    assert _says("L'Atlas 950 a 256 Go de mémoire par carte.", "fr", unit) == SAME


def test_a_unit_not_about_the_claim_is_left_out():
    parts = analyse_claim("GLM-5 has 744 billion parameters.", "en")
    j = judge_text(parts, "Its benchmarks landed within a few points of GPT-5.2.", "en", dense=0.5)
    assert not about_claim(j, DirectRule(names=1.0, cover=1.1, dense=0.85)) or j.names < 1.0


# --- input that is no claim -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    ["How many parameters does GLM-5 have?", "¿Cuántos parámetros tiene GLM-5?", "Quanti parametri ha GLM-5"],
)
def test_a_question_is_no_claim(text):
    assert is_question(text)


def test_a_claim_is_no_question():
    assert not is_question("GLM-5 has 744 billion parameters.")


def test_a_sentence_with_nothing_checkable():
    assert nothing_to_check(analyse_claim("GLM-5 is good.", "en"))
    assert not nothing_to_check(analyse_claim("GLM-5 has 744 billion parameters.", "en"))
    assert not nothing_to_check(analyse_claim("Huawei compró Zhipu.", "es"))
    assert not nothing_to_check(analyse_claim("Regular stretching helps prevent running injuries.", "en"))


@pytest.mark.parametrize("lang", ["en", "es", "pt", "de", "fr", "it", "ca"])
def test_the_messages_for_no_claim_are_in_the_pages_language(lang):
    record = unchecked("How many parameters does GLM-5 have?", "en", page_lang=lang)
    assert record.verdict == "not_found" and record.message == claim_labels(lang)["question_not_claim"]
    assert claim_labels(lang)["nothing_to_check"] and "{" not in record.message


def test_a_claim_with_two_values_is_checked_value_by_value():
    unit = _unit(COORDINATED, "en")
    right = analyse_claim("The 960DT arrives in the first quarter of 2027 and the 960PR in the third.", "en")
    assert [f.relation for f in find_values(right, unit)] == [SAME, SAME]
    swapped = analyse_claim("The 960DT arrives in the third quarter of 2027 and the 960PR in the first.", "en")
    found = find_values(swapped, unit)
    assert DIFFERENT in {f.relation for f in found} and SAME not in {f.relation for f in found}
