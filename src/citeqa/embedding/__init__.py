"""Sentence embedders: the :class:`Embedder` protocol, multilingual-e5-small (the default) and
sentence-transformers models (all-MiniLM-L6-v2 ships as a package; any other name or path works).

Importing this package loads no model; an embedder loads its model on first use.
"""

from citeqa.embedding.e5 import E5_MODEL, E5Embedder, is_e5
from citeqa.embedding.protocol import Embedder, encode_queries, token_counter
from citeqa.embedding.sbert import (
    BACKEND_ENV,
    BACKENDS,
    SentenceTransformerEmbedder,
    sbert_backend,
    vector_kind,
)

__all__ = [
    "E5_MODEL",
    "E5Embedder",
    "encode_queries",
    "is_e5",
    "BACKENDS",
    "BACKEND_ENV",
    "DEFAULT_MODEL",
    "Embedder",
    "SentenceTransformerEmbedder",
    "choose_backend",
    "load_embedder",
    "token_counter",
    "vector_kind",
]


#: The model ``citeqa index`` uses unless told otherwise: multilingual-e5-small, for es/pt/en
#: (docs/evaluation.md, "Answer quality", and docs/benchmarks.md give the measurements behind the choice).
DEFAULT_MODEL = E5_MODEL


def load_embedder(model: str = DEFAULT_MODEL) -> Embedder:
    """The embedder for ``model``: multilingual-e5-small on its packaged engine, else a
    sentence-transformers model name or path. Nothing loads until the first encode."""
    return E5Embedder() if is_e5(model) else SentenceTransformerEmbedder(model)


def choose_backend(model: str) -> str:
    """The backend an embedder for ``model`` uses, decided without loading anything."""
    return E5Embedder.backend if is_e5(model) else sbert_backend(model)
