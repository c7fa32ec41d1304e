"""Reading one file within a memory and time budget, in a worker process of its own.

Parsers build whole trees: a 13 KB EPUB of tiny paragraphs took a server from 568 MB to
1.84 GB for 33 s before the character limit refused it, and the memory was not given
back. :func:`load_bounded` runs :func:`~citeqa.ingest.documents.load_document` in a
fresh Python process whose address space is limited (``RLIMIT_AS``) to what it had after
importing the format's parser plus :attr:`ParseBudget.memory_bytes`, with
:attr:`ParseBudget.seconds` of wall and CPU time from the moment the limits are set (the
worker's start-up, which may be slow on a busy machine, is not part of the budget: it has
:attr:`ParseBudget.startup_s` of its own). The caller's memory never sees the parse; the
worker's is returned to the system when it exits. A file that needs more is refused with
one line (:class:`~citeqa.errors.ParseBudgetError`, whose ``exceeded`` names the limit).
"""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from citeqa.errors import DocumentError, ParseBudgetError
from citeqa.ingest.formats import Format, format_of
from citeqa.messages import Said
from citeqa.records import Document, sha256_file

#: What a worker may take to start (Python and the format's parser), before the budget counts.
STARTUP_S = 60.0
#: Modules each format's reader imports, loaded before the limit is set.
PARSER_MODULES: dict[Format, tuple[str, ...]] = {
    Format.TEXT: ("charset_normalizer",),
    Format.HTML: ("bs4", "charset_normalizer"),
    Format.PDF: ("pypdf",),
    Format.DOCX: ("docx", "lxml.etree"),
    Format.EPUB: ("ebooklib.epub", "bs4", "lxml.etree"),
    Format.ODT: ("lxml.etree",),
}

Loader = Callable[[Path, str, str], Document]
#: What a worker calls to read the file, as ``module:function`` (a :data:`Loader`).
READER = "citeqa.ingest.documents:load_document"


@dataclass(frozen=True)
class ParseBudget:
    """What reading one file may cost beyond the worker's baseline: memory in bytes, and seconds.

    ``startup_s`` is not part of the budget: the time a worker may take to start before it reads
    (on a busy machine, many seconds), after which it is given up on.
    """

    memory_bytes: int = 300 * 1_048_576
    seconds: float = 10.0
    startup_s: float = STARTUP_S

    def too_much_memory(self) -> ParseBudgetError:
        return ParseBudgetError(Said("doc_memory", mb=self.memory_bytes // 1_048_576), "memory")

    def too_slow(self, exceeded: str = "time") -> ParseBudgetError:
        return ParseBudgetError(Said("doc_time", seconds=f"{self.seconds:g}"), exceeded)


def load_bounded(
    path: Path, doc_id: str, default_lang: str = "en", budget: ParseBudget | None = None, *, reader: str = READER
) -> Document:
    """:func:`~citeqa.ingest.documents.load_document` in a worker process within ``budget``.

    ``reader`` names what the worker calls instead (``module:function``, importable there, taking
    ``(path, doc_id, default_lang)``): tests give it one that never ends or never stops allocating.
    """
    return run_worker(path, doc_id, default_lang, budget, reader=reader)[0]


def run_worker(
    path: Path, doc_id: str, default_lang: str = "en", budget: ParseBudget | None = None, *, reader: str = READER
) -> tuple[Document, dict[str, float]]:
    """:func:`load_bounded` with the worker's figures: ``base_mb`` (its RSS when the limit was set),
    ``peak_mb`` (its peak RSS) and ``parse_s`` (seconds of the parse itself)."""
    budget = budget or ParseBudget()
    request = pickle.dumps((str(path), doc_id, default_lang, budget.memory_bytes, budget.seconds, reader))
    package_root = str(Path(__file__).resolve().parents[2])  # so the worker imports this same citeqa
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (package_root, os.environ.get("PYTHONPATH")) if p)}
    try:
        done = subprocess.run(
            [sys.executable, "-c", "from citeqa.ingest.budget import worker; worker()"],
            input=request,
            capture_output=True,
            timeout=budget.startup_s + budget.seconds,
            env=env,
            check=False,
        )
    except subprocess.TimeoutExpired:  # the worker's own limits did not end it: it hung starting or ignored them
        raise budget.too_slow("deadline") from None
    if done.returncode == 0:
        try:
            status, value, stats = pickle.loads(done.stdout)
        except (pickle.UnpicklingError, EOFError, ValueError):
            raise budget.too_much_memory() from None
        if status == "ok":
            return value, stats
        if status == "memory":
            raise budget.too_much_memory()
        raise DocumentError(value)
    if done.returncode in (-24, -14):  # SIGXCPU, SIGALRM
        raise budget.too_slow()
    if done.returncode < 0 or b"MemoryError" in done.stderr:  # killed, or aborted when an allocation failed
        raise budget.too_much_memory()
    last = (done.stderr.decode("utf-8", "replace").strip().splitlines() or ["no message"])[-1]
    raise DocumentError(Said("doc_reader_failed", detail=last[:200]))


