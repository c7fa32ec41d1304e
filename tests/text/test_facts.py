"""Facts in a text (citeqa.text.facts): numbers, units, money, dates, years and names, with exact
offsets, read the same way in es, pt and en; the words come from the lexicon's data files."""

from __future__ import annotations

import pytest

from citeqa.claims.parts import analyse_claim
from citeqa.qa.answer_types import find_entities
from citeqa.qa.questions import AnswerType, expected_type, question_words, wh_roles
from citeqa.qa.rules.short_answer import short_answer_in
from citeqa.records import Highlight
from citeqa.text import facts_words as fw
from citeqa.text import lexicon
from citeqa.text.analysis import fold_accents, query_terms, word_tokens
from citeqa.text.facts import DatePoint, find_dates, find_facts, find_names, find_quantities, number_words, parse_number
from citeqa.text.facts_names import is_name_word


@pytest.mark.parametrize(
    "token,value",
    [
        ("744", 744.0),
        ("0,1", 0.1),
        ("0.1", 0.1),
        ("0,979", 0.979),
        ("1,2", 1.2),
        ("4.5", 4.5),
        ("3.000", 3000.0),
        ("250,000", 250000.0),
        ("1.000.000", 1e6),
        ("1,234.5", 1234.5),
        ("1.234,5", 1234.5),
        ("abc", None),
        ("", None),
    ],
)
def test_parse_number_reads_both_decimal_marks(token, value):
    assert parse_number(token) == value


def _only(text: str, lang: str):
    facts = find_quantities(text, lang)
    assert len(facts) == 1, facts
    return facts[0]


@pytest.mark.parametrize(
    "text,lang",
    [
        ("un modelo de 744 mil millones de parámetros", "es"),
        ("um modelo de 744 bilhões de parâmetros", "pt"),
        ("a model of 744 billion parameters", "en"),
        ("a 744-billion-parameter model", "en"),
    ],
)
def test_scale_words_and_units_agree_across_languages(text, lang):
    fact = _only(text, lang)
    assert fact.number == 744e9 and fact.unit == "param"


def test_spanish_billon_is_a_million_millions():
    assert _only("1,2 billones de parámetros", "es").number == pytest.approx(1.2e12)


@pytest.mark.parametrize(
    "text,lang,number,unit",
    [
        ("unos 100 mil chips", "pt", 1e5, "chip"),
        ("around 100,000 chips", "en", 1e5, "chip"),
        ("API a 0,1 yuan por imagen", "es", 0.1, "cny"),
        ("roughly US$ 0.014 per image", "en", 0.014, "usd"),
        ("288 GB de memoria", "es", 288, "gb"),
        ("subieron un 8 % tras", "es", 8, "%"),
        ("adelantó el chip en tres trimestres", "es", 3, "quarter"),
        ("pulled forward by three quarters", "en", 3, "quarter"),
        ("tardó seis meses", "es", 6, "month"),
        ("3.000 millones de dólares", "es", 3e9, "usd"),
    ],
)
def test_quantities_with_units(text, lang, number, unit):
    fact = _only(text, lang)
    assert fact.number == pytest.approx(number) and fact.unit == unit


@pytest.mark.parametrize(
    "text",
    [
        "GLM-5 and GPT-5.2",
        "Kunlun P800",
        "the Ascend 950 chip",
        "openPangu 2.0 was released",
        "At Huawei Connect 2026, held",
        "the 960DT and the 960PR",
        "Atlas 800T A2",
        "the CVTG-2K benchmark",
        "the series 3600 trains cost more",
    ],
)
def test_numbers_inside_names_are_not_quantities(text):
    assert [f for f in find_facts(text, "en") if f.kind == "quantity"] == []


def test_number_words_only_in_their_language():
    # "dos" is "of the" in Portuguese, "two" in Spanish
    assert find_quantities("o preço dos chips", "pt") == []
    assert _only("los dos chips", "es").number == 2


def test_an_elided_unit_is_not_the_next_adjective():
    fact = _only("un decodificador de 7 mil millones responsable del detalle", "es")
    assert fact.number == 7e9 and fact.unit == ""


