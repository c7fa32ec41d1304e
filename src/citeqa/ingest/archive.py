"""Opening the zip container of a DOCX, ODT or EPUB file without trusting it.

The readers (python-docx, ebooklib, the ODT reader) unpack entries into memory, so a
small file that unpacks to gigabytes (a zip bomb) or holds a million entries is refused
before any of them is read. Python's zipfile never returns more bytes than an entry
declares (a longer stream fails its CRC check), so checking the declared sizes bounds
what is unpacked.
"""

from __future__ import annotations

import functools
import io
import zipfile
import zlib
from collections.abc import Iterable
from typing import TYPE_CHECKING

from citeqa.errors import DocumentError
from citeqa.ingest.extracted import check_markup
from citeqa.messages import Said

if TYPE_CHECKING:  # lxml loads when a part is parsed
    from lxml import etree

#: Largest total unpacked size of a container. Text XML packs about 10:1 and pictures
#: barely pack, so a genuine file up to the 50 MB file limit stays well below this;
#: a zip bomb unpacks thousands of times its size.
MAX_UNPACKED_BYTES = 256 * 1024 * 1024
#: Largest unpacked size of the parts that are parsed into trees (document XML, chapters):
#: pictures barely cost memory, markup costs a tree. A 500-page book's markup is ~10 MB.
MAX_MARKUP_BYTES = 32 * 1024 * 1024
#: Most entries in a container: a long book has a few hundred files.
MAX_ZIP_ENTRIES = 10_000
#: The first bytes of an OLE compound file: a password-protected Office document, or a .doc/.xls.
OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
#: Errors a damaged zip raises while its directory or an entry is read.
ZIP_ERRORS = (
    zipfile.BadZipFile,
    zipfile.LargeZipFile,
    zlib.error,
    EOFError,
    OSError,
    ValueError,
    NotImplementedError,
    KeyError,
    UnicodeDecodeError,
)


def unreadable(kind: str, exc: BaseException) -> DocumentError:
    """``unreadable DOCX (BadZipFile)``: the format and the error's name (zlib's ``error`` as ``zlib.error``)."""
    name = type(exc).__name__
    if name == "error":
        name = f"{type(exc).__module__}.error"
    return DocumentError(Said("doc_unreadable_kind", kind=kind, error=name))


def open_zip(raw: bytes, kind: str) -> zipfile.ZipFile:
    """The container of a ``kind`` file ("DOCX", "EPUB", "ODT"), its sizes checked; DocumentError says why not."""
    if raw.startswith(OLE_MAGIC):
        raise DocumentError(Said("doc_encrypted_kind", kind=kind))
    try:
        archive = zipfile.ZipFile(io.BytesIO(raw))
        entries = archive.infolist()
    except ZIP_ERRORS as exc:
        raise unreadable(kind, exc) from exc
    if len(entries) > MAX_ZIP_ENTRIES:
        raise DocumentError(Said("doc_zip_entries", count=len(entries), limit=MAX_ZIP_ENTRIES))
    unpacked = sum(entry.file_size for entry in entries)
    if unpacked > MAX_UNPACKED_BYTES:
        raise DocumentError(Said("doc_unpacked", mb=unpacked // 1_048_576, limit=MAX_UNPACKED_BYTES // 1_048_576))
    return archive


def check_markup_parts(archive: zipfile.ZipFile, names: Iterable[str], kind: str) -> None:
    """DocumentError when the parts ``names`` (those present) unpack past :data:`MAX_MARKUP_BYTES` or hold
    more tags than :data:`~citeqa.ingest.extracted.MAX_MARKUP_TAGS`; counted while streaming, before any tree."""
    present = [info for info in archive.infolist() if info.filename in set(names)]
    size = sum(info.file_size for info in present)
    if size > MAX_MARKUP_BYTES:
        raise DocumentError(Said("doc_markup", mb=size // 1_048_576, limit=MAX_MARKUP_BYTES // 1_048_576))
    tags = 0
    try:
        for info in present:
            with archive.open(info) as stream:
                for block in iter(functools.partial(stream.read, 1 << 20), b""):
                    tags = check_markup(kind, block, tags)
    except ZIP_ERRORS as exc:
        raise unreadable(kind, exc) from exc


def read_entry(archive: zipfile.ZipFile, name: str, kind: str) -> bytes | None:
    """One entry's bytes, None when it is absent; a damaged entry is a DocumentError."""
    try:
        return archive.read(name)
    except KeyError:
        return None
    except ZIP_ERRORS as exc:
        raise unreadable(kind, exc) from exc


def parse_xml(data: bytes) -> etree._Element:
    """An lxml element tree of an XML part, parsed without loading DTDs, fetching or expanding entities."""
    from lxml import etree

    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False, huge_tree=False)
    return etree.fromstring(data, parser=parser)
