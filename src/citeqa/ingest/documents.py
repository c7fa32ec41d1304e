"""Load a corpus folder into :class:`~citeqa.records.Document` objects.

Readers turn .txt, .md, .html/.htm and .pdf files into plain text. A file that cannot
be read is skipped with a one-line reason and never stops the rest of the corpus.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from citeqa.errors import CorpusError, DocumentError
from citeqa.text.language import detect_lang
from citeqa.records import Document, PageSpan

TEXT_SUFFIXES = (".txt", ".md", ".markdown")
HTML_SUFFIXES = (".html", ".htm")
PDF_SUFFIXES = (".pdf",)
SUPPORTED_SUFFIXES = TEXT_SUFFIXES + HTML_SUFFIXES + PDF_SUFFIXES
MAX_FILE_BYTES = 50 * 1024 * 1024
#: Text one file may yield, in characters: about 500 book pages, at most ~1,400 passages of
#: 800 characters, about a minute of embedding at the ~20 passages/s of the default model on
#: 2 cores (docs/benchmarks.md). The file-size limit alone does not bound this: a 57 KB PDF
#: of compressed text expanded to 2.1 million characters, 2,896 passages and 131 s of indexing.
MAX_TEXT_CHARS = 1_000_000


@dataclass(frozen=True, slots=True)
class Skipped:
    """A file left out of the index, with the reason in a few words."""

    doc_id: str
    reason: str


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
    if not corpus.is_dir():
        raise CorpusError(f"corpus folder not found: {corpus} (create it and add .txt, .md, .html or .pdf files)")
    docs: list[Document] = []
    skipped: list[Skipped] = []
    from citeqa.ingest.pending import interrupted

    unconfirmed = interrupted(corpus)
    for path in iter_files(corpus):
        doc_id = path.relative_to(corpus).as_posix()
        if doc_id in unconfirmed:
            skipped.append(Skipped(doc_id, "its upload was interrupted before it was indexed "
                                           "(citeqa serve removes it when it starts)"))
            continue
        if not _encodable(doc_id):  # the index stores ids as UTF-8 text
            skipped.append(Skipped(os.fsencode(doc_id).decode("utf-8", "backslashreplace"),
                                   "file name is not valid UTF-8 (rename the file)"))
            continue
        if path.is_symlink() and path.is_dir():
            skipped.append(Skipped(doc_id, "symbolic link to a folder (not followed)"))
            continue
        if path.suffix.lower() not in SUPPORTED_SUFFIXES:
            skipped.append(Skipped(doc_id, f"unsupported type {path.suffix or '(none)'}"))
            continue
        try:
            docs.append(load_document(path, doc_id, default_lang))
        except DocumentError as exc:
            skipped.append(Skipped(doc_id, str(exc)))
    return CorpusScan(tuple(docs), tuple(skipped))


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
    reader = _READERS.get(suffix)
    if reader is None:
        raise DocumentError(f"unsupported type {suffix or '(none)'}")
    text, pages, title = reader(raw)
    if not text.strip():
        raise DocumentError("no text found")
    check_text_size(len(text))
    return Document(
        doc_id=doc_id,
        title=title or first_line(text) or path.name,
        text=text,
        lang=detect_lang(text[:4000], default_lang),
        sha256=hashlib.sha256(raw).hexdigest(),
        kind=suffix.lstrip("."),
        pages=pages,
    )


def _read_bytes(path: Path) -> bytes:
    """The file's bytes, with size, emptiness and access problems as DocumentError."""
    try:
        if path.is_symlink() and not path.exists():
            raise DocumentError("broken symbolic link")
        info = path.stat()
        if not stat.S_ISREG(info.st_mode):
            raise DocumentError("not a regular file")
        size = info.st_size
        if size == 0:
            raise DocumentError("empty file")
        if size > MAX_FILE_BYTES:
            raise DocumentError(f"file too large ({size // 1_048_576} MB > {MAX_FILE_BYTES // 1_048_576} MB)")
        return path.read_bytes()
    except FileNotFoundError as exc:
        raise DocumentError("file disappeared while reading") from exc
    except PermissionError as exc:
        raise DocumentError("permission denied") from exc
    except OSError as exc:
        raise DocumentError(f"cannot read file ({exc.strerror or exc})") from exc


def check_text_size(chars: int) -> None:
    """DocumentError when a file yields more than :data:`MAX_TEXT_CHARS` characters of text."""
    if chars > MAX_TEXT_CHARS:
        raise DocumentError(f"too much text ({chars:,} characters or more; the limit is {MAX_TEXT_CHARS:,} "
                            "per file): split the file")


