"""Adding uploaded files to the corpus: safe names, checks, and an incremental re-index.

A file is checked (type, size, readable by :func:`citeqa.ingest.documents.load_document`)
before anything is written to the corpus, so a refused file never touches the corpus
or the index. If indexing fails, or the user cancels the add (:class:`AddWatch`), the
copied files are removed again; the index itself is written as an atomic generation, so
the live index stays as it was.
"""

from __future__ import annotations

import itertools
import os
import re
import shutil
import tempfile
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from citeqa.errors import CiteqaError, DocumentError, ParseBudgetError, UploadCancelled, UploadError
from citeqa.ingest.budget import Loader, ParseBudget, bounded_loader, load_bounded
from citeqa.ingest.documents import load_document
from citeqa.ingest.formats import SUPPORTED_SUFFIXES
from citeqa.records import sha256_file

if TYPE_CHECKING:  # loaded where used
    import numpy as np

    from citeqa.embedding import Embedder
    from citeqa.index.builder import CorpusRead
    from citeqa.ingest.chunking import ChunkerSettings
    from citeqa.ingest.pending import Journal
    from citeqa.records import Document

ALLOWED_SUFFIXES = SUPPORTED_SUFFIXES
DEFAULT_MAX_BYTES = 20 * 1024 * 1024
#: Files one add may hold: each new file is read twice in a worker of its own (checked, then indexed),
#: a few seconds each, and every other change to the corpus waits for the add to finish.
DEFAULT_MAX_FILES = 20
MAX_NAME_CHARS = 120
#: The most bytes (UTF-8) a saved name may take: a file name may have 255, and a save writes
#: ``.<name>-<n>.part`` beside it first (:func:`free_path`, :func:`save_upload`).
MAX_NAME_BYTES = 200
#: The most characters kept of a name's type (the longest accepted is ``markdown``).
MAX_SUFFIX_CHARS = 16
_UNSAFE = re.compile(r"[^\w.\- ]+")

#: One step of an add: how far it is, in files (a fraction while a file is under way: checking the
#: files takes the first half, reading them for the index most of the rest), files in all, and what is
#: happening now.
Report = Callable[[float, int, str], None]

#: Where each phase of an add starts and how much of it each file takes, in files: checking file ``i``
#: of ``n`` is at ``i * 0.5``, reading it at ``n * 0.5 + i * 0.4``; embedding at ``n * 0.9``, writing
#: the index at ``n * 0.95``, done at ``n``.
CHECKED, READ, EMBEDDED, WRITTEN = 0.5, 0.4, 0.9, 0.95


def _silent(done: float, total: int, text: str) -> None:
    """Report nothing (an add without a page)."""


def _never() -> bool:
    return False


@dataclass(frozen=True)
class AddWatch:
    """What an add tells its caller before each file (``report``) and asks it (``cancelled``).

    A cancelled add stops before its next file or before its new index is written, removes the
    files it copied into the corpus and leaves the live index as it was (:class:`UploadCancelled`).
    """

    report: Report = _silent
    cancelled: Callable[[], bool] = _never
    lang: str = "en"  #: the language the steps are said in

    def said(self, key: str, n: int | None = None, **values: object) -> str:
        """A step of the add as the Corpus tab says it, in :attr:`lang` (``n``: the count it is about)."""
        return _said(key, self.lang, n, **values)

    def step(self, done: float, total: int, text: str) -> None:
        """Report a step; UploadCancelled instead when the add was cancelled."""
        if self.cancelled():
            raise UploadCancelled(f"cancelled after {done} of {total} files")
        self.report(done, total, text)


