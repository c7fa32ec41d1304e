"""The Gradio app: a chat with cited answers and claim checks, a corpus tab with uploads and
removals, and the ``/ask`` and ``/check`` APIs.

Thin on purpose: answers and checks come from :class:`~citeqa.engine.Engine`, HTML from
:mod:`citeqa.app.display`, citation and conversation formats from :mod:`citeqa.app.evidence`,
uploads are checked and indexed by :mod:`citeqa.app.uploads` and removals by :mod:`citeqa.app.removal`.
"""

from __future__ import annotations

import math
import os
import sys
import tempfile
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from citeqa.app import chat_view, display
from citeqa.app.assets import CSS
from citeqa.app.chat_tab import chat_events, chat_layout
from citeqa.app.display import engine_language, labels
from citeqa.app.eval_runner import EvaluationRunner, FinishedRun
from citeqa.app.uploads import DEFAULT_MAX_BYTES, add_files, summary
from citeqa.engine import Engine
from citeqa.errors import CiteqaError
from citeqa.ingest.budget import ParseBudget
from citeqa.ingest.formats import SUPPORTED_SUFFIXES
from citeqa.messages import EVALUATE, corpus_labels


class EngineHolder:
    """Holds the live engine so an index refresh can swap it without a restart."""

    def __init__(self, engine: Engine) -> None:
        self._engine = engine
        self._lock = threading.Lock()
        self.index_lock = threading.Lock()  # one upload or refresh at a time

    @property
    def engine(self) -> Engine:
        with self._lock:
            return self._engine

    def swap(self, engine: Engine) -> None:
        with self._lock:
            self._engine = engine


@dataclass(frozen=True)
class EvalSettings:
    """The Evaluate tab: the folder of QA files it offers (None: uploads only) and the passages per question."""

    qa_dir: Path | None = None
    k: int = 10  # as `citeqa eval`: MRR@10 needs ten citations


def default_qa_dir(corpus: Path | None) -> Path | None:
    """``eval/`` beside the corpus folder, when there is one."""
    if corpus is None:
        return None
    folder = Path(corpus).resolve().parent / "eval"
    return folder if folder.is_dir() else None


@dataclass(frozen=True)
class UploadSettings:
    """Where uploads go and how large they may be; ``corpus=None`` disables uploads."""

    corpus: Path | None = None
    max_bytes: int = DEFAULT_MAX_BYTES
    budget: ParseBudget | None = field(default_factory=ParseBudget)  # each new file is read in a bounded worker


def ask_record(
    holder: EngineHolder, question: Any, history: Any = None, k: Any = 5, language: Any = "auto"
) -> dict[str, Any]:
    """The ``/ask`` API: the answer record as JSON, or ``{"error": message, "field": argument}``.

    The arguments are checked against the schema in :mod:`citeqa.app.validation` first;
    ``field`` names the argument at fault (absent when no argument is, e.g. a damaged index).
    """
    from citeqa.app.validation import error_record, validate_ask
    from citeqa.errors import QuestionError, RequestError

    try:
        request = validate_ask(question, history, k, language)
        return holder.engine.ask(
            request.question, history=request.history, k=request.k, language=engine_language(request.language)
        ).to_dict()
    except RequestError as exc:
        return error_record(exc)
    except QuestionError as exc:
        return {"error": str(exc), "field": "question"}
    except CiteqaError as exc:
        return {"error": str(exc)}


def check_record(holder: EngineHolder, claim: Any, k: Any = 5) -> dict[str, Any]:
    """The ``/check`` API: the claim check record as JSON, or ``{"error": message, "field": argument}``
    (schema in :mod:`citeqa.app.validation`, as for ``/ask``)."""
    from citeqa.app.validation import error_record, validate_check
    from citeqa.errors import QuestionError, RequestError

    try:
        request = validate_check(claim, k)
        return holder.engine.check(request.claim, k=request.k).to_dict()
    except RequestError as exc:
        return error_record(exc)
    except QuestionError as exc:
        return {"error": str(exc), "field": "claim"}
    except CiteqaError as exc:
        return {"error": str(exc)}


MODES = ("ask", "check", "auto")


@dataclass(frozen=True)
class TurnResult:
    """One chat turn: the messages (see :data:`citeqa.app.chat_view.Message`), the questions asked,
    every turn's record, this turn's sources, its language, whether it was a claim check, and the
    refusal shown under the box ('' when the turn was taken; a refused turn adds nothing)."""

    messages: list[dict]
    asked: list[str]
    turns: list[dict] = field(default_factory=list)
    sources: str = ""
    lang: str = "en"
    checked: bool = False
    refusal: str = ""