@pytest.mark.parametrize(
    "text,lang,point",
    [
        ("el 31 de julio de 2026", "es", DatePoint(2026, None, 7, 31)),
        ("a 31 de julho de 2026", "pt", DatePoint(2026, None, 7, 31)),
        ("by Huawei itself (July 31, 2026)", "en", DatePoint(2026, None, 7, 31)),
        ("en enero de 2025, Zhipu", "es", DatePoint(2025, None, 1)),
        ("In January 2025, Zhipu", "en", DatePoint(2025, None, 1)),
        ("no primeiro trimestre de 2027", "pt", DatePoint(2027, 1)),
        ("in the first quarter of 2027", "en", DatePoint(2027, 1)),
        ("desde 2022, cuando", "es", DatePoint(2022)),
        ("realizado em setembro", "pt", DatePoint(None, None, 9)),
    ],
)
def test_dates_in_three_languages(text, lang, point):
    dates = find_dates(text)
    assert [d.date for d in dates] == [point]


def test_an_ordinal_after_a_quarter_is_another_quarter_of_that_year():
    text = "o 960DT chega no primeiro trimestre de 2027 e o 960PR no terceiro."
    assert [d.date for d in find_dates(text)] == [DatePoint(2027, 1), DatePoint(2027, 3)]


def test_ambiguous_month_words_need_a_day_or_year():
    assert find_dates("the results may vary; el marco de trabajo") == []
    assert [d.date for d in find_dates("May 2026")] == [DatePoint(2026, None, 5)]


# --- offsets, types, number words --------------------------------------------------------

TEXTS = [
    ("El salto: un modelo de aproximadamente 744 mil millones de parámetros, con unos 100 mil chips.", "es"),
    ("A API custa US$ 0,014 por imagem desde 19 set 2026; subiu 8 % no segundo semestre de 2026.", "pt"),
    ("By July 31, 2026 the Ascend 950 shipped 50,000 units at €1.200 each, up 3–1 on the 1990s.", "en"),
    ("Plantaron setecientos cuarenta y cuatro mil millones de árboles a finales de 2025 en Vigo.", "es"),
    ("Ação: o Banco de Portugal emprestou 3.000 milhões de euros em março de 2024 à GLM-5 Ltda.", "pt"),
]


@pytest.mark.parametrize("text,lang", TEXTS)
def test_every_fact_quotes_its_text_exactly(text, lang):
    found = find_facts(text, lang) + find_names(text)
    assert found
    for f in found:
        assert text[f.start : f.end] == f.text
        at = f.measure
        assert isinstance(at, Highlight) and f.start <= at.start < at.end <= f.end


def test_number_words_are_read_by_text2num_with_their_offsets():
    text = "Plantaron setecientos cuarenta y cuatro mil millones de árboles."
    (fact,) = find_quantities(text, "es")
    assert fact.number == 744e9 and fact.unit == "arbol"
    assert text[fact.measure.start : fact.measure.end] == "setecientos cuarenta y cuatro mil millones"
    other = "tardó seis meses y un año"
    assert [(other[a:b], v) for a, b, v in number_words(other, "es")] == [("seis", 6.0)]
    assert number_words("un año después", "es") == []  # a lone one is an article


@pytest.mark.parametrize(
    "text,kind",
    [
        ("costó US$ 43", "money"),
        ("costó 40 euros", "money"),
        ("subió un 8 %", "percent"),
        ("288 GB de memoria", "quantity"),
        ("de 7 mil millones responsable", "number"),
        ("desde 2022, cuando", "year"),
        ("el 31 de julio de 2026", "date"),
    ],
)
def test_fact_types(text, kind):
    assert [f.type for f in find_facts(text, "es")] == [kind]


def test_a_counted_noun_is_in_the_fact_but_not_in_its_measure():
    text = "unos 200 mil coches"
    (fact,) = find_quantities(text, "es")
    assert fact.text == "200 mil coches" and text[fact.measure.start : fact.measure.end] == "200 mil"


def test_a_language_without_a_word_list_keeps_the_language_free_rules():
    text = "Die Firma verkaufte 2026 genau 40 GB an Huawei Connect 2026."
    assert "xx" not in lexicon.languages()
    assert lexicon.word_list("xx", "facts", "months") == ()
    assert [(f.text, f.type) for f in find_facts(text, "xx")] == [("2026", "year"), ("40 GB", "quantity")]
    # names are read with every file's words: "Die" is a German article since de.json has them
    assert [f.text for f in find_names(text)] == ["Firma", "GB", "Huawei Connect 2026"]
    assert number_words("zweihundert Jahre", "xx") == []


