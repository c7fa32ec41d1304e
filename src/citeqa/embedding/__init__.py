"""Sentence embedders: the :class:`Embedder` protocol and the sentence-transformers models behind it.

Importing this package loads no model; an embedder loads its model on first use.
"""

from citeqa.embedding.protocol import Embedder
from citeqa.embedding.sbert import (
    BACKEND_ENV,
    BACKENDS,
    DEFAULT_MODEL,
    SentenceTransformerEmbedder,
    choose_backend,
    vector_kind,
)

__all__ = ["BACKENDS", "BACKEND_ENV", "DEFAULT_MODEL", "Embedder", "SentenceTransformerEmbedder", "choose_backend", "load_embedder",
           "vector_kind"]


def load_embedder(model: str = DEFAULT_MODEL) -> Embedder:
    """The embedder for a sentence-transformers model name or path (loaded on first use)."""
    return SentenceTransformerEmbedder(model)