def conversation_turn(
    holder: EngineHolder,
    text: str,
    mode: str | None,
    messages: list[dict] | None,
    asked: list[str] | None,
    turns: list[dict] | None,
    k: Any,
    language: str | None = "auto",
    show_confidence: bool = True,
) -> TurnResult:
    """Answer ``text`` or check it as a claim (``mode`` "check", or "auto" and it reads as a statement:
    :func:`citeqa.answer.claims.looks_like_claim`); the record joins ``turns`` for the downloads.

    Blank or over-long input, and any error, is refused: the conversation stays as it was and
    ``refusal`` says why, in the language of the input (or of the last question).
    """
    from citeqa.answer.claims import looks_like_claim

    messages, asked, turns = list(messages or []), list(asked or []), list(turns or [])
    engine = holder.engine
    text = text if isinstance(text, str) else ""
    checking = mode == "check" or (mode == "auto" and looks_like_claim(text))
    lang = _input_language(engine, text, asked)
    refusal = chat_view.input_refusal(text, lang, checking)
    if refusal is not None:
        return TurnResult(messages, asked, turns, "", lang, checking, refusal)
    try:
        if checking:
            record = engine.check(text, k=int(k))
        else:
            record = engine.ask(text, history=tuple(asked), k=int(k), language=engine_language(language))
    except CiteqaError as exc:
        return TurnResult(messages, asked, turns, "", lang, checking, f"{labels(lang)['error']}: {exc}")
    docs, turn = engine.data.documents, chat_view.next_turn(messages)
    if checking:
        infos = _infos(engine, [e.citation.doc_id for e in record.evidence])
        messages += [
            chat_view.user_message(record.claim, record.language),
            chat_view.check_message(record, turn, docs, infos),
        ]
        turns.append({"type": "check", "record": record.to_dict()})
        sources = display.check_sources_html(record, docs, infos, turn)
        return TurnResult(messages, asked, turns, sources, record.language, True)
    infos = _infos(engine, [c.doc_id for c in record.citations])
    headline = engine.settings.scoring.headline_above
    messages += [
        chat_view.user_message(record.question, record.language),
        chat_view.answer_message(record, turn, docs, infos, show_confidence, headline),
    ]
    turns.append({"type": "answer", "record": record.to_dict()})
    sources = display.answer_sources_html(record, docs, infos, turn)
    return TurnResult(messages, asked + [record.question], turns, sources, record.language)


def _input_language(engine: Engine, text: str, asked: Sequence[str]) -> str:
    """The language to speak about ``text`` in: its own, else the last question's, else English."""
    if text.strip():
        return engine.question_language(text[:500], tuple(asked))
    return engine.question_language(asked[-1]) if asked else "en"


def _infos(engine: Engine, doc_ids: Sequence[str]) -> dict:
    return {d: engine.document_info(d) for d in set(doc_ids) if d in engine.data.documents}


def chat_turn(
    holder: EngineHolder,
    question: str,
    messages: list[dict],
    asked: list[str],
    k: Any,
    language: str | None = "auto",
    show_confidence: bool = True,
) -> tuple[list[dict], list[str], str, str, str]:
    """One question turn: the reply goes into the chat, the sources into the panel below.

    Returns the messages, the questions asked so far, the sources HTML, the cleared
    question box, and the language of the turn (for the labels).
    """
    out = conversation_turn(holder, question, "ask", messages, asked, [], k, language, show_confidence)
    return out.messages, out.asked, out.sources, "", out.lang


def open_document(holder: EngineHolder, request: Any) -> tuple[str, str]:
    """The viewer's HTML for a click on a citation (``{"doc", "start", "end"}`` from the page) and an
    error line ('' when fine). Only indexed documents open; the range is clipped to the text."""
    data = request if isinstance(request, dict) else {}
    doc_id, start, end = data.get("doc"), data.get("start"), data.get("end")
    document = holder.engine.data.documents.get(doc_id) if isinstance(doc_id, str) else None
    if document is None:
        return "", "that document is not in the index"
    if not all(type(v) in (int, float) and math.isfinite(v) for v in (start, end)):  # NaN, Infinity: no range
        start, end = 0, 0
    return display.document_html(document, int(start), int(end)), ""


def download_files(holder: EngineHolder, turns: list[dict], token: str) -> tuple[str | None, str | None]:
    """Write the conversation as Markdown and JSON for the download buttons; (None, None) before any turn."""
    from citeqa.answer.claims import ClaimCheck
    from citeqa.app.evidence import conversation_json, conversation_markdown
    from citeqa.records import Answer

    if not turns:
        return None, None
    records = [
        ClaimCheck.from_dict(t["record"]) if t["type"] == "check" else Answer.from_dict(t["record"]) for t in turns
    ]
    engine = holder.engine
    cited = [e.citation.doc_id for r in records if isinstance(r, ClaimCheck) for e in r.evidence]
    cited += [c.doc_id for r in records if isinstance(r, Answer) for c in r.citations]
    infos = _infos(engine, cited)
    folder = _downloads_dir() / "".join(c for c in token if c.isalnum())[:32]
    folder.mkdir(mode=0o700, exist_ok=True)
    stem = f"citeqa-conversation-{datetime.now(UTC).date().isoformat()}"  # named with the day it was saved
    md, js = folder / f"{stem}.md", folder / f"{stem}.json"
    for old in folder.glob("citeqa-conversation*"):  # one conversation per session: yesterday's name goes
        if old not in (md, js):
            old.unlink(missing_ok=True)
    md.write_text(conversation_markdown(records, infos, engine.data.documents), encoding="utf-8")
    js.write_text(conversation_json(records, infos), encoding="utf-8")
    return str(md), str(js)


