"""The Corpus tab: the indexed documents, the upload box that adds to them and the removal of one.

:func:`upload` and :func:`remove` change the corpus and swap the live engine for one over the new
index (one change at a time: :attr:`~citeqa.app.web.holder.EngineHolder.index_lock`); the change itself
is the engine's (:meth:`~citeqa.engine.Engine.add`, :meth:`~citeqa.engine.Engine.remove`: the checks
and the indexing of :mod:`citeqa.corpus.add` and :mod:`citeqa.corpus.remove`). An add holds at most
:attr:`~citeqa.app.web.holder.UploadSettings.max_files` files, shows its progress file by file, and the
page's Cancel stops it (:class:`RunningAdds`) with nothing of it added.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from citeqa.app.web.corpus import view
from citeqa.app.web.holder import EngineHolder, UploadSettings
from citeqa.app.web.table import Table
from citeqa.app.web.upload_cache import discard_uploads, upload_name, upload_path
from citeqa.corpus.add import AddWatch, Report, UploadResult, said, summary
from citeqa.ingest.formats import SUPPORTED_SUFFIXES
from citeqa.messages import corpus_labels, error_said


def corpus_view(holder: EngineHolder, lang: str = "en") -> Table:
    """The corpus table for the live index: headers in ``lang`` and one row per document."""
    rows = view.corpus_rows(holder.engine.manifest.documents)
    return {"headers": view.corpus_headers(lang), "data": rows}


def corpus_choices(holder: EngineHolder) -> list[tuple[str, str]]:
    """The documents that can be removed: every one in the live index, named by title and file."""
    docs = holder.engine.documents
    return [view.document_choice(d, docs[d].title) for d in sorted(docs)]


def remove(holder: EngineHolder, settings: UploadSettings, doc_id: Any, confirmed: Any, lang: str = "en") -> str:
    """Remove one document from the corpus and the index (only when ``confirmed``) and swap in the engine
    over the new index; the status line in ``lang``."""
    from citeqa.errors import UploadError

    lab = corpus_labels(lang)
    if settings.corpus is None:
        return lab["removal_off"]
    if not isinstance(doc_id, str) or not doc_id:
        return lab["choose"]
    if confirmed is not True:
        return lab["tick"].format(doc=doc_id)
    with holder.index_lock:
        engine = holder.engine
        if not engine.corpus_changeable:
            return lab["fixed_index"]
        try:
            result, live = engine.remove(doc_id, settings.corpus)
        except UploadError as exc:
            return lab["not_removed"].format(error=error_said(exc, lang))
        if live is not engine:  # removed: the new generation is live
            holder.swap(live)
    return said(result.message, lang)


def upload(
    holder: EngineHolder,
    settings: UploadSettings,
    files: list[Any] | None,
    progress: Report | None = None,
    cancelled: Callable[[], bool] | None = None,
    lang: str = "en",
) -> tuple[str, Table, str]:
    """Add uploaded files (or, with none, re-scan the corpus) and swap in the new index.

    ``progress(done, total, text)`` hears of each step (:data:`~citeqa.corpus.add.Report`); once
    ``cancelled()`` is true the add stops and adds nothing. Returns the status line(s), the corpus
    table and the skipped files' HTML, in ``lang``.
    """
    lab = corpus_labels(lang)
    if settings.corpus is None:
        return lab["uploads_off"], corpus_view(holder, lang), ""
    pairs = [(Path(upload_path(f)), upload_name(f)) for f in (files or [])]
    if len(pairs) > settings.max_files:  # refused before anything is read; the uploads stay for a smaller add
        refused = lab["too_many_files"].format(n=len(pairs), limit=settings.max_files)
        return refused, corpus_view(holder, lang), ""
    quiet = AddWatch()
    watch = AddWatch(progress or quiet.report, cancelled or quiet.cancelled, lang)
    if not _take(holder.index_lock, watch, len(pairs)):
        return lab["cancelled"], corpus_view(holder, lang), ""
    try:
        result = _add(holder, settings, pairs, watch)
    finally:
        holder.index_lock.release()
    if result.cancelled:
        return lab["cancelled"], corpus_view(holder, lang), ""
    if pairs:
        discard_uploads(source for source, _ in pairs)  # the upload cache keeps no copy once handled
    status = (
        "\n".join(summary(result, lang)) if files else (said(result.error, lang) if result.error else lab["refreshed"])
    )
    return status, corpus_view(holder, lang), view.skipped_html(result.skipped, lang)


def _take(lock: threading.Lock, watch: AddWatch, total: int) -> bool:
    """Wait for ``lock`` (another add or removal may hold it) unless the add is cancelled first."""
    if lock.acquire(blocking=False):
        return True
    watch.report(0, total, watch.said("step_waiting"))
    while not lock.acquire(timeout=0.25):
        if watch.cancelled():
            return False
    return True


def _add(
    holder: EngineHolder, settings: UploadSettings, pairs: list[tuple[Path, str]], watch: AddWatch
) -> UploadResult:
    """:meth:`~citeqa.engine.Engine.add` to the live engine, swapping in the one it answers with next (lock held)."""
    engine = holder.engine
    if not engine.corpus_changeable:
        return UploadResult(error=watch.said("fixed_index"))
    assert settings.corpus is not None  # upload() adds nothing without one
    result, live = engine.add(pairs, settings.corpus, settings.max_bytes, watch, settings.budget)
    if live is not engine:  # indexed: the new generation is live
        holder.swap(live)
    return result


class RunningAdds:
    """The adds running for each page session, so that a page's Cancel reaches its own add only."""

    def __init__(self) -> None:
        self._running: dict[str, list[threading.Event]] = {}
        self._lock = threading.Lock()

    @contextmanager
    def running(self, session: str) -> Iterator[threading.Event]:
        """An add of ``session`` while the block runs; its event is set when the page cancels it."""
        event = threading.Event()
        with self._lock:
            self._running.setdefault(session, []).append(event)
        try:
            yield event
        finally:
            with self._lock:
                left = [e for e in self._running.get(session, []) if e is not event]
                if left:
                    self._running[session] = left
                else:
                    self._running.pop(session, None)

    def cancel(self, session: str) -> bool:
        """Cancel the adds of ``session``; whether there was one."""
        with self._lock:
            events = list(self._running.get(session, []))
        for event in events:
            event.set()
        return bool(events)


