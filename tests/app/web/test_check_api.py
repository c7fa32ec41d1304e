"""The /check endpoint (gradio_client), the chat's claim turns, removals and the new HTML, without a browser."""

from __future__ import annotations

from pathlib import Path

import pytest

from citeqa.app.web.api import check_record
from citeqa.app.web.chat import answers, claims
from citeqa.app.web.chat.turns import conversation_turn, open_document
from citeqa.app.web.corpus.tab import remove
from citeqa.app.web.holder import EngineHolder, UploadSettings
from citeqa.app.web.validation import CheckRequest, validate_check
from citeqa.claims.check import looks_like_claim
from citeqa.corpus.remove import corpus_file, recover_removals, remove_document
from citeqa.errors import RequestError, UploadError


def test_check_api_through_gradio_client(served: str):
    from gradio_client import Client

    client = Client(served, verbose=False)
    record = client.predict("The windmill of Greyhill was built in 1790.", 2, api_name="/check")
    assert record["verdict"] == "conflicting" and record["language"] == "en" and len(record["evidence"]) == 2
    first = record["evidence"][0]
    assert first["relation"] == "conflicts" and (first["claim_value"], first["document_value"]) == ("1790", "1760")
    assert first["citation"]["doc_id"] == "mill.html"
    assert (
        client.predict("El faro de Punta Brava se construyó en 1887.", 3, api_name="/check")["verdict"] == "supported"
    )
    assert client.predict("", 3, api_name="/check") == {"error": "the claim is empty; type a claim", "field": "claim"}
    long = client.predict("x" * 100_000, 3, api_name="/check")
    assert long == {"error": "the claim is too long (100000 characters; the limit is 2000)", "field": "claim"}
    assert client.predict("A claim.", 0, api_name="/check")["field"] == "k"


def test_check_record_and_validation(holder: EngineHolder):
    assert check_record(holder, ["not", "text"], 3) == {"error": "the claim must be text, not a list", "field": "claim"}
    assert check_record(holder, "A claim.", True)["field"] == "k"
    assert validate_check("A claim.") == CheckRequest(claim="A claim.", k=5)  # an omitted k takes its default
    with pytest.raises(RequestError, match=r"missing argument: claim \(/check takes claim, k\)"):
        CheckRequest.from_args({"k": 3})
    assert check_record(holder, "The windmill of Greyhill was built in 1760.", 1)["verdict"] == "supported"


@pytest.mark.parametrize(
    "text,claim",
    [
        ("GLM-5 tiene 744 mil millones de parámetros.", True),
        ("The windmill was built in 1760", True),  # a date, no question mark
        ("O farol fica na Ilha Clara.", True),
        ("¿Cuántos parámetros tiene GLM-5?", False),
        ("How many parameters does GLM-5 have", False),  # a question without its mark
        ("Qual chip a Baidu está testando", False),
        ("Tell me about the windmill.", False),
        ("GLM-5", False),
        ("windmill built", False),
        ("the windmill of Greyhill", False),  # no stop, no fact: asked, not checked
    ],
)
def test_auto_mode_checks_only_clear_statements(text, claim):
    assert looks_like_claim(text) is claim


def test_conversation_turns_keep_records_for_the_downloads(holder: EngineHolder):
    out = conversation_turn(holder, "The windmill of Greyhill was built in 1790.", "auto", [], [], [], 3)
    assert out.checked and out.turns[-1]["type"] == "check" and out.asked == []
    assert "Conflicting" in out.messages[-1]["content"] and 'class="citeqa-tools"' in out.sources
    out = conversation_turn(holder, "When was the windmill restored?", "auto", out.messages, out.asked, out.turns, 3)
    assert not out.checked and [t["type"] for t in out.turns] == ["check", "answer"] and len(out.asked) == 1
    assert "data-citeqa-copy" in out.sources and 'data-doc="mill.html"' in out.sources
    out = conversation_turn(holder, "   ", "check", out.messages, out.asked, out.turns, 3)
    assert out.refusal == "Type a claim first." and len(out.turns) == 2 and len(out.messages) == 4  # no turn


def test_open_document_only_for_indexed_documents(holder: EngineHolder):
    html, error = open_document(holder, {"doc": "mill.html", "start": 26, "end": 95})
    assert error == "" and '<mark id="cited">The windmill of Greyhill was built in 1760' in html
    assert open_document(holder, {"doc": "../../etc/passwd", "start": 0, "end": 5}) == (
        "",
        "that document is not in the index",
    )
    html, _ = open_document(holder, {"doc": "beacon.md", "start": -5, "end": 10**9})
    assert "<script" not in html and "<img" not in html and '<mark id="cited">' in html