def _downloads_dir() -> Path:
    """This user's folder for conversation downloads (mode 0700, in the system temp folder Gradio serves from)."""
    from citeqa.errors import ServerError

    folder = Path(tempfile.gettempdir()) / f"citeqa-downloads-{os.getuid()}"
    folder.mkdir(mode=0o700, exist_ok=True)
    if folder.is_symlink() or folder.stat().st_uid != os.getuid():  # another local user's trap
        raise ServerError(f"{folder} belongs to another user; conversation downloads are off")
    return folder


def corpus_view(holder: EngineHolder) -> dict[str, list]:
    """The corpus table for the live index: headers and one row per document."""
    return {"headers": display.CORPUS_HEADERS, "data": display.corpus_rows(holder.engine.data.manifest.documents)}


def corpus_choices(holder: EngineHolder) -> list[tuple[str, str]]:
    """The documents that can be removed: every one in the live index, named by title and file."""
    docs = holder.engine.data.documents
    return [display.document_choice(d, docs[d].title) for d in sorted(docs)]


def remove(holder: EngineHolder, settings: UploadSettings, doc_id: Any, confirmed: Any) -> str:
    """Remove one document from the corpus and the index (only when ``confirmed``); the status line."""
    from citeqa.app.removal import remove_document
    from citeqa.errors import UploadError

    lab = corpus_labels("en")
    if settings.corpus is None:
        return lab["removal_off"]
    if not isinstance(doc_id, str) or not doc_id:
        return lab["choose"]
    if confirmed is not True:
        return lab["tick"].format(doc=doc_id)
    with holder.index_lock:
        engine = holder.engine
        if engine.index_dir is None:
            return lab["fixed_index"]
        try:
            result = remove_document(
                doc_id, settings.corpus, engine.index_dir, engine.embedder, frozenset(engine.data.documents)
            )
        except UploadError as exc:
            return lab["not_removed"].format(error=exc)
        if result.removed:
            holder.swap(engine.reload())
    return result.message


def upload(holder: EngineHolder, settings: UploadSettings, files: list[Any] | None, progress=None):
    """Add uploaded files (or, with none, re-scan the corpus) and swap in the new index."""
    if settings.corpus is None:
        return "Uploads are disabled for this server.", corpus_view(holder), ""
    pairs = [(Path(_path(f)), _orig_name(f)) for f in (files or [])]
    step = (lambda fraction, text: progress(fraction, desc=text)) if progress is not None else None
    with holder.index_lock:
        engine = holder.engine
        if engine.index_dir is None:
            return "This index cannot be updated.", corpus_view(holder), ""
        result = add_files(
            pairs, settings.corpus, engine.index_dir, engine.embedder, settings.max_bytes, step, settings.budget
        )
        if result.indexed:
            holder.swap(engine.reload())
    if pairs:
        from citeqa.app.server import discard_uploads

        discard_uploads(source for source, _ in pairs)  # the upload cache keeps no copy once handled
    status = "\n".join(summary(result)) if files else (result.error or "index refreshed")
    return status, corpus_view(holder), display.skipped_html(result.skipped)


def _path(item: Any) -> str:
    """The temp path of an uploaded file (a str, a FileData-like object or a dict)."""
    if isinstance(item, (str, Path)):
        return str(item)
    return str(item["path"] if isinstance(item, dict) else getattr(item, "path", None) or item.name)


def _orig_name(item: Any) -> str:
    """The name the user's file had (Gradio keeps it as the temp file's name)."""
    name = item.get("orig_name") if isinstance(item, dict) else getattr(item, "orig_name", None)
    return name or Path(_path(item)).name


