"""The per-language word lists (citeqa.text.lexicon): their files load, keep the documented format,
and a language without a file has no words."""

from __future__ import annotations

import json

import pytest

from citeqa.errors import ConfigError
from citeqa.text import lexicon

ROLES = {
    "which",
    "which_plural",
    "who",
    "who_plural",
    "when",
    "where",
    "why",
    "how",
    "manner",
    "how_many",
    "how_many_plural",
}


@pytest.mark.parametrize("lang", ["es", "pt", "en"])
def test_each_shipped_language_has_facts_names_and_questions(lang):
    assert lang in lexicon.languages()
    assert len(lexicon.word_list(lang, "facts", "months")) >= 12
    assert lexicon.word_list(lang, "names", "connectors")
    roles = lexicon.entry(lang, "questions", "wh")
    assert roles and set(roles.values()) <= ROLES


def test_shared_lists_join_every_language_folded():
    months = lexicon.shared_table("facts", "months")
    assert months["julio"] == months["julho"] == months["july"] == 7
    assert months["marco"] == 3  # "março", folded
    assert "cuantos" in lexicon.shared_list("questions", "how_many")


def test_a_malformed_section_is_a_config_error(tmp_path):
    path = tmp_path / "zz.json"
    path.write_text(json.dumps({"facts": {"months": "enero"}}), "utf-8")
    with pytest.raises(ConfigError, match="facts.months"):
        lexicon.load(path)
    path.write_text(json.dumps({"facts": {"months": {"enero": 1}}, "questions": {"wh": {"qué": "which"}}}), "utf-8")
    assert lexicon.load(path)["facts"]["months"] == {"enero": 1}


def test_a_missing_language_or_an_odd_name_has_no_words():
    assert lexicon.word_list("xx", "questions", "wh") == ()
    assert lexicon.entry("../../pyproject", "facts", "months", "none") == "none"


@pytest.mark.parametrize("lang", ["de", "fr"])
def test_german_and_french_have_facts_names_and_value_prepositions_but_no_wh_words_yet(lang):
    assert len(lexicon.word_list(lang, "facts", "months")) >= 12
    assert lexicon.entry(lang, "facts", "scales") and lexicon.entry(lang, "facts", "units")
    assert lexicon.word_list(lang, "names", "articles") and lexicon.value_prepositions(lang)
    assert lexicon.entry(lang, "questions", "wh") is None  # questions are the trained reader's (README.md)


def test_a_word_two_languages_read_differently_is_left_out():
    scales = lexicon.shared_table("facts", "scales")
    assert scales["billion"] == 1e9 and scales["billionen"] == 1e12  # "Billion" (de, fr) is 1e12
    assert "an" not in lexicon.shared_table("facts", "units")  # an English article, "an" (fr) a year
