"""The Gradio app: chat turns, uploads, and the /ask API through gradio_client."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from citeqa.app.cli import args as cli_args
from citeqa.app.web.api import ask_record
from citeqa.app.web.chat.turns import chat_turn
from citeqa.app.web.corpus.tab import corpus_view, upload
from citeqa.app.web.holder import EngineHolder, UploadSettings
from citeqa.ingest.budget import ParseBudget
from citeqa.ingest.formats import SUPPORTED_SUFFIXES

QUESTIONS = [  # one per language: question, language, first cited document, fact in the answer
    ("¿En qué año se construyó el faro de Punta Brava?", "es", "faro.txt", "1887"),
    ("Quando foi inaugurado o farol da Ilha Clara?", "pt", "nested/farol.md", "1912"),
    ("When was the windmill of Greyhill restored?", "en", "mill.html", "2004"),
]


def _uploads(corpus: Path) -> UploadSettings:
    """Upload settings whose parse budget no load can exhaust: these tests are about what an add
    reports, and a busy machine may take more than the default 10 s to read even a line."""
    return UploadSettings(corpus, budget=ParseBudget(seconds=600.0))


def test_chat_turn_answers_with_sources_and_follow_up(holder: EngineHolder):
    messages, asked, sources, box, lang = chat_turn(holder, QUESTIONS[0][0], [], [], 3)
    assert lang == "es" and box == "" and asked == [QUESTIONS[0][0]]
    reply = messages[-1]["content"]
    assert messages[-1]["role"] == "assistant" and "<mark>1887</mark>" in reply and "[1]" in reply
    assert "Fuentes" in sources and "faro.txt" in sources and "<mark>" in sources
    messages, asked, sources, _, _ = chat_turn(holder, "¿Y cuánto cuesta la entrada?", messages, asked, 3)
    assert len(messages) == 4 and "6 euros" in messages[-1]["content"] and len(asked) == 2


def test_chat_turn_abstains_with_closest_passages(holder: EngineHolder):
    messages, _, sources, _, lang = chat_turn(holder, "¿Cuál es la capital de Mongolia?", [], [], 2)
    assert lang == "es" and "No encontré esto en los documentos." in messages[-1]["content"]
    assert "Pasajes más cercanos" in sources and sources.count('class="citeqa-source citeqa-secondary"') == 2


def test_chat_turn_controls_language_and_confidence(holder: EngineHolder):
    messages, _, sources, _, _ = chat_turn(holder, QUESTIONS[2][0], [], [], 3, "es", False)
    assert "confidence" not in messages[-1]["content"] and "Sources" in sources
    assert ask_record(holder, QUESTIONS[2][0], [], 3, "es")["language"] == "en"


def test_chat_turn_escapes_questions_and_documents(holder: EngineHolder):
    messages, _, sources, _, _ = chat_turn(
        holder, "<img src=x onerror=alert(1)> When was the beacon of Cabo Frio lit?", [], [], 3
    )
    html = messages[0]["content"] + messages[1]["content"] + sources
    assert "1899" in messages[1]["content"]
    for bad in ("<img", "<script", "![", "]("):
        assert bad not in html


def test_chat_turn_refuses_blank_and_long_input_without_a_turn(holder: EngineHolder):
    from citeqa.app.web.chat.turns import conversation_turn

    messages, asked, sources, _, _ = chat_turn(holder, "   ", [], [], 3)
    assert messages == [] and asked == [] and sources == ""
    out = conversation_turn(holder, "   ", "ask", [], [], [], 3)
    assert out.refusal == "Type a question first." and out.messages == [] and out.turns == []
    out = conversation_turn(holder, "¿Cuándo se construyó el faro? " * 100, "ask", [], [], [], 3)
    assert out.messages == [] and out.refusal.startswith("La pregunta es demasiado larga (2999 caracteres")
    assert ask_record(holder, "", [], 3) == {"error": "the question is empty; type a question", "field": "question"}
    assert "error" in ask_record(holder, "hi", [], "many")


def test_upload_handler_swaps_in_the_new_index(tmp_path: Path, make_holder):
    holder, corpus = make_holder(tmp_path)
    old = holder.engine
    doc = tmp_path / "up" / "bridge.md"
    doc.parent.mkdir()
    doc.write_text("# The bridge of Alvor\n\nThe bridge of Alvor opened in 1931.", encoding="utf-8")
    (corpus / "notes.xyz").write_text("skip me")
    status, rows, skipped = upload(holder, _uploads(corpus), [str(doc), str(tmp_path / "up" / "missing.txt")])
    assert "added bridge.md" in status and "refused missing.txt" in status
    assert holder.engine is not old and "bridge.md" in [r[-1] for r in rows["data"]] and rows == corpus_view(holder)
    assert "notes.xyz" in skipped and "unsupported type" in skipped
    assert "1931" in holder.engine.ask("When did the bridge of Alvor open?").answer
    status, _, _ = upload(holder, UploadSettings(None), [str(doc)])
    assert "disabled" in status


def test_an_add_reports_its_progress_file_by_file(tmp_path: Path, make_holder):
    """Issue [1/7] item 4: each file is reported while it is checked and read for the index, and the add
    ends at all files done (the page's bar is fed from these reports)."""
    holder, corpus = make_holder(tmp_path)
    docs = []
    for name, text in [
        ("quay.txt", "The quay of Porto Velho was paved in 1902."),
        ("mill.md", "# Mill\n\nGround in 1961."),
    ]:
        docs.append(tmp_path / "up" / name)
        docs[-1].parent.mkdir(exist_ok=True)
        docs[-1].write_text(text, encoding="utf-8")
    steps: list[tuple] = []
    status, _, _ = upload(holder, _uploads(corpus), [str(d) for d in docs], lambda *step: steps.append(step))
    assert status == "added quay.txt\nadded mill.md"
    assert [s[1] for s in steps] == [2] * len(steps)
    checking = [s for s in steps if s[2].startswith("checking")]
    reading = [s for s in steps if s[2].startswith("reading")]
    assert [s[2] for s in checking] == ["checking quay.txt", "checking mill.md"]
    assert {s[2] for s in reading} == {"reading quay.txt", "reading mill.md"}
    assert steps[-3][2].startswith("embedding ") and steps[-3][2].endswith(" passages")  # several: the plural
    assert [s[2] for s in steps[-2:]] == ["writing the index", "done"]
    # Issue [3/7] item 6: the bar moves with every step (it sat at 0% while the first file was checked and
    # read), from 0 to all files done, never backwards.
    done = [s[0] for s in steps]
    assert done[0] == 0 and done[-1] == 2 and all(a < b for a, b in zip(done, done[1:])), done


def test_an_add_speaks_the_page_language(tmp_path: Path, make_holder):
    """Issue [3/7] item 3: the steps and the summary of an add from a Spanish page are in Spanish, one
    passage in the singular."""
    holder, corpus = make_holder(tmp_path)
    doc = tmp_path / "up" / "quay.txt"
    doc.parent.mkdir()
    doc.write_text("The quay of Porto Velho was paved in 1902.", encoding="utf-8")
    steps: list[tuple] = []
    status, table, _ = upload(holder, _uploads(corpus), [str(doc)], lambda *s: steps.append(s), lang="es")
    assert status == "añadido quay.txt" and table["headers"][:2] == ["título", "idioma"]
    assert [s[2] for s in steps] == [
        "comprobando quay.txt",
        "leyendo quay.txt",
        "calculando el vector de 1 pasaje",
        "escribiendo el índice",
        "hecho",
    ]


def test_an_add_waiting_for_another_change_can_be_cancelled(tmp_path: Path, make_holder):
    """Issue [1/7] item 4: an add waits while another change holds the index; the page says so, and Cancel
    ends the wait with nothing added."""
    holder, corpus = make_holder(tmp_path)
    doc = tmp_path / "up" / "bridge.md"
    doc.parent.mkdir()
    doc.write_text("The bridge of Alvor opened in 1931.", encoding="utf-8")
    waiting, stop, out = threading.Event(), threading.Event(), []
    with holder.index_lock:  # another add or removal is running
        report = lambda done, total, text: waiting.set() if text.startswith("waiting") else None
        add = threading.Thread(
            target=lambda: out.append(upload(holder, _uploads(corpus), [str(doc)], report, stop.is_set))
        )
        add.start()
        assert waiting.wait(30)
        stop.set()
        add.join(30)
    assert out[0][0] == "cancelled: nothing from this add was added; the corpus and the index are as they were"
    assert not (corpus / "bridge.md").exists() and doc.exists()


def test_an_add_takes_or_refuses_each_file_as_the_page_sends_them(tmp_path: Path, make_holder):
    """Issue [3/6] item 7: the Add event gets the files as the page sent them (FileData, with the user's
    name), none refused by the file box; a fullwidth name is added under its plain letters, a type that is
    not accepted and a name with nothing usable are refused each with its reason, in the page's language."""
    holder, corpus = make_holder(tmp_path)
    sent = []
    for i, (name, text) in enumerate(
        [
            ("ｒｅｐｏｒｔ．ｔｘｔ", "The report on the harbour of Sines was written in 1988."),
            ("tool.exe", "MZ"),
            ("\U0001f600.md", "The smiling lighthouse was painted in 1990."),
            ("quay.txt", "The quay of Porto Velho was paved in 1902."),
        ]
    ):
        path = tmp_path / "cache" / str(i) / f"upload{i}"
        path.parent.mkdir(parents=True)
        path.write_text(text, encoding="utf-8")
        sent.append(
            {"path": str(path), "orig_name": name, "size": path.stat().st_size, "meta": {"_type": "gradio.FileData"}}
        )
    status, rows, _ = upload(holder, _uploads(corpus), sent, lang="es")
    assert status.splitlines() == [
        "añadido report.txt",
        "añadido quay.txt",
        f"rechazado tool.exe: tipo no admitido .exe; se admiten: {', '.join(SUPPORTED_SUFFIXES)}",
        "rechazado nombre de archivo no utilizable: '\U0001f600.md'",
    ]
    assert {"report.txt", "quay.txt"} <= set(holder.engine.documents)


def test_page_handlers_type_hints_resolve_for_gradio(tmp_path: Path, make_holder):
    """Gradio finds a handler's gr.Request and gr.EventData parameters by its type hints, and reads none
    when one does not resolve at run time (a name imported only for type checking): every handler's hints
    resolve, and those of the handlers that read the visit's request or the event name them."""
    import typing

    import gradio as gr

    from citeqa.app.web.holder import EvalSettings
    from citeqa.app.web.ui import build_app

    holder, corpus = make_holder(tmp_path)
    app = build_app(holder, _uploads(corpus), EvalSettings(None))
    ours = [f.fn for f in app.fns.values() if getattr(f.fn, "__module__", "").startswith("citeqa.")]
    hints = {fn.__qualname__.rsplit(".", 1)[-1]: typing.get_type_hints(fn) for fn in ours}  # NameError if not
    special = {
        name
        for name, found in hints.items()
        if any(isinstance(t, type) and issubclass(t, (gr.Request, gr.EventData)) for t in found.values())
    }
    reads = {"on_visit", "show_document", "on_corpus_visit", "on_add", "on_cancel_add", "on_refresh", "on_load"}
    assert reads | {"on_select"} <= special


def test_serve_auth_flag_and_env(monkeypatch):
    args = cli_args.parser().parse_args(["serve", "--auth", "ana:s3:cret", "--max-upload-mb", "5"])
    assert args.auth == ("ana", "s3:cret") and args.max_upload_mb == 5 and args.host == "127.0.0.1"
    monkeypatch.setenv("CITEQA_AUTH", "bob:pw")
    assert cli_args.parser().parse_args(["serve"]).auth == ("bob", "pw")
    monkeypatch.delenv("CITEQA_AUTH")
    assert cli_args.parser().parse_args(["serve"]).auth is None
    with pytest.raises(SystemExit):
        cli_args.parser().parse_args(["serve", "--auth", "nopassword"])


@pytest.mark.parametrize("question,lang,doc,fact", QUESTIONS)
def test_ask_api_through_gradio_client(served: str, question, lang, doc, fact):
    from gradio_client import Client

    record = Client(served, verbose=False).predict(question, [], 3, "auto", api_name="/ask")
    assert record["language"] == lang and fact in record["answer"] and not record["abstained"]
    assert record["citations"][0]["doc_id"] == doc and len(record["citations"]) == 3


def test_ask_api_errors_and_history(served: str):
    from gradio_client import Client

    client = Client(served, verbose=False)
    assert client.predict("", [], 3, "auto", api_name="/ask") == {
        "error": "the question is empty; type a question",
        "field": "question",
    }
    record = client.predict(
        "¿Y cuánto cuesta la entrada?", ["¿Qué es hoy el faro de Punta Brava?"], 2, "auto", api_name="/ask"
    )
    assert "6 euros" in record["answer"]
    assert sorted(client.view_api(print_info=False, return_format="dict")["named_endpoints"]) == ["/ask", "/check"]


def test_auth_is_required_when_set(tmp_path: Path, start_app):
    from gradio_client import Client

    app, url, _, _ = start_app(tmp_path, auth=("ana", "secret"))
    try:
        with pytest.raises(ValueError, match="credentials were not provided"):
            Client(url, verbose=False)
        client = Client(url, auth=("ana", "secret"), verbose=False)
        assert client.predict(QUESTIONS[2][0], [], 1, "auto", api_name="/ask")["citations"][0]["doc_id"] == "mill.html"
    finally:
        app.close()
