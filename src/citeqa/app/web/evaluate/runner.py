"""Evaluations started from the web page: one at a time per server, in a thread of their own.

:class:`EvaluationRunner` runs what ``citeqa eval`` runs (ask every question, grade,
summarise, write the report and the predictions) in a worker thread that is not one of
Gradio's queue workers, so chat requests keep being served while it runs. A second start
while one runs is refused (:class:`RunRefused`); progress is read with :meth:`status`
(the tab polls it); :meth:`cancel` stops the run between two questions; :meth:`pace` is the
time per question an estimate of the next run's time takes.

The engine is taken once, when the run starts: an upload that swaps the live engine
mid-run does not change the index a run is graded against. Each run writes into a folder
of its own under a temporary folder; the previous run's folder is removed when the next
run starts, and the whole temporary folder at exit (:meth:`close`, and ``atexit``).
"""

from __future__ import annotations

import atexit
import shutil
import sys
import tempfile
import threading
import time
import traceback
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from citeqa.errors import CiteqaError
from citeqa.evaluation.grading import TOP_K, QuestionResult
from citeqa.evaluation.metrics import Metrics, summarize
from citeqa.evaluation.qa_file import QAItem
from citeqa.evaluation.report import prediction_record, write_predictions, write_report
from citeqa.evaluation.runner import evaluate
from citeqa.messages import Said

if TYPE_CHECKING:
    from citeqa.app.web.holder import EngineHolder
    from citeqa.engine import Engine
    from citeqa.records import Answer

RUNNING = "running"
DONE = "done"
CANCELLED = "cancelled"
FAILED = "failed"

#: The files a finished run offers for download, by key.
DOWNLOADS = ("report.json", "predictions.jsonl", "predictions.meta.json", "questions.csv")

#: Seconds one question of a run takes (asked, answered with 10 passages and graded) when this server
#: has not run an evaluation yet: a run of eval/qa.jsonl (137 questions) over the shipped corpus with
#: multilingual-e5-small and the reader on, warmed as ``citeqa serve`` warms it, measured with
#: ``PYTHONPATH=src .venv/bin/python bench/eval_rate.py`` (docs/evaluation.md, "Evaluate tab", gives
#: the run and its machine). A larger index or a slower machine takes longer: the page calls it typical.
SECONDS_PER_QUESTION = 0.7


@dataclass(frozen=True)
class Pace:
    """Seconds per question for an estimate of a run's time: this server's last run's (``measured``),
    or :data:`SECONDS_PER_QUESTION`."""

    seconds: float
    measured: bool

    def estimate(self, questions: int) -> float:
        """Seconds a run of ``questions`` would take at this pace."""
        return questions * self.seconds


class RunRefused(CiteqaError):
    """A run cannot start now (another one is running); the message says so."""


@dataclass(frozen=True)
class RunStatus:
    """Where a run is: ``state`` is one of running, done, cancelled, failed."""

    run_id: int
    source: str
    total: int
    done: int
    state: str
    error: str | None = None
    seconds: float = 0.0
    cancelling: bool = False  #: a cancel was asked for; the run stops after the current question

    @property
    def running(self) -> bool:
        return self.state == RUNNING


@dataclass(frozen=True)
class FinishedRun:
    """A completed run: its graded questions, metrics, provenance and the files it wrote."""

    run_id: int
    source: str
    results: tuple[QuestionResult, ...]
    metrics: Metrics
    provenance: dict[str, Any]
    files: dict[str, Path] = field(default_factory=dict)
    seconds: float = 0.0

    def records(self) -> list[dict[str, Any]]:
        """The prediction records (the lines of predictions.jsonl), for comparisons."""
        return [prediction_record(r) for r in self.results]


