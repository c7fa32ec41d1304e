"""The Corpus tab: the indexed documents, the upload box that adds to them and the removal of one.

:func:`upload` and :func:`remove` change the corpus and swap the live engine for one over the new
index (one change at a time: :attr:`~citeqa.app.holder.EngineHolder.index_lock`); the checks and
the indexing are :mod:`citeqa.app.uploads` and :mod:`citeqa.app.removal`. An add holds at most
:attr:`~citeqa.app.holder.UploadSettings.max_files` files, shows its progress file by file, and the
page's Cancel stops it (:class:`RunningAdds`) with nothing of it added.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from citeqa.app import display
from citeqa.app.holder import EngineHolder, UploadSettings
from citeqa.app.upload_cache import discard_uploads, upload_name, upload_path
from citeqa.app.uploads import AddWatch, Report, UploadResult, add_files, summary
from citeqa.ingest.formats import SUPPORTED_SUFFIXES
from citeqa.messages import corpus_labels


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


def upload(
    holder: EngineHolder,
    settings: UploadSettings,
    files: list[Any] | None,
    progress: Report | None = None,
    cancelled: Callable[[], bool] | None = None,
):
    """Add uploaded files (or, with none, re-scan the corpus) and swap in the new index.

    ``progress(done, total, text)`` hears of each file; once ``cancelled()`` is true the add stops
    and adds nothing. Returns the status line(s), the corpus table and the skipped files' HTML.
    """
    lab = corpus_labels("en")
    if settings.corpus is None:
        return lab["uploads_off"], corpus_view(holder), ""
    pairs = [(Path(upload_path(f)), upload_name(f)) for f in (files or [])]
    if len(pairs) > settings.max_files:  # refused before anything is read; the uploads stay for a smaller add
        return lab["too_many_files"].format(n=len(pairs), limit=settings.max_files), corpus_view(holder), ""
    quiet = AddWatch()
    watch = AddWatch(progress or quiet.report, cancelled or quiet.cancelled)
    if not _take(holder.index_lock, watch, len(pairs)):
        return lab["cancelled"], corpus_view(holder), ""
    try:
        result = _add(holder, settings, pairs, watch)
    finally:
        holder.index_lock.release()
    if result.cancelled:
        return lab["cancelled"], corpus_view(holder), ""
    if pairs:
        discard_uploads(source for source, _ in pairs)  # the upload cache keeps no copy once handled
    status = "\n".join(summary(result)) if files else (result.error or "index refreshed")
    return status, corpus_view(holder), display.skipped_html(result.skipped)


def _take(lock: threading.Lock, watch: AddWatch, total: int) -> bool:
    """Wait for ``lock`` (another add or removal may hold it) unless the add is cancelled first."""
    if lock.acquire(blocking=False):
        return True
    watch.report(0, total, corpus_labels("en")["step_waiting"])
    while not lock.acquire(timeout=0.25):
        if watch.cancelled():
            return False
    return True


def _add(holder: EngineHolder, settings: UploadSettings, pairs: list[tuple[Path, str]], watch: AddWatch):
    """:func:`~citeqa.app.uploads.add_files` into the live index, swapping in the new one (lock held)."""
    engine = holder.engine
    if engine.index_dir is None:
        return UploadResult(error=corpus_labels("en")["fixed_index"])
    result = add_files(
        pairs, settings.corpus, engine.index_dir, engine.embedder, settings.max_bytes, watch, settings.budget
    )
    if result.indexed:
        holder.swap(engine.reload())
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


def corpus_tab(gr, holder: EngineHolder, uploads: UploadSettings):
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
    shown = {"types": " ".join(SUPPORTED_SUFFIXES), "mb": f"{uploads.max_bytes / 1_048_576:.0f}"}
    shown["files"] = str(uploads.max_files)
    files = gr.File(
        file_count="multiple",
        file_types=list(SUPPORTED_SUFFIXES),
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

    def named(key: str, field: str = "label"):
        return lambda lang: gr.update(**{field: corpus_labels(lang)[key].format(**shown)})

    relabels = [
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
    _add_events(gr, holder, uploads, _AddParts(files, add, cancel, refresh, status, table, skipped, choice))

    def on_remove(doc_id, confirmed):
        message = remove(holder, uploads, doc_id, confirmed)
        left = corpus_choices(holder)
        keep = doc_id if doc_id in {value for _, value in left} else None  # refused: kept for the second click
        return message, corpus_view(holder), gr.update(choices=left, value=keep), gr.update(value=False)

    removal.click(on_remove, [choice, confirm], [removal_status, table, choice, confirm], api_visibility="private")
    return table, choice, relabels


def _add_events(gr, holder: EngineHolder, uploads: UploadSettings, parts: _AddParts) -> None:
    """Wire Add (progress per file), Cancel (the page's own add) and Re-scan."""
    adds = RunningAdds()
    outputs = [parts.status, parts.table, parts.skipped, parts.choice]

    def refreshed_choices():
        return gr.update(choices=corpus_choices(holder), value=None)

    def on_add(chosen, request, progress=gr.Progress(track_tqdm=True)):
        with adds.running(_session(request)) as stop:
            return [*upload(holder, uploads, chosen, _bar(progress), stop.is_set), refreshed_choices()]

    def on_cancel_add(request):
        lab = corpus_labels("en")
        return lab["cancelling"] if adds.cancel(_session(request)) else lab["nothing_to_cancel"]

    def on_refresh(request, progress=gr.Progress(track_tqdm=True)):
        with adds.running(_session(request)) as stop:
            return [*upload(holder, uploads, [], _bar(progress), stop.is_set), refreshed_choices()]

    for fn in (on_add, on_cancel_add, on_refresh):  # real classes: the module's annotations are strings
        fn.__annotations__ = {"request": gr.Request}
    parts.add.click(on_add, parts.files, outputs, api_visibility="private")
    parts.cancel.click(on_cancel_add, None, parts.status, api_visibility="private")
    parts.refresh.click(on_refresh, None, outputs, api_visibility="private")


def _session(request: Any) -> str:
    """The page session of an event (each browser tab has its own)."""
    return str(getattr(request, "session_hash", None) or "")


def _bar(progress) -> Report:
    """The page's progress bar (``gr.Progress``) as an add's report: files done of all, and the step."""

    def report(done: int, total: int, text: str) -> None:
        if total:
            progress((done, total), desc=text, unit="files")
        else:
            progress(None, desc=text)

    return report
