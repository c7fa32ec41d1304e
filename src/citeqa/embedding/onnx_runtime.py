"""Running a sentence-transformers model on ONNX Runtime: its tokenizer, the exported token vectors
and the model's own pooling, the same computation as sentence-transformers (to ~1e-7).

:func:`onnx_layout` says whether a model folder can run this way (a BERT-type Transformer with
mean or CLS pooling); :class:`OnnxModel` loads the exported file (:mod:`citeqa.embedding.onnx_export`)
and encodes. Answering a question this way never imports torch or sentence-transformers.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from citeqa.embedding.onnx_export import OnnxLayout, exported
from citeqa.embedding.protocol import progress_bar
from citeqa.errors import ModelError

if TYPE_CHECKING:
    from tokenizers import Encoding, Tokenizer

_TRANSFORMER = "sentence_transformers.models.Transformer"
_POOLING = "sentence_transformers.models.Pooling"
_NORMALIZE = "sentence_transformers.models.Normalize"
_EXPORTABLE = {"bert"}  #: model types whose inputs are input_ids, attention_mask, token_type_ids
_WINDOW_BATCHES = 64  #: texts are tokenised this many batches at a time


def _read_json(path: Path) -> object:
    """The JSON value in ``path``; None when it cannot be read."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None


def onnx_layout(folder: Path) -> OnnxLayout | None:
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


class OnnxModel:
    """Tokenizer + ONNX Runtime session + pooling, the same computation as sentence-transformers."""

    def __init__(self, session: Any, tokenizer: Tokenizer, layout: OnnxLayout) -> None:  # session: untyped ORT's
        self.session = session
        self.tokenizer = tokenizer
        self.layout = layout
        self.dimension = layout["dimension"]
        self._inputs = {i.name for i in session.get_inputs()}

    @classmethod
    def load(cls, folder: Path, quantized: bool = False, hint: str = "") -> OnnxModel:
        layout = onnx_layout(folder)
        if layout is None:
            raise ModelError(
                f"the model in {folder} cannot run on ONNX Runtime (not a local BERT-type "
                f"sentence-transformers folder with mean or CLS pooling){hint}"
            )
        try:
            import onnxruntime as ort
            from tokenizers import Tokenizer
        except ImportError as exc:
            raise ModelError(f"the onnx backend needs onnxruntime and tokenizers ({exc.name} is missing)") from exc
        model_file = exported(folder, layout, quantized)
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
        bar = progress_bar(len(texts)) if progress else None
        window = batch_size * _WINDOW_BATCHES
        for first in range(0, len(order), window):
            rows = order[first : first + window]
            encodings = self.tokenizer.encode_batch(
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

    def _forward(self, encodings: list[Encoding]) -> np.ndarray:
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
        hidden = self.session.run(None, {k: v for k, v in feeds.items() if k in self._inputs})[0]
        if self.layout["pooling"] == "cls":
            pooled = hidden[:, 0, :]
        else:
            weights = mask[:, :, None].astype(np.float32)
            pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        vectors: np.ndarray = (pooled / np.clip(norms, 1e-12, None)).astype(np.float32)
        return vectors


def _threads() -> int:
    value = os.environ.get("CITEQA_THREADS", "")
    if value.isdigit() and int(value) > 0:
        return int(value)
    return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1))