def test_a_word_list_file_name_must_be_a_language_code():
    assert lexicon.entry("../pyproject", "facts", "months") is None


# --- one definition for short answers and claims -------------------------------------------


def test_a_short_answer_and_a_claim_check_agree_on_what_is_a_date():
    sentence = "La planta abrirá a finales de 2025 y cerrará en el segundo semestre de 2027."
    answer_dates = find_entities(sentence, AnswerType.DATE, lang="es")
    claim_dates = [Highlight(f.start, f.end) for f in analyse_claim(sentence, "es").facts if f.kind == "date"]
    assert answer_dates == claim_dates
    assert [sentence[h.start : h.end] for h in claim_dates] == ["finales de 2025", "segundo semestre de 2027"]
    question = "¿Cuándo abrirá la planta?"
    asked = frozenset(fold_accents(w) for w in word_tokens(question))
    span = short_answer_in(
        sentence, "es", expected_type(question), asked, set(query_terms(question, ("es",))), question=question
    )
    assert span in claim_dates


def test_a_number_in_a_name_is_neither_a_claim_fact_nor_a_short_answer():
    sentence = "At Huawei Connect 2026 the firm showed 3 chips."
    facts = analyse_claim(sentence, "en").facts
    assert [f.text for f in facts] == ["3 chips"]
    assert find_entities(sentence, AnswerType.DATE, lang="en") == []
    assert [sentence[h.start : h.end] for h in find_entities(sentence, AnswerType.NAME, lang="en")] == [
        "Huawei Connect 2026"
    ]


@pytest.mark.parametrize(
    "word,first,name",
    [
        ("GLM-5", True, True),
        ("openPangu", True, True),
        ("AI", True, True),
        ("Alibaba", False, True),
        ("Alibaba", True, False),
        ("chip", False, False),
    ],
)
def test_name_words(word, first, name):
    assert is_name_word(word, first) is name


def test_the_question_words_are_one_list_for_answers_claims_and_follow_ups():
    from citeqa.claims.check import looks_like_claim
    from citeqa.qa.questions import is_follow_up

    for wh in wh_roles():
        assert wh in question_words()
        assert not looks_like_claim(f"{wh} abrió la planta en 2025.")
    assert is_follow_up("E o seu preço?", 2) and not is_follow_up("Quanto custa o bilhete de Lisboa a Porto?", 4)


def test_dates_keep_a_point_for_claims():
    assert [d.date for d in find_dates("no segundo semestre de 2026 e nos anos 1990s")] == [
        DatePoint(2026),
        DatePoint(decade=1990),
    ]


@pytest.mark.parametrize(
    ("text", "said", "century"),
    [
        ("Der Grundstein wurde im 13. Jahrhundert gelegt.", "13. Jahrhundert", 13),
        ("Die Burg entstand im 12. Jh. auf dem Felsen.", "12. Jh.", 12),
        ("It was built in the 13th century.", "13th century", 13),
        ("La cathédrale date du XIIIe siècle.", "XIIIe siècle", 13),
        ("Une villa du 1er siècle.", "1er siècle", 1),
        ("Se construyó en el siglo XIII.", "siglo XIII", 13),
        ("Foi construída no século XXI.", "século XXI", 21),
    ],
)
def test_centuries_are_dates_in_every_language(text: str, said: str, century: int):
    dates = find_dates(text)
    assert [(d.text, d.date) for d in dates] == [(said, DatePoint(century=century))]
    assert not [f for f in find_facts(text) if f.kind != "date"]  # its number is no quantity


def test_a_day_and_a_month_make_an_old_year_a_date():
    assert [(d.text, d.date) for d in find_dates("am 15. August 1248 gelegt")] == [
        ("15. August 1248", DatePoint(1248, None, 8, 15))
    ]
    assert [d.date for d in find_dates("signed on July 4, 1776")] == [DatePoint(1776, None, 7, 4)]
    assert not [f for f in find_facts("am 15. August 1248 gelegt", "de") if f.kind != "date"]


def test_roman_numerals_are_centuries_only_beside_the_word():
    assert find_dates("Louis XIV régna longtemps.") == []
    assert find_dates("el siglo IIII") == [] and find_dates("the 35th century") == []