def worker() -> None:
    """The worker's side: read the request on stdin, parse within the limits, answer on stdout."""
    import io
    import resource
    import signal
    import traceback

    path, doc_id, default_lang, memory_bytes, seconds, reader = pickle.loads(sys.stdin.buffer.read())
    out = sys.stdout.buffer
    sys.stdout = io.StringIO()  # a parser that prints must not break the answer
    fmt = format_of(Path(path).suffix)
    for module in PARSER_MODULES.get(fmt, ()) if fmt else ():
        __import__(module)
    import importlib

    from citeqa.text.language import detect_lang

    module_name, _, function = reader.partition(":")
    load = getattr(importlib.import_module(module_name), function)
    detect_lang("warm up the language detector before the limit", default_lang)
    base_mb = _status_kb("VmRSS:") / 1024
    resource.setrlimit(resource.RLIMIT_AS, (_status_kb("VmSize:") * 1024 + memory_bytes,) * 2)
    # RLIMIT_CPU counts the process's CPU from its start: the start-up's (imports, the detector,
    # seconds on their own) is added, or a short budget would be spent before the parse began.
    # Whole seconds of CPU; the wall-clock timer below is the exact one.
    used = resource.getrusage(resource.RUSAGE_SELF)
    cpu = int(used.ru_utime + used.ru_stime + seconds) + 1
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    signal.setitimer(signal.ITIMER_REAL, seconds)
    started = time.monotonic()
    try:
        answer = ("ok", load(Path(path), doc_id, default_lang))
    except MemoryError:
        answer = ("memory", "")
    except RecursionError:
        answer = ("error", Said("doc_nested"))
    except DocumentError as exc:  # its message with its key (a Said pickles as one), or its text
        answer = ("error", exc.args[0] if len(exc.args) == 1 and isinstance(exc.args[0], str) else str(exc))
    except Exception as exc:  # a parser bug: the file is refused, the server goes on
        traceback.print_exc(file=sys.stderr)
        answer = ("error", Said("doc_unreadable_file", error=type(exc).__name__))
    signal.setitimer(signal.ITIMER_REAL, 0)
    stats = {
        "base_mb": base_mb,
        "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "parse_s": time.monotonic() - started,
    }
    try:
        data = pickle.dumps((*answer, stats))
    except MemoryError:
        data = pickle.dumps(("memory", "", stats))
    out.write(data)
    out.flush()


def _status_kb(field: str) -> int:
    """A size of this process from ``/proc/self/status`` (``VmSize:``, ``VmRSS:``), in KiB."""
    with open("/proc/self/status", encoding="ascii") as fh:
        for line in fh:
            if line.startswith(field):
                return int(line.split()[1])
    return 0


def sha256_of(path: Path) -> str | None:
    """The file's sha256 (None when it cannot be read)."""
    try:
        return sha256_file(path)
    except OSError:
        return None


def bounded_loader(budget: ParseBudget, trusted: Iterable[str] = ()) -> Loader:
    """A loader for the corpus scan: files whose sha256 is in ``trusted`` (already indexed, so read
    before) in this process, any other in a worker within ``budget``."""
    from citeqa.ingest.documents import load_document

    known = frozenset(trusted)

    def load(path: Path, doc_id: str, default_lang: str = "en") -> Document:
        if sha256_of(path) in known:
            return load_document(path, doc_id, default_lang)
        return load_bounded(path, doc_id, default_lang, budget)

    return load
