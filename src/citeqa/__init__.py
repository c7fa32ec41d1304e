"""citeqa: extractive, cited question answering over a local document collection.

The public API::

    from citeqa import Engine, build_index

    build_index("corpus", "index")            # or update it: only changed documents are embedded
    engine = Engine.open("index")
    answer = engine.ask("¿Cuántos parámetros tiene GLM-5?")
    print(answer.answer, answer.citations[0].doc_id, answer.citations[0].start)

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
    "Trace": "citeqa.answer.pipeline",
    "AnswerSettings": "citeqa.answer.pipeline",
    "Reader": "citeqa.reader.reader",
    "build_index": "citeqa.index.builder",
    "load_embedder": "citeqa.embedding",
    "CiteqaError": "citeqa.errors",
}
__all__ = [
    "Answer",
    "AnswerSettings",
    "Chunk",
    "CiteqaError",
    "Citation",
    "Document",
    "Engine",
    "Reader",
    "Trace",
    "__version__",
    "build_index",
    "load_embedder",
]

if TYPE_CHECKING:
    from citeqa.answer.pipeline import AnswerSettings, Trace
    from citeqa.embedding import load_embedder
    from citeqa.engine import Engine
    from citeqa.errors import CiteqaError
    from citeqa.index.builder import build_index
    from citeqa.reader.reader import Reader
    from citeqa.records import Answer, Chunk, Citation, Document


def __getattr__(name: str) -> Any:
    """Load a public name's module on first use (PEP 562)."""
    if name not in _EXPORTS:
        raise AttributeError(f"module 'citeqa' has no attribute {name!r}")
    value = getattr(importlib.import_module(_EXPORTS[name]), name)
    globals()[name] = value
    return value