def test_names_are_highlights_of_the_text_and_records_shares_the_type():
    from citeqa import records
    from citeqa.text.facts_names import name_spans
    from citeqa.text.highlight import Highlight as TextHighlight

    text = "At Huawei Connect 2026 the firm showed 3 chips."
    (name,) = name_spans(text)
    assert isinstance(name, TextHighlight) and text[name.start : name.end] == "Huawei Connect 2026"
    assert records.Highlight is TextHighlight  # one type for offsets into a string


# --- German and French word lists (de.json, fr.json) ----------------------------------------


@pytest.mark.parametrize(
    ("text", "lang", "expected"),
    [
        ("Der Stausee fasst 41 Millionen Kubikmeter Wasser.", "de", ("41 Millionen Kubikmeter", 41e6, "m³")),
        ("Das Projekt kostete 2,5 Milliarden Euro.", "de", ("2,5 Milliarden Euro", 2.5e9, "eur")),
        ("Die Firma beschäftigt 3.000 Mitarbeiter in Berlin.", "de", ("3.000 Mitarbeiter", 3000.0, "employee")),
        ("Der Umsatz stieg um 12 Prozent.", "de", ("12 Prozent", 12.0, "%")),
        ("Zwölf Monate später zog er nach Hamburg.", "de", ("Zwölf Monate", 12.0, "month")),
        ("Le projet a coûté 2,5 milliards d'euros.", "fr", ("2,5 milliards d'euros", 2.5e9, "eur")),
        ("Le projet a coûté 2,5 milliards d’euros.", "fr", ("2,5 milliards d’euros", 2.5e9, "eur")),
        ("La société emploie 300 salariés.", "fr", ("300 salariés", 300.0, "employee")),
        ("Il a vécu douze ans à Lyon.", "fr", ("douze ans", 12.0, "year")),
    ],
)
def test_german_and_french_quantities_keep_their_scale_and_unit(text, lang, expected):
    (fact,) = find_quantities(text, lang)
    assert (fact.text, fact.number, fact.unit) == expected


def test_an_apostrophe_after_a_number_is_no_elision():
    (fact, _) = find_facts("Boeing delivered 737's in 2024.", "en")
    assert (fact.text, fact.unit) == ("737", "")


@pytest.mark.parametrize(
    ("text", "point"),
    [
        ("Der Umsatz stieg im dritten Quartal 2025.", DatePoint(2025, 3)),
        ("Die Linie öffnet im ersten Quartal des Jahres 2027.", DatePoint(2027, 1)),
        ("Die Anlage geht im Frühjahr 2027 in Betrieb.", DatePoint(2027)),
        ("Die Mauer fiel am 9. November 1989.", DatePoint(1989, None, 11, 9)),
        ("Ende 2025 war der Bau fertig.", DatePoint(2025)),
        ("Le chiffre a augmenté au troisième trimestre 2025.", DatePoint(2025, 3)),
        ("Le mur est tombé le 9 novembre 1989.", DatePoint(1989, None, 11, 9)),
        ("La ligne ouvrira fin 2026.", DatePoint(2026)),
        ("Le barrage fut achevé en août 1964.", DatePoint(1964, None, 8)),
    ],
)
def test_german_and_french_dates_are_read(text, point):
    (fact,) = find_dates(text)
    assert fact.date == point


def test_the_german_billion_does_not_change_the_english_one():
    (en,) = find_quantities("a fund of 3 billion dollars", "en")
    (de,) = find_quantities("ein Fonds von 3 Billionen Dollar", "de")
    assert (en.number, en.unit) == (3e9, "usd") and (de.number, de.unit) == (3e12, "usd")


# --- numbers grouped by spaces (fr, de; any language's digits) -----------------------------------


@pytest.mark.parametrize(
    ("token", "value"),
    [
        ("40 000", 40000.0),
        ("4 808", 4808.0),
        ("1 200 000", 1.2e6),
        ("4\u202f808", 4808.0),  # narrow no-break space (French typography)
        ("40\u00a0000", 40000.0),  # no-break space
        ("12 000,5", 12000.5),
        ("1 234 567,89", 1234567.89),
        ("12 3456", None),  # a group of four digits is no group
        ("1998 200", None),  # a first group of four digits neither
        ("012 345", None),
    ],
)
def test_parse_number_reads_groups_of_three_after_spaces(token, value):
    assert parse_number(token) == value


