"""The Gradio app: a chat with cited answers and claim checks, a corpus tab with uploads and
removals, and the ``/ask`` and ``/check`` APIs.

Thin on purpose: answers and checks come from :class:`~citeqa.engine.Engine`, HTML from
:mod:`citeqa.app.display`, citation and conversation formats from :mod:`citeqa.app.evidence`,
uploads are checked and indexed by :mod:`citeqa.app.uploads` and removals by :mod:`citeqa.app.removal`.
"""

from __future__ import annotations

import math
import os
import secrets
import sys
import tempfile
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from citeqa.app import display
from citeqa.app.display import answer_html, engine_language, error_html, labels, user_html
from citeqa.app.eval_runner import EvaluationRunner, FinishedRun
from citeqa.app.uploads import DEFAULT_MAX_BYTES, add_files, summary
from citeqa.engine import Engine
from citeqa.errors import CiteqaError
from citeqa.ingest.budget import ParseBudget
from citeqa.ingest.formats import SUPPORTED_SUFFIXES
from citeqa.messages import EVALUATE, evidence_labels

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
.citeqa-tools {margin-top: 6px; display: flex; flex-wrap: wrap; gap: 6px; align-items: center; font-size: 0.85em;}
.citeqa-tools button {border: 1px solid var(--border-color-primary); border-radius: 6px; padding: 1px 8px;
  background: var(--background-fill-secondary); cursor: pointer; font-size: 0.9em; font-weight: normal;}
.citeqa-formats {flex-basis: 100%;}
.citeqa-formats summary {cursor: pointer; color: var(--link-text-color);}
.citeqa-format {white-space: pre-wrap; font-size: 0.85em; background: var(--background-fill-secondary);
  padding: 4px 6px; border-radius: 6px; margin: 4px 0;}
