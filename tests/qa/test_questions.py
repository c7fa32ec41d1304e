"""What a question asks for (citeqa.qa.questions): one test per rule, invented es/pt/en questions."""

import pytest

from citeqa.qa.questions import AnswerType, clean_question, expected_type, is_follow_up, question_shape

# --- question types --------------------------------------------------------------------


@pytest.mark.parametrize(
    "question,kind",
    [
        # which/what + a measure noun asks for a number
        ("¿Qué altura alcanza la torre del reloj?", AnswerType.QUANTITY),
        ("Qual foi a pontuação da equipa na final?", AnswerType.QUANTITY),
        ("What word accuracy did the new parser reach?", AnswerType.QUANTITY),
        ("What did the relay team score in the final?", AnswerType.QUANTITY),
        ("Qual é o tempo de viagem entre as duas vilas?", AnswerType.QUANTITY),
        # ... a time noun for a date, a place noun for a place, a price noun for a price
        ("¿Qué día abrió el museo del vidrio?", AnswerType.DATE),
        ("Em quais cidades a cadeia abriu lojas?", AnswerType.PLACE),
        ("What is the price of a monthly pass?", AnswerType.PRICE),
        # a preposition or a conjunction before the wh-word
        ("¿A qué empresa vendió la familia la fábrica?", AnswerType.NAME),
        ("¿Con qué herramienta se reparó el casco?", AnswerType.NAME),
        ("E para qual estaleiro foi o navio?", AnswerType.NAME),
        ("And which bank approved the loan?", AnswerType.NAME),
        ("A partir de que ano o porto passou a receber cruzeiros?", AnswerType.DATE),
        # the interrogative clause decides, not a "cuando"/"when" in a subordinate clause
        ("¿Qué barco zarpó cuando llegó la tormenta?", AnswerType.NAME),
        ("When the bridge closed, which ferry replaced it?", AnswerType.NAME),
        ("Si la lluvia sigue, ¿cuántos litros caerán mañana?", AnswerType.QUANTITY),
        # a reason, a purpose, a manner, what someone said or what happened: a sentence
        ("Com que objetivo a prefeitura comprou os ônibus?", AnswerType.OTHER),
        ("¿Para qué sirve la nueva esclusa?", AnswerType.OTHER),
        ("What did the mayor say about the budget?", AnswerType.OTHER),
        ("¿Qué ocurrió con el puente viejo?", AnswerType.OTHER),
        ("O que aconteceu com a ponte velha?", AnswerType.OTHER),
        # a category or a part ("what kind of", "part of") is a common-noun phrase
        ("¿Qué tipo de suelo prefiere la planta?", AnswerType.OTHER),
        ("What technique did the bakers use to keep the bread fresh?", AnswerType.OTHER),
        ("Which part of the engine failed first?", AnswerType.OTHER),
        ("Which Siemens part did the engineers replace?", AnswerType.NAME),
        # "how is it called" asks for a name; "how much ... in euros" for a price
        ("Como se chama o cão do capitão?", AnswerType.NAME),
        ("¿Cómo llaman los vecinos a la plaza mayor?", AnswerType.NAME),
        ("E quanto isso custa em euros?", AnswerType.PRICE),
        ("How long is the new tunnel?", AnswerType.QUANTITY),
    ],
)
def test_question_types(question: str, kind: AnswerType):
    assert expected_type(question) is kind


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


def test_question_shape_tells_head_noun_and_number():
    assert question_shape("Which rivers cross the old town?").plural
    assert question_shape("Which rivers cross the old town?").head == "rivers"
    assert not question_shape("¿Qué río cruza la ciudad?").plural
    assert question_shape("¿Qué bibliotecas usa el equipo?").plural
    assert question_shape("Which Alibaba unit designs the chips?").head == "unit"
    assert question_shape("¿Qué técnica usaron los panaderos?").phrase
    assert question_shape("Quem fundou a editora?").person


# --- cleaning and follow-ups -------------------------------------------------------------


def test_follow_up_detection():
    assert is_follow_up("¿Y cuántos chips usó?", 3)
    assert is_follow_up("E quanto custa?", 2)
    assert is_follow_up("And its height?", 1)
    assert not is_follow_up("How tall is the lighthouse of Punta Brava?", 4)


def test_clean_question_strips_controls_and_surrogates():
    assert clean_question("  hola\x00 mundo\ud800 ") == "hola mundo"