def first_line(text: str, limit: int = 200) -> str:
    """The first non-empty line, without Markdown heading marks, cut to ``limit``."""
    for line in text.splitlines():
        line = line.strip().lstrip("#").strip()
        if line:
            return line[:limit]
    return ""


_WESTERN = ("cp1252", "latin_1", "iso8859_15")
#: Byte-order marks of the wide Unicode encodings; UTF-32 first (its LE mark starts like UTF-16's).
_BOMS = ((b"\xff\xfe\x00\x00", "utf-32-le"), (b"\x00\x00\xfe\xff", "utf-32-be"),
         (b"\xff\xfe", "utf-16-le"), (b"\xfe\xff", "utf-16-be"))


def decode_text(raw: bytes) -> str:
    """Decode bytes as UTF-8, else with the encoding charset-normalizer finds.

    UTF-16 and UTF-32 text is read when it starts with its byte-order mark (Windows
    editors save "Unicode" text so). Binary data (NUL bytes otherwise, or mostly control
    characters) is refused.
    """
    for bom, codec in _BOMS:
        if raw.startswith(bom):
            try:
                return _checked(raw[len(bom):].decode(codec))
            except UnicodeDecodeError:
                raise DocumentError(f"damaged {codec.upper()} text (it starts with a byte-order mark)") from None
    if b"\x00" in raw[:65536]:
        raise DocumentError("binary file (contains NUL bytes)")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        from charset_normalizer import from_bytes

        matches = from_bytes(raw)
        best = matches.best()
        if best is None:
            raise DocumentError("unknown text encoding (binary file?)") from None
        for match in matches:  # on a tie (short text) prefer the Western encodings es/pt/en use
            if match.encoding in _WESTERN and match.chaos <= best.chaos and match.coherence >= best.coherence:
                best = match
                break
        text = str(best)
    return _checked(text)


def _checked(text: str) -> str:
    """Newlines unified; text that is mostly control characters is refused as binary."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    controls = sum(1 for c in text[:65536] if ord(c) < 32 and c not in "\n\t\f")
    if controls > 0.01 * min(len(text), 65536):
        raise DocumentError("binary file (control characters)")
    return text


def _read_text(raw: bytes) -> tuple[str, tuple[PageSpan, ...], str]:
    return decode_text(raw), (), ""


_BLANKS = re.compile(r"[ \t\xa0]+")
_MANY_NEWLINES = re.compile(r"\n{3,}")


def _read_html(raw: bytes) -> tuple[str, tuple[PageSpan, ...], str]:
    """Visible text of an HTML page: no scripts, styles or templates; blocks on lines."""
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(decode_text(raw), "html.parser")
    title = soup.title.get_text(" ", strip=True) if soup.title else ""
    for tag in soup(["script", "style", "noscript", "template", "head", "svg", "iframe"]):
        tag.decompose()
    text = soup.get_text("\n")
    lines = (_BLANKS.sub(" ", line).strip() for line in text.split("\n"))
    body = _MANY_NEWLINES.sub("\n\n", "\n".join(lines)).strip()
    return body, (), title[:200]


def _read_pdf(raw: bytes) -> tuple[str, tuple[PageSpan, ...], str]:
    """Text of each PDF page joined by blank lines, remembering where each page lies."""
    import io
    import logging

    from pypdf import PdfReader
    from pypdf.errors import PyPdfError

    logging.getLogger("pypdf").setLevel(logging.ERROR)
    try:
        reader = PdfReader(io.BytesIO(raw))
        texts, total = [], 0
        for page in reader.pages:  # stop at the limit: compressed text can expand a lot
            texts.append((page.extract_text() or "").strip())
            total += len(texts[-1]) + 2
            check_text_size(total)
        metadata = reader.metadata
        meta_title = str(metadata.title).strip()[:200] if metadata is not None and metadata.title else ""
    except (PyPdfError, ValueError, KeyError, TypeError, OSError, AttributeError, IndexError,
            RecursionError, ZeroDivisionError, NotImplementedError) as exc:  # malformed PDFs raise any of these
        raise DocumentError(f"unreadable PDF ({type(exc).__name__})") from exc
    parts, spans, offset = [], [], 0
    for number, page_text in enumerate(texts, start=1):
        if parts:
            parts.append("\n\n")
            offset += 2
        parts.append(page_text)
        spans.append(PageSpan(offset, offset + len(page_text), number))
        offset += len(page_text)
    return "".join(parts), tuple(spans), meta_title


_READERS: dict[str, Callable[[bytes], tuple[str, tuple[PageSpan, ...], str]]] = {
    **{s: _read_text for s in TEXT_SUFFIXES},
    **{s: _read_html for s in HTML_SUFFIXES},
    **{s: _read_pdf for s in PDF_SUFFIXES},
}
