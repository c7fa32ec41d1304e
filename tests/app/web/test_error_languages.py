"""Issue [6/6]: an error raised below the web layer (a question's, an upload's, an evaluation file's)
is shown in the page's language, and printed in English by the CLI as before.

Errors carry a catalogue key and values (:class:`citeqa.messages.Said`); these tests check that every
error a page can show is raised with one, that every key is in every language's catalogue, and a few
real error paths in each language.
"""

from __future__ import annotations

import ast
import json
from importlib import resources
from pathlib import Path

import pytest

import citeqa
from citeqa.claims.check import clean_claim
from citeqa.corpus.add import UploadRefusal, validate
from citeqa.errors import QAFileError, QuestionError
from citeqa.evaluation.rows import kind
from citeqa.messages import ERRORS, Said, corpus_labels, error_said
from citeqa.qa.questions import clean_question

LANGS = ("ca", "de", "en", "es", "fr", "it", "pt")
SRC = Path(citeqa.__file__).parent

#: The errors a page shows (the chat's, the Corpus tab's, the Evaluate tab's), by class name. The others
#: are raised when a server starts or by a command of the CLI (settings, model and index files).
#: UploadCancelled is never shown: the Corpus tab says "cancelled" in its own words.
PAGE_ERRORS = frozenset(
    {
        *("QuestionError", "ScoreError", "QAFileError", "DocumentError", "ParseBudgetError", "CorpusError"),
        *("RunRefused", "ShardError", "QuestionTimeoutError", "ReplicaDown", "Transient"),  # a PostgreSQL index's
    }
)
#: Modules whose ValueErrors are a line's problem in an evaluation file the Evaluate tab reads.
ROW_MODULES = frozenset(
    {"evaluation/rows.py", "evaluation/qa_file.py", "evaluation/user_json.py", "evaluation/compare.py"}
)
ROW_ERRORS = frozenset({"ValueError", "BadInput", "_BadRow"})


def _modules() -> list[tuple[str, ast.Module]]:
    return [(p.relative_to(SRC).as_posix(), ast.parse(p.read_text("utf-8"))) for p in sorted(SRC.rglob("*.py"))]


def _called(node: ast.Call) -> str:
    return node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", "")


