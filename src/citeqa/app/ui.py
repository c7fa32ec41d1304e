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
.citeqa-short {font-size: 1.15em;}
.citeqa-sentence {color: var(--body-text-color-subdued); line-height: 1.45;}
mark {background: #fef08a; color: inherit; padding: 0 2px; border-radius: 3px;}
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


def build_app(holder: EngineHolder, uploads: UploadSettings | None = None):
    """The Blocks app: chat with sources and controls, the corpus tab, and the /ask API."""
    import gradio as gr

    uploads = uploads if uploads is not None else UploadSettings()
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
          allowed_hosts: tuple[str, ...] = (), sock=None) -> None:  # socket.socket
    """Open the engine (``open_engine``), warm the model, and serve the app until interrupted.

    ``sock`` is the listening socket (``server.bind``, made by the CLI before the model
    loads so that a busy port is reported at once); without it one is bound here.
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
    app = guarded_app(holder, UploadSettings(corpus_dir, max_upload_bytes), policy, auth)
    print(f"citeqa: serving on {server.url_of(sock, host)} (Ctrl+C to stop)", file=sys.stderr, flush=True)
    try:
        server.run(app, sock)
    finally:
        if private:
            server.sweep_upload_cache(server.upload_cache_dir(), None)


def guarded_app(holder: EngineHolder, uploads: UploadSettings, policy, auth: tuple[str, str] | None = None):
    """The app as ``citeqa serve`` runs it: :func:`build_app` behind :class:`citeqa.app.server.Guard`."""
    from citeqa.app import server

    app = build_app(holder, uploads)
    app.queue(default_concurrency_limit=4)
    return server.build_server(app, policy, auth=auth, css=CSS, max_file_size=uploads.max_bytes)
