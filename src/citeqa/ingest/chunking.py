"""Split documents into passages with exact character offsets.

langchain-text-splitters' recursive splitter cuts at paragraphs first, then lines,
then sentences, then words. Each piece is located in the document text, so that
``document.text[chunk.start:chunk.end] == chunk.text`` always holds.
"""

from __future__ import annotations

from dataclasses import dataclass

from citeqa.errors import ConfigError
from citeqa.messages import Said
from citeqa.records import Chunk, Document, Highlight, Span
from citeqa.text.language import detect

#: Paragraph, line, sentence, clause, word: the splitter tries them in this order.
SEPARATORS = ("\n\n", "\n", ". ", "? ", "! ", "; ", ": ", ", ", " ", "")

#: A chunk shorter than this keeps its document's language: too little text to judge.
MIN_CHARS_FOR_DETECTION = 80

#: A passage keeps its document's language unless the detector is this sure of another:
#: stricter than for questions (0.5), since a passage quoting a foreign name or title must
#: not leave its document's language on a coin toss.
PASSAGE_LANGUAGE_CONFIDENCE = 0.6

#: Passages one document may have. With the default 800/100 the text limit
#: (``extracted.MAX_TEXT_CHARS``) stops a file first (~1,430 passages); with small chunk
#: sizes this one does, so one file never costs more than ~75 s of embedding on 2 cores.
MAX_PASSAGES_PER_DOCUMENT = 1_500


@dataclass(frozen=True, slots=True)
class ChunkerSettings:
    """Passage size and overlap in characters (docs/evaluation.md, "Answer quality", says how they were chosen)."""

    size: int = 800
    overlap: int = 100

    def __post_init__(self) -> None:
        if self.size < 50:
            raise ConfigError(f"chunk size must be at least 50 characters, got {self.size}")
        if not 0 <= self.overlap < self.size:
            raise ConfigError(f"chunk overlap must be in [0, size), got {self.overlap}")


def split_spans(text: str, settings: ChunkerSettings) -> list[Highlight]:
    """Each passage of ``text`` (offsets into it); passages are stripped of blanks."""
    from langchain_text_splitters import RecursiveCharacterTextSplitter

    splitter = RecursiveCharacterTextSplitter(
        chunk_size=settings.size,
        chunk_overlap=settings.overlap,
        separators=list(SEPARATORS),
        keep_separator="end",
        strip_whitespace=True,
    )
    spans: list[Highlight] = []
    cursor = 0
    for piece in splitter.split_text(text):
        start = text.find(piece, cursor)  # each piece starts after the previous one
        if start < 0:
            raise AssertionError(f"splitter produced text not in the document: {piece[:40]!r}")
        spans.append(Highlight(start, start + len(piece)))
        cursor = start + 1
    return spans


def check_passages(document: Document, settings: ChunkerSettings) -> int:
    """The number of passages of ``document``; DocumentError when above :data:`MAX_PASSAGES_PER_DOCUMENT`."""
    return len(_checked_spans(document, settings))


def passage_spans(document: Document, settings: ChunkerSettings) -> list[Span]:
    """Where each passage of ``document`` lies in it (:func:`split_spans` of its text)."""
    return [Span(document.doc_id, at.start, at.end) for at in split_spans(document.text, settings)]


def _checked_spans(document: Document, settings: ChunkerSettings) -> list[Span]:
    from citeqa.errors import DocumentError

    spans = passage_spans(document, settings)
    if len(spans) > MAX_PASSAGES_PER_DOCUMENT:
        raise DocumentError(
            Said("doc_passages", count=f"{len(spans):,}", limit=f"{MAX_PASSAGES_PER_DOCUMENT:,}", size=settings.size)
        )
    return spans


def chunk_document(document: Document, settings: ChunkerSettings, *, checked: bool = False) -> list[Chunk]:
    """The passages of one document, each tagged with its own detected language.

    With ``checked``, a document over :data:`MAX_PASSAGES_PER_DOCUMENT` raises DocumentError
    before any passage's language is detected (the text is split once either way).
    """
    spans = _checked_spans(document, settings) if checked else passage_spans(document, settings)
    chunks = []
    for span in spans:
        text = document.text[span.start : span.end]
        chunks.append(Chunk.make(span.doc_id, span.start, span.end, text, chunk_language(text, document.lang)))
    return chunks


def chunk_language(text: str, doc_lang: str) -> str:
    """The language of a passage: detected when long enough and clear, else the document's."""
    if len(text) < MIN_CHARS_FOR_DETECTION:
        return doc_lang
    found = detect(text)
    return found.lang if found.lang is not None and found.confidence >= PASSAGE_LANGUAGE_CONFIDENCE else doc_lang
