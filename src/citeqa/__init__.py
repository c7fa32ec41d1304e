"""citeqa: extractive, cited question answering over a local document collection.

The public API::

    from citeqa import Engine, build_index

    build_index("corpus", "index")            # or update it: only changed documents are embedded
    engine = Engine.open("index")             # settings fitted for the index's model
    answer = engine.ask("¿Cuántos parámetros tiene GLM-5?")
    print(answer.answer, answer.answer_span.doc_id, answer.answer_span.start)
    check = engine.check("GLM-5 tiene unos 744 mil millones de parámetros.")  # a ClaimCheck
    wider = Engine.open("index", overrides={"pool": 20})  # a named change; an unknown name is a ConfigError

Importing the package is cheap: the names below load their modules on first use, and
models, indexes and UI libraries load only when used.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

#: Public name -> the module that defines it.
_EXPORTS = {
    "Engine": "citeqa.engine",
    "Answer": "citeqa.records",
    "Citation": "citeqa.records",
    "Document": "citeqa.records",
    "Chunk": "citeqa.records",
    "Span": "citeqa.records",
    "ClaimCheck": "citeqa.claims.check",
    "Trace": "citeqa.qa.pipeline",
    "AnswerSettings": "citeqa.qa.settings",
    "IndexReport": "citeqa.index.builder",
    "ChunkerSettings": "citeqa.ingest.chunking",
    "ConfigError": "citeqa.errors",
    "Reader": "citeqa.reader.reader",
    "build_index": "citeqa.index.builder",
    "load_embedder": "citeqa.embedding",
    "CiteqaError": "citeqa.errors",
}
__all__ = [
    "Answer",
    "AnswerSettings",
    "ChunkerSettings",
    "Chunk",
    "CiteqaError",
    "Citation",
    "ClaimCheck",
    "ConfigError",
    "Document",
    "Engine",
    "IndexReport",
    "Reader",
    "Span",
    "Trace",
    "__version__",
    "build_index",
    "load_embedder",
]

if TYPE_CHECKING:
    from citeqa.claims.check import ClaimCheck
    from citeqa.embedding import load_embedder
    from citeqa.engine import Engine
    from citeqa.errors import CiteqaError, ConfigError
    from citeqa.index.builder import IndexReport, build_index
    from citeqa.ingest.chunking import ChunkerSettings
    from citeqa.qa.pipeline import Trace
    from citeqa.qa.settings import AnswerSettings
    from citeqa.reader.reader import Reader
    from citeqa.records import Answer, Chunk, Citation, Document, Span


def __getattr__(name: str) -> Any:
    """Load a public name's module on first use (PEP 562)."""
    if name not in _EXPORTS:
        raise AttributeError(f"module 'citeqa' has no attribute {name!r}")
    value = getattr(importlib.import_module(_EXPORTS[name]), name)
    globals()[name] = value
    return value
