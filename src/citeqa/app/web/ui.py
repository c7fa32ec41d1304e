"""The Gradio app: a chat with cited answers and claim checks, a corpus tab with uploads and
removals, the Evaluate tab, and the ``/ask`` and ``/check`` APIs.

Thin on purpose: this module puts the parts together. The tabs are :mod:`citeqa.app.web.chat.tab`
(turns in :mod:`citeqa.app.web.chat.turns`), :mod:`citeqa.app.web.corpus.tab` and
:mod:`citeqa.app.web.evaluate.tab`; the API is :mod:`citeqa.app.web.api`; styles and scripts are
:mod:`citeqa.app.web.assets`; answers and checks come from :class:`~citeqa.engine.Engine`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from citeqa.app.web.api import add_endpoints
from citeqa.app.web.assets import CSS
from citeqa.app.web.chat.tab import chat_events, chat_layout, visit_language
from citeqa.app.web.corpus.tab import corpus_choices, corpus_tab, corpus_view
from citeqa.app.web.evaluate.runner import EvaluationRunner
from citeqa.app.web.evaluate.tab import evaluate_page
from citeqa.app.web.holder import EngineHolder, EvalSettings, UploadSettings
from citeqa.app.web.table import Table
from citeqa.messages import labels, language_list

if TYPE_CHECKING:  # Gradio and FastAPI load when the app is built
    import gradio as gr
    from fastapi import FastAPI

    from citeqa.app.web.guard.rules import Policy


def build_app(
    holder: EngineHolder,
    uploads: UploadSettings | None = None,
    evaluation: EvalSettings | None = None,
    runner: EvaluationRunner | None = None,
) -> gr.Blocks:
    """The Blocks app: chat (questions and claim checks) with sources, citation tools, the document
    viewer and downloads; the corpus tab; the Evaluate tab; the /ask and /check APIs.

    ``runner`` runs the Evaluate tab's evaluations; whoever passes it ``close()``-s it when the server
    stops (without one the app makes its own, whose files go at exit).
    """
    import gradio as gr

    uploads = uploads if uploads is not None else UploadSettings()
    evaluation = evaluation if evaluation is not None else EvalSettings()
    runner = runner if runner is not None else EvaluationRunner(holder, evaluation.k)
    app: gr.Blocks  # Gradio leaves Blocks.__enter__ unannotated
    with gr.Blocks(title="citeqa", delete_cache=(uploads.sweep_every_s, uploads.max_age_s)) as app:
        subtitle = gr.Markdown(subtitle_text(holder, "en"), elem_id="subtitle")
        with gr.Tab(labels("en")["tab_chat"], id="chat") as chat_tab:
            chat = chat_layout(gr)
        with gr.Tab(labels("en")["tab_corpus"], id="corpus") as corpus:
            table, choices, corpus_relabels = corpus_tab(gr, holder, uploads, chat.shown)

        # fresh on every visit, in the browser's language
        def on_corpus_visit(request: Any) -> tuple[Table, Any]:
            return corpus_view(holder, visit_language(request)), gr.update(choices=corpus_choices(holder), value=None)

        on_corpus_visit.__annotations__ = {"request": gr.Request}  # a real class: the module's annotations are strings
        app.load(on_corpus_visit, None, [table, choices], api_visibility="private")
        with gr.Tab(labels("en")["tab_evaluate"], id="evaluate") as evaluate:
            evaluate_relabels = evaluate_page(gr, app, holder, runner, evaluation, chat.shown)
        page = [
            (subtitle, lambda lang: subtitle_text(holder, lang)),
            (chat_tab, lambda lang: gr.update(label=labels(lang)["tab_chat"])),
            (corpus, lambda lang: gr.update(label=labels(lang)["tab_corpus"])),
            (evaluate, lambda lang: gr.update(label=labels(lang)["tab_evaluate"])),
            *corpus_relabels,
            *evaluate_relabels,
        ]
        chat_events(gr, holder, chat, page, app)
        add_endpoints(gr, holder)
    return app


def subtitle_text(holder: EngineHolder, lang: str) -> str:
    """The page's heading in ``lang``: what it does, and the languages the live collection's documents are
    in (most documents first), so that it never promises languages the collection does not have."""
    lab = labels(lang)
    found = holder.engine.document_langs()
    codes = sorted(found, key=lambda code: (-found[code], code))
    held = f" {lab['subtitle_languages'].format(languages=language_list(codes, lang))}" if codes else ""
    return f"# citeqa\n{lab['subtitle']}{held}"


def guarded_app(
    holder: EngineHolder,
    uploads: UploadSettings,
    policy: Policy,
    auth: tuple[str, str] | None = None,
    evaluation: EvalSettings | None = None,
    runner: EvaluationRunner | None = None,
) -> FastAPI:
    """The app as ``citeqa serve`` runs it: :func:`build_app` (``runner`` as there) behind
    :class:`citeqa.app.web.guard.middleware.Guard`; :func:`citeqa.app.web.server.mounted_blocks` finds
    the Blocks app in it.
    """
    from citeqa.app.web.server import build_server

    app = build_app(holder, uploads, evaluation, runner)
    app.queue(default_concurrency_limit=4)
    return build_server(app, policy, auth=auth, css=CSS, max_file_size=uploads.max_bytes)