def start_evaluation(
    runner: EvaluationRunner, settings: EvalSettings, uploaded: Any = None, shipped: str | None = None
) -> str | None:
    """Start evaluating an uploaded QA file, or else a shipped one; None when it started, else why not.

    The file is validated whole first (:func:`~citeqa.evaluation.qa_file.load_qa`): a bad
    one is refused with its line and reason, named as the user knows it. An uploaded file
    is removed from the upload cache once read (the run keeps a copy for its provenance).
    """
    from citeqa.app.evaluate_tab import shipped_path, shown_error
    from citeqa.app.server import discard_uploads
    from citeqa.evaluation.qa_file import load_qa
    from citeqa.messages import EVALUATE

    if uploaded:
        path, name = Path(_path(uploaded)), _orig_name(uploaded)
    elif shipped:
        try:
            path = shipped_path(settings.qa_dir, shipped)
        except CiteqaError as exc:
            return str(exc)
        name = shipped
    else:
        return EVALUATE["no_file"]
    try:
        items = load_qa(path)
        runner.start(items, name, path)
    except CiteqaError as exc:
        return shown_error(str(exc), path, name)
    finally:
        if uploaded:
            discard_uploads([path])
    return None


def build_app(holder: EngineHolder, uploads: UploadSettings | None = None, evaluation: EvalSettings | None = None):
    """The Blocks app: chat (questions and claim checks) with sources, citation tools, the document
    viewer and downloads; the corpus tab; the Evaluate tab; the /ask and /check APIs.

    The app's :class:`~citeqa.app.eval_runner.EvaluationRunner` is ``app.evaluations``
    (``close()`` it when the server stops).
    """
    import gradio as gr

    uploads = uploads if uploads is not None else UploadSettings()
    evaluation = evaluation if evaluation is not None else EvalSettings()
    runner = EvaluationRunner(holder, evaluation.k)
    with gr.Blocks(title="citeqa") as app:
        subtitle = gr.Markdown(_subtitle("en"), elem_id="subtitle")
        with gr.Tab(labels("en")["tab_chat"], id="chat") as chat_tab:
            chat = chat_layout(gr)
        with gr.Tab(labels("en")["tab_corpus"], id="corpus") as corpus_tab:
            table, choices, corpus_relabels = _corpus_tab(gr, holder, uploads)
        app.load(
            lambda: (corpus_view(holder), gr.update(choices=corpus_choices(holder), value=None)),
            None,
            [table, choices],
            api_visibility="private",
        )  # fresh on every visit
        with gr.Tab(labels("en")["tab_evaluate"], id="evaluate") as evaluate_tab:
            _evaluate_tab(gr, app, holder, runner, evaluation)
        page = [
            (subtitle, _subtitle),
            (chat_tab, lambda lang: gr.update(label=labels(lang)["tab_chat"])),
            (corpus_tab, lambda lang: gr.update(label=labels(lang)["tab_corpus"])),
            (evaluate_tab, lambda lang: gr.update(label=labels(lang)["tab_evaluate"])),
            *corpus_relabels,
        ]
        chat_events(gr, holder, chat, page, app)
        _api(gr, holder)
    app.evaluations = runner
    return app


def _subtitle(lang: str) -> str:
    return f"# citeqa\n{labels(lang)['subtitle']}"


def _corpus_tab(gr, holder: EngineHolder, uploads: UploadSettings):
    """The indexed documents, the upload box that adds to them and the removal of one; returns the
    table, the removal's document choice and the labels to relabel in the chat's language."""
    lab = corpus_labels("en")
    table = gr.Dataframe(
        headers=display.CORPUS_HEADERS,
        interactive=False,
        wrap=True,
        elem_id="corpus-table",
        datatype="str",
        column_widths=["44%", "9%", "8%", "19%", "20%"],
    )
    skipped = gr.HTML(elem_id="skipped", js_on_load=None)
    if uploads.corpus is None:
        off = gr.Markdown(lab["uploads_off"])
        return table, gr.Dropdown(choices=[], visible=False), [(off, lambda lang: corpus_labels(lang)["uploads_off"])]
    limit = f"{uploads.max_bytes / 1_048_576:.0f}"
    types = " ".join(SUPPORTED_SUFFIXES)
    files = gr.File(
        file_count="multiple",
        file_types=list(SUPPORTED_SUFFIXES),
        label=lab["add_files"].format(types=types, mb=limit),
        elem_id="upload",
    )
    with gr.Row():
        add = gr.Button(lab["add"], variant="primary", elem_id="add")
        refresh = gr.Button(lab["rescan"], elem_id="refresh")
    status = gr.Textbox(label=lab["upload_status"], interactive=False, lines=3, elem_id="upload-status")
    with gr.Row():
        choice = gr.Dropdown(
            choices=corpus_choices(holder), value=None, label=lab["remove_doc"], elem_id="remove-doc", scale=4
        )
        confirm = gr.Checkbox(value=False, label=lab["remove_confirm"], elem_id="remove-confirm", scale=3)
        removal = gr.Button(lab["remove"], variant="stop", elem_id="remove", scale=1)
    removal_status = gr.Textbox(label=lab["removal_status"], interactive=False, elem_id="remove-status")

    def named(key: str, field: str = "label"):
        return lambda lang: gr.update(**{field: corpus_labels(lang)[key].format(types=types, mb=limit)})

    relabels = [
        (files, named("add_files")),
        (add, named("add", "value")),
        (refresh, named("rescan", "value")),
        (status, named("upload_status")),
        (choice, named("remove_doc")),
        (confirm, named("remove_confirm")),
        (removal, named("remove", "value")),
        (removal_status, named("removal_status")),
    ]

    def refreshed_choices():
        return gr.update(choices=corpus_choices(holder), value=None)

    def on_add(chosen, progress=gr.Progress(track_tqdm=True)):
        return [*upload(holder, uploads, chosen, progress), refreshed_choices()]

    def on_refresh(progress=gr.Progress(track_tqdm=True)):
        return [*upload(holder, uploads, [], progress), refreshed_choices()]

    def on_remove(doc_id, confirmed):
        message = remove(holder, uploads, doc_id, confirmed)
        left = corpus_choices(holder)
        keep = doc_id if doc_id in {value for _, value in left} else None  # refused: kept for the second click
        return message, corpus_view(holder), gr.update(choices=left, value=keep), gr.update(value=False)

    add.click(on_add, files, [status, table, skipped, choice], api_visibility="private")
    refresh.click(on_refresh, None, [status, table, skipped, choice], api_visibility="private")
    removal.click(on_remove, [choice, confirm], [removal_status, table, choice, confirm], api_visibility="private")
    return table, choice, relabels