@pytest.mark.parametrize(
    ("text", "lang", "expected"),
    [
        ("Il y avait environ 40 000 habitants.", "fr", [("40 000 habitants", 40000.0)]),
        ("Le sommet culmine à 4 808 mètres.", "fr", [("4 808 mètres", 4808.0)]),
        ("Le sommet culmine à 4\u202f808 mètres.", "fr", [("4\u202f808 mètres", 4808.0)]),
        ("Le projet a coûté 1 200 000 euros.", "fr", [("1 200 000 euros", 1.2e6)]),
        ("Le lac couvre 12 000,5 km.", "fr", [("12 000,5 km", 12000.5)]),
        (
            "Die Stadt hat rund 40 000 Einwohner.",
            "de",
            [("40 000 Einwohner", 40000.0)],
        ),  # its counted noun, as "1 500 personas"
        ("Die Zugspitze ist 2\u00a0962 Meter hoch.", "de", [("2\u00a0962 Meter", 2962.0)]),
        ("En 2019, 1 500 personas votaron.", "es", [("1 500 personas", 1500.0)]),
    ],
)
def test_a_number_grouped_by_spaces_is_one_number(text, lang, expected):
    facts = find_quantities(text, lang)
    assert [(f.text, f.number) for f in facts] == expected
    assert all(text[f.start : f.end] == f.text for f in facts)


@pytest.mark.parametrize(
    ("text", "lang", "numbers"),
    [
        ("In 1998 200 people died in the floods.", "en", [200.0]),  # a year, then a count
        ("En 2019 200 personas votaron.", "es", [200.0]),
        ("On March 5 200 people came.", "en", [200.0]),  # the day is the date's
        ("Il a 3 enfants et 200 000 euros.", "fr", [3.0, 2e5]),
        ("Der Plan nennt 12 3456 als Nummern.", "de", [12.0, 3456.0]),  # a group of four digits
        ("Sie zahlte 0,5 000 Euro.", "de", [0.5, 0.0]),  # a decimal starts no group
    ],
)
def test_numbers_apart_are_not_grouped(text, lang, numbers):
    assert [f.number for f in find_facts(text, lang) if f.kind == "quantity"] == numbers


# --- hedged numbers ("environ", "knapp", "more than"): facts.hedges ---------------------------------


@pytest.mark.parametrize(
    ("text", "lang", "approx"),
    [
        ("Il y avait environ 40 000 habitants.", "fr", "about"),
        ("La ville compte près de 40 000 habitants.", "fr", "about"),
        ("Le col est à presque 2 000 mètres.", "fr", "almost"),
        ("Die Stadt hat rund 40 000 Einwohner.", "de", "about"),
        ("Der Berg ist knapp 3000 Meter hoch.", "de", "almost"),
        ("Das kostet ca. 12 Euro.", "de", "about"),
        ("The city has about 40,000 inhabitants.", "en", "about"),
        ("More than a million people came.", "en", "over"),
        ("Up to 10 % of the water is lost.", "en", "under"),
        ("Tiene unos 300 coches.", "es", "about"),
        ("Costó cerca de 40 millones de euros.", "es", "about"),
        ("Custou quase 40 milhões de euros.", "pt", "almost"),
        ("The city has 40,000 inhabitants.", "en", ""),
        ("Die Stadt hat 40 000 Einwohner.", "de", ""),
    ],
)
def test_a_hedge_before_a_number_marks_it_approximate(text, lang, approx):
    (fact,) = find_quantities(text, lang)
    assert fact.approx == approx
    assert text[fact.start : fact.end] == fact.text and not any(w in fact.text for w in ("environ", "rund", "knapp"))


def test_every_hedge_kind_in_the_word_lists_is_known():
    kinds = {kind for lang in lexicon.languages() for kind in lexicon.entry(lang, "facts", "hedges", {}) or {}}
    assert kinds == set(fw.HEDGES)
    assert fw.hedge_words()["knapp"] == "almost" and fw.hedge_words()["a peu pres"] == "about"


# --- a currency sign after its number ("1 200 000 €", "25 $") ---------------------------------------


