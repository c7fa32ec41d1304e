"""Load a corpus folder into :class:`~citeqa.records.Document` objects.

Every file of a type in :mod:`citeqa.ingest.formats` goes through its reader
(:mod:`citeqa.ingest.readers`). A file that cannot be read is skipped with a one-line
reason and never stops the rest of the corpus.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import stat
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from citeqa.errors import CorpusError, DocumentError
from citeqa.ingest.extracted import check_text_size
from citeqa.ingest.formats import SUPPORTED_SUFFIXES, format_of, suffix_values
from citeqa.ingest.readers import READERS
from citeqa.messages import Said
from citeqa.records import Document, sha256_file
from citeqa.text.language import detect_lang

#: A document's language is detected on its first characters: a few paragraphs decide it,
#: and lingua's cost grows with the text.
LANGUAGE_SAMPLE_CHARS = 4000
MAX_FILE_BYTES = 50 * 1024 * 1024
#: Reads one file: (path, doc_id, default language) -> Document, or DocumentError.
Loader = Callable[[Path, str, str], Document]


@dataclass(frozen=True, slots=True)
class Skipped:
    """A file left out of the index, with the reason in a few words."""

    doc_id: str
    reason: str


@dataclass(frozen=True, slots=True)
class Unchanged:
    """A file whose bytes still have the sha256 it was indexed with: the index keeps its
    document, so the file is hashed but not parsed again."""

    doc_id: str
    sha256: str


@dataclass(frozen=True, slots=True)
class CorpusScan:
    """What a corpus folder holds: readable documents and the files skipped."""

    documents: tuple[Document, ...]
    skipped: tuple[Skipped, ...]


def iter_files(corpus: Path) -> Iterator[Path]:
    """Files under ``corpus`` in a stable order, skipping hidden entries.

    Symlinked folders are not followed, so a link loop cannot trap the walk; they are
    yielded like files so that :func:`scan_corpus` can report them as skipped.
    """
    for root, dirs, files in os.walk(corpus, followlinks=False):
        linked = [d for d in dirs if os.path.islink(os.path.join(root, d))]
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in linked)
        for name in sorted(files + linked):
            if not name.startswith("."):
                yield Path(root) / name


def scan_corpus(corpus: Path, default_lang: str = "en") -> CorpusScan:
    """Read every supported file under ``corpus``; unreadable ones go to ``skipped``."""
    return collect(
        [read_entry(corpus, path, unconfirmed, default_lang) for path, unconfirmed in corpus_entries(corpus)]
    )


def corpus_entries(corpus: Path) -> Iterator[tuple[Path, bool]]:
    """Each file :func:`scan_corpus` considers, in its order, with whether its upload is unconfirmed.

    The listing is cheap; :func:`read_entry` does the work, so a distributed build can
    list here and read elsewhere (``citeqa.index.ray_build``).
    """
    if not corpus.is_dir():
        raise CorpusError(Said("corpus_missing", corpus=corpus, **suffix_values()))
    from citeqa.ingest.pending import interrupted

    unconfirmed = interrupted(corpus)
    for path in iter_files(corpus):
        yield path, path.relative_to(corpus).as_posix() in unconfirmed


def read_entry(
    corpus: Path,
    path: Path,
    unconfirmed: bool = False,
    default_lang: str = "en",
    load: Loader | None = None,
    indexed_sha: str | None = None,
) -> Document | Skipped | Unchanged:
    """One file of the corpus as a Document, or the reason it is skipped; ``load`` reads it
    (default :func:`load_document`; the server's is :func:`citeqa.ingest.budget.bounded_loader`).

    A file whose bytes hash to ``indexed_sha`` (its sha256 in the index) is :class:`Unchanged`:
    hashing it first saves parsing and language detection for every file that did not change.
    """
    doc_id = path.relative_to(corpus).as_posix()
    if unconfirmed:
        return Skipped(
            doc_id, "its upload was interrupted before it was indexed (citeqa serve removes it when it starts)"
        )
    if not _encodable(doc_id):  # the index stores ids as UTF-8 text
        return Skipped(
            os.fsencode(doc_id).decode("utf-8", "backslashreplace"), "file name is not valid UTF-8 (rename the file)"
        )
    if path.is_symlink() and path.is_dir():
        return Skipped(doc_id, "symbolic link to a folder (not followed)")
    if path.suffix.lower() not in SUPPORTED_SUFFIXES:
        return Skipped(doc_id, f"unsupported type {path.suffix or '(none)'}")
    try:
        if indexed_sha is not None and file_sha256(path) == indexed_sha:
            return Unchanged(doc_id, indexed_sha)
        return (load or load_document)(path, doc_id, default_lang)
    except DocumentError as exc:
        return Skipped(doc_id, str(exc))


def collect(entries: Iterable[Document | Skipped | Unchanged]) -> CorpusScan:
    """Documents and skipped files of :func:`read_entry` results, each in the given order (an
    :class:`Unchanged` one is neither)."""
    entries = list(entries)
    return CorpusScan(
        tuple(e for e in entries if isinstance(e, Document)), tuple(e for e in entries if isinstance(e, Skipped))
    )


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def load_document(path: Path, doc_id: str, default_lang: str = "en") -> Document:
    """Read one file into a Document; raises :class:`DocumentError` with the reason."""
    raw = _read_bytes(path)
    suffix = path.suffix.lower()
    fmt = format_of(suffix)
    if fmt is None:
        raise DocumentError(Said("doc_type", suffix=suffix or Said("none")))
    found = READERS[fmt](raw)
    text = found.text
    if not text.strip():
        raise DocumentError(Said("doc_no_text"))
    check_text_size(len(text))
    return Document(
        doc_id=doc_id,
        title=found.title or first_line(text) or path.name,
        text=text,
        lang=detect_lang(text[:LANGUAGE_SAMPLE_CHARS], default_lang),
        sha256=hashlib.sha256(raw).hexdigest(),
        kind=suffix.lstrip("."),
        pages=found.pages,
        sections=found.sections,
    )


def _read_bytes(path: Path) -> bytes:
    """The file's bytes, with size, emptiness and access problems as DocumentError."""
    with _file_errors():
        _check_file(path)
        return path.read_bytes()


def file_sha256(path: Path) -> str:
    """The sha256 of the file's bytes (read in blocks), with the checks and errors of :func:`load_document`."""
    with _file_errors():
        _check_file(path)  # before opening: opening a FIFO would block
        return sha256_file(path)


def _check_file(path: Path) -> None:
    """Raise DocumentError for a broken link, a non-regular, empty or too large file."""
    if path.is_symlink() and not path.exists():
        raise DocumentError(Said("doc_broken_link"))
    info = path.stat()
    if not stat.S_ISREG(info.st_mode):
        raise DocumentError(Said("doc_not_regular"))
    size = info.st_size
    if size == 0:
        raise DocumentError(Said("doc_empty"))
    if size > MAX_FILE_BYTES:
        raise DocumentError(Said("doc_too_large", mb=size // 1_048_576, limit=MAX_FILE_BYTES // 1_048_576))


@contextlib.contextmanager
def _file_errors() -> Iterator[None]:
    """Errors of reading a file as DocumentError with the reason in a few words."""
    try:
        yield
    except FileNotFoundError as exc:
        raise DocumentError(Said("doc_disappeared")) from exc
    except PermissionError as exc:
        raise DocumentError(Said("doc_permission")) from exc
    except OSError as exc:
        raise DocumentError(Said("doc_os_error", detail=exc.strerror or str(exc))) from exc


def first_line(text: str, limit: int = 200) -> str:
    """The first non-empty line, without Markdown heading marks, cut to ``limit``."""
    for line in text.splitlines():
        line = line.strip().lstrip("#").strip()
        if line:
            return line[:limit]
    return ""
