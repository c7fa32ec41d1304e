"""What every part of the app shares: the live engine (:class:`EngineHolder`) and the server's
settings for uploads (:class:`UploadSettings`) and the Evaluate tab (:class:`EvalSettings`).

Its own module so that the tabs, the API and the evaluation runner import it without importing
each other (the evaluation runner and ``ui`` imported one another before).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path

from citeqa.app.web.upload_cache import UPLOAD_MAX_AGE_S
from citeqa.corpus.add import DEFAULT_MAX_BYTES, DEFAULT_MAX_FILES
from citeqa.engine import Engine
from citeqa.errors import ConfigError
from citeqa.ingest.budget import ParseBudget

#: Answering events (``/ask`` and the chat's turn) share one Gradio concurrency group this
#: wide, so that a request reaches the engine's work queue, which orders the model calls (the
#: least-served question first), instead of waiting in Gradio's first-come queue behind every
#: request ahead of it (with 4 workers, a normal question waited for three of six worst-case
#: ones). A request waiting in the work queue holds a thread, not the model's working memory.
ANSWER_GROUP = "answering"
ANSWER_CONCURRENCY = 16
#: ``/check`` runs in a group of its own, this wide: sixteen claim checks at once held every worker
#: of the answering group, and a question waited in Gradio's line until they had all but finished.
#: Two: with one or two checks at once a normal question behind sixteen worst ones took 2.9x and
#: 2.8x its time alone, with four 4.1x (bench/check_bounds.py, docs/benchmarks.md); more checks
#: wait in Gradio's line, holding nothing.
CHECK_GROUP = "checking"
CHECK_CONCURRENCY = 2


class EngineHolder:
    """Holds the live engine so an index refresh can swap it without a restart."""

    def __init__(self, engine: Engine) -> None:
        self._engine = engine
        self._lock = threading.Lock()
        self.index_lock = threading.Lock()  # one upload or refresh at a time

    @property
    def engine(self) -> Engine:
        with self._lock:
            return self._engine

    def swap(self, engine: Engine) -> None:
        with self._lock:
            self._engine = engine


#: The most questions one Evaluate-tab run may take (``citeqa serve --eval-max-questions``): the server runs
#: one evaluation at a time, and 60,000 questions held it for hours. 2,000 take about 23 minutes at the
#: typical time per question (:data:`~citeqa.app.web.evaluate.runner.SECONDS_PER_QUESTION`).
DEFAULT_EVAL_MAX_QUESTIONS = 2000


@dataclass(frozen=True)
class EvalSettings:
    """The Evaluate tab: the folder of QA files it offers (None: uploads only), the passages per question,
    and the most questions one run may take (a larger file is refused before it runs; at least 1)."""

    qa_dir: Path | None = None
    k: int = 10  # as `citeqa eval`: MRR@10 needs ten citations
    max_questions: int = DEFAULT_EVAL_MAX_QUESTIONS

    def __post_init__(self) -> None:
        count = self.max_questions
        if isinstance(count, bool) or not isinstance(count, int) or count < 1:  # 0 would refuse every file
            raise ConfigError(
                f"the most questions an evaluation may take must be a whole number of at least 1, got {count!r}"
            )


def default_qa_dir(corpus: Path | None) -> Path | None:
    """``eval/`` beside the corpus folder, when there is one."""
    if corpus is None:
        return None
    folder = Path(corpus).resolve().parent / "eval"
    return folder if folder.is_dir() else None


@dataclass(frozen=True)
class UploadSettings:
    """Where uploads go, how large they may be and how many one add may hold; ``corpus=None``
    disables uploads.

    Gradio deletes the files it wrote to the upload cache (uploads and its copies of the page's
    outputs) once they are ``max_age_s`` old, looking every ``sweep_every_s`` seconds (its
    ``delete_cache``), and all of them when the server stops.
    """

    corpus: Path | None = None
    max_bytes: int = DEFAULT_MAX_BYTES
    max_files: int = DEFAULT_MAX_FILES  # files per add (``--max-upload-files``); more is refused in one line
    budget: ParseBudget | None = field(default_factory=ParseBudget)  # each new file is read in a bounded worker
    max_age_s: int = UPLOAD_MAX_AGE_S
    sweep_every_s: int = 60