def _evaluate_tab(gr, app, holder: EngineHolder, runner: EvaluationRunner, settings: EvalSettings) -> None:
    """The Evaluate tab: choose or upload a QA file, run it in the background, look at the results.

    The shipped files are offered with their question counts, the one whose gold documents the live
    index holds preselected, and a line says how many of the chosen file's gold documents are indexed
    before it runs. Run is enabled while nothing runs, Cancel only while a run goes on.

    A timer polls the runner while a run goes on (every page that shows the tab); the run
    itself is in the runner's thread, never in one of Gradio's queue workers.
    """
    from citeqa.app import eval_files
    from citeqa.app import evaluate_tab as view
    from citeqa.app.eval_runner import DOWNLOADS

    def fits() -> list:
        names = view.shipped_qa_files(settings.qa_dir)
        return eval_files.shipped_fits(settings.qa_dir, names, holder.engine.data.documents)

    def offered() -> tuple[Any, str]:
        found = fits()
        chosen = eval_files.best_fit(found)
        note = eval_files.fit_note(next((f for f in found if f.name == chosen), None))
        choices = [(eval_files.choice_label(f), f.name) for f in found]
        return gr.update(choices=choices, value=chosen), note

    def buttons(running: bool) -> list[Any]:
        return [gr.update(interactive=not running), gr.update(interactive=running)]

    lab = EVALUATE
    gr.Markdown(lab["intro"])
    with gr.Row():
        qa_upload = gr.File(
            label=lab["upload"], file_types=[".jsonl", ".csv"], file_count="single", elem_id="eval-upload", height=120
        )
        with gr.Column():
            # The same file names the page load offers (it adds question counts and the best fit), so a
            # session's events are checked against them even before its load event has run.
            shipped = gr.Dropdown(
                [(name, name) for name in view.shipped_qa_files(settings.qa_dir)],
                value=None,
                label=lab["shipped"],
                elem_id="eval-shipped",
                interactive=True,
            )
            with gr.Row():
                start = gr.Button(lab["start"], variant="primary", elem_id="eval-start")
                cancel = gr.Button(lab["cancel"], variant="stop", elem_id="eval-cancel", interactive=False)
            fit = gr.HTML("", elem_id="eval-fit", js_on_load=None)
    status = gr.HTML(view.status_html(None), elem_id="eval-status", js_on_load=None)
    timer = gr.Timer(0.5, active=False)
    shown = gr.State(None)  # the FinishedRun this page shows: filters and details keep working after newer runs
    with gr.Column(visible=False, elem_id="eval-results") as results:
        gr.Markdown(f"### {lab['cards']}")
        cards = gr.HTML("", elem_id="eval-cards", js_on_load=None)
        gr.Markdown(f"### {lab['metrics']}")
        metrics = gr.Dataframe(interactive=False, wrap=True, elem_id="eval-metrics", datatype="str", max_height=560)
        with gr.Row(equal_height=True):
            chart = gr.Image(
                type="filepath",
                label=lab["chart"],
                interactive=False,
                elem_id="eval-chart",
                buttons=["download", "fullscreen"],
                scale=3,
                height=400,
            )
            reliability = gr.Image(
                type="filepath",
                label=lab["reliability"],
                interactive=False,
                elem_id="eval-reliability",
                buttons=["download", "fullscreen"],
                scale=2,
                height=400,
            )
        gr.Markdown(f"### {lab['questions']}")
        gr.HTML(view.outcome_help_html(), js_on_load=None)
        with gr.Row():
            outcome = gr.Dropdown([], label=lab["outcome"], elem_id="eval-outcome", interactive=True)
            language = gr.Dropdown([], label=lab["language"], elem_id="eval-language", interactive=True)
        with gr.Row(elem_id="eval-browse"):  # the question's detail beside the table on a wide screen
            questions = gr.Dataframe(
                headers=view.QUESTION_HEADERS,
                interactive=False,
                wrap=True,
                datatype="str",
                elem_id="eval-questions",
                max_height=680,  # about a screen: the detail beside it stays in view
                column_widths=["70px", "56px", "126px", "214px", "238px", "96px"],  # px: a phone scrolls sideways
                scale=2,
                min_width=480,
            )
            detail = gr.HTML(view.detail_html(None), elem_id="eval-detail", js_on_load=None, scale=1, min_width=300)
        gr.Markdown(f"### {lab['downloads']}")
        with gr.Row():
            downloads = [
                gr.DownloadButton(name, elem_id=f"eval-download-{name.replace('.', '-')}", size="sm")
                for name in DOWNLOADS
            ]
        with gr.Accordion(lab["compare"], open=False, elem_id="eval-compare"):
            gr.Markdown(lab["compare_intro"])
            earlier = gr.File(
                label=lab["compare_upload"],
                file_types=[".jsonl", ".json"],
                file_count="multiple",
                elem_id="eval-compare-upload",
                height=100,
            )
            with gr.Row():
                compare_file = gr.Button(lab["compare_file"], elem_id="eval-compare-file")
                compare_previous = gr.Button(lab["compare_previous"], elem_id="eval-compare-previous")
            compare_table = gr.Dataframe(
                interactive=False, wrap=True, datatype="str", visible=False, elem_id="eval-compare-table"
            )
            compare_lists = gr.HTML(elem_id="eval-compare-lists", js_on_load=None)

    shown_outputs = [
        results,
        cards,
        metrics,
        chart,
        reliability,
        outcome,
        language,
        questions,
        detail,
        *downloads,
        compare_table,
        compare_lists,
    ]

    def show(run) -> list[Any]:  # run: FinishedRun
        if run is None:
            return [gr.update(visible=False), *([gr.skip()] * (len(shown_outputs) - 1))]
        files = run.files
        return [
            gr.update(visible=True),
            view.cards_html(run.metrics),
            view.metrics_table(run.metrics),
            gr.update(value=str(files["metrics.png"]), alt_text=view.chart_alt(run.metrics)),
            gr.update(value=str(files["reliability.png"]), alt_text=lab["reliability_alt"]),
            gr.update(choices=view.outcome_choices(run.results), value=view.ALL),
            gr.update(choices=view.language_choices(run.results), value=view.ALL),
            {"headers": view.QUESTION_HEADERS, "data": view.question_rows(run.results)},
            view.detail_html(None),
            *(gr.update(value=str(files[name])) for name in DOWNLOADS),
            gr.update(visible=False, value=None),
            "",
        ]

    def refresh(shown_run) -> list[Any]:
        """Status, timer, the shown run, then the results (skipped unless a newer run has ended)."""
        current = runner.status()
        if current is not None and current.running:
            skipped = [gr.skip()] * len(shown_outputs)
            return [view.status_html(current), gr.Timer(active=True), shown_run, *skipped, *buttons(True)]
        run = runner.finished()
        if run is None or (shown_run is not None and run.run_id == shown_run.run_id):
            skipped = [gr.skip()] * len(shown_outputs)
            return [view.status_html(current), gr.Timer(active=False), shown_run, *skipped, *buttons(False)]
        return [view.status_html(current), gr.Timer(active=False), run, *show(run), *buttons(False)]

    poll_outputs = [status, timer, shown, *shown_outputs, start, cancel]
    timer.tick(refresh, shown, poll_outputs, show_progress="hidden", api_visibility="private")
    app.load(
        lambda shown_run: [*refresh(shown_run), *offered()],
        shown,
        [*poll_outputs, shipped, fit],
        api_visibility="private",
    )

    def on_start(uploaded, choice, shown_run):
        error = start_evaluation(runner, settings, uploaded, choice)
        if error is not None:  # the upload was read and discarded: the box is emptied either way
            return [view.status_html(None, error), gr.skip(), shown_run, gr.skip(), None, *buttons(False)]
        running = [view.status_html(runner.status()), gr.Timer(active=True), None, gr.update(visible=False), None]
        return [*running, *buttons(True)]

    start.click(
        on_start,
        [qa_upload, shipped, shown],
        [status, timer, shown, results, qa_upload, start, cancel],
        api_visibility="private",
    )

    def on_shipped(name):
        return eval_files.fit_note(next((f for f in fits() if f.name == name), None))

    shipped.change(on_shipped, shipped, fit, api_visibility="private")
    qa_upload.upload(lambda: None, None, shipped, api_visibility="private")  # one source at a time

    def on_choose(uploaded):
        if uploaded:
            from citeqa.app.server import discard_uploads

            discard_uploads([_path(uploaded)])
        return None

    shipped.input(on_choose, qa_upload, qa_upload, api_visibility="private")

    def on_cancel():
        if not runner.cancel():
            return view.status_html(None, lab["nothing_running"])
        return view.status_html(runner.status())

    cancel.click(on_cancel, None, status, api_visibility="private")

    def on_filter(outcome_value, language_value, shown_run):
        rows = view.question_rows(shown_run.results, outcome_value, language_value) if shown_run else []
        return {"headers": view.QUESTION_HEADERS, "data": rows}

    outcome.input(on_filter, [outcome, language, shown], questions, api_visibility="private")
    language.input(on_filter, [outcome, language, shown], questions, api_visibility="private")

    def on_select(shown_run, evt):
        row = evt.row_value or []
        found = view.find_result(shown_run.results, row[0] if row else None) if shown_run else None
        return view.detail_html(found)

    on_select.__annotations__["evt"] = gr.SelectData  # a real class: Gradio passes the event by this hint

    questions.select(on_select, shown, detail, api_visibility="private")

    def on_compare(files, shown_run, use_previous: bool):
        table, lists = compare_evaluation(runner, shown_run, files, use_previous)
        if table is None:
            return gr.update(visible=False, value=None), view.status_html(None, lists)
        return gr.update(visible=True, value=table), lists

    compare_file.click(
        lambda f, s: on_compare(f, s, False), [earlier, shown], [compare_table, compare_lists], api_visibility="private"
    )
    compare_previous.click(
        lambda s: on_compare(None, s, True), shown, [compare_table, compare_lists], api_visibility="private"
    )


