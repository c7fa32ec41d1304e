"""The interface catalogue: one JSON file per language, complete against English, read lazily."""

import json
import string
from importlib import resources

import pytest

from citeqa import messages


def _placeholders(text: str) -> set[str]:
    return {field for _, field, _, _ in string.Formatter().parse(text) if field is not None}


def _files() -> dict[str, dict]:
    folder = resources.files("citeqa.catalogue")
    return {
        p.name[:-5]: json.loads(p.read_text(encoding="utf-8")) for p in folder.iterdir() if p.name.endswith(".json")
    }


def test_the_interface_speaks_at_least_these_languages():
    assert {"es", "pt", "en", "de", "fr", "it", "ca"} <= set(messages.UI_LANGUAGES)
    assert tuple(messages.UI_LANGUAGES)[:3] == ("es", "pt", "en")


@pytest.mark.parametrize("lang", sorted(_files()))
def test_every_language_file_has_every_key_of_english_with_the_same_placeholders(lang: str):
    english, own = _files()["en"], _files()[lang]
    assert set(messages.TRANSLATED) <= set(own)
    for section, values in own.items():
        if section.startswith("_"):
            continue
        assert section in messages.TRANSLATED + messages.ENGLISH_ONLY, section
        assert set(values) == set(english[section]), (section, set(english[section]) ^ set(values))
        for key, text in values.items():
            own_fields, english_fields = _placeholders(text), _placeholders(english[section][key])
            if section == "errors" and lang != "en":  # a detail from outside citeqa (a JSON parser's, in
                english_fields -= {"detail"} - own_fields  # English) that a translation may leave out
            assert own_fields == english_fields, (section, key)
            assert text.strip(), (section, key)


def test_the_not_found_message_speaks_the_question_language():
    assert messages.not_found("de") == "Ich habe dazu nichts in den Dokumenten gefunden."
    assert messages.not_found("fr") != messages.not_found("en") != messages.not_found("ca")
    assert messages.not_found("es") == "No encontré esto en los documentos."
    assert messages.not_found("xx") == messages.not_found("en")


def test_claim_verdicts_and_messages_come_in_each_language():
    assert messages.claim_labels("de")["supported"] == "Belegt"
    assert messages.claim_message("conflicting", "fr", "2020", "2021") == "Les documents disent « 2021 », pas « 2020 »."
    assert messages.claim_message("not_found", "it") == messages.CLAIM_LABELS["it"]["not_found_msg"]


def test_a_claim_whose_subject_the_documents_mention_is_not_said_to_be_unspoken_of():
    """Not found, but a retrieved sentence names the claim's subject: "nothing speaks to this claim"
    would be untrue; the message names the subject, and the value when no sentence about it states it."""
    said = messages.claim_message("not_found", "en", subject="MindSpore", value_missing=True)
    assert said == "The documents mention “MindSpore”, but not this value."
    said = messages.claim_message("not_found", "en", subject="DeepSeek V4")
    assert said == "The documents mention “DeepSeek V4”, but do not confirm this claim."
    said = messages.claim_message("not_found", "es", subject="GLM-5", value_missing=True)
    assert said == "Los documentos mencionan «GLM-5», pero no este valor."
    said = messages.claim_message("not_found", "de", subject="Ascend 950", value_missing=True)
    assert said == "Die Dokumente erwähnen „Ascend 950“, aber nicht diesen Wert."
    assert messages.claim_message("not_found", "en", value_missing=True) == messages.CLAIM_LABELS["en"]["not_found_msg"]
    assert messages.claim_message("supported", "en", subject="X") == messages.CLAIM_LABELS["en"]["supported_msg"]
    for code in messages.UI_LANGUAGES:
        lab = messages.claim_labels(code)
        value, claim = lab["not_found_subject_value"], lab["not_found_subject"]
        assert "{subject}" in value and "{subject}" in claim and len({value, claim, lab["not_found_msg"]}) == 3
        assert "X9" in messages.claim_message("not_found", code, subject="X9", value_missing=True)


def test_every_tab_speaks_each_language_and_only_the_server_answers_in_english():
    """Issue [3/7] item 3: the Corpus tab's status lines, the Evaluate tab and the outcomes are translated;
    only the server's refusals (JSON for programs) stay English."""
    assert messages.ENGLISH_ONLY == ("server",)
    assert messages.corpus_labels("de")["remove"] == "Entfernen"
    assert messages.corpus_labels("de")["choose"] != messages.corpus_labels("en")["choose"]
    assert messages.evaluate_labels("fr")["start"] != messages.EVALUATE["start"] == "Run evaluation"
    assert messages.outcome_help("it")["right"] != messages.OUTCOME_HELP["right"]
    assert messages.evaluate_labels("xx") == messages.EVALUATE
    assert messages.SERVER["bad_json"].startswith("the request body")


@pytest.mark.parametrize(("lang", "one", "many"), [("en", "embedding 1 passage", "embedding 3 passages")])
def test_a_count_of_one_is_said_in_the_singular(lang, one, many):
    status = messages.corpus_labels(lang)
    assert messages.counted(status, "step_embedding", 1) == one
    assert messages.counted(status, "step_embedding", 3) == many
    for code in messages.UI_LANGUAGES:  # every language has both forms, and they differ
        own = messages.corpus_labels(code)
        assert messages.counted(own, "step_embedding", 1) != messages.counted(own, "step_embedding", 2)


def test_language_lists_name_each_language_in_the_interface_language():
    assert messages.language_list(["es", "pt", "en"], "en") == "Spanish, Portuguese and English"
    assert messages.language_list(["es", "pt", "en"], "de") == "Spanisch, Portugiesisch und Englisch"
    assert messages.language_list(["en"], "fr") == "anglais"
    assert messages.language_list(["xx", "en"], "en") == "xx and English"  # a language without a name: its code
