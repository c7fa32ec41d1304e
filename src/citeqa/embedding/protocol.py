"""What every embedder offers: normalised vectors of a fixed dimension, with a model id."""

from __future__ import annotations

from typing import Protocol

import numpy as np


class Embedder(Protocol):
    """Turns texts into L2-normalised float32 vectors of a fixed dimension.

    An embedder may also have a ``backend`` attribute (see :data:`BACKENDS`); one without
    it counts as ``torch``. One whose model embeds questions differently from passages (e5's
    "query:" prefix) also has ``encode_queries(texts)``; see :func:`encode_queries`.
    """

    model_id: str

    @property
    def dimension(self) -> int: ...

    def encode(self, texts: list[str], *, progress: bool = False) -> np.ndarray: ...


def encode_queries(embedder: Embedder, texts: list[str]) -> np.ndarray:
    """Question vectors: the embedder's own ``encode_queries`` if it has one, else ``encode``."""
    own = getattr(embedder, "encode_queries", None)
    return own(texts) if own is not None else embedder.encode(texts)
