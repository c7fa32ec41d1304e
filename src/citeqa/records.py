"""The data citeqa passes between stages: frozen dataclasses with derived serialisation.

Ids are content hashes, so the same text at the same place always gets the same id,
across runs and machines. ``to_dict``/``from_dict`` are derived from the dataclass
fields, so adding a field never needs a hand-written serialiser.
"""

from __future__ import annotations

import dataclasses
import hashlib
import types
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, Union, overload

from citeqa.text.highlight import Highlight

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

__all__ = [
    "Answer",
    "AnswerBand",
    "Corroboration",
    "Chunk",
    "Citation",
    "Document",
    "DocumentInfo",
    "Highlight",
    "Hit",
    "PageSpan",
    "SectionSpan",
    "Span",
    "content_id",
    "from_dict",
    "sha256_file",
    "sha256_text",
    "to_dict",
]

T = TypeVar("T")


def sha256_text(text: str) -> str:
    """Hex sha256 of a text's UTF-8 bytes."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def sha256_file(path: Path) -> str:
    """Hex sha256 of a file's bytes, read in blocks: the one file digest of citeqa."""
    with path.open("rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()


def content_id(*parts: object) -> str:
    """A short stable id: the first 16 hex digits of the sha256 of the joined parts."""
    joined = "\x1f".join(str(p) for p in parts)
    return sha256_text(joined)[:16]


@overload
def to_dict(obj: DataclassInstance) -> dict[str, Any]: ...
@overload
def to_dict(obj: Any) -> Any: ...
def to_dict(obj: Any) -> Any:
    """Turn a dataclass (or nested tuples/lists/dicts of them) into JSON-ready data."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: to_dict(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
    if isinstance(obj, (list, tuple)):
        return [to_dict(v) for v in obj]
    if isinstance(obj, dict):
        return {k: to_dict(v) for k, v in obj.items()}
    return obj


def from_dict(cls: type[T], data: dict[str, Any]) -> T:
    """Rebuild a dataclass from :func:`to_dict` output; unknown keys are ignored."""
    hints = typing.get_type_hints(cls)
    kwargs = {}
    for f in dataclasses.fields(cls):  # type: ignore[arg-type]
        if f.name in data:
            kwargs[f.name] = _coerce(hints[f.name], data[f.name])
    return cls(**kwargs)


def _coerce(tp: Any, value: Any) -> Any:
    """Convert JSON data to the annotated type (dataclasses, tuples, optionals)."""
    if value is None:
        return None
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin in (Union, types.UnionType):
        inner = [a for a in args if a is not type(None)]
        return _coerce(inner[0], value) if len(inner) == 1 else value
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        return from_dict(tp, value)
    if origin is tuple:
        item = args[0] if args else Any
        return tuple(_coerce(item, v) for v in value)
    return value


@dataclass(frozen=True, slots=True)
class PageSpan:
    """Characters ``[start, end)`` of a document come from page ``page`` (1-based)."""

    start: int
    end: int
    page: int


@dataclass(frozen=True, slots=True)
class SectionSpan:
    """Characters ``[start, end)`` of a document lie in the section ``title`` (a chapter, a top heading)."""

    start: int
    end: int
    title: str


@dataclass(frozen=True, slots=True)
class Document:
    """One source file as plain text. ``doc_id`` is its path relative to the corpus."""

    doc_id: str
    title: str
    text: str
    lang: str
    sha256: str
    kind: str = "txt"
    pages: tuple[PageSpan, ...] = ()
    sections: tuple[SectionSpan, ...] = ()

    def page_at(self, offset: int) -> int | None:
        """The page holding character ``offset``, or None for formats without pages."""
        for span in self.pages:
            if span.start <= offset < span.end:
                return span.page
        return self.pages[-1].page if self.pages and offset >= self.pages[-1].end else None

    def section_at(self, offset: int) -> str | None:
        """The title of the section holding character ``offset``, or None (no section there)."""
        for span in self.sections:
            if span.start <= offset < span.end:
                return span.title
        return None


@dataclass(frozen=True, slots=True)
class DocumentInfo:
    """What a citation names besides the passage: the document's title, file (``doc_id``),
    language, kind (txt, pdf, docx...), when it was indexed (ISO 8601, from the manifest)
    and the sha256 of its text."""

    doc_id: str
    title: str
    lang: str
    kind: str
    indexed_at: str
    sha256: str = ""


@dataclass(frozen=True, slots=True)
class Chunk:
    """A passage: ``document.text[start:end] == text`` holds exactly."""

    chunk_id: str
    doc_id: str
    start: int
    end: int
    text: str
    lang: str

    @staticmethod
    def make(doc_id: str, start: int, end: int, text: str, lang: str) -> Chunk:
        """Build a chunk whose id hashes its document, place and text."""
        return Chunk(content_id(doc_id, start, end, text), doc_id, start, end, text, lang)

    def text_at(self, start: int, end: int) -> str:
        """The document's characters ``[start, end)`` (document offsets, inside this chunk)."""
        return self.text[start - self.start : end - self.start]

    @property
    def span(self) -> Span:
        """Where this passage lies in its document."""
        return Span(self.doc_id, self.start, self.end)


@dataclass(frozen=True, slots=True)
class Hit:
    """A retrieved chunk with its fused score and the signals behind it."""

    chunk: Chunk
    score: float
    dense: float = 0.0
    lexical: float = 0.0
    row: int = -1  #: the chunk's row in its index (its vector's id), -1 when unknown


@dataclass(frozen=True, slots=True)
class Citation:
    """A cited passage: ``text == document.text[start:end]``."""

    doc_id: str
    title: str
    lang: str
    start: int
    end: int
    text: str
    score: float


@dataclass(frozen=True, slots=True)
class Span:
    """Characters ``[start, end)`` of the document ``doc_id``: where a piece of a record lies, so it
    is shown at its own place, never found again by its text (a sentence can occur twice)."""

    doc_id: str
    start: int
    end: int

    def inside(self, citation: Citation) -> Highlight | None:
        """This span as offsets into ``citation.text`` when the cited passage holds it, else None."""
        if self.doc_id != citation.doc_id or self.start < citation.start or self.end > citation.end:
            return None
        return Highlight(self.start - citation.start, self.end - citation.start)

    def within(self, outer: Span) -> Highlight | None:
        """This span as offsets into the text of ``outer`` (``document_text[outer.start:outer.end]``)
        when ``outer`` holds it, else None."""
        if self.doc_id != outer.doc_id or self.start < outer.start or self.end > outer.end or self.end < self.start:
            return None
        return Highlight(self.start - outer.start, self.end - outer.start)

    def part(self, at: Highlight) -> Span:
        """Offsets ``at`` of this span's text (``document_text[start:end]``) as a span of the same
        document: the way back from :meth:`within`."""
        return Span(self.doc_id, self.start + at.start, self.start + at.end)


@dataclass(frozen=True, slots=True)
class AnswerBand:
    """The band an answer's confidence falls in (``high``, ``likely``, ``unsure``) and how often
    answers in it were right out of fold (``precision``, over ``support`` answers; None: not measured)."""

    name: str
    precision: float | None = None
    support: int | None = None


@dataclass(frozen=True, slots=True)
class Corroboration:
    """The same answer read in another document: ``document_text(doc_id)[start:end] == text``."""

    doc_id: str
    lang: str
    start: int
    end: int
    text: str


@dataclass(frozen=True, slots=True)
class Answer:
    """The answer record every front end shares (CLI ``--json``, UI, API, evaluator)."""

    question: str
    language: str
    answer: str | None
    abstained: bool
    confidence: float
    citations: tuple[Citation, ...] = field(default_factory=tuple)
    latency_ms: float = 0.0
    highlight: Highlight | None = None
    #: The shortest verbatim phrase of ``answer`` that answers (a number with its unit, a date, a
    #: name); None when the question wants a sentence (why, how) or no such phrase is found.
    #: When set, ``answer[highlight.start:highlight.end] == short_answer``.
    short_answer: str | None = None
    #: Where ``answer`` lies: ``document_text(answer_span.doc_id)[start:end] == answer``, inside the
    #: first citation. None when the record abstains.
    answer_span: Span | None = None
    #: Where ``short_answer`` lies, the same way (inside ``answer_span``); None without a short answer.
    short_answer_span: Span | None = None
    #: The band of ``confidence`` (None when the record abstains).
    band: AnswerBand | None = None
    #: Other documents that give the same answer (their own words for it), best first.
    also_in: tuple[Corroboration, ...] = ()

    def answer_in(self, citation: Citation) -> Highlight | None:
        """Where ``answer`` lies in ``citation.text`` (offsets), when that passage holds its place."""
        return self.answer_span.inside(citation) if self.answer_span is not None and not self.abstained else None

    def to_dict(self) -> dict[str, Any]:
        """The JSON record (docs/chat-and-api.md describes its fields)."""
        return to_dict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Answer:
        """Inverse of :meth:`to_dict`."""
        return from_dict(cls, data)
