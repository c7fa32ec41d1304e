"""What every reader returns (:class:`Extracted`) and the limits every reader checks.

Apart from :mod:`citeqa.ingest.readers` so that the format modules (office, epub, blocks,
archive) use them without importing the readers that import them.
"""

from __future__ import annotations

from dataclasses import dataclass

from citeqa.errors import DocumentError
from citeqa.messages import Said
from citeqa.records import PageSpan, SectionSpan


@dataclass(frozen=True, slots=True)
class Extracted:
    """What a reader makes of a file: the text, where its pages and sections lie, its title."""

    text: str
    pages: tuple[PageSpan, ...] = ()
    sections: tuple[SectionSpan, ...] = ()
    title: str = ""


#: Text one file may yield, in characters: about 500 book pages, at most ~1,400 passages of
#: 800 characters, about a minute of embedding at the ~20 passages/s of the default model on
#: 2 cores (docs/benchmarks.md). The file-size limit alone does not bound this: a 57 KB PDF
#: of compressed text expanded to 2.1 million characters, 2,896 passages and 131 s of indexing.
MAX_TEXT_CHARS = 1_000_000


def check_text_size(chars: int) -> None:
    """DocumentError when a file yields more than :data:`MAX_TEXT_CHARS` characters of text."""
    if chars > MAX_TEXT_CHARS:
        raise DocumentError(Said("doc_text_chars", chars=f"{chars:,}", limit=f"{MAX_TEXT_CHARS:,}"))


#: Most markup tags (``<``) one HTML page, EPUB or the body of a DOCX/ODT may have: parsers build
#: a tree of them, about 1 KB a tag in BeautifulSoup (a page of tiny paragraphs costs over a hundred times its size),
#: so a tree is built only below this. A long book has a few tens of thousands.
MAX_MARKUP_TAGS = 200_000


def check_markup(kind: str, markup: bytes | str, seen: int = 0) -> int:
    """DocumentError when ``markup`` (after ``seen`` tags elsewhere in the file) has too many tags; the total."""
    total = seen + (markup.count(b"<") if isinstance(markup, bytes) else markup.count("<"))
    if total > MAX_MARKUP_TAGS:
        raise DocumentError(Said("doc_tags", kind=kind, total=f"{total:,}", limit=f"{MAX_MARKUP_TAGS:,}"))
    return total
