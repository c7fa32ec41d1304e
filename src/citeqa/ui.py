"""The Gradio chat page. Thin: it calls the engine and renders with :mod:`citeqa.display`."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from .display import answer_html, safe, sources_html
from .engine import Engine
from .errors import CiteqaError

CSS = """
.citeqa-source {border: 1px solid var(--border-color-primary); border-radius: 8px; padding: 8px 10px; margin: 8px 0;}
.citeqa-passage {margin-top: 6px; line-height: 1.45;}
.citeqa-badge {background: #fde68a; color: #713f12; border-radius: 6px; padding: 0 6px; font-size: 0.8em;}
mark {background: #fef08a; color: inherit; padding: 0 2px; border-radius: 3px;}
"""

EXAMPLES = [
    "¿Cuántos parámetros tiene GLM-5?",
    "Qual chip a Baidu está testando?",
    "How much does the GLM-Image API charge per image?",
]


class EngineHolder:
    """Holds the live engine so an index refresh can swap it without a restart."""

    def __init__(self, engine: Engine) -> None:
        self._engine = engine
        self._lock = threading.Lock()

    @property
    def engine(self) -> Engine:
        with self._lock:
            return self._engine

    def swap(self, engine: Engine) -> None:
        with self._lock:
            self._engine = engine


def ask_record(holder: EngineHolder, question: str, history: list[str] | None = None, k: int = 5) -> dict[str, Any]:
    """The ``/ask`` API: the answer record as JSON, or ``{"error": message}``."""
    try:
        return holder.engine.ask(question, history=tuple(history or ()), k=int(k)).to_dict()
    except CiteqaError as exc:
        return {"error": str(exc)}


def chat_turn(holder: EngineHolder, question: str, messages: list[dict], asked: list[str], k: int):
    """One chat turn: the reply goes into the chat, the sources into the panel below."""
    messages = list(messages or [])
    asked = list(asked or [])
    try:
        answer = holder.engine.ask(question, history=tuple(asked), k=int(k))
    except CiteqaError as exc:
        messages += [{"role": "user", "content": safe(question or "")},
                     {"role": "assistant", "content": f"<em>{safe(str(exc))}</em>"}]
        return messages, asked, "", ""
    messages += [{"role": "user", "content": safe(question)},
                 {"role": "assistant", "content": answer_html(answer)}]
    engine = holder.engine
    pages = [engine.data.documents[c.doc_id].page_at(c.start) if c.doc_id in engine.data.documents else None
             for c in answer.citations]
    return messages, asked + [question], sources_html(answer, pages), ""


def build_app(holder: EngineHolder):  # noqa: ANN201 - gr.Blocks
    """The Blocks app: chat, sources, passage count, clear button, and the /ask API."""
    import gradio as gr

    with gr.Blocks(title="citeqa") as app:
        gr.Markdown("# citeqa\nAsk in Spanish, Portuguese or English. Every answer is copied from a document, with its source.")
        chat = gr.Chatbot(label="citeqa", height=380, sanitize_html=True, latex_delimiters=[])
        asked = gr.State([])
        with gr.Row():
            question = gr.Textbox(placeholder="Ask a question…", show_label=False, scale=8, elem_id="question")
            send = gr.Button("Ask", variant="primary", scale=1, elem_id="ask")
        with gr.Row():
            k = gr.Slider(1, 10, value=5, step=1, label="Passages")
            clear = gr.Button("Clear chat")
        sources = gr.HTML(elem_id="sources")
        gr.Examples(EXAMPLES, inputs=question)

        def turn(q, m, a, kk):
            return chat_turn(holder, q, m, a, kk)

        outputs = [chat, asked, sources, question]
        send.click(turn, [question, chat, asked, k], outputs, api_visibility="private")
        question.submit(turn, [question, chat, asked, k], outputs, api_visibility="private")
        clear.click(lambda: ([], [], "", ""), None, outputs, api_visibility="private")

        api_q = gr.Textbox(visible=False)
        api_h = gr.JSON(visible=False)
        api_k = gr.Number(value=5, visible=False)
        api_out = gr.JSON(visible=False)
        api_btn = gr.Button(visible=False)
        api_btn.click(lambda q, h, kk: ask_record(holder, q, h, kk), [api_q, api_h, api_k], api_out, api_name="ask")
    return app


def serve(index_dir: Path, corpus_dir: Path, model: str | None, host: str, port: int) -> None:
    """Open the index, warm the model, and serve the app until interrupted."""
    engine = Engine.open(index_dir, model=model)
    engine.ask("warm up")
    app = build_app(EngineHolder(engine))
    app.queue(default_concurrency_limit=4).launch(server_name=host, server_port=port, css=CSS,
                                                  show_error=False, footer_links=["api"])
