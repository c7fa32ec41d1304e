"""The Corpus tab: the indexed documents, the upload box that adds to them and the removal of one.

:func:`upload` and :func:`remove` change the corpus and swap the live engine for one over the new
index (one change at a time: :attr:`~citeqa.app.holder.EngineHolder.index_lock`); the checks and
the indexing are :mod:`citeqa.app.uploads` and :mod:`citeqa.app.removal`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from citeqa.app import display
from citeqa.app.holder import EngineHolder, UploadSettings
from citeqa.app.upload_cache import discard_uploads, upload_name, upload_path
from citeqa.app.uploads import add_files, summary
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


def upload(holder: EngineHolder, settings: UploadSettings, files: list[Any] | None, progress=None):
    """Add uploaded files (or, with none, re-scan the corpus) and swap in the new index."""
    if settings.corpus is None:
        return "Uploads are disabled for this server.", corpus_view(holder), ""
    pairs = [(Path(upload_path(f)), upload_name(f)) for f in (files or [])]
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
        discard_uploads(source for source, _ in pairs)  # the upload cache keeps no copy once handled
    status = "\n".join(summary(result)) if files else (result.error or "index refreshed")
    return status, corpus_view(holder), display.skipped_html(result.skipped)


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
