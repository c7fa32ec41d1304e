"""Uploads that are in the corpus folder but not yet confirmed by a finished index update.

An upload is copied into the corpus before the index is rebuilt (the index reads the
corpus folder), and it only counts once that rebuild is live. Until then its name is
listed in a journal, ``corpus/.citeqa-upload-*.pending``, which the uploading process
holds under an exclusive ``flock``. A crash releases the lock, so a journal that can be
locked belongs to an upload that never reported success: its files are skipped by the
corpus scan (:func:`interrupted`) and removed at the next ``citeqa serve``
(:func:`recover`), together with half-copied ``.<name>.part`` files.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import secrets
from pathlib import Path

JOURNAL_PREFIX = ".citeqa-upload-"
JOURNAL_SUFFIX = ".pending"


class Journal:
    """The names of one batch of uploads, locked by this process until :meth:`close`."""

    def __init__(self, corpus: Path) -> None:
        token = f"{os.getpid()}-{secrets.token_hex(4)}"
        staging = corpus / f"{JOURNAL_PREFIX}{token}.new"  # locked before it gets the name others look for
        self.path = corpus / f"{JOURNAL_PREFIX}{token}{JOURNAL_SUFFIX}"
        self._file = open(staging, "a+", encoding="utf-8")  # noqa: SIM115 - held open for the lock's lifetime
        fcntl.flock(self._file.fileno(), fcntl.LOCK_EX)
        os.replace(staging, self.path)

    def add(self, name: str) -> None:
        """Record ``name`` (relative to the corpus) on disk before the file appears under it."""
        self._file.write(name + "\n")
        self._file.flush()
        os.fsync(self._file.fileno())

    def close(self) -> None:
        """The batch is settled (indexed, or its files removed): forget it."""
        with contextlib.suppress(OSError):
            self.path.unlink()
        self._file.close()

    def __enter__(self) -> Journal:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _stale(corpus: Path) -> list[tuple[Path, list[str]]]:
    """Journals whose process is gone (their lock is free), with the names they list."""
    found: list[tuple[Path, list[str]]] = []
    if not corpus.is_dir():
        return found
    for path in sorted(corpus.glob(f"{JOURNAL_PREFIX}*{JOURNAL_SUFFIX}")):
        try:
            with open(path, encoding="utf-8", errors="replace") as fh:
                try:
                    fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    continue  # an upload in progress
                names = [line.strip() for line in fh if line.strip()]
        except OSError:
            continue
        found.append((path, names))
    return found


def interrupted(corpus: Path) -> set[str]:
    """Names (relative to ``corpus``) of files whose upload was interrupted."""
    return {name for _, names in _stale(corpus) for name in names}


def recover(corpus: Path) -> list[str]:
    """Remove the files of interrupted uploads, their partial copies and journals; returns the names removed."""
    removed = []
    root = corpus.resolve() if corpus.is_dir() else corpus
    for journal, names in _stale(corpus):
        for name in names:
            path = root / name
            if path.parent != root:  # the journal is ours, but never follow a name out of the corpus
                continue
            for leftover in (path, path.with_name(f".{path.name}.part")):
                with contextlib.suppress(FileNotFoundError):
                    leftover.unlink()
                    if leftover == path:
                        removed.append(name)
        with contextlib.suppress(OSError):
            journal.unlink()
    return removed