def _is_text(node: ast.expr) -> bool:
    """A message written out in the code: a string, an f-string, or strings joined."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str)
    if isinstance(node, ast.BinOp):
        return _is_text(node.left) or _is_text(node.right)
    return isinstance(node, ast.JoinedStr)


def test_every_error_a_page_shows_is_raised_with_a_catalogue_key():
    written_out = []
    for name, tree in _modules():
        if name.startswith("app/cli/"):  # the terminal's own errors, in English
            continue
        shown = PAGE_ERRORS | (ROW_ERRORS if name in ROW_MODULES else frozenset())
        for node in ast.walk(tree):
            if isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call) and _called(node.exc) in shown:
                args = node.exc.args
                if args and _is_text(args[0]):
                    written_out.append(f"{name}:{node.lineno}")
    assert not written_out, f"raised with an English text instead of a Said: {written_out}"


def _literal_keys() -> set[str]:
    keys = set()
    for _, tree in _modules():
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and _called(node) == "Said" and node.args:
                first = node.args[0]
                if isinstance(first, ast.Constant) and isinstance(first.value, str):
                    keys.add(first.value)
    return keys


def _raw(lang: str) -> dict[str, str]:
    text = resources.files("citeqa.catalogue").joinpath(f"{lang}.json").read_text("utf-8")
    return json.loads(text)["errors"]


@pytest.mark.parametrize("lang", LANGS)
def test_every_key_an_error_is_raised_with_is_in_every_language(lang: str):
    """The keys written in the code, those made from a question/claim or a file kind, and the keys of
    :func:`load_rows`' empty files: each has a line in the language's own file (no English fallback)."""
    own = _raw(lang)
    made = {f"{what}_{tail}" for what in ("question", "claim") for tail in ("not_text", "empty", "too_long")}
    kinds = {f"file_{what}" for what in ("qa", "claim", "predictions", "provenance", "squad")}
    empties = {"qa_none", "claim_none", "predictions_none"}
    needed = _literal_keys() | made | kinds | empties
    assert needed <= set(own), sorted(needed - set(own))
    assert set(own) == set(_raw("en"))  # no key the code stopped using
    assert all(text.strip() for text in own.values())


@pytest.mark.parametrize("lang", [lang for lang in LANGS if lang != "en"])
def test_translations_are_not_english(lang: str):
    """No line of a translation is its English line, except those that are only values and signs."""
    english, own = _raw("en"), _raw(lang)
    same = [key for key, text in own.items() if text == english[key] and any(c.isalpha() for c in text.split("}")[-1])]
    assert not same, same


# --- real error paths, in each language -------------------------------------------------------------------


@pytest.mark.parametrize("lang", LANGS)
def test_an_empty_claim_or_question_is_refused_in_the_page_language(lang: str):
    with pytest.raises(QuestionError) as claim:
        clean_claim("   ")
    assert str(claim.value) == "the claim is empty; type a claim"  # the CLI's line, as before
    assert error_said(claim.value, lang) == ERRORS[lang]["claim_empty"]
    with pytest.raises(QuestionError) as question:
        clean_question("x" * 5000)
    said = error_said(question.value, lang)
    assert said == ERRORS[lang]["question_too_long"].format(length=5000, limit=2000)
    if lang != "en":
        both = said + " " + error_said(claim.value, lang)
        assert not any(english in both for english in ("is empty", "type a", "is too long", "the limit"))


@pytest.mark.parametrize("lang", LANGS)
def test_a_damaged_upload_is_refused_with_the_reader_s_reason_in_the_page_language(lang: str, tmp_path: Path):
    """The Corpus tab's refusal of a DOCX that is not a ZIP: the reason is the reader's, said in the
    page's language (it was English inside a translated line)."""
    broken = tmp_path / "broken.docx"
    broken.write_bytes(b"PK\x03\x04 not really a zip file" * 4)
    with pytest.raises(UploadRefusal) as refused:
        validate(broken, "broken.docx")
    assert str(refused.value) == "broken.docx: unreadable DOCX (BadZipFile)"  # the CLI's and the API's line
    detail = ERRORS[lang]["doc_unreadable_kind"].format(kind="DOCX", error="BadZipFile")
    said = error_said(refused.value, lang)
    assert said == corpus_labels(lang)["why_unreadable"].format(name="broken.docx", detail=detail)
    if lang != "en":
        assert "unreadable" not in said


@pytest.fixture(scope="module")
def runner(tmp_path_factory: pytest.TempPathFactory, make_holder):
    from citeqa.app.web.evaluate.runner import EvaluationRunner

    folder = tmp_path_factory.mktemp("evaluate")
    runner = EvaluationRunner(make_holder(folder)[0], root=folder / "runs")
    yield runner
    runner.close()


@pytest.mark.parametrize("lang", LANGS)
def test_a_bad_evaluation_file_is_refused_in_the_page_language(lang: str, tmp_path: Path, runner):
    """The Evaluate tab's refusal of a QA file with a line missing its answers and a line that is not
    JSON: the file's name, each line and each reason in the page's language."""
    from citeqa.app.web.evaluate.tab import start_evaluation
    from citeqa.app.web.holder import EvalSettings

    bad = tmp_path / "up" / "upload-1.jsonl"
    bad.parent.mkdir()
    bad.write_text('{"question": "q", "lang": "en"}\n{"question": \n', encoding="utf-8")
    said = start_evaluation(runner, EvalSettings(None), {"path": str(bad), "orig_name": "mine.jsonl"}, lang=lang)
    assert runner.status() is None
    errors = ERRORS[lang]
    lines = (
        errors["line_problem"].format(line=1, problem=errors["answers_missing"].format(key="answers")),
        errors["line_problem"].format(
            line=2, problem=errors["json_invalid_column"].format(detail=_detail(), column=14)
        ),
    )
    assert said == errors["file_problems"].format(path="mine.jsonl", problems=errors["separator"].join(lines))
    assert bad.exists()  # refused, the upload is kept: the page keeps the user's choice
    with pytest.raises(QAFileError) as english:
        from citeqa.evaluation.qa_file import load_qa

        load_qa(bad)
    assert str(english.value).startswith(
        f"{bad}: line 1: missing answers (use [] for an unanswerable question); line 2"
    )


