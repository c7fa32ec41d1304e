"""Readers: a file's bytes in, plain text out (:class:`Extracted`).

Text and Markdown are decoded (UTF-8, a byte-order mark, or a detected legacy encoding),
HTML keeps its visible text, PDF its pages' text with the page of every range; DOCX,
ODT (:mod:`~citeqa.ingest.office`) and EPUB (:mod:`~citeqa.ingest.epub`) become blocks
separated by blank lines, with sections. A file a reader cannot use raises
:class:`~citeqa.errors.DocumentError` with the reason in a few words.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from citeqa.errors import DocumentError
from citeqa.ingest.epub import read_epub
from citeqa.ingest.extracted import Extracted, check_markup, check_text_size
from citeqa.ingest.formats import Format
from citeqa.ingest.office import read_docx, read_odt
from citeqa.messages import Said
from citeqa.records import PageSpan, SectionSpan

_WESTERN = ("cp1252", "latin_1", "iso8859_15")
#: Byte-order marks of the wide Unicode encodings; UTF-32 first (its LE mark starts like UTF-16's).
_BOMS = (
    (b"\xff\xfe\x00\x00", "utf-32-le"),
    (b"\x00\x00\xfe\xff", "utf-32-be"),
    (b"\xff\xfe", "utf-16-le"),
    (b"\xfe\xff", "utf-16-be"),
)


def decode_text(raw: bytes) -> str:
    """Decode bytes as UTF-8, else with the encoding charset-normalizer finds.

    UTF-16 and UTF-32 text is read when it starts with its byte-order mark (Windows
    editors save "Unicode" text so). Binary data (NUL bytes otherwise, or mostly control
    characters) is refused.
    """
    for bom, codec in _BOMS:
        if raw.startswith(bom):
            try:
                return _plain_text(raw[len(bom) :].decode(codec))
            except UnicodeDecodeError:
                raise DocumentError(Said("doc_bom", codec=codec.upper())) from None
    if b"\x00" in raw[:65536]:
        raise DocumentError(Said("doc_nul"))
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        from charset_normalizer import from_bytes

        matches = from_bytes(raw)
        best = matches.best()
        if best is None:
            raise DocumentError(Said("doc_encoding")) from None
        for match in matches:  # on a tie (short text) prefer the Western encodings es/pt/en use
            if match.encoding in _WESTERN and match.chaos <= best.chaos and match.coherence >= best.coherence:
                best = match
                break
        text = str(best)
    return _plain_text(text)


def _plain_text(text: str) -> str:
    """Newlines unified; text that is mostly control characters is refused as binary."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    controls = sum(1 for c in text[:65536] if ord(c) < 32 and c not in "\n\t\f")
    if controls > 0.01 * min(len(text), 65536):
        raise DocumentError(Said("doc_control"))
    return text


def read_text(raw: bytes) -> Extracted:
    """A text or Markdown file as it is."""
    return Extracted(decode_text(raw))


#: An ATX heading line ("## Fleet"); the title is what follows the hashes, closing hashes dropped.
MARKDOWN_HEADING = re.compile(r"^(#{1,6})[ \t]+(.+?)(?:[ \t]+#+)?[ \t]*$", re.M)
_FENCE = re.compile(r"^[ \t]*(```|~~~)", re.M)


def markdown_headings(text: str) -> list[tuple[int, int, str]]:
    """(level, start, title) of every heading line of a Markdown text outside fenced code."""
    fences = [m.start() for m in _FENCE.finditer(text)]
    closed = list(zip(fences[::2], fences[1::2] + [len(text)] * (len(fences) % 2)))
    return [
        (len(m.group(1)), m.start(), m.group(2).strip())
        for m in MARKDOWN_HEADING.finditer(text)
        if not any(a <= m.start() < b for a, b in closed)
    ]


def read_markdown(raw: bytes) -> Extracted:
    """A Markdown file as it is (offsets stay those of the file), with sections from its headings.

    As for Word files, the top heading level used opens sections; a lone first heading above
    a lower outline ("# Title", then "## Fleet", "## Routes") is the title, and the level
    below it opens the sections.
    """
    text = decode_text(raw)
    found = markdown_headings(text)
    if not found:
        return Extracted(text)
    levels = [level for level, _, _ in found]
    top, title = min(levels), ""
    if levels.count(top) == 1 and levels[0] == top and len(set(levels)) > 1:
        title = found[0][2]
        top = min(level for level in levels if level > top)
    starts = [(start, name) for level, start, name in found if level == top]
    ends = [start for start, _ in starts[1:]] + [len(text)]
    sections = tuple(
        SectionSpan(start, start + len(text[start:end].rstrip()), name[:200])
        for (start, name), end in zip(starts, ends)
    )
    return Extracted(text, sections=sections, title=title[:200])


_BLANKS = re.compile(r"[ \t\xa0]+")
_MANY_NEWLINES = re.compile(r"\n{3,}")


def read_html(raw: bytes) -> Extracted:
    """Visible text of an HTML page: no scripts, styles or templates; blocks on lines."""
    from bs4 import BeautifulSoup

    check_markup("HTML", raw)
    soup = BeautifulSoup(decode_text(raw), "html.parser")
    title = soup.title.get_text(" ", strip=True) if soup.title else ""
    for tag in soup(["script", "style", "noscript", "template", "head", "svg", "iframe"]):
        tag.decompose()
    text = soup.get_text("\n")
    lines = (_BLANKS.sub(" ", line).strip() for line in text.split("\n"))
    body = _MANY_NEWLINES.sub("\n\n", "\n".join(lines)).strip()
    return Extracted(body, title=title[:200])


def read_pdf(raw: bytes) -> Extracted:
    """Text of each PDF page joined by blank lines, remembering where each page lies."""
    import io

    from pypdf import PdfReader
    from pypdf.errors import PyPdfError

    try:
        reader = PdfReader(io.BytesIO(raw))
        texts, total = [], 0
        for page in reader.pages:  # stop at the limit: compressed text can expand a lot
            texts.append((page.extract_text() or "").strip())
            total += len(texts[-1]) + 2
            check_text_size(total)
        metadata = reader.metadata
        meta_title = str(metadata.title).strip()[:200] if metadata is not None and metadata.title else ""
    except (
        PyPdfError,
        ValueError,
        KeyError,
        TypeError,
        OSError,
        AttributeError,
        IndexError,
        RecursionError,
        ZeroDivisionError,
        NotImplementedError,
    ) as exc:  # malformed PDFs raise any of these
        raise DocumentError(Said("doc_unreadable_kind", kind="PDF", error=type(exc).__name__)) from exc
    parts: list[str] = []
    spans: list[PageSpan] = []
    offset = 0
    for number, page_text in enumerate(texts, start=1):
        if parts:
            parts.append("\n\n")
            offset += 2
        parts.append(page_text)
        spans.append(PageSpan(offset, offset + len(page_text), number))
        offset += len(page_text)
    return Extracted("".join(parts), pages=tuple(spans), title=meta_title)


#: The reader of every format in :mod:`citeqa.ingest.formats`.
READERS: dict[Format, Callable[[bytes], Extracted]] = {
    Format.TEXT: read_text,
    Format.MARKDOWN: read_markdown,
    Format.HTML: read_html,
    Format.PDF: read_pdf,
    Format.DOCX: read_docx,
    Format.EPUB: read_epub,
    Format.ODT: read_odt,
}
