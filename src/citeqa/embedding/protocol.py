"""What every embedder offers: normalised vectors of a fixed dimension, with a model id."""

from __future__ import annotations

from typing import Protocol

import numpy as np


class Embedder(Protocol):
    """Turns texts into L2-normalised float32 vectors of a fixed dimension.

    An embedder may also have a ``backend`` attribute (see :data:`BACKENDS`); one without
    it counts as ``torch``.
    """

    model_id: str

    @property
    def dimension(self) -> int: ...

    def encode(self, texts: list[str], *, progress: bool = False) -> np.ndarray: ...