def compare_evaluation(
    runner: EvaluationRunner, run: FinishedRun | None, files: Any = None, use_previous: bool = False
) -> tuple[dict[str, list] | None, str]:
    """A finished run compared with uploaded earlier predictions or the run before it on this server.

    Returns the deltas table and the fixed/broken lists as HTML, or ``(None, why not)``.
    A ``.meta.json`` uploaded with the predictions adds the settings that changed.
    """
    import tempfile

    from citeqa.app.evaluate_tab import comparison_html, comparison_table, shown_error
    from citeqa.app.server import discard_uploads
    from citeqa.evaluation.compare import compare_runs, load_predictions
    from citeqa.evaluation.report import meta_path
    from citeqa.messages import EVALUATE

    uploaded = [(Path(_path(f)), _orig_name(f)) for f in (files or [])]
    try:
        if run is None:
            return None, EVALUATE["compare_no_run"]
        if use_previous:
            earlier = runner.before(run)
            if earlier is None:
                return None, EVALUATE["compare_no_previous"]
            old_records, old_provenance, label = earlier.records(), earlier.provenance, earlier.source
        else:
            jsonl = [(p, n) for p, n in uploaded if not n.endswith(".meta.json")]
            if not jsonl:
                return None, EVALUATE["compare_no_file"]
            source, name = jsonl[0]
            with tempfile.TemporaryDirectory(prefix="citeqa-compare-") as folder:
                copy = Path(folder) / Path(name).name
                copy.write_bytes(source.read_bytes())
                for path, meta_name in uploaded:
                    if meta_name == meta_path(copy).name:
                        meta_path(copy).write_bytes(path.read_bytes())
                try:
                    earlier_run = load_predictions(copy)
                except CiteqaError as exc:
                    return None, shown_error(str(exc), copy, name)
            old_records, old_provenance, label = list(earlier_run.records), earlier_run.provenance, name
        comparison = compare_runs(
            old_records, run.records(), old_provenance=old_provenance, new_provenance=run.provenance
        )
        return comparison_table(comparison), comparison_html(comparison, label)
    finally:
        discard_uploads(p for p, _ in uploaded)


