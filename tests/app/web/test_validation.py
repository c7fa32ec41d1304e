"""The /ask schema: every argument checked, each refusal an error record naming its field.

Defects 5 and 6 of issue [2/6]: `k` as "abc", [1], NaN, Infinity or 1e400, or too few
arguments gave {"error": null} and a traceback; `language` "xx", 123 or 1 MB, `k` = 10^9
and a number as the question were accepted.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from citeqa.app.web.validation import MAX_HISTORY_ITEMS, MAX_K, AskRequest, engine_language, validate_ask
from citeqa.errors import RequestError
from citeqa.messages import labels
from citeqa.qa.questions import MAX_QUESTION_CHARS

GOOD = ("When was the windmill built?", [], 3, "auto")


@pytest.mark.parametrize(
    "k",
    [
        "abc",
        "5",
        [1],
        {"k": 1},
        None,
        True,
        False,
        5.0,
        2.5,
        math.nan,
        math.inf,
        -math.inf,
        float("1e400"),
        0,
        -1,
        MAX_K + 1,
        10**9,
        10**400,
    ],
)
def test_k_outside_the_schema_is_refused(k):
    with pytest.raises(RequestError) as info:
        validate_ask(GOOD[0], [], k, "auto")
    assert info.value.field == "k" and f"from 1 to {MAX_K}" in str(info.value) and len(str(info.value)) < 200


@pytest.mark.parametrize(
    "language,expected", [("auto", "auto"), ("ANY", "any"), ("ES", "es"), (" pt ", "pt"), ("En", "en"), (None, "auto")]
)
def test_language_codes_are_case_insensitive(language, expected):
    assert validate_ask(GOOD[0], [], 3, language).language == expected


@pytest.mark.parametrize("language", ["xx", "", "es-ES", "portugués", 123, ["es"], True, "x" * 1_000_000])
def test_other_languages_are_refused(language):
    with pytest.raises(RequestError) as info:
        validate_ask(GOOD[0], [], 3, language)
    assert info.value.field == "language" and "auto, any or a language code" in str(info.value)
    assert len(str(info.value)) < 200  # a 1 MB value is not echoed back


@pytest.mark.parametrize("language", ["de", "FR", "it", "ca"])
def test_every_language_passages_can_be_in_is_accepted(language):
    """Passages of a German collection can be asked for in German, not only es/pt/en."""
    assert validate_ask(GOOD[0], [], 3, language).language == language.lower()


@pytest.mark.parametrize("question", [123, 1.5, None, True, ["q"], {"q": 1}])
def test_a_question_must_be_text(question):
    with pytest.raises(RequestError) as info:
        validate_ask(question, [], 3, "auto")
    assert info.value.field == "question" and "must be text" in str(info.value)


def test_question_length_is_bounded():
    assert validate_ask("a" * MAX_QUESTION_CHARS).question == "a" * MAX_QUESTION_CHARS
    with pytest.raises(RequestError, match="too long") as info:
        validate_ask("a" * (MAX_QUESTION_CHARS + 1))
    assert info.value.field == "question"


@pytest.mark.parametrize("history,expected", [(None, ()), ([], ()), (["one"], ("one",)), (("a", "b"), ("a", "b"))])
def test_history_forms(history, expected):
    assert validate_ask(GOOD[0], history).history == expected


@pytest.mark.parametrize(
    "history,reason",
    [
        (5, "must be a list"),
        ({"q": 1}, "must be a list"),
        ("one", "must be a list of earlier questions, not text"),  # was taken as one question
        ("", "must be a list of earlier questions, not text"),
        (["ok", 3], "item 2 must be text"),
        (["ok", None], "item 2 must be text"),
        (["q"] * (MAX_HISTORY_ITEMS + 1), f"limit is {MAX_HISTORY_ITEMS}"),
        (["x" * (MAX_QUESTION_CHARS + 1)], "item 1 is too long"),
    ],
)
def test_bad_history_is_refused(history, reason):
    with pytest.raises(RequestError, match=reason) as info:
        validate_ask(GOOD[0], history)
    assert info.value.field == "history"


def test_omitted_arguments_take_their_defaults_and_a_missing_question_is_named():
    assert AskRequest.from_args({"question": GOOD[0]}) == AskRequest(question=GOOD[0], history=(), k=5, language="auto")
    with pytest.raises(
        RequestError, match=r"missing argument: question \(/ask takes question, history, k, language\)"
    ) as info:
        AskRequest.from_args({"history": [], "k": 3})
    assert info.value.field == "question"
    with pytest.raises(RequestError, match="unknown argument: 'lang'") as info:
        AskRequest.from_args({"question": GOOD[0], "lang": "es"})


def test_the_schema_is_the_request_model():
    schema = AskRequest.model_json_schema()
    assert schema["required"] == ["question"] and list(schema["properties"]) == ["question", "history", "k", "language"]
    assert schema["properties"]["k"] == {"default": 5, "title": "K", "type": "integer"}


def test_good_request_passes_unchanged():
    assert validate_ask(*GOOD) == AskRequest(question=GOOD[0], history=(), k=3, language="auto")


# --------------------------------------------------------------------------- over real HTTP


@pytest.fixture(scope="module")
def served(tmp_path_factory, guarded_server, cache_dir) -> Iterator[str]:
    """The app as `citeqa serve` runs it (behind the guard); its URL."""
    server = guarded_server(tmp_path_factory.mktemp("validation"), cache_dir)
    yield server.url
    server.close()


def call_ask(url: str, raw_json: str) -> object:
    """POST a raw JSON body to /gradio_api/call/ask (so NaN and 1e400 go out as written); the result."""
    with httpx.Client(base_url=url, trust_env=False, timeout=30) as client:
        started = client.post("/gradio_api/call/ask", content=raw_json, headers={"content-type": "application/json"})
        assert started.status_code == 200, started.text
        stream = client.get(f"/gradio_api/call/ask/{started.json()['event_id']}").text
    event, data = stream.strip().split("\n")[-2:]
    assert event == "event: complete", stream[:300]  # "event: error" is what an untyped failure gives
    import json

    return json.loads(data.removeprefix("data: "))[0]


@pytest.mark.parametrize(
    "args,field",
    [
        ('"q", [], "abc", "auto"', "k"),
        ('"q", [], [1], "auto"', "k"),
        ('"q", [], NaN, "auto"', "k"),
        ('"q", [], Infinity, "auto"', "k"),
        ('"q", [], 1e400, "auto"', "k"),
        ('"q", [], 1000000000, "auto"', "k"),
        ('"q", [], true, "auto"', "k"),
        ('"q", [], 3, "xx"', "language"),
        ('"q", [], 3, 123', "language"),
        ('123, [], 3, "auto"', "question"),
        ('"q", [1], 3, "auto"', "history"),
    ],
)
def test_http_refusals_are_typed_error_records(served: str, args: str, field: str, capfd):
    record = call_ask(served, f'{{"data": [{args}]}}')
    assert isinstance(record, dict) and record.keys() == {"error", "field"}, record
    assert record["field"] == field and record["error"]
    assert "Traceback" not in capfd.readouterr().err  # nothing for the server log either


@pytest.mark.parametrize(
    "args,field", [('"q", "", 3', "language"), ('"q", []', "k"), ('"q"', "history"), ("", "question")]
)
def test_too_few_positional_values_are_refused_naming_the_first_missing(served: str, args: str, field: str, capfd):
    """Gradio itself refuses such a call only after logging a traceback; the guard answers it first."""
    with httpx.Client(base_url=served, trust_env=False, timeout=30) as client:
        for path in ("/gradio_api/call/ask", "/gradio_api/run/ask"):
            response = client.post(path, content=f'{{"data": [{args}]}}', headers={"content-type": "application/json"})
            assert response.status_code == 422, response.text
            assert response.json() == {
                "error": f"missing argument: {field} (/ask takes question, history, k, language)",
                "field": field,
            }
    assert "Traceback" not in capfd.readouterr().err


def test_a_short_queue_join_of_the_api_is_refused_too(served: str):
    with httpx.Client(base_url=served, trust_env=False, timeout=30) as client:
        config = client.get("/config").json()
        fn_index = next(d["id"] for d in config["dependencies"] if d.get("api_name") == "check")
        body = {"data": [], "fn_index": fn_index, "session_hash": "shortjoin1", "event_data": None, "trigger_id": None}
        response = client.post("/gradio_api/queue/join", json=body)
    assert response.status_code == 422
    assert response.json() == {"error": "missing argument: claim (/check takes claim, k)", "field": "claim"}


def test_omitted_arguments_take_their_defaults_over_gradio_client_and_named_calls(served: str):
    from gradio_client import Client

    question = "When was the windmill of Greyhill restored?"
    record = Client(served, verbose=False).predict(question, api_name="/ask")
    assert len(record["citations"]) <= 5 and record["question"] == question
    with httpx.Client(base_url=served, trust_env=False, timeout=30) as client:
        started = client.post("/gradio_api/call/v2/ask", json={"question": question, "k": 1})
        assert started.status_code == 200, started.text
        stream = client.get(f"/gradio_api/call/ask/{started.json()['event_id']}").text
    assert "event: complete" in stream and '"citations"' in stream


def test_language_is_case_insensitive_over_http(served: str):
    question = "When was the windmill of Greyhill restored?"
    lower = call_ask(served, f'{{"data": ["{question}", [], 3, "pt"]}}')
    upper = call_ask(served, f'{{"data": ["{question}", [], 3, " PT "]}}')
    assert lower == {**upper, "latency_ms": lower["latency_ms"]}


def test_k_is_at_most_the_ui_maximum_over_gradio_client(served: str):
    from gradio_client import Client

    client = Client(served, verbose=False)
    assert (
        len(
            client.predict("¿En qué año se construyó el faro de Punta Brava?", [], MAX_K, "auto", api_name="/ask")[
                "citations"
            ]
        )
        <= MAX_K
    )
    refused = client.predict("¿En qué año se construyó el faro de Punta Brava?", [], 10**9, "auto", api_name="/ask")
    assert refused["field"] == "k" and "citations" not in refused
    big = client.predict(
        "¿En qué año se construyó el faro de Punta Brava?", [], 3, "x" * 1_000_000, api_name="/ask"
    )  # 1 MB fits the body limit
    assert big["field"] == "language" and len(big["error"]) < 200


def test_ask_record_maps_engine_refusals_to_the_question(tmp_path: Path, make_holder):
    from citeqa.app.web.api import ask_record

    holder, _ = make_holder(tmp_path)
    assert ask_record(holder, "\x00\x01", [], 3) == {
        "error": "the question is empty; type a question",
        "field": "question",
    }
    assert ask_record(holder, "hi", [], "many")["field"] == "k"


def test_labels_and_language_choices():
    assert labels("es")["ask"] == "Preguntar" and labels("pt")["ask"] == "Perguntar" and labels("xx")["ask"] == "Ask"
    assert set(labels("es")) == set(labels("pt")) == set(labels("en"))
    assert engine_language("auto") is None and engine_language(None) is None
    assert engine_language("any") == "any" and engine_language("pt") == "pt"
