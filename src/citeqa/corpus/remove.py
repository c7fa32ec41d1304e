"""Removing a document from the corpus: only an indexed file inside the corpus folder, then an incremental update.

The file is first renamed to a hidden name beside it (``.<name>.removing``, which the corpus
scan skips), the index is updated (the file's passages drop out; every other document keeps
its vectors), and only then is the file deleted. If the update fails, the file gets its name
back and the live index is the one it was: nothing is lost. A crash in between leaves the
hidden file; :func:`recover_removals` restores it when the index still lists the document
(the removal never happened) and deletes it otherwise.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from citeqa.corpus.add import Reason, UploadRefusal
from citeqa.errors import CiteqaError

if TYPE_CHECKING:
    from citeqa.embedding import Embedder

REMOVING_SUFFIX = ".removing"


@dataclass(frozen=True)
class RemovalResult:
    """What a removal did: the document removed, or why nothing was."""

    doc_id: str
    removed: bool
    message: str  # a Reason: English as str, :meth:`~citeqa.corpus.add.Reason.said` in the page's language


def corpus_file(corpus: Path, doc_id: str) -> Path:
    """The file of ``doc_id`` (a path relative to ``corpus``); UploadError for anything that is not
    a plain relative path to a file inside the corpus folder."""
    if not isinstance(doc_id, str) or not doc_id.strip():
        raise UploadRefusal("choose a document to remove", "choose")
    pure = PurePosixPath(doc_id)
    if (
        pure.is_absolute()
        or "\\" in doc_id
        or any(part in ("", ".", "..") for part in pure.parts)
        or any(part.startswith(".") for part in pure.parts)
        or "\x00" in doc_id
    ):
        raise UploadRefusal(f"{doc_id!r} is not a document of the corpus", "not_document", doc=repr(doc_id))
    root = corpus.resolve()
    path = root.joinpath(*pure.parts)
    parent = Path(os.path.realpath(path.parent))
    if parent != root and root not in parent.parents:  # a folder inside the corpus that links elsewhere
        raise UploadRefusal(f"{doc_id!r} is not inside the corpus folder", "outside", doc=repr(doc_id))
    if not path.is_file() and not path.is_symlink():
        raise UploadRefusal(f"{doc_id} is not in the corpus folder any more", "gone", doc=doc_id)
    return path


def remove_document(
    doc_id: str, corpus: Path, index_dir: Path, embedder: Embedder, indexed: set[str] | frozenset[str]
) -> RemovalResult:
    """Delete ``doc_id``'s file from ``corpus`` and update the index; ``indexed`` are the documents of
    the live index (a name outside it is refused, so only listed documents can go)."""
    from citeqa.index.builder import update_index

    if doc_id not in indexed:
        raise UploadRefusal(f"{doc_id!r} is not in the index", "not_indexed", doc=repr(doc_id))
    path = corpus_file(corpus, doc_id)
    hidden = path.with_name(f".{path.name}{REMOVING_SUFFIX}")
    os.replace(path, hidden)
    try:
        report = update_index(corpus, index_dir, embedder)
    except BaseException as exc:
        os.replace(hidden, path)  # the live index was never switched: put the file back
        if isinstance(exc, (CiteqaError, OSError)):
            if "no readable document" in str(exc):
                said = Reason(f"not removed {doc_id}: it is the last document of the corpus", "last", doc=doc_id)
            else:
                said = Reason(f"not removed {doc_id}: {exc}", "not_removed", doc=doc_id, detail=exc)
            return RemovalResult(doc_id, False, said)
        raise
    with contextlib.suppress(FileNotFoundError):
        hidden.unlink()
    n, chunks = len(report.documents), report.chunks
    text = f"removed {doc_id} ({n} documents, {chunks} passages left)"
    return RemovalResult(doc_id, True, Reason(text, "removed", doc=doc_id, n=n, chunks=chunks))


def recover_removals(corpus: Path, indexed: set[str] | frozenset[str]) -> list[str]:
    """Settle removals cut short by a crash: restore files the index still lists, delete the others."""
    settled: list[str] = []
    if not corpus.is_dir():
        return settled
    for hidden in corpus.rglob(f".*{REMOVING_SUFFIX}"):
        name = hidden.name[1 : -len(REMOVING_SUFFIX)]
        original = hidden.with_name(name)
        doc_id = original.relative_to(corpus).as_posix()
        with contextlib.suppress(OSError):
            if doc_id in indexed and not original.exists():
                os.replace(hidden, original)
            else:
                hidden.unlink()
            settled.append(doc_id)
    return settled
