"""Sentence embedders: the :class:`Embedder` protocol and the sentence-transformers models behind it.

Importing this package loads no model; an embedder loads its model on first use.
"""

from citeqa.embedding.e5 import E5_MODEL, E5Embedder, is_e5
from citeqa.embedding.protocol import Embedder, encode_queries
from citeqa.embedding.sbert import (
    BACKEND_ENV,
    BACKENDS,
    DEFAULT_MODEL,
    SentenceTransformerEmbedder,
    vector_kind,
)
from citeqa.embedding.sbert import choose_backend as _sbert_backend

__all__ = ["E5_MODEL", "E5Embedder", "encode_queries", "is_e5", "BACKENDS", "BACKEND_ENV", "DEFAULT_MODEL", "Embedder", "SentenceTransformerEmbedder", "choose_backend", "load_embedder",
           "vector_kind"]


def load_embedder(model: str = DEFAULT_MODEL) -> Embedder:
    """The embedder for ``model``: multilingual-e5-small on its packaged engine, else a
    sentence-transformers model name or path. Nothing loads until the first encode."""
    return E5Embedder() if is_e5(model) else SentenceTransformerEmbedder(model)


def choose_backend(model: str) -> str:
    """The backend an embedder for ``model`` uses, decided without loading anything."""
    return E5Embedder.backend if is_e5(model) else _sbert_backend(model)