@dataclass(frozen=True)
class _AddParts:
    """The components of the upload box and its status."""

    files: Any
    add: Any
    cancel: Any
    refresh: Any
    status: Any
    table: Any
    skipped: Any
    choice: Any
    lang: Any


def corpus_tab(gr: Any, holder: EngineHolder, uploads: UploadSettings, lang: Any = None) -> tuple[Any, Any, list[Any]]:
    """The indexed documents, the upload box that adds to them and the removal of one; returns the
    table, the removal's document choice and the labels to relabel in the chat's language.

    ``lang`` is the page's language (a ``gr.State``), in which the tab's events answer."""
    lab = corpus_labels("en")
    lang = lang if lang is not None else gr.State("en")
    table = gr.Dataframe(
        headers=view.corpus_headers("en"),
        interactive=False,
        wrap=True,
        elem_id="corpus-table",
        datatype="str",
        column_widths=["44%", "9%", "8%", "19%", "20%"],
    )
    skipped = gr.HTML(elem_id="skipped", js_on_load=None)
    headers = (table, lambda shown_lang: corpus_view(holder, shown_lang))  # the headers come with the rows
    if uploads.corpus is None:
        off = gr.Markdown(lab["uploads_off"])
        said = (off, lambda shown_lang: corpus_labels(shown_lang)["uploads_off"])
        return table, gr.Dropdown(choices=[], visible=False), [headers, said]
    shown = {"types": " ".join(SUPPORTED_SUFFIXES), "mb": f"{uploads.max_bytes / 1_048_576:.0f}"}
    shown["files"] = str(uploads.max_files)
    files = gr.File(  # no file_types: Gradio's box would drop a file of another type (or a fullwidth
        # name) with an English notice; each file reaches the add, which refuses it with its reason
        file_count="multiple",
        label=lab["add_files"].format(**shown),
        elem_id="upload",
    )
    with gr.Row():
        add = gr.Button(lab["add"], variant="primary", elem_id="add")
        cancel = gr.Button(lab["cancel_add"], variant="stop", elem_id="add-cancel")
        refresh = gr.Button(lab["rescan"], elem_id="refresh")
    status = gr.Textbox(label=lab["upload_status"], interactive=False, lines=3, elem_id="upload-status")
    with gr.Row():
        choice = gr.Dropdown(
            choices=corpus_choices(holder), value=None, label=lab["remove_doc"], elem_id="remove-doc", scale=4
        )
        confirm = gr.Checkbox(value=False, label=lab["remove_confirm"], elem_id="remove-confirm", scale=3)
        removal = gr.Button(lab["remove"], variant="stop", elem_id="remove", scale=1)
    removal_status = gr.Textbox(label=lab["removal_status"], interactive=False, elem_id="remove-status")

    def named(key: str, field: str = "label") -> Callable[[str], Any]:
        return lambda shown_lang: gr.update(**{field: corpus_labels(shown_lang)[key].format(**shown)})

    relabels = [
        headers,
        (files, named("add_files")),
        (add, named("add", "value")),
        (cancel, named("cancel_add", "value")),
        (refresh, named("rescan", "value")),
        (status, named("upload_status")),
        (choice, named("remove_doc")),
        (confirm, named("remove_confirm")),
        (removal, named("remove", "value")),
        (removal_status, named("removal_status")),
    ]
    _add_events(gr, holder, uploads, _AddParts(files, add, cancel, refresh, status, table, skipped, choice, lang))

    def on_remove(doc_id: Any, confirmed: Any, shown_lang: str) -> tuple[str, Table, Any, Any]:
        message = remove(holder, uploads, doc_id, confirmed, shown_lang)
        left = corpus_choices(holder)
        keep = doc_id if doc_id in {value for _, value in left} else None  # refused: kept for the second click
        return message, corpus_view(holder, shown_lang), gr.update(choices=left, value=keep), gr.update(value=False)

    outputs = [removal_status, table, choice, confirm]
    removal.click(on_remove, [choice, confirm, lang], outputs, api_visibility="private")
    return table, choice, relabels


