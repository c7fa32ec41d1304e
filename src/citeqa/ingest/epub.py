"""EPUB: the chapters in reading (spine) order, each chapter a section.

ebooklib reads the package (spine, table of contents, metadata); each chapter's XHTML
is turned into blocks here: headings and paragraphs on their own, lists one item per
line, tables one row per line. A chapter's section label is its title in the table of
contents, else its first heading. Books with DRM are refused: their chapters are
ciphertext.
"""

from __future__ import annotations

import io
import posixpath
import re
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

from citeqa.errors import DocumentError
from citeqa.ingest.archive import ZIP_ERRORS, check_markup_parts, open_zip, parse_xml, read_entry, unreadable
from citeqa.ingest.blocks import Block, TextBuilder, one_line, table_block
from citeqa.ingest.extracted import Extracted
from citeqa.messages import Said

if TYPE_CHECKING:  # BeautifulSoup loads when a page is read
    import zipfile

    from bs4.element import PageElement, Tag

#: Algorithms of encryption.xml that only obfuscate embedded fonts: the text stays readable.
FONT_OBFUSCATION = frozenset({"http://www.idpf.org/2008/embedding", "http://ns.adobe.com/pdf/enc#RC"})
_XMLENC = "{http://www.w3.org/2001/04/xmlenc#}"

_SKIP = frozenset({"script", "style", "noscript", "template", "head", "svg", "iframe", "object", "math"})
_HEADINGS = {f"h{n}": n for n in range(1, 7)}
_BLOCKS = frozenset(
    {
        "address",
        "article",
        "aside",
        "blockquote",
        "body",
        "caption",
        "dd",
        "details",
        "dialog",
        "div",
        "dl",
        "dt",
        "fieldset",
        "figcaption",
        "figure",
        "footer",
        "form",
        "header",
        "hgroup",
        "hr",
        "li",
        "main",
        "nav",
        "p",
        "section",
        "summary",
        "td",
        "th",
        "tr",
    }
)
_WHITESPACE = re.compile(r"\s+")


def read_epub(raw: bytes) -> Extracted:
    """The book's chapters as text, each a section; front matter without text adds nothing."""
    from ebooklib import epub

    with open_zip(raw, "EPUB") as archive:
        _refuse_drm(archive)
        markup = [
            n for n in archive.namelist() if n.lower().endswith((".xhtml", ".html", ".htm", ".xml", ".opf", ".ncx"))
        ]
        check_markup_parts(archive, markup, "EPUB")  # ebooklib keeps every part in memory as trees and strings
    try:
        book = epub.read_epub(io.BytesIO(raw), {"ignore_ncx": True})
        toc = _toc_titles(book.toc)
        chapters = []
        for idref, _linear in book.spine:
            item = book.get_item_with_id(idref)
            if isinstance(item, epub.EpubHtml) and not isinstance(item, epub.EpubNav):
                chapters.append((item.file_name, item.content))  # as stored: get_content() re-renders it
        titles = book.get_metadata("DC", "title")
    except _malformed() as exc:
        raise unreadable("EPUB", exc) from exc
    builder = TextBuilder()
    for name, content in chapters:
        try:
            blocks = list(xhtml_blocks(content))
        except RecursionError as exc:
            raise DocumentError(Said("doc_unreadable_kind", kind="EPUB", error="RecursionError")) from exc
        heading = next((b.text for b in blocks if b.heading), "")
        builder.open_section(toc.get(posixpath.normpath(name)) or toc.get(posixpath.basename(name)) or heading)
        for block in blocks:
            builder.add(block.text)
    return builder.build(titles[0][0] if titles and titles[0][0] else "")


def _malformed() -> tuple[type[BaseException], ...]:
    """Exceptions a damaged EPUB raises in ebooklib (and the lxml under it)."""
    from ebooklib.epub import EpubException
    from lxml import etree

    return (
        EpubException,
        etree.LxmlError,
        SyntaxError,
        TypeError,
        AttributeError,
        IndexError,
        RecursionError,
        *ZIP_ERRORS,
    )