@pytest.mark.parametrize(
    ("text", "lang", "said", "number", "unit"),
    [
        ("Le projet a coûté 1 200 000 € en tout.", "fr", "1 200 000 €", 1.2e6, "eur"),
        ("Das Projekt kostete 3,5 Mio. € insgesamt.", "de", "3,5 Mio. €", 3.5e6, "eur"),
        ("Das Projekt kostete 3,5 Mio. Euro.", "de", "3,5 Mio. Euro", 3.5e6, "eur"),
        ("Der Umsatz lag bei 2 Mrd. €.", "de", "2 Mrd. €", 2e9, "eur"),
        ("The ticket costs 25 $ at the door.", "en", "25 $", 25.0, "usd"),
        ("O bilhete custa 12 R$.", "pt", "12 R$", 12.0, "brl"),
        ("The project cost €1.2 million.", "en", "€1.2 million", 1.2e6, "eur"),
        ("El proyecto costó 1,2 millones de euros.", "es", "1,2 millones de euros", 1.2e6, "eur"),
    ],
)
def test_a_currency_sign_after_the_number_is_its_currency(text, lang, said, number, unit):
    (fact,) = find_quantities(text, lang)
    assert (fact.text, fact.number, fact.unit, fact.type) == (said, number, unit, "money")
    assert text[fact.start : fact.measure.end] == said


@pytest.mark.parametrize(
    "text",
    ["Die Stadt hat 3,5 Mio. Einwohner.", "Es waren 3,5 Mio. Danach kamen mehr."],
)
def test_a_scale_abbreviation_keeps_its_period_only_before_a_currency(text):
    (fact,) = find_quantities(text, "de")
    assert (fact.text, fact.number, fact.type) == ("3,5 Mio", 3.5e6, "number")


def test_a_sign_before_the_next_number_is_that_number_s():
    assert [(f.text, f.unit) for f in find_quantities("He paid 5 $20 bills.", "en")] == [
        ("5", ""),
        ("$20 bills", "usd"),
    ]


# --- rates and units of area or volume -------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "lang", "expected"),
    [
        ("NVIDIA's B300 sells for about US$ 40,000 per unit.", "en", ("US$ 40,000 per unit", 40000.0, "usd")),
        ("It costs $3 per litre.", "en", ("$3 per litre", 3.0, "usd")),
        ("They earn 300 euros per month.", "en", ("300 euros per month", 300.0, "eur")),
        ("The price is $5 a day.", "en", ("$5 a day", 5.0, "usd")),
        ("Costs rose 5 per cent.", "en", ("5 per cent", 5.0, "%")),
    ],
)
def test_a_rate_keeps_its_whole_per_phrase_and_per_alone_is_no_unit(text, lang, expected):
    (fact,) = find_quantities(text, lang)
    assert (fact.text, fact.number, fact.unit) == expected
    assert fact.measure_end == fact.end  # the short answer keeps the rate with its price


@pytest.mark.parametrize(
    ("text", "lang", "expected"),
    [
        ("La presa almacena 86 hectómetros cúbicos de agua.", "es", ("86 hectómetros cúbicos", "hm³")),
        ("La presa almacena 86 hectómetros de agua.", "es", ("86 hectómetros", "hm")),
        ("O parque ocupa 12 quilômetros quadrados.", "pt", ("12 quilômetros quadrados", "km²")),
        ("An area of 10 square kilometres.", "en", ("10 square kilometres", "km²")),
        ("Le lac contient 3 kilomètres cubes d'eau.", "fr", ("3 kilomètres cubes", "km³")),
        ("Une surface de 30 kilomètres carrés.", "fr", ("30 kilomètres carrés", "km²")),
        ("Le barrage retient 41 millions de mètres cubes.", "fr", ("41 millions de mètres cubes", "m³")),
        ("El embalse tiene 41 millones de metros cúbicos.", "es", ("41 millones de metros cúbicos", "m³")),
        ("A represa tem 2 milhões de metros quadrados.", "pt", ("2 milhões de metros quadrados", "m²")),
        ("Sie fasst 41 Millionen Kubikmeter.", "de", ("41 Millionen Kubikmeter", "m³")),
    ],
)
def test_an_area_or_a_volume_is_not_a_length(text, lang, expected):
    (fact,) = find_quantities(text, lang)
    assert (fact.text, fact.unit) == expected


def test_a_dimension_word_before_no_unit_of_measure_changes_nothing():
    (fact,) = find_quantities("He ate 5 square meals a day.", "en")
    assert fact.unit != "" and "²" not in fact.unit