def _api(gr, holder: EngineHolder) -> None:
    """The named endpoints ``/ask`` (question, history, k, language) -> answer record and
    ``/check`` (claim, k) -> claim check record.

    ``preprocess=False`` hands the request's values to :func:`ask_record` as sent, so
    that the schema check there, not a component's conversion (``float("abc")``), judges
    them and says why; a call with too few arguments gets the missing ones as
    :data:`~citeqa.app.validation.MISSING`, which the check names.
    """
    from gradio.context import get_blocks_context

    from citeqa.app.validation import MISSING

    api_q = gr.Textbox(visible=False)
    api_h = gr.JSON(value=[], visible=False)
    api_k = gr.Number(value=5, visible=False, precision=0)
    api_lang = gr.Textbox(value="auto", visible=False)
    api_out = gr.JSON(visible=False)
    api_btn = gr.Button(visible=False)
    api_btn.click(
        lambda q, h, kk, lang: ask_record(holder, q, h, kk, lang),
        [api_q, api_h, api_k, api_lang],
        api_out,
        api_name="ask",
        preprocess=False,
    )
    api_claim = gr.Textbox(visible=False)
    api_check_k = gr.Number(value=5, visible=False, precision=0)
    api_check_out = gr.JSON(visible=False)
    api_check = gr.Button(visible=False)
    api_check.click(
        lambda c, kk: check_record(holder, c, kk),
        [api_claim, api_check_k],
        api_check_out,
        api_name="check",
        preprocess=False,
    )
    blocks = get_blocks_context().root_block
    check_count = blocks.validate_inputs

    def pad_missing(block_fn, inputs: list) -> None:  # Gradio's BlockFunction
        if block_fn.api_name in ("ask", "check") and len(inputs) < len(block_fn.inputs):
            inputs.extend([MISSING] * (len(block_fn.inputs) - len(inputs)))  # Gradio reads this same list next
        check_count(block_fn, inputs)

    blocks.validate_inputs = pad_missing


