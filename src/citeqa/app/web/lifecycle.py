"""``citeqa serve`` from start to stop: recover interrupted uploads and removals, open and warm the
engine, build the guarded app, serve it until SIGINT or SIGTERM, then stop the Evaluate tab's run.

The upload cache is the CLI's (:func:`citeqa.app.cli.commands.main` makes this process's folder and points
Gradio at it before anything is built); :func:`serve` is told where it is.
"""

from __future__ import annotations

import socket
import sys
from collections.abc import Callable
from pathlib import Path

from citeqa.app.web import serving
from citeqa.app.web.evaluate.runner import EvaluationRunner
from citeqa.app.web.guard.rules import LOOPBACK_NAMES, policy_for
from citeqa.app.web.holder import DEFAULT_EVAL_MAX_QUESTIONS, EngineHolder, EvalSettings, UploadSettings, default_qa_dir
from citeqa.corpus.add import DEFAULT_MAX_BYTES, DEFAULT_MAX_FILES
from citeqa.engine import Engine
from citeqa.errors import ReaderError


def serve(
    open_engine: Callable[[], Engine],
    corpus_dir: Path | None,
    host: str,
    port: int,
    auth: tuple[str, str] | None = None,
    max_upload_bytes: int = DEFAULT_MAX_BYTES,
    allowed_hosts: tuple[str, ...] = (),
    sock: socket.socket | None = None,
    qa_dir: Path | None = None,
    forwarded_allow_ips: tuple[str, ...] = (),
    reader_required: bool = False,
    max_upload_files: int = DEFAULT_MAX_FILES,
    eval_max_questions: int = DEFAULT_EVAL_MAX_QUESTIONS,
) -> None:
    """Open the engine (``open_engine``), warm the model, and serve the app until interrupted.

    ``sock`` is the listening socket (``serving.bind``, made by the CLI before the model
    loads so that a busy port is reported at once); without it one is bound here.
    ``qa_dir`` holds the QA files the Evaluate tab offers (default: ``eval/`` beside the corpus);
    ``max_upload_files`` is the most files one add may hold, ``eval_max_questions`` the most questions
    one Evaluate-tab run may take. A reader that cannot load is answered
    without (a warning says so) unless ``reader_required`` (``--reader on``), when the error stops
    the server before it serves.
    """
    from citeqa.app.web import memory
    from citeqa.app.web.ui import guarded_app

    sock = sock if sock is not None else serving.bind(host, port)
    holder = _open(open_engine, corpus_dir, max_upload_bytes, reader_required)
    if auth is None and host not in LOOPBACK_NAMES:
        print(
            f"citeqa: warning: serving on {host} without --auth; anyone who can reach it can read and add documents",
            file=sys.stderr,
        )
    policy = policy_for(
        host,
        sock.getsockname()[1],
        allowed_hosts,
        uploads=corpus_dir is not None,
        max_upload_bytes=max_upload_bytes,
        forwarded_allow_ips=forwarded_allow_ips,
    )
    evaluation = EvalSettings(
        qa_dir if qa_dir is not None else default_qa_dir(corpus_dir), max_questions=eval_max_questions
    )
    uploads = UploadSettings(corpus_dir, max_upload_bytes, max_upload_files)
    runner = EvaluationRunner(holder, evaluation.k)
    app = guarded_app(holder, uploads, policy, auth, evaluation, runner)
    print(f"citeqa: serving on {serving.url_of(sock, host)} (Ctrl+C to stop)", file=sys.stderr, flush=True)
    trimmer = memory.Trimmer(lambda: idle(holder)).start()  # free memory goes back after each burst
    try:
        serving.run(app, sock)
    finally:  # after SIGINT and SIGTERM alike (serving.run raises Terminated for SIGTERM)
        trimmer.stop()
        runner.close()  # a run in progress stops; its files go


def idle(holder: EngineHolder) -> bool:
    """Whether no model call runs or waits in the live engine's work queue (kept across reloads)."""
    work = holder.engine.work
    return work.running() == 0 and work.waiting() == 0


def _open(
    open_engine: Callable[[], Engine], corpus_dir: Path | None, max_upload_bytes: int, reader_required: bool = False
) -> EngineHolder:
    """The warmed engine, after the corpus's interrupted uploads and removals are settled."""
    from citeqa.app.web.corpus.tab import upload
    from citeqa.ingest.pending import recover

    removed = recover(corpus_dir) if corpus_dir is not None else []
    for name in removed:
        print(f"citeqa: removed {name}: its upload was interrupted before it was indexed", file=sys.stderr)
    engine = warmed(open_engine(), reader_required)
    holder = EngineHolder(engine)
    if corpus_dir is not None:
        for name in engine.settle_removals(corpus_dir):
            print(f"citeqa: settled {name}: its removal was interrupted", file=sys.stderr)
    if any(name in engine.documents for name in removed):  # killed after the switch, before confirming
        upload(holder, UploadSettings(corpus_dir, max_upload_bytes), [])
    return holder


def warmed(engine: Engine, reader_required: bool = False) -> Engine:
    """``engine`` warmed up; when its reader cannot load, the engine without it (as ``--reader off``),
    with a warning on stderr, so that the page keeps answering; with ``reader_required`` the error stands."""
    try:
        engine.warm_up()
        return engine
    except ReaderError as exc:
        if reader_required:
            raise
        print(f"citeqa: warning: answering without the reader (as --reader off): {exc}", file=sys.stderr, flush=True)
    engine = engine.without_reader()
    engine.warm_up()
    return engine