class EvaluationRunner:
    """One evaluation at a time over the live engine of ``holder``, run in a worker thread."""

    def __init__(self, holder: EngineHolder, k: int = TOP_K, root: Path | None = None) -> None:
        self._holder = holder
        self.k = k
        self._root = root
        self._own_root = root is None
        self._lock = threading.Lock()
        self._cancel = threading.Event()
        self._thread: threading.Thread | None = None
        self._status: RunStatus | None = None
        self._last: FinishedRun | None = None
        self._previous: FinishedRun | None = None
        self._run_dir: Path | None = None  # the folder of the run in progress
        self._done_dir: Path | None = None  # the folder of the last finished run: its files stay while shown
        self._next_id = 1
        self._seconds_per_question: float | None = None  # the last run's, once one answered a question

    # ----------------------------------------------------------------- reading

    def status(self) -> RunStatus | None:
        """The current or last run's status (None before the first run)."""
        with self._lock:
            return self._status

    def pace(self) -> Pace:
        """The time per question of this server's last run that answered one (finished or cancelled:
        its questions' wall time, the report's writing not counted), else :data:`SECONDS_PER_QUESTION`."""
        with self._lock:
            measured = self._seconds_per_question
        return Pace(measured, True) if measured is not None else Pace(SECONDS_PER_QUESTION, False)

    def finished(self) -> FinishedRun | None:
        """The last finished run (None before the first one finishes)."""
        with self._lock:
            return self._last

    def previous(self) -> FinishedRun | None:
        """The run finished before the last one (its files are gone; its results are kept)."""
        with self._lock:
            return self._previous

    def before(self, run: FinishedRun) -> FinishedRun | None:
        """The run finished just before ``run`` (kept for the last run only)."""
        with self._lock:
            return self._previous if self._last is run else None

    # ----------------------------------------------------------------- control

    def start(self, items: Sequence[QAItem], source: str, qa_file: Path | None = None) -> RunStatus:
        """Start evaluating ``items`` (named ``source`` on the page) in the background.

        ``qa_file`` is copied into the run's folder, so its name and sha256 go into the
        provenance even when the original (an upload) is deleted at once. Raises
        :class:`RunRefused` while another run is going on.
        """
        from citeqa.messages import EVALUATE

        items = list(items)
        with self._lock:
            current = self._status
            if current is not None and current.running:
                raise RunRefused(EVALUATE["busy"].format(source=current.source, done=current.done, total=current.total))
            run_id = self._next_id
            self._next_id += 1
            run_dir = self._new_run_dir(run_id)  # the last finished run keeps its files until this one finishes
            copy = None
            if qa_file is not None:
                (run_dir / "input").mkdir()
                copy = Path(shutil.copyfile(qa_file, run_dir / "input" / Path(qa_file).name))
            self._cancel.clear()
            self._status = RunStatus(run_id, source, len(items), 0, RUNNING)
            engine = self._holder.engine  # once: a swap during the run does not change what it grades against
            self._thread = threading.Thread(
                target=self._work,
                args=(run_id, source, engine, items, run_dir, copy),
                name=f"citeqa-eval-{run_id}",
                daemon=True,
            )
            self._thread.start()
            return self._status

    def cancel(self) -> bool:
        """Ask the running evaluation to stop after the current question; False when none runs."""
        with self._lock:
            if self._status is None or not self._status.running:
                return False
            self._cancel.set()
            self._status = replace(self._status, cancelling=True)
            return True

    def wait(self, timeout: float | None = None) -> bool:
        """Wait for the running evaluation to end; whether it has (tests, shutdown)."""
        thread = self._thread
        if thread is not None:
            thread.join(timeout)
            return not thread.is_alive()
        return True

    def close(self, timeout: float = 10.0) -> None:
        """Cancel a running evaluation, wait for it, and remove every file the runs wrote."""
        self.cancel()
        self.wait(timeout)
        with self._lock:
            self._remove_run_dir()
            self._remove_done_dir()
            if self._own_root and self._root is not None:
                shutil.rmtree(self._root, ignore_errors=True)
                self._root = None

    # ----------------------------------------------------------------- the worker

    def _work(
        self, run_id: int, source: str, engine: Engine, items: list[QAItem], run_dir: Path, qa_file: Path | None
    ) -> None:
        from citeqa.evaluation.provenance import collect_provenance

        began = time.monotonic()
        results: list[QuestionResult] = []
        try:
            docs = engine.documents
            texts = {d: doc.text for d, doc in docs.items()}
            langs = {d: doc.lang for d, doc in docs.items()}
            corpus_langs = set(engine.corpus_langs)

            def ask(question: str, history: tuple[str, ...]) -> Answer:
                return engine.ask(question, history=history, k=self.k)

            for item in items:
                if self._cancel.is_set():
                    self._measured(len(results), began)
                    self._end(run_id, CANCELLED, len(results), began)
                    self._discard(run_dir)
                    return
                results += evaluate(ask, [item], texts, corpus_langs, progress=False, doc_langs=langs)
                self._progress(run_id, len(results))
            self._measured(len(results), began)
            metrics = summarize(results)
            provenance = collect_provenance(engine, qa_file, run={"k": self.k, "from": "citeqa serve"})
            settings = {"qa_file": Path(qa_file).name if qa_file else None, "index": engine.index_dir, "k": self.k}
            written = write_report(results, metrics, run_dir, settings, provenance)
            written.append(write_predictions(results, run_dir / "predictions.jsonl", provenance))
            files = {p.name: p for p in written}
            files["predictions.meta.json"] = run_dir / "predictions.meta.json"
        except Exception as exc:  # a failing engine ends the run with its message, never the server
            if not isinstance(exc, CiteqaError):
                traceback.print_exc(file=sys.stderr)
            said = exc.args[0] if len(exc.args) == 1 and isinstance(exc.args[0], Said) else None
            self._end(run_id, FAILED, len(results), began, error=said or str(exc) or type(exc).__name__)
            self._discard(run_dir)
            return
        seconds = time.monotonic() - began
        run = FinishedRun(run_id, source, tuple(results), metrics, provenance, files, seconds)
        with self._lock:
            self._previous, self._last = self._last, run
            self._remove_done_dir()  # the run it replaces on the page: its results stay, its files go
            self._done_dir, self._run_dir = run_dir, None
        self._end(run_id, DONE, len(results), began)

    def _measured(self, done: int, began: float) -> None:
        """Keep the time per question of ``done`` questions asked since ``began`` (:meth:`pace`)."""
        if done > 0:
            with self._lock:
                self._seconds_per_question = (time.monotonic() - began) / done

    def _progress(self, run_id: int, done: int) -> None:
        with self._lock:
            if self._status is not None and self._status.run_id == run_id:
                self._status = replace(self._status, done=done)

    def _end(self, run_id: int, state: str, done: int, began: float, error: str | None = None) -> None:
        with self._lock:
            if self._status is not None and self._status.run_id == run_id:
                self._status = replace(
                    self._status,
                    done=done,
                    state=state,
                    error=error,
                    seconds=time.monotonic() - began,
                    cancelling=False,
                )

    # ----------------------------------------------------------------- folders

    def _new_run_dir(self, run_id: int) -> Path:
        if self._root is None:
            self._root = Path(tempfile.mkdtemp(prefix="citeqa-eval-"))
            atexit.register(shutil.rmtree, self._root, ignore_errors=True)
        self._root.mkdir(parents=True, exist_ok=True)
        self._run_dir = self._root / f"run-{run_id}"
        shutil.rmtree(self._run_dir, ignore_errors=True)
        self._run_dir.mkdir()
        return self._run_dir

    def _remove_run_dir(self) -> None:
        if self._run_dir is not None:
            shutil.rmtree(self._run_dir, ignore_errors=True)
            self._run_dir = None

    def _remove_done_dir(self) -> None:
        if self._done_dir is not None:
            shutil.rmtree(self._done_dir, ignore_errors=True)
            self._done_dir = None

    def _discard(self, run_dir: Path) -> None:
        """A failed or cancelled run's folder goes; the last finished run's stays (it is still shown)."""
        with self._lock:
            shutil.rmtree(run_dir, ignore_errors=True)
            if self._run_dir == run_dir:
                self._run_dir = None