def _add_events(gr: Any, holder: EngineHolder, uploads: UploadSettings, parts: _AddParts) -> None:
    """Wire Add (its progress, moving file by file, on the status box only; then the summary there and
    the file box emptied), Cancel (the page's own add) and Re-scan, each answering in the page's language."""
    adds = RunningAdds()
    outputs = [parts.status, parts.table, parts.skipped, parts.choice]

    def refreshed_choices() -> Any:
        return gr.update(choices=corpus_choices(holder), value=None)

    def on_add(chosen: Any, lang: str, request: Any, progress: Any = gr.Progress()) -> list[Any]:
        with adds.running(_session(request)) as stop:
            status, table, skipped = upload(holder, uploads, chosen, _bar(progress), stop.is_set, lang)
        handled = not chosen or len(chosen) <= uploads.max_files  # too many: kept for a smaller add
        return [status, table, skipped, refreshed_choices(), gr.update(value=None) if handled else gr.skip()]

    def on_cancel_add(lang: str, request: Any) -> str:
        lab = corpus_labels(lang)
        return lab["cancelling"] if adds.cancel(_session(request)) else lab["nothing_to_cancel"]

    def on_refresh(lang: str, request: Any, progress: Any = gr.Progress()) -> list[Any]:
        with adds.running(_session(request)) as stop:
            return [*upload(holder, uploads, [], _bar(progress), stop.is_set, lang), refreshed_choices()]

    for fn in (on_add, on_cancel_add, on_refresh):  # real classes: the module's annotations are strings
        fn.__annotations__ = {"request": gr.Request}
    shown = {"show_progress_on": parts.status, "api_visibility": "private"}  # one bar, not one per output
    # The files reach the add as the page sent them (FileData: path and name): gr.File's own preprocess
    # refuses the whole event on the first file whose name does not end in a listed type (``ｒｅｐｏｒｔ．ｔｘｔ``,
    # ``tool.exe``), with its English error and a traceback; the add takes or refuses each file on its own.
    # Gradio still checks that each path is in its upload folder, and the guard that this page uploaded it.
    parts.add.click(on_add, [parts.files, parts.lang], [*outputs, parts.files], preprocess=False, **shown)
    parts.cancel.click(on_cancel_add, parts.lang, parts.status, api_visibility="private")
    parts.refresh.click(on_refresh, parts.lang, outputs, **shown)


def _session(request: Any) -> str:
    """The page session of an event (each browser tab has its own)."""
    return str(getattr(request, "session_hash", None) or "")


def _bar(progress: Callable[..., object]) -> Report:
    """The page's progress bar (``gr.Progress``) as an add's report: the share done (it moves through
    each file, not only between files) and the step."""

    def report(done: float, total: int, text: str) -> None:
        progress(min(max(done / total, 0.0), 1.0) if total else None, desc=text)

    return report