def test_check_html_is_inert():
    from citeqa.claims.check import ClaimCheck, ClaimEvidence
    from citeqa.records import Citation, Highlight

    xss = "<script>alert(1)</script> ![x](http://e/x.png) 1760"
    cit = Citation("a<b>.md", xss, "en", 0, len(xss), xss, 1.0)
    at = xss.index("1760")
    check = ClaimCheck(
        "<img src=x onerror=alert(2)>",
        "en",
        "conflicting",
        "The documents say “<b>”, not “1790”.",
        (ClaimEvidence(cit, "conflicts", Highlight(0, len(xss)), Highlight(at, at + 4), "<i>", "1760"),),
    )
    for html in (claims.check_html(check), claims.check_sources_html(check)):
        for bad in ("<script", "<img", "“<b>”", "<i>", "!["):
            assert bad not in html
    assert "“&#60;b&#62;”" in claims.check_html(check)
    assert "<strong>1760</strong>" in claims.check_sources_html(check)


def test_document_html_escapes_a_million_characters_whole():
    """Every character of a 1,000,000-character document, escaped, newlines kept, the range marked once
    (its seconds: bench/limits.py)."""
    from html import unescape

    from citeqa.records import Document

    text = ("<script>x</script> & text\n" * 40_000)[:1_000_000]
    doc = Document("big.txt", "Big", text, "en", "0" * 64)
    html = answers.document_html(doc, 500_000, 500_100)
    assert "<script" not in html and html.count('<mark id="cited">') == 1
    body = html.split('<div class="citeqa-doc" id="citeqa-doc-text">', 1)[1].removesuffix("</div>")
    before, rest = body.split('<mark id="cited">')
    cited, after = rest.split("</mark>")
    assert (unescape(before), unescape(cited), unescape(after)) == (
        text[:500_000],
        text[500_000:500_100],
        text[500_100:],
    )
    assert "<" not in before + cited + after  # no <br>: the newlines stay as they are


def test_remove_document_refuses_paths_outside_the_corpus(tmp_path: Path, make_holder):
    holder, corpus = make_holder(tmp_path)
    engine = holder.engine
    indexed = frozenset(engine.documents)
    outside = tmp_path / "secret.txt"
    outside.write_text("keep me")
    for bad in ("../secret.txt", "/etc/passwd", "nested/../../secret.txt", ".hidden", "", "a\\b.txt"):
        with pytest.raises(UploadError):
            corpus_file(corpus, bad)
    with pytest.raises(UploadError, match="not in the index"):
        remove_document("../secret.txt", corpus, engine.index_dir, engine.embedder, indexed)
    assert outside.read_text() == "keep me"
    assert remove(holder, UploadSettings(corpus), "mill.html", False).startswith("Tick the box")
    assert (corpus / "mill.html").exists()
    assert remove(holder, UploadSettings(None), "mill.html", True).endswith("disabled for this server.")


def test_remove_document_updates_the_index_incrementally(tmp_path: Path, make_holder):
    holder, corpus = make_holder(tmp_path)
    before = holder.engine
    status = remove(holder, UploadSettings(corpus), "nested/farol.md", True)
    assert status.startswith("removed nested/farol.md") and not (corpus / "nested" / "farol.md").exists()
    after = holder.engine
    assert after is not before and "nested/farol.md" not in after.documents
    assert {c.chunk_id for c in after._data.chunks} < {c.chunk_id for c in before._data.chunks}
    assert "1887" in after.ask("¿En qué año se construyó el faro de Punta Brava?").answer


def test_removing_the_last_document_changes_nothing(tmp_path: Path, embedder):
    from citeqa.engine import Engine
    from citeqa.index.builder import update_index

    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "only.txt").write_text("The only document says the bridge opened in 1931.", encoding="utf-8")
    update_index(corpus, tmp_path / "index", embedder)
    holder = EngineHolder(Engine.open(tmp_path / "index", embedder=embedder))
    status = remove(holder, UploadSettings(corpus), "only.txt", True)
    assert status == "not removed only.txt: it is the last document of the corpus"
    assert (corpus / "only.txt").exists() and "only.txt" in holder.engine.documents
    assert not any(p.name.endswith(".removing") for p in corpus.iterdir())


def test_recover_removals_after_a_crash(tmp_path: Path):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / ".kept.txt.removing").write_text("still indexed")
    (corpus / ".gone.txt.removing").write_text("already out of the index")
    assert sorted(recover_removals(corpus, frozenset({"kept.txt"}))) == ["gone.txt", "kept.txt"]
    assert sorted(p.name for p in corpus.iterdir()) == ["kept.txt"]


def test_a_broken_docx_upload_is_refused_in_one_line_and_changes_nothing(tmp_path: Path, make_holder):
    from citeqa.app.web.corpus.tab import upload

    holder, corpus = make_holder(tmp_path)
    before, files = holder.engine, sorted(p.name for p in corpus.rglob("*"))
    broken = tmp_path / "up" / "report.docx"
    broken.parent.mkdir()
    broken.write_bytes(b"PK\x03\x04 this is not a real Word document")
    status, _, _ = upload(holder, UploadSettings(corpus), [str(broken)])
    assert status.startswith("refused report.docx: ") and "\n" not in status
    assert holder.engine is before and sorted(p.name for p in corpus.rglob("*")) == files