def _detail() -> str:
    """What the JSON parser says of ``{"question": `` (its own English words; translations leave them out)."""
    from citeqa.evaluation.user_json import BadInput, loads

    try:
        loads('{"question": ', single_line=True)
    except BadInput as exc:
        return exc.args[0].values["detail"]
    raise AssertionError("parsed")


@pytest.mark.parametrize("lang", LANGS)
def test_a_qa_file_named_with_fullwidth_letters_is_read_as_its_type(lang: str, tmp_path: Path):
    """The Evaluate tab's box takes any file; a name's type is read from its NFKC form, so
    ``qa．ｊｓｏｎｌ`` is a JSONL file, and ``qa.txt`` is refused in the page's language."""
    from citeqa.evaluation.qa_file import load_qa

    copy = tmp_path / "upload-copy"
    copy.write_text('{"question": "q", "answers": ["a"], "lang": "en"}\n', encoding="utf-8")
    assert [item.question for item in load_qa(copy, "qa．ｊｓｏｎｌ")] == ["q"]
    with pytest.raises(QAFileError) as refused:
        load_qa(copy, "qa.txt")
    assert error_said(refused.value, lang) == ERRORS[lang]["file_type"].format(
        path=copy, what=ERRORS[lang]["file_qa"], suffix="'.txt'"
    )


def test_a_said_message_keeps_its_key_through_pickle_and_nested_values():
    """A reader's error crosses from its worker process pickled; nested messages are said in one language."""
    import pickle

    line = Said("line_problem", line=3, problem=Said("field_missing", key="question"))
    said = pickle.loads(pickle.dumps(Said("file_problems_more", path="f.csv", problems=(line,), n=2)))
    assert said == "f.csv: line 3: missing question; and 2 more problems"
    assert said.said("de") == "f.csv: Zeile 3: question fehlt; und 2 weitere Probleme"
    assert kind("qa").said("fr") == "fichier de questions"


def test_a_reader_s_reason_keeps_its_language_from_the_worker_process(tmp_path: Path):
    """A file read within its budget is read in a worker process: its reason comes back with its key."""
    from citeqa.ingest.budget import ParseBudget

    broken = tmp_path / "broken.docx"
    broken.write_bytes(b"PK\x03\x04 not really a zip file" * 4)
    with pytest.raises(UploadRefusal) as refused:
        validate(broken, "broken.docx", budget=ParseBudget())
    assert error_said(refused.value, "es") == "broken.docx: no se puede leer (DOCX ilegible (BadZipFile))"


def test_the_evaluate_tab_s_boxes_take_any_file_and_a_fullwidth_name_runs(
    runner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    """Issue [6/6]: the Evaluate tab's upload boxes had ``file_types``, so Gradio dropped ``qa．ｊｓｏｎｌ``
    with its own English notice; they take any file, the tab reads the type from the NFKC form of the
    user's name, and an upload is discarded once its run has started (a refused one is kept)."""
    import gradio as gr

    from citeqa.app.web.evaluate.layout import evaluate_layout
    from citeqa.app.web.evaluate.tab import start_evaluation
    from citeqa.app.web.holder import EvalSettings
    from tests.paths import DATA

    with gr.Blocks():
        tab = evaluate_layout(gr, EvalSettings(None))
    assert tab.qa_upload.file_types is None and tab.earlier.file_types is None
    monkeypatch.setenv("GRADIO_TEMP_DIR", str(tmp_path / "cache"))
    upload = tmp_path / "cache" / "f00d" / "qajsonl"  # the name Gradio's cache may give it
    upload.parent.mkdir(parents=True)
    upload.write_bytes((DATA / "qa" / "fixture_corpus.jsonl").read_bytes())
    assert start_evaluation(runner, EvalSettings(None), {"path": str(upload), "orig_name": "qa．ｊｓｏｎｌ"}) is None
    assert runner.wait(120) and runner.status().source == "qa．ｊｓｏｎｌ"
    assert not upload.exists()  # started: the run keeps its own copy
