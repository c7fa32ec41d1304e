"""``manifest.json``: what an index folder holds and how it was built.

The manifest names the format version, the embedding model and its dimension, the
chunker settings, every document's sha256 and chunk ids, the sha256 of every file in
the folder and the library versions. It is checked whenever an index is opened.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path
from typing import Any

from ..chunking import ChunkerSettings
from ..errors import IndexCorruptError, IndexMismatchError
from ..models import from_dict, to_dict

FORMAT_VERSION = 1
MANIFEST_NAME = "manifest.json"
REBUILD_HINT = "run `citeqa index --rebuild`"
_LIBRARIES = ("citeqa", "sentence-transformers", "faiss-cpu", "bm25s", "PyStemmer",
              "lingua-language-detector", "langchain-text-splitters", "numpy")


@dataclass(frozen=True, slots=True)
class DocEntry:
    """One indexed document: enough to tell whether its file changed."""

    doc_id: str
    sha256: str
    title: str
    lang: str
    kind: str
    chunk_ids: tuple[str, ...]
    indexed_at: str


@dataclass(frozen=True, slots=True)
class Manifest:
    """The self-description of an index folder."""

    model: str
    dimension: int
    chunker: ChunkerSettings
    documents: tuple[DocEntry, ...]
    ann: str = "flat"
    files: dict[str, str] = field(default_factory=dict)
    versions: dict[str, str] = field(default_factory=dict)
    created_at: str = ""
    format_version: int = FORMAT_VERSION

    @property
    def chunk_count(self) -> int:
        return sum(len(d.chunk_ids) for d in self.documents)


def now_iso() -> str:
    """The current UTC time, to the second, ISO 8601."""
    return datetime.now(timezone.utc).replace(microsecond=0).isoformat()


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
        raise IndexMismatchError(
            f"index format version {version!r} is not the supported {FORMAT_VERSION}; {REBUILD_HINT}")
    try:
        return from_dict(Manifest, data)
    except (TypeError, KeyError, ValueError, AttributeError) as exc:
        raise IndexCorruptError(f"{path} is malformed ({exc}); {REBUILD_HINT}") from exc


def check_model(manifest: Manifest, model: str | None, dimension: int | None = None) -> None:
    """Refuse an index built with another model or vector size than the one asked for."""
    if model is not None and model != manifest.model:
        raise IndexMismatchError(
            f"index was built with model {manifest.model!r}, not {model!r}; "
            f"{REBUILD_HINT} --model {model}, or drop --model")
    if dimension is not None and dimension != manifest.dimension:
        raise IndexMismatchError(
            f"index vectors have dimension {manifest.dimension}, the model gives {dimension}; {REBUILD_HINT}")