def serve(
    open_engine: Callable[[], Engine],
    corpus_dir: Path | None,
    host: str,
    port: int,
    auth: tuple[str, str] | None = None,
    max_upload_bytes: int = DEFAULT_MAX_BYTES,
    allowed_hosts: tuple[str, ...] = (),
    sock=None,  # socket.socket
    qa_dir: Path | None = None,
    forwarded_allow_ips: tuple[str, ...] = (),
) -> None:
    """Open the engine (``open_engine``), warm the model, and serve the app until interrupted.

    ``sock`` is the listening socket (``server.bind``, made by the CLI before the model
    loads so that a busy port is reported at once); without it one is bound here.
    ``qa_dir`` holds the QA files the Evaluate tab offers (default: ``eval/`` beside the corpus).
    """
    import os

    from citeqa.app import server
    from citeqa.ingest.pending import recover

    sock = sock if sock is not None else server.bind(host, port)
    removed = recover(corpus_dir) if corpus_dir is not None else []
    for name in removed:
        print(f"citeqa: removed {name}: its upload was interrupted before it was indexed", file=sys.stderr)
    engine = open_engine()
    engine.warm_up()
    holder = EngineHolder(engine)
    if corpus_dir is not None:
        from citeqa.app.removal import recover_removals

        for name in recover_removals(corpus_dir, frozenset(engine.data.documents)):
            print(f"citeqa: settled {name}: its removal was interrupted", file=sys.stderr)
    if any(name in engine.data.documents for name in removed):  # killed after the switch, before confirming
        upload(holder, UploadSettings(corpus_dir, max_upload_bytes), [])
    if auth is None and host not in ("127.0.0.1", "localhost", "::1"):
        print(
            f"citeqa: warning: serving on {host} without --auth; anyone who can reach it can read and add documents",
            file=sys.stderr,
        )
    given = os.environ.get("GRADIO_TEMP_DIR")
    cache = server.own_upload_cache(given)  # this process's own folder: another server never sweeps it
    os.environ["GRADIO_TEMP_DIR"] = str(cache)
    port = sock.getsockname()[1]
    policy = server.policy_for(
        host,
        port,
        allowed_hosts,
        uploads=corpus_dir is not None,
        max_upload_bytes=max_upload_bytes,
        upload_dir=cache,
        forwarded_allow_ips=forwarded_allow_ips,
    )
    evaluation = EvalSettings(qa_dir if qa_dir is not None else default_qa_dir(corpus_dir))
    app = guarded_app(holder, UploadSettings(corpus_dir, max_upload_bytes), policy, auth, evaluation)
    print(f"citeqa: serving on {server.url_of(sock, host)} (Ctrl+C to stop)", file=sys.stderr, flush=True)
    try:
        server.run(app, sock)
    finally:  # after SIGINT and SIGTERM alike (server.run raises Terminated for SIGTERM)
        app.state.blocks.evaluations.close()  # a run in progress stops; its files go
        server.remove_upload_cache(cache)
        if given is None:
            os.environ.pop("GRADIO_TEMP_DIR", None)
        else:
            os.environ["GRADIO_TEMP_DIR"] = given


def guarded_app(
    holder: EngineHolder,
    uploads: UploadSettings,
    policy,
    auth: tuple[str, str] | None = None,
    evaluation: EvalSettings | None = None,
):
    """The app as ``citeqa serve`` runs it: :func:`build_app` behind :class:`citeqa.app.server.Guard`.

    The Blocks app is ``.state.blocks`` of the returned server (its runner: ``.state.blocks.evaluations``).
    """
    from citeqa.app import server

    app = build_app(holder, uploads, evaluation)
    app.queue(default_concurrency_limit=4)
    parent = server.build_server(app, policy, auth=auth, css=CSS, max_file_size=uploads.max_bytes)
    parent.state.blocks = app
    return parent