def _refuse_drm(archive: zipfile.ZipFile) -> None:
    """DocumentError when META-INF says the content is encrypted (font obfuscation alone is fine)."""
    if read_entry(archive, "META-INF/rights.xml", "EPUB") is not None:
        raise DocumentError(Said("doc_drm"))
    data = read_entry(archive, "META-INF/encryption.xml", "EPUB")
    if data is None:
        return
    try:
        algorithms = {el.get("Algorithm", "") for el in parse_xml(data).iter(_XMLENC + "EncryptionMethod")}
    except _malformed():
        algorithms = {"unreadable"}
    if algorithms - FONT_OBFUSCATION:
        raise DocumentError(Said("doc_drm"))


def _toc_titles(entries: Iterable[Any], titles: dict[str, str] | None = None) -> dict[str, str]:
    """File name (and base name) -> the first title the table of contents gives it."""
    titles = {} if titles is None else titles
    for entry in entries:
        if isinstance(entry, (tuple, list)) and len(entry) == 2:
            _toc_titles([entry[0]], titles)
            _toc_titles(entry[1], titles)
            continue
        href, title = getattr(entry, "href", "") or "", one_line(getattr(entry, "title", "") or "")
        path = href.split("#", 1)[0]
        if path and title:
            titles.setdefault(posixpath.normpath(path), title)
            titles.setdefault(posixpath.basename(path), title)
    return titles


def xhtml_blocks(content: bytes | str) -> Iterator[Block]:
    """Blocks of an (X)HTML page: headings, paragraphs, lists and tables, in order."""
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(content, "html.parser")
    yield from _walk(soup.body or soup)


def _walk(node: Tag) -> Iterator[Block]:
    from bs4.element import NavigableString, Tag

    inline: list[str] = []
    for child in node.children:
        if isinstance(child, NavigableString):
            if _is_text(child):
                inline.append(_WHITESPACE.sub(" ", str(child)))
            continue
        if not isinstance(child, Tag) or child.name in _SKIP:
            continue
        name = child.name
        if name == "br":
            inline.append("\n")
            continue
        if name not in _HEADINGS and name not in _BLOCKS and name not in ("ul", "ol", "table", "pre"):
            inline.append(_inline(child))
            continue
        if inline:
            yield Block("".join(inline))
            inline = []
        if name in _HEADINGS:
            yield Block(one_line(_flat(child)), _HEADINGS[name])
        elif name in ("ul", "ol"):
            yield Block("\n".join(_items(child)))
        elif name == "table":
            yield Block(table_block(_rows(child)))
        elif name == "pre":
            yield Block(child.get_text())
        else:
            yield from _walk(child)
    if inline:
        yield Block("".join(inline))


def _is_text(string: PageElement) -> bool:
    """Document text, not a comment, declaration or processing instruction."""
    from bs4.element import CData, NavigableString

    return type(string) in (NavigableString, CData)


def _inline(node: Tag) -> str:
    """Text of an inline element, ``<br>`` as a line break."""
    from bs4.element import NavigableString, Tag

    parts = []
    for child in node.children:
        if isinstance(child, NavigableString):
            if _is_text(child):
                parts.append(_WHITESPACE.sub(" ", str(child)))
        elif isinstance(child, Tag) and child.name not in _SKIP:
            parts.append("\n" if child.name == "br" else _inline(child))
    return "".join(parts)


def _flat(node: Tag, stop: frozenset[str] = frozenset()) -> str:
    """All text under ``node`` on one line, blocks apart, leaving out ``stop`` elements."""
    from bs4.element import NavigableString, Tag

    parts = []
    for child in node.children:
        if isinstance(child, NavigableString):
            if _is_text(child):
                parts.append(str(child))
        elif isinstance(child, Tag) and child.name not in _SKIP and child.name not in stop:
            text = _flat(child, stop)
            apart = child.name in _BLOCKS or child.name in _HEADINGS or child.name == "br"
            parts.append(f" {text} " if apart else text)
    return one_line("".join(parts))


def _items(lst: Tag) -> Iterator[str]:
    """One line per ``<li>``, nested lists after their item."""
    for item in lst.find_all("li", recursive=False):
        yield _flat(item, frozenset({"ul", "ol"}))
        for sub in item.find_all(["ul", "ol"]):
            if sub.find_parent("li") is item:
                yield from _items(sub)


def _rows(table: Tag) -> Iterator[list[str]]:
    """Rows of this table (not of a table nested in a cell)."""
    for row in table.find_all("tr"):
        if row.find_parent("table") is table:
            yield [_flat(cell) for cell in row.find_all(["td", "th"], recursive=False)]