.citeqa-head b {cursor: pointer;}
.citeqa-relation {border-radius: 6px; padding: 0 6px; font-size: 0.8em; background: #e5e7eb; color: #111827;}
.citeqa-supports {background: #bbf7d0; color: #14532d;}
.citeqa-conflicts {background: #fecaca; color: #7f1d1d;}
.citeqa-verdict-supported {color: #15803d;}
.citeqa-verdict-conflicting {color: #b91c1c;}
.citeqa-verdict-not-found {color: #a16207;}
.citeqa-values {margin-top: 4px; font-size: 0.9em;}
.citeqa-doc {white-space: pre-wrap; max-height: 60vh; overflow-y: auto; line-height: 1.5; padding: 8px 10px;
  border: 1px solid var(--border-color-primary); border-radius: 8px;}
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

#: The sources panel's clicks: copy a citation format to the clipboard (the text stays shown in the
#: fold when the browser refuses), or open the cited document (a "select" event with its place).
SOURCES_JS = """
element.addEventListener('click', async (event) => {
  const copy = event.target.closest('[data-citeqa-copy]');
  if (copy) {
    const tools = copy.closest('.citeqa-tools');
    const pre = tools.querySelector('pre[data-format="' + copy.dataset.citeqaCopy + '"]');
    const text = pre ? pre.textContent : '';
    let done = false;
    try { await navigator.clipboard.writeText(text); done = true; } catch (e) { done = false; }
    if (!done) {
      const fold = tools.querySelector('details'); if (fold) fold.open = true;
      const range = document.createRange(); range.selectNodeContents(pre);
      const sel = window.getSelection(); sel.removeAllRanges(); sel.addRange(range);
      try { done = document.execCommand('copy'); } catch (e) { done = false; }
    }
    copy.dataset.copied = done ? 'yes' : 'no';
    copy.textContent = (done ? '\u2713 ' : '') + copy.dataset.label;
    return;
  }
  const open = event.target.closest('.citeqa-open, .citeqa-head b');
  if (open) {
    const tools = open.closest('.citeqa-source').querySelector('.citeqa-tools');
    if (tools) trigger('select', {doc: tools.dataset.doc, start: Number(tools.dataset.start),
                                  end: Number(tools.dataset.end)});
  }
});
"""

#: The document viewer brings the cited passage into view whenever it shows a document.
VIEWER_JS = """
const show = () => setTimeout(() => {
  const mark = element.querySelector('mark#cited');
  if (mark) mark.scrollIntoView({block: 'center'});
}, 60);
watch('value', show);
show();
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


@dataclass
class TurnResult:
    """One chat turn: the chat, the questions asked, every turn's record, the sources panel, the
    turn's language and whether it was a claim check."""

    messages: list[dict]
    asked: list[str]
    turns: list[dict] = field(default_factory=list)
    sources: str = ""
    lang: str = "en"
    checked: bool = False


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
    :func:`citeqa.answer.claims.looks_like_claim`); the record joins ``turns`` for the downloads."""
    from citeqa.answer.claims import looks_like_claim

    messages, asked, turns = list(messages or []), list(asked or []), list(turns or [])
    engine = holder.engine
    checking = mode == "check" or (mode == "auto" and looks_like_claim(text or ""))
    try:
        if checking:
            record = engine.check(text, k=int(k))
        else:
            record = engine.ask(text, history=tuple(asked), k=int(k), language=engine_language(language))
    except CiteqaError as exc:
        lang = asked and engine.question_language(asked[-1]) or "en"
        messages += [
            {"role": "user", "content": user_html(text or "")},
            {"role": "assistant", "content": error_html(str(exc), lang)},
        ]
        return TurnResult(messages, asked, turns, "", lang, checking)
    docs = engine.data.documents
    if checking:
        infos = _infos(engine, [e.citation.doc_id for e in record.evidence])
        messages += [
            {"role": "user", "content": user_html(record.claim)},
            {"role": "assistant", "content": display.check_html(record)},
        ]
        turns.append({"type": "check", "record": record.to_dict()})
        return TurnResult(
            messages, asked, turns, display.check_sources_html(record, docs, infos), record.language, True
        )
    infos = _infos(engine, [c.doc_id for c in record.citations])
    messages += [
        {"role": "user", "content": user_html(record.question)},
        {"role": "assistant", "content": answer_html(record, show_confidence)},
    ]
    turns.append({"type": "answer", "record": record.to_dict()})
    return TurnResult(
        messages, asked + [record.question], turns, display.answer_sources_html(record, docs, infos), record.language
    )


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
    md, js = folder / "citeqa-conversation.md", folder / "citeqa-conversation.json"
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


def corpus_choices(holder: EngineHolder) -> list[str]:
    """The documents that can be removed: every one in the live index."""
    return sorted(holder.engine.data.documents)


def remove(holder: EngineHolder, settings: UploadSettings, doc_id: Any, confirmed: Any) -> str:
    """Remove one document from the corpus and the index (only when ``confirmed``); the status line."""
    from citeqa.app.removal import remove_document
    from citeqa.errors import UploadError

    if settings.corpus is None:
        return "Removing documents is disabled for this server."
    if not isinstance(doc_id, str) or not doc_id:
        return "Choose a document to remove."
    if confirmed is not True:
        return f"Tick the box to confirm that {doc_id} should be deleted from the corpus folder."
    with holder.index_lock:
        engine = holder.engine
        if engine.index_dir is None:
            return "This index cannot be updated."
        try:
            result = remove_document(
                doc_id, settings.corpus, engine.index_dir, engine.embedder, frozenset(engine.data.documents)
            )
        except UploadError as exc:
            return f"not removed: {exc}"
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
    en, en_ev = labels("en"), evidence_labels("en")
    with gr.Blocks(title="citeqa") as app:
        gr.Markdown(
            "# citeqa\nAsk in Spanish, Portuguese or English, or check a claim. Every answer is copied "
            "from a document, with its sources below."
        )
        with gr.Tab("Chat", id="chat"):
            chat = gr.Chatbot(
                label="citeqa",
                height=380,
                sanitize_html=True,
                latex_delimiters=[],
                elem_id="chat",
                feedback_options=None,
                buttons=["copy"],
            )
            asked, turns, session = gr.State([]), gr.State([]), gr.State("")
            with gr.Row():
                question = gr.Textbox(
                    placeholder=en["placeholder"], show_label=False, scale=6, elem_id="question", max_lines=4
                )
                mode = gr.Radio(_mode_choices("en"), value="ask", label=en_ev["mode"], elem_id="mode", scale=3)
                send = gr.Button(en["ask"], variant="primary", scale=1, elem_id="ask")
            with gr.Row():
                k = gr.Slider(1, 10, value=5, step=1, label=en["passages"], elem_id="k")
                language = gr.Dropdown(
                    list(display.LANGUAGE_CHOICES), value="auto", label=en["language"], elem_id="language"
                )
                confidence = gr.Checkbox(value=True, label=en["show_confidence"], elem_id="confidence")
                clear = gr.Button(en["clear"], elem_id="clear")
            sources = gr.HTML(elem_id="sources", js_on_load=SOURCES_JS)
            with gr.Column(visible=False, elem_id="doc-viewer") as viewer:
                viewer_html = gr.HTML(elem_id="doc-view", js_on_load=VIEWER_JS)
                viewer_close = gr.Button(en_ev["close"], elem_id="doc-close", size="sm")
            with gr.Row():
                download_md = gr.DownloadButton(en_ev["download_md"], elem_id="download-md", size="sm")
                download_json = gr.DownloadButton(en_ev["download_json"], elem_id="download-json", size="sm")
            gr.Examples(EXAMPLES, inputs=question, label="Examples · Ejemplos · Exemplos")
        with gr.Tab("Corpus", id="corpus"):
            table, choices = _corpus_tab(gr, holder, uploads)
        app.load(
            lambda: (corpus_view(holder), gr.update(choices=corpus_choices(holder), value=None)),
            None,
            [table, choices],
            api_visibility="private",
        )  # fresh on every visit
        with gr.Tab(EVALUATE["tab"], id="evaluate"):
            _evaluate_tab(gr, app, runner, evaluation)

        def relabel(lang: str) -> list[Any]:
            lab, ev = labels(lang), evidence_labels(lang)
            return [
                gr.update(value=lab["ask"]),
                gr.update(value=lab["clear"]),
                gr.update(label=lab["passages"]),
                gr.update(label=lab["language"]),
                gr.update(label=lab["show_confidence"]),
                gr.update(label=ev["mode"], choices=_mode_choices(lang)),
            ]

        def turn(q, md, m, a, t, sess, kk, lang, conf):
            out = conversation_turn(holder, q, md, m, a, t, kk, lang, conf)
            sess = sess or secrets.token_hex(12)
            try:
                md_path, json_path = download_files(holder, out.turns, sess)
            except (CiteqaError, OSError) as exc:
                print(f"citeqa: conversation download not written: {exc}", file=sys.stderr)
                md_path, json_path = None, None
            ev = evidence_labels(out.lang)
            hint = ev["check_placeholder"] if md == "check" else labels(out.lang)["placeholder"]
            return [
                out.messages,
                out.asked,
                out.turns,
                sess,
                out.sources,
                gr.update(value="", placeholder=hint),
                gr.update(value=md_path, label=ev["download_md"]),
                gr.update(value=json_path, label=ev["download_json"]),
                *relabel(out.lang),
            ]

        outputs = [
            chat,
            asked,
            turns,
            session,
            sources,
            question,
            download_md,
            download_json,
            send,
            clear,
            k,
            language,
            confidence,
            mode,
        ]
        inputs = [question, mode, chat, asked, turns, session, k, language, confidence]
        send.click(turn, inputs, outputs, api_visibility="private")
        question.submit(turn, inputs, outputs, api_visibility="private")
        clear.click(
            lambda: ([], [], [], "", "", gr.update(value=None), gr.update(value=None), gr.update(visible=False)),
            None,
            [chat, asked, turns, sources, question, download_md, download_json, viewer],
            api_visibility="private",
        )
        mode.change(
            lambda md: gr.update(
                placeholder=evidence_labels("en")["check_placeholder"] if md == "check" else en["placeholder"]
            ),
            mode,
            question,
            api_visibility="private",
        )

        def show_document(evt):
            html, error = open_document(holder, getattr(evt, "_data", None))
            return gr.update(visible=True), html or error_html(error)

        show_document.__annotations__ = {"evt": gr.EventData}  # a real class: the module's annotations are strings

        sources.select(show_document, None, [viewer, viewer_html], api_visibility="private")
        viewer_close.click(lambda: gr.update(visible=False), None, viewer, api_visibility="private")
        _api(gr, holder)
    app.evaluations = runner
    return app


def _mode_choices(lang: str) -> list[tuple[str, str]]:
    ev = evidence_labels(lang)
    return [(ev["mode_ask"], "ask"), (ev["mode_check"], "check"), (ev["mode_auto"], "auto")]


def _corpus_tab(gr, holder: EngineHolder, uploads: UploadSettings):
    """The indexed documents, the upload box that adds to them and the removal of one; returns the
    table and the removal's document choice."""
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
        gr.Markdown("Uploads are disabled for this server.")
        return table, gr.Dropdown(choices=[], visible=False)
    limit = uploads.max_bytes / 1_048_576
    files = gr.File(
        file_count="multiple",
        file_types=list(SUPPORTED_SUFFIXES),
        label=f"Add documents ({' '.join(SUPPORTED_SUFFIXES)}, up to {limit:.0f} MB each)",
        elem_id="upload",
    )
    with gr.Row():
        add = gr.Button("Add to the index", variant="primary", elem_id="add")
        refresh = gr.Button("Re-scan corpus folder", elem_id="refresh")
    status = gr.Textbox(label="Upload status", interactive=False, lines=3, elem_id="upload-status")
    with gr.Row():
        choice = gr.Dropdown(
            choices=corpus_choices(holder), value=None, label="Remove a document", elem_id="remove-doc", scale=4
        )
        confirm = gr.Checkbox(
            value=False, label="Yes, delete this file from the corpus folder", elem_id="remove-confirm", scale=3
        )
        removal = gr.Button("Remove", variant="stop", elem_id="remove", scale=1)
    removal_status = gr.Textbox(label="Removal status", interactive=False, elem_id="remove-status")

    def refreshed_choices():
        return gr.update(choices=corpus_choices(holder), value=None)

    def on_add(chosen, progress=gr.Progress(track_tqdm=True)):
        return [*upload(holder, uploads, chosen, progress), refreshed_choices()]

    def on_refresh(progress=gr.Progress(track_tqdm=True)):
        return [*upload(holder, uploads, [], progress), refreshed_choices()]

    def on_remove(doc_id, confirmed):
        message = remove(holder, uploads, doc_id, confirmed)
        left = corpus_choices(holder)
        keep = doc_id if doc_id in left else None  # a refused removal keeps the choice for the second click
        return message, corpus_view(holder), gr.update(choices=left, value=keep), gr.update(value=False)

    add.click(on_add, files, [status, table, skipped, choice], api_visibility="private")
    refresh.click(on_refresh, None, [status, table, skipped, choice], api_visibility="private")
    removal.click(on_remove, [choice, confirm], [removal_status, table, choice, confirm], api_visibility="private")
    return table, choice


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
        qa_upload = gr.File(
            label=lab["upload"], file_types=[".jsonl", ".csv"], file_count="single", elem_id="eval-upload", height=120
        )
        with gr.Column():
            shipped = gr.Dropdown(
                view.shipped_qa_files(settings.qa_dir),
                value=None,
                label=lab["shipped"],
                elem_id="eval-shipped",
                interactive=True,
            )
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
        questions = gr.Dataframe(
            headers=view.QUESTION_HEADERS,
            interactive=False,
            wrap=True,
            datatype="str",
            elem_id="eval-questions",
            max_height=420,
            column_widths=["8%", "5%", "13%", "30%", "34%", "10%"],
        )
        detail = gr.HTML(view.detail_html(None), elem_id="eval-detail", js_on_load=None)
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
            view.metrics_table(run.metrics),
            str(files["metrics.png"]),
            str(files["reliability.png"]),
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
            return [view.status_html(current), gr.Timer(active=True), shown_run, *([gr.skip()] * len(shown_outputs))]
        run = runner.finished()
        if run is None or (shown_run is not None and run.run_id == shown_run.run_id):
            return [view.status_html(current), gr.Timer(active=False), shown_run, *([gr.skip()] * len(shown_outputs))]
        return [view.status_html(current), gr.Timer(active=False), run, *show(run)]

    poll_outputs = [status, timer, shown, *shown_outputs]
    timer.tick(refresh, shown, poll_outputs, show_progress="hidden", api_visibility="private")
    app.load(
        lambda shown_run: [*refresh(shown_run), gr.update(choices=view.shipped_qa_files(settings.qa_dir))],
        shown,
        [*poll_outputs, shipped],
        api_visibility="private",
    )

    def on_start(uploaded, choice, shown_run):
        error = start_evaluation(runner, settings, uploaded, choice)
        if error is not None:  # the upload was read and discarded: the box is emptied either way
            return [view.status_html(None, error), gr.skip(), shown_run, gr.skip(), None]
        return [view.status_html(runner.status()), gr.Timer(active=True), None, gr.update(visible=False), None]

    start.click(
        on_start, [qa_upload, shipped, shown], [status, timer, shown, results, qa_upload], api_visibility="private"
    )
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
