"""The Gradio app: a chat with cited answers, a corpus tab with uploads, and the ``/ask`` API.

Thin on purpose: answers come from :class:`~citeqa.engine.Engine`, HTML from
:mod:`citeqa.app.display`, and uploads are checked and indexed by :mod:`citeqa.app.uploads`.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from citeqa.app import display
from citeqa.app.display import answer_html, engine_language, error_html, labels, sources_html, user_html
from citeqa.app.eval_runner import EvaluationRunner, FinishedRun
from citeqa.app.messages import EVALUATE
from citeqa.app.uploads import DEFAULT_MAX_BYTES, add_files, summary
from citeqa.engine import Engine
from citeqa.errors import CiteqaError
from citeqa.ingest.formats import SUPPORTED_SUFFIXES

CSS = """
.citeqa-source {border: 1px solid var(--border-color-primary); border-radius: 8px; padding: 8px 10px; margin: 8px 0;}
.citeqa-passage {margin-top: 6px; line-height: 1.45;}
.citeqa-badge {background: #fde68a; color: #713f12; border-radius: 6px; padding: 0 6px; font-size: 0.8em;}
.citeqa-closest h3 {color: var(--body-text-color-subdued); font-style: italic;}
.citeqa-context summary {cursor: pointer; color: var(--link-text-color); font-size: 0.9em; margin-top: 4px;}
.citeqa-context div {background: var(--background-fill-secondary); padding: 6px 8px; border-radius: 6px; line-height: 1.45;}
.citeqa-cited {background: var(--color-accent-soft); border-radius: 3px;}
.citeqa-ref {color: var(--link-text-color); font-weight: 600;}
mark {background: #fef08a; color: inherit; padding: 0 2px; border-radius: 3px;}
mark.citeqa-given, .citeqa-key-given {background: #bfdbfe; color: #111827; padding: 0 2px; border-radius: 3px;}
mark.citeqa-gold, .citeqa-key-gold {background: #bbf7d0; color: #111827; box-shadow: inset 0 -3px #15803d;}
mark.citeqa-gold.citeqa-given {background: #bfdbfe;}
.citeqa-eval-question {font-size: 1.1em; font-weight: 600;}
.citeqa-eval-status progress {width: 40%; vertical-align: middle;}
.citeqa-eval-error {color: #b91c1c; font-weight: 600;}
.citeqa-outcome {border-radius: 6px; padding: 0 6px; background: #fee2e2; color: #7f1d1d;}
.citeqa-outcome-right, .citeqa-outcome-right-abstention {background: #dcfce7; color: #14532d;}
.citeqa-from-gold, .citeqa-relevant {background: #dcfce7; color: #14532d;}
.citeqa-record {white-space: pre-wrap; font-size: 0.85em;}
.citeqa-outcomes {font-size: 0.9em; margin: 0;}
"""

EXAMPLES = [
    "¿Cuántos parámetros tiene GLM-5?",
    "¿Qué chip está probando Baidu?",
    "Qual chip a Baidu está testando?",
    "Quanto custa a API do GLM-Image por imagem?",
    "How much does the GLM-Image API charge per image?",
    "When did Huawei open-source openPangu 2.0?",
]


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


def ask_record(holder: EngineHolder, question: Any, history: Any = None, k: Any = 5,
               language: Any = "auto") -> dict[str, Any]:
    """The ``/ask`` API: the answer record as JSON, or ``{"error": message, "field": argument}``.

    The arguments are checked against the schema in :mod:`citeqa.app.validation` first;
    ``field`` names the argument at fault (absent when no argument is, e.g. a damaged index).
    """
    from citeqa.app.validation import error_record, validate_ask
    from citeqa.errors import QuestionError, RequestError

    try:
        request = validate_ask(question, history, k, language)
        return holder.engine.ask(request.question, history=request.history, k=request.k,
                                 language=engine_language(request.language)).to_dict()
    except RequestError as exc:
        return error_record(exc)
    except QuestionError as exc:
        return {"error": str(exc), "field": "question"}
    except CiteqaError as exc:
        return {"error": str(exc)}


def chat_turn(holder: EngineHolder, question: str, messages: list[dict], asked: list[str], k: Any,
              language: str | None = "auto", show_confidence: bool = True) -> tuple[list[dict], list[str], str, str, str]:
    """One chat turn: the reply goes into the chat, the sources into the panel below.

    Returns the messages, the questions asked so far, the sources HTML, the cleared
    question box, and the language of the turn (for the labels).
    """
    messages, asked = list(messages or []), list(asked or [])
    engine = holder.engine
    try:
        answer = engine.ask(question, history=tuple(asked), k=int(k), language=engine_language(language))
    except CiteqaError as exc:
        lang = asked and engine.question_language(asked[-1]) or "en"
        messages += [{"role": "user", "content": user_html(question or "")},
                     {"role": "assistant", "content": error_html(str(exc), lang)}]
        return messages, asked, "", "", lang
    messages += [{"role": "user", "content": user_html(answer.question)},
                 {"role": "assistant", "content": answer_html(answer, show_confidence)}]
    return messages, asked + [answer.question], sources_html(answer, engine.data.documents), "", answer.language


def corpus_view(holder: EngineHolder) -> dict[str, list]:
    """The corpus table for the live index: headers and one row per document."""
    return {"headers": display.CORPUS_HEADERS, "data": display.corpus_rows(holder.engine.data.manifest.documents)}


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
        result = add_files(pairs, settings.corpus, engine.index_dir, engine.embedder, settings.max_bytes, step)
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


def start_evaluation(runner: EvaluationRunner, settings: EvalSettings, uploaded: Any = None,
                     shipped: str | None = None) -> str | None:
    """Start evaluating an uploaded QA file, or else a shipped one; None when it started, else why not.

    The file is validated whole first (:func:`~citeqa.evaluation.qa_file.load_qa`): a bad
    one is refused with its line and reason, named as the user knows it. An uploaded file
    is removed from the upload cache once read (the run keeps a copy for its provenance).
    """
    from citeqa.app.evaluate_tab import shipped_path, shown_error
    from citeqa.app.messages import EVALUATE
    from citeqa.app.server import discard_uploads
    from citeqa.evaluation.qa_file import load_qa

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


def build_app(holder: EngineHolder, uploads: UploadSettings | None = None,
              evaluation: EvalSettings | None = None):
    """The Blocks app: chat with sources and controls, the corpus tab, the Evaluate tab, and the /ask API.

    The app's :class:`~citeqa.app.eval_runner.EvaluationRunner` is ``app.evaluations``
    (``close()`` it when the server stops).
    """
    import gradio as gr

    uploads = uploads if uploads is not None else UploadSettings()
    evaluation = evaluation if evaluation is not None else EvalSettings()
    runner = EvaluationRunner(holder, evaluation.k)
    en = labels("en")
    with gr.Blocks(title="citeqa") as app:
        gr.Markdown("# citeqa\nAsk in Spanish, Portuguese or English. Every answer is copied from a "
                    "document, with its sources below.")
        with gr.Tab("Chat", id="chat"):
            chat = gr.Chatbot(label="citeqa", height=380, sanitize_html=True, latex_delimiters=[],
                              elem_id="chat", feedback_options=None, buttons=["copy"])
            asked = gr.State([])
            with gr.Row():
                question = gr.Textbox(placeholder=en["placeholder"], show_label=False, scale=8,
                                      elem_id="question", max_lines=4)
                send = gr.Button(en["ask"], variant="primary", scale=1, elem_id="ask")
            with gr.Row():
                k = gr.Slider(1, 10, value=5, step=1, label=en["passages"], elem_id="k")
                language = gr.Dropdown(list(display.LANGUAGE_CHOICES), value="auto", label=en["language"],
                                       elem_id="language")
                confidence = gr.Checkbox(value=True, label=en["show_confidence"], elem_id="confidence")
                clear = gr.Button(en["clear"], elem_id="clear")
            sources = gr.HTML(elem_id="sources", js_on_load=None)
            gr.Examples(EXAMPLES, inputs=question, label="Examples · Ejemplos · Exemplos")
        with gr.Tab("Corpus", id="corpus"):
            table = _corpus_tab(gr, holder, uploads)
        app.load(lambda: corpus_view(holder), None, table, api_visibility="private")  # fresh on every visit
        with gr.Tab(EVALUATE["tab"], id="evaluate"):
            _evaluate_tab(gr, app, runner, evaluation)

        def relabel(lang: str) -> list[Any]:
            lab = labels(lang)
            return [gr.update(value=lab["ask"]), gr.update(value=lab["clear"]), gr.update(label=lab["passages"]),
                    gr.update(label=lab["language"]), gr.update(label=lab["show_confidence"])]

        def turn(q, m, a, kk, lang, conf):
            messages, earlier, html, _, turn_lang = chat_turn(holder, q, m, a, kk, lang, conf)
            box = gr.update(value="", placeholder=labels(turn_lang)["placeholder"])
            return [messages, earlier, html, box, *relabel(turn_lang)]

        outputs = [chat, asked, sources, question, send, clear, k, language, confidence]
        inputs = [question, chat, asked, k, language, confidence]
        send.click(turn, inputs, outputs, api_visibility="private")
        question.submit(turn, inputs, outputs, api_visibility="private")
        clear.click(lambda: ([], [], "", ""), None, [chat, asked, sources, question], api_visibility="private")
        _api(gr, holder)
    app.evaluations = runner
    return app


def _corpus_tab(gr, holder: EngineHolder, uploads: UploadSettings):
    """The indexed documents, and the upload box that adds to them; returns the table."""
    table = gr.Dataframe(headers=display.CORPUS_HEADERS, interactive=False,
                         wrap=True, elem_id="corpus-table", datatype="str",
                         column_widths=["44%", "9%", "8%", "19%", "20%"])
    skipped = gr.HTML(elem_id="skipped", js_on_load=None)
    if uploads.corpus is None:
        gr.Markdown("Uploads are disabled for this server.")
        return table
    limit = uploads.max_bytes / 1_048_576
    files = gr.File(file_count="multiple", file_types=list(SUPPORTED_SUFFIXES),
                    label=f"Add documents ({' '.join(SUPPORTED_SUFFIXES)}, up to {limit:.0f} MB each)",
                    elem_id="upload")
    with gr.Row():
        add = gr.Button("Add to the index", variant="primary", elem_id="add")
        refresh = gr.Button("Re-scan corpus folder", elem_id="refresh")
    status = gr.Textbox(label="Upload status", interactive=False, lines=3, elem_id="upload-status")

    def on_add(chosen, progress=gr.Progress(track_tqdm=True)):
        return upload(holder, uploads, chosen, progress)

    def on_refresh(progress=gr.Progress(track_tqdm=True)):
        return upload(holder, uploads, [], progress)

    add.click(on_add, files, [status, table, skipped], api_visibility="private")
    refresh.click(on_refresh, None, [status, table, skipped], api_visibility="private")
    return table


def _evaluate_tab(gr, app, runner: EvaluationRunner, settings: EvalSettings) -> None:
    """The Evaluate tab: choose or upload a QA file, run it in the background, look at the results.

    A timer polls the runner while a run goes on (every page that shows the tab); the run
    itself is in the runner's thread, never in one of Gradio's queue workers.
    """
    from citeqa.app import evaluate_tab as view
    from citeqa.app.eval_runner import DOWNLOADS

    lab = EVALUATE
    gr.Markdown(lab["intro"])
    with gr.Row():
        qa_upload = gr.File(label=lab["upload"], file_types=[".jsonl", ".csv"], file_count="single",
                            elem_id="eval-upload", height=120)
        with gr.Column():
            shipped = gr.Dropdown(view.shipped_qa_files(settings.qa_dir), value=None, label=lab["shipped"],
                                  elem_id="eval-shipped", interactive=True)
            with gr.Row():
                start = gr.Button(lab["start"], variant="primary", elem_id="eval-start")
                cancel = gr.Button(lab["cancel"], variant="stop", elem_id="eval-cancel")
    status = gr.HTML(view.status_html(None), elem_id="eval-status", js_on_load=None)
    timer = gr.Timer(0.5, active=False)
    shown = gr.State(None)  # the FinishedRun this page shows: filters and details keep working after newer runs
    with gr.Column(visible=False, elem_id="eval-results") as results:
        gr.Markdown(f"### {lab['metrics']}")
        metrics = gr.Dataframe(interactive=False, wrap=True, elem_id="eval-metrics", datatype="str", max_height=560)
        with gr.Row(equal_height=True):
            chart = gr.Image(type="filepath", label=lab["chart"], interactive=False, elem_id="eval-chart",
                             buttons=["download", "fullscreen"], scale=3, height=400)
            reliability = gr.Image(type="filepath", label=lab["reliability"], interactive=False,
                                   elem_id="eval-reliability", buttons=["download", "fullscreen"], scale=2,
                                   height=400)
        gr.Markdown(f"### {lab['questions']}")
        gr.HTML(view.outcome_help_html(), js_on_load=None)
        with gr.Row():
            outcome = gr.Dropdown([], label=lab["outcome"], elem_id="eval-outcome", interactive=True)
            language = gr.Dropdown([], label=lab["language"], elem_id="eval-language", interactive=True)
        questions = gr.Dataframe(headers=view.QUESTION_HEADERS, interactive=False, wrap=True, datatype="str",
                                 elem_id="eval-questions", max_height=420,
                                 column_widths=["8%", "5%", "13%", "30%", "34%", "10%"])
        detail = gr.HTML(view.detail_html(None), elem_id="eval-detail", js_on_load=None)
        gr.Markdown(f"### {lab['downloads']}")
        with gr.Row():
            downloads = [gr.DownloadButton(name, elem_id=f"eval-download-{name.replace('.', '-')}", size="sm")
                         for name in DOWNLOADS]
        with gr.Accordion(lab["compare"], open=False, elem_id="eval-compare"):
            gr.Markdown(lab["compare_intro"])
            earlier = gr.File(label=lab["compare_upload"], file_types=[".jsonl", ".json"], file_count="multiple",
                              elem_id="eval-compare-upload", height=100)
            with gr.Row():
                compare_file = gr.Button(lab["compare_file"], elem_id="eval-compare-file")
                compare_previous = gr.Button(lab["compare_previous"], elem_id="eval-compare-previous")
            compare_table = gr.Dataframe(interactive=False, wrap=True, datatype="str", visible=False,
                                         elem_id="eval-compare-table")
            compare_lists = gr.HTML(elem_id="eval-compare-lists", js_on_load=None)

    shown_outputs = [results, metrics, chart, reliability, outcome, language, questions, detail, *downloads,
                     compare_table, compare_lists]

    def show(run) -> list[Any]:  # run: FinishedRun
        if run is None:
            return [gr.update(visible=False), *([gr.skip()] * (len(shown_outputs) - 1))]
        files = run.files
        return [gr.update(visible=True), view.metrics_table(run.metrics), str(files["metrics.png"]),
                str(files["reliability.png"]),
                gr.update(choices=view.outcome_choices(run.results), value=view.ALL),
                gr.update(choices=view.language_choices(run.results), value=view.ALL),
                {"headers": view.QUESTION_HEADERS, "data": view.question_rows(run.results)},
                view.detail_html(None), *(gr.update(value=str(files[name])) for name in DOWNLOADS),
                gr.update(visible=False, value=None), ""]

    def refresh(shown_run) -> list[Any]:
        """Status, timer, the shown run, then the results (skipped unless a newer run has ended)."""
        current = runner.status()
        if current is not None and current.running:
            return [view.status_html(current), gr.Timer(active=True), shown_run,
                    *([gr.skip()] * len(shown_outputs))]
        run = runner.finished()
        if run is None or (shown_run is not None and run.run_id == shown_run.run_id):
            return [view.status_html(current), gr.Timer(active=False), shown_run,
                    *([gr.skip()] * len(shown_outputs))]
        return [view.status_html(current), gr.Timer(active=False), run, *show(run)]

    poll_outputs = [status, timer, shown, *shown_outputs]
    timer.tick(refresh, shown, poll_outputs, show_progress="hidden", api_visibility="private")
    app.load(lambda shown_run: [*refresh(shown_run), gr.update(choices=view.shipped_qa_files(settings.qa_dir))],
             shown, [*poll_outputs, shipped], api_visibility="private")

    def on_start(uploaded, choice, shown_run):
        error = start_evaluation(runner, settings, uploaded, choice)
        if error is not None:  # the upload was read and discarded: the box is emptied either way
            return [view.status_html(None, error), gr.skip(), shown_run, gr.skip(), None]
        return [view.status_html(runner.status()), gr.Timer(active=True), None, gr.update(visible=False), None]

    start.click(on_start, [qa_upload, shipped, shown], [status, timer, shown, results, qa_upload],
                api_visibility="private")
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

    compare_file.click(lambda f, s: on_compare(f, s, False), [earlier, shown], [compare_table, compare_lists],
                       api_visibility="private")
    compare_previous.click(lambda s: on_compare(None, s, True), shown, [compare_table, compare_lists],
                           api_visibility="private")


def compare_evaluation(runner: EvaluationRunner, run: FinishedRun | None, files: Any = None,
                       use_previous: bool = False) -> tuple[dict[str, list] | None, str]:
    """A finished run compared with uploaded earlier predictions or the run before it on this server.

    Returns the deltas table and the fixed/broken lists as HTML, or ``(None, why not)``.
    A ``.meta.json`` uploaded with the predictions adds the settings that changed.
    """
    import tempfile

    from citeqa.app.evaluate_tab import comparison_html, comparison_table, shown_error
    from citeqa.app.messages import EVALUATE
    from citeqa.app.server import discard_uploads
    from citeqa.evaluation.compare import compare_runs, load_predictions
    from citeqa.evaluation.report import meta_path

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
        comparison = compare_runs(old_records, run.records(), old_provenance=old_provenance,
                                  new_provenance=run.provenance)
        return comparison_table(comparison), comparison_html(comparison, label)
    finally:
        discard_uploads(p for p, _ in uploaded)


def _api(gr, holder: EngineHolder) -> None:
    """The named ``/ask`` endpoint: (question, history, k, language) -> answer record.

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
    api_btn.click(lambda q, h, kk, lang: ask_record(holder, q, h, kk, lang), [api_q, api_h, api_k, api_lang],
                  api_out, api_name="ask", preprocess=False)
    blocks = get_blocks_context().root_block
    check_count = blocks.validate_inputs

    def pad_missing(block_fn, inputs: list) -> None:  # Gradio's BlockFunction
        if block_fn.api_name == "ask" and len(inputs) < len(block_fn.inputs):
            inputs.extend([MISSING] * (len(block_fn.inputs) - len(inputs)))  # Gradio reads this same list next
        check_count(block_fn, inputs)

    blocks.validate_inputs = pad_missing


def serve(open_engine: Callable[[], Engine], corpus_dir: Path | None, host: str, port: int,
          auth: tuple[str, str] | None = None, max_upload_bytes: int = DEFAULT_MAX_BYTES,
          allowed_hosts: tuple[str, ...] = (), sock=None,  # socket.socket
          qa_dir: Path | None = None) -> None:
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
    if any(name in engine.data.documents for name in removed):  # killed after the switch, before confirming
        upload(holder, UploadSettings(corpus_dir, max_upload_bytes), [])
    if auth is None and host not in ("127.0.0.1", "localhost", "::1"):
        print(f"citeqa: warning: serving on {host} without --auth; anyone who can reach it can "
              "read and add documents", file=sys.stderr)
    private = not os.environ.get("GRADIO_TEMP_DIR")
    if private:  # uploads in a folder of our own, emptied at start and at exit
        os.environ["GRADIO_TEMP_DIR"] = str(server.private_upload_cache())
        server.sweep_upload_cache(server.upload_cache_dir(), None)
    port = sock.getsockname()[1]
    policy = server.policy_for(host, port, allowed_hosts, uploads=corpus_dir is not None,
                               max_upload_bytes=max_upload_bytes, upload_dir=server.upload_cache_dir())
    evaluation = EvalSettings(qa_dir if qa_dir is not None else default_qa_dir(corpus_dir))
    app = guarded_app(holder, UploadSettings(corpus_dir, max_upload_bytes), policy, auth, evaluation)
    print(f"citeqa: serving on {server.url_of(sock, host)} (Ctrl+C to stop)", file=sys.stderr, flush=True)
    try:
        server.run(app, sock)
    finally:
        app.state.blocks.evaluations.close()  # a run in progress stops; its files go
        if private:
            server.sweep_upload_cache(server.upload_cache_dir(), None)


def guarded_app(holder: EngineHolder, uploads: UploadSettings, policy, auth: tuple[str, str] | None = None,
                evaluation: EvalSettings | None = None):
    """The app as ``citeqa serve`` runs it: :func:`build_app` behind :class:`citeqa.app.server.Guard`.

    The Blocks app is ``.state.blocks`` of the returned server (its runner: ``.state.blocks.evaluations``).
    """
    from citeqa.app import server

    app = build_app(holder, uploads, evaluation)
    app.queue(default_concurrency_limit=4)
    parent = server.build_server(app, policy, auth=auth, css=CSS, max_file_size=uploads.max_bytes)
    parent.state.blocks = app
    return parent