class Reason(str):
    """Why a file was refused (or an add failed): the English line the CLI and the API give, which also
    carries its catalogue key (``why_<key>`` of the ``corpus_status`` section) and values, so that the
    Corpus tab says it in the page's language (:meth:`said`)."""

    key: str
    values: dict[str, object]

    def __new__(cls, text: str, key: str, **values: object) -> Reason:
        reason = super().__new__(cls, text)
        reason.key, reason.values = key, values
        return reason

    def said(self, lang: str = "en") -> str:
        """The reason as the Corpus tab says it in ``lang``."""
        values = dict(self.values)
        n = values.pop("n", None)  # a count the line is said in the singular or plural by
        return _said("why_" + self.key, lang, n if isinstance(n, int) else None, **values)

    def __reduce__(
        self,
    ) -> tuple[
        Any, tuple[str, str, dict[str, object]]
    ]:  # copied and pickled with its key and values (str's own would drop them)
        return (_reason, (str(self), self.key, self.values))


def _reason(text: str, key: str, values: dict[str, object]) -> Reason:
    return Reason(text, key, **values)


class UploadRefusal(UploadError):
    """An :class:`~citeqa.errors.UploadError` with its :class:`Reason` (its message is the English one)."""

    def __init__(self, text: str, key: str, **values: object) -> None:
        self.reason = Reason(text, key, **values)
        super().__init__(self.reason)


def said(reason: str, lang: str = "en") -> str:
    """A refusal reason or an add's error in ``lang`` when it is a :class:`Reason`, else as it is."""
    return reason.said(lang) if isinstance(reason, Reason) else reason


#: The reader's messages (:class:`~citeqa.messages.Said` keys) that a refusal says in its own words.
_BINARY = frozenset({"doc_nul", "doc_encoding", "doc_control"})
_ENCRYPTED = frozenset({"doc_encrypted_kind", "doc_drm", "doc_odt_encrypted"})


def _document_refusal(name: str, exc: DocumentError, budget: ParseBudget | None) -> UploadRefusal:
    """The refusal of an upload that cannot be read as a document, by what the reader said (its
    message, kept with its key so that the Corpus tab says it in the page's language)."""
    text = f"{name}: {exc}"
    detail = exc.args[0] if len(exc.args) == 1 and isinstance(exc.args[0], str) else str(exc)
    key = getattr(detail, "key", None)
    if isinstance(exc, ParseBudgetError) and budget is not None:
        if exc.exceeded == "memory":
            return UploadRefusal(text, "memory", name=name, mb=budget.memory_bytes // 1_048_576)
        return UploadRefusal(text, "time", name=name, seconds=f"{budget.seconds:g}")
    if key == "doc_no_text":
        return UploadRefusal(text, "no_text", name=name)
    if key in _BINARY:
        return UploadRefusal(text, "binary", name=name)
    if key in _ENCRYPTED:
        return UploadRefusal(text, "encrypted", name=name)
    return UploadRefusal(text, "unreadable", name=name, detail=detail)


def safe_name(name: str) -> str:
    """A plain file name for ``name``: last path part only, no hidden or odd characters.

    ``../../etc/passwd`` becomes ``passwd`` and ``C:\\x\\a.txt`` becomes ``a.txt``. The name is
    NFKC-normalised, so fullwidth forms and ligatures read as the letters they stand for
    (``ｒｅｐｏｒｔ．ｔｘｔ`` is ``report.txt``: its type is found), and cut to whole characters
    within :data:`MAX_NAME_CHARS` and :data:`MAX_NAME_BYTES`. A name with nothing usable left
    before its type (``😀.txt``, ``.txt``) raises :class:`UploadError`.
    """
    base = str(name).replace("\\", "/").split("/")[-1]  # the path separators the client sent, before any folding
    base = unicodedata.normalize("NFKC", base)
    base = _UNSAFE.sub("_", "".join(c for c in base if c.isprintable())).strip(" ")
    stem, dot, suffix = base.rpartition(".")
    if not dot:
        stem, suffix = base, ""
    suffix = suffix.strip(" _").lower()[:MAX_SUFFIX_CHARS]
    stem = _cut(stem.strip(" ._"), MAX_NAME_BYTES - len(suffix.encode()) - 1)
    if not stem:
        raise UploadRefusal(f"unusable file name {name!r}", "name", name=repr(name))
    return f"{stem}.{suffix}" if suffix else stem


def _cut(stem: str, max_bytes: int) -> str:
    """``stem`` cut to whole characters within :data:`MAX_NAME_CHARS` and ``max_bytes`` of UTF-8."""
    stem = stem[:MAX_NAME_CHARS]
    while len(stem.encode()) > max_bytes:
        stem = stem[:-1]
    return stem.rstrip(" ._")


def check_type(name: str) -> str:
    """The lower-case suffix of ``name`` if it is an accepted type, else UploadError."""
    suffix = Path(name).suffix.lower()
    if suffix not in ALLOWED_SUFFIXES:
        accepted = ", ".join(ALLOWED_SUFFIXES)
        text = f"{name}: unsupported type {suffix or '(none)'}; accepted: {accepted}"
        raise UploadRefusal(text, "type" if suffix else "no_type", name=name, suffix=suffix, accepted=accepted)
    return suffix


def check_size(name: str, size: int, max_bytes: int = DEFAULT_MAX_BYTES) -> None:
    """UploadError when ``size`` is zero or above ``max_bytes``."""
    if size <= 0:
        raise UploadRefusal(f"{name}: the file is empty", "empty", name=name)
    if size > max_bytes:
        mb, limit = f"{size / 1_048_576:.1f}", f"{max_bytes / 1_048_576:.0f}"
        raise UploadRefusal(
            f"{name}: too large ({mb} MB; the limit is {limit} MB)", "large", name=name, mb=mb, limit=limit
        )


def target_path(corpus: Path, name: str) -> Path:
    """Where ``name`` goes in ``corpus``: always directly inside it, never outside."""
    root = corpus.resolve()
    path = (root / safe_name(name)).resolve()
    if path.parent != root:
        raise UploadRefusal(f"unusable file name {name!r}", "name", name=repr(name))
    return path


def free_path(path: Path) -> Path:
    """``path``, or ``stem-2.ext``, ``stem-3.ext``… when it is taken."""
    candidate, n = path, 1
    while candidate.exists():
        n += 1
        candidate = path.with_name(f"{path.stem}-{n}{path.suffix}")
    return candidate


def validate(source: Path, name: str, max_bytes: int = DEFAULT_MAX_BYTES, budget: ParseBudget | None = None) -> None:
    """Check an uploaded file under its intended ``name``; UploadError says why not.

    With a ``budget`` the file is read in a worker process within it (:mod:`citeqa.ingest.budget`).
    """
    check_type(name)
    try:
        size = source.stat().st_size
    except OSError as exc:
        detail = exc.strerror or str(exc)
        raise UploadRefusal(f"{name}: cannot read the upload ({detail})", "upload", name=name, detail=detail) from exc
    check_size(name, size, max_bytes)
    with tempfile.TemporaryDirectory(prefix="citeqa-upload-") as tmp:
        staged = Path(tmp) / name  # the reader is chosen by suffix, so read it under its real name
        shutil.copyfile(source, staged)
        try:
            if budget is None:
                load_document(staged, name)
            else:
                load_bounded(staged, name, budget=budget)
        except DocumentError as exc:
            raise _document_refusal(name, exc, budget) from exc


def save_upload(
    source: Path,
    name: str,
    corpus: Path,
    max_bytes: int = DEFAULT_MAX_BYTES,
    journal: Journal | None = None,
    budget: ParseBudget | None = None,
) -> Path | None:
    """Validate and copy one upload into ``corpus``; None when the same file is already there.

    With a ``journal`` the file's name is recorded there before it appears in the corpus,
    so that a crash before the upload is confirmed leaves nothing that counts.
    """
    clean = safe_name(name)
    validate(source, clean, max_bytes, budget)
    wanted = target_path(corpus, clean)
    if wanted.exists() and wanted.is_file() and sha256_file(wanted) == sha256_file(source):
        return None
    final = free_path(wanted)
    if journal is not None:
        journal.add(final.name)
    partial = final.with_name(f".{final.name}.part")  # hidden: a concurrent scan skips it
    shutil.copyfile(source, partial)
    os.replace(partial, final)
    return final


@dataclass
class UploadResult:
    """What one upload did: files added, refused (name, reason), skipped by the index."""

    added: list[str] = field(default_factory=list)
    refused: list[tuple[str, str]] = field(default_factory=list)  # each reason a Reason where the check gave one
    unchanged: list[str] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    error: str | None = None
    indexed: bool = False
    cancelled: bool = False


def add_files(
    files: Sequence[tuple[Path, str]],
    corpus: Path,
    index_dir: Path,
    embedder: Embedder,
    max_bytes: int = DEFAULT_MAX_BYTES,
    watch: AddWatch | None = None,
    budget: ParseBudget | None = None,
) -> UploadResult:
    """Save each ``(temp path, original name)`` into ``corpus`` and update the index.

    With a ``budget`` every file not yet indexed is read in a worker process within it, both
    when it is checked and when the index reads the corpus; already indexed ones are read here.
    ``watch`` hears of each file and may cancel the add: then nothing of it is added.
    """
    from citeqa.ingest.pending import Journal

    try:
        corpus.mkdir(parents=True, exist_ok=True)
        with Journal(corpus) as journal:  # settled (indexed or removed) when this block ends; a crash leaves it
            return _add_files(files, corpus, index_dir, embedder, max_bytes, watch or AddWatch(), journal, budget)
    except OSError as exc:  # a full disk or a read-only corpus folder: nothing was added
        detail = exc.strerror or str(exc)
        text = f"nothing was added: the corpus folder cannot be written ({detail})"
        return UploadResult(error=Reason(text, "unwritable", detail=detail))


def _add_files(
    files: Sequence[tuple[Path, str]],
    corpus: Path,
    index_dir: Path,
    embedder: Embedder,
    max_bytes: int,
    watch: AddWatch,
    journal: Journal,
    budget: ParseBudget | None = None,
) -> UploadResult:
    """:func:`add_files` with the journal that lists each file until the new index is live."""
    from citeqa.index.builder import update_index

    result, saved = UploadResult(), []
    try:
        for i, (source, name) in enumerate(files):
            watch.step(i * CHECKED, len(files), watch.said("step_checking", name=safe_label(name)))
            path = _save_one(Path(source), name, corpus, max_bytes, journal, budget, result)
            if path is not None:
                saved.append(path)
        if files and not saved:
            return result
        steps = _WatchedSteps(embedder, watch, len(saved), budget, index_dir)
        report = update_index(corpus, index_dir, embedder, progress=True, steps=steps)
    except BaseException as exc:
        for path in saved:  # leave the corpus as it was; the index was never switched
            path.unlink(missing_ok=True)
        if isinstance(exc, UploadCancelled):
            return UploadResult(refused=result.refused, cancelled=True)
        if not isinstance(exc, (CiteqaError, OSError)):
            raise
        result.error, result.added = Reason(f"indexing failed, nothing was added: {exc}", "indexing", detail=exc), []
        return result
    result.skipped = [(s.doc_id, s.reason) for s in report.skipped]
    result.indexed = True
    watch.report(len(files), len(files), watch.said("step_done"))
    return result


def _save_one(
    source: Path,
    name: str,
    corpus: Path,
    max_bytes: int,
    journal: Journal | None,
    budget: ParseBudget | None,
    result: UploadResult,
) -> Path | None:
    """Check and copy one upload into ``corpus``, noting the outcome in ``result``; its new path, or
    None when it was refused or is already there."""
    try:
        path = save_upload(source, name, corpus, max_bytes, journal, budget)
    except UploadError as exc:
        result.refused.append((safe_label(name), exc.reason if isinstance(exc, UploadRefusal) else str(exc)))
        return None
    except OSError as exc:  # the disk is full (or the corpus folder read-only): this file is not saved
        _remove_partial(corpus, name)
        label, detail = safe_label(name), exc.strerror or str(exc)
        result.refused.append((label, Reason(f"{label}: not saved ({detail})", "not_saved", name=label, detail=detail)))
        return None
    if path is None:
        result.unchanged.append(safe_name(name))
        return None
    result.added.append(path.relative_to(corpus.resolve()).as_posix())
    return path


class _WatchedSteps:
    """The index build of an add (:class:`~citeqa.index.builder.LocalSteps`) that reports each new
    file it reads and stops, when the add is cancelled, before the next file or the new index."""

    def __init__(
        self, embedder: Embedder, watch: AddWatch, total: int, budget: ParseBudget | None, index_dir: Path
    ) -> None:
        from citeqa.index.builder import LocalSteps

        load = bounded_loader(budget, indexed_shas(index_dir)) if budget is not None else None
        self.watch, self.total = watch, total
        self.reading = total * CHECKED  # where reading starts: the files are checked
        self.steps = LocalSteps(embedder, progress=True, load=self._watched(load))

    def _watched(self, load: Loader | None) -> Loader:
        from citeqa.ingest.documents import load_document

        read, count = load or load_document, itertools.count()

        def watched(path: Path, doc_id: str, default_lang: str = "en") -> Document:
            done = min(next(count), self.total)  # a file dropped into the folder meanwhile is read too
            at = self.reading + done * READ
            self.watch.step(at, self.total, self.watch.said("step_reading", name=safe_label(doc_id)))
            return read(path, doc_id, default_lang)

        return watched

    def read(self, corpus: Path, settings: ChunkerSettings, indexed: Mapping[str, str]) -> CorpusRead:
        return self.steps.read(corpus, settings, indexed)

    def encode(self, texts: list[str]) -> np.ndarray:
        self.watch.step(self.total * EMBEDDED, self.total, self.watch.said("step_embedding", len(texts)))
        vectors = self.steps.encode(texts)
        self.watch.step(self.total * WRITTEN, self.total, self.watch.said("step_writing"))
        return vectors


def _said(key: str, lang: str = "en", n: int | None = None, **values: object) -> str:
    """A line of an add as the Corpus tab says it in ``lang`` (:data:`citeqa.messages.CORPUS_LABELS`);
    with ``n``, in the singular or the plural as ``n`` asks."""
    from citeqa.messages import corpus_labels, counted, said_in

    lab = corpus_labels(lang)
    shown = {name: said_in(value, lang) for name, value in values.items()}  # a reader's message, an error
    return lab[key].format(**shown) if n is None else counted(lab, key, n, **shown)


def _remove_partial(corpus: Path, name: str) -> None:
    """Remove the hidden partial copies a failed save of ``name`` may have left."""
    try:
        stem = target_path(corpus, name)
    except UploadError:
        return
    for partial in stem.parent.glob(f".{stem.stem}*{stem.suffix}.part"):
        partial.unlink(missing_ok=True)


def indexed_shas(index_dir: Path) -> frozenset[str]:
    """The sha256 of every document of the live index (empty when it cannot be read)."""
    from citeqa.index.manifest import read_manifest
    from citeqa.index.store import current_generation

    try:
        live = current_generation(index_dir)
        return frozenset(d.sha256 for d in read_manifest(live).documents) if live is not None else frozenset()
    except CiteqaError:
        return frozenset()


def safe_label(name: str) -> str:
    """A file name for messages: its last path part, printable, cut short."""
    base = str(name).replace("\\", "/").split("/")[-1]
    return "".join(c for c in base if c.isprintable())[:MAX_NAME_CHARS] or "(no name)"


def summary(result: UploadResult, lang: str = "en") -> list[str]:
    """One plain-text line per outcome, for the upload status box, in ``lang``, the reasons a file was
    refused included (:class:`Reason`; only what the system or a reader adds to one, as an OS error's
    text, stays in English)."""
    lines = [_said("added", lang, name=n) for n in result.added]
    lines += [_said("unchanged", lang, name=n) for n in result.unchanged]
    lines += [_said("refused", lang, reason=said(reason, lang)) for _, reason in result.refused]
    if result.error:
        lines.append(said(result.error, lang))
    return lines or [_said("no_file", lang)]
