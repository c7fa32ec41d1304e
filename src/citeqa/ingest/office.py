"""DOCX and ODT: paragraphs, headings, lists and tables in reading order, as blocks.

DOCX is opened with python-docx (package, styles, properties); ODT's ``content.xml`` is
read with lxml. Both walk the document XML themselves, so that text in content
controls, tracked insertions and fields is kept, while deleted text, field codes,
footnote bodies, text boxes and generated tables of contents are left out. Sections
are the headings of the top outline level (see :func:`citeqa.ingest.blocks.assemble`).
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterator
from typing import TYPE_CHECKING

from citeqa.errors import DocumentError
from citeqa.ingest.archive import ZIP_ERRORS, check_markup_parts, open_zip, parse_xml, read_entry, unreadable
from citeqa.ingest.blocks import Block, assemble, one_line, table_block
from citeqa.ingest.extracted import Extracted
from citeqa.messages import Said

if TYPE_CHECKING:  # python-docx and lxml load when a file is read
    import zipfile

    from docx.parts.document import DocumentPart
    from lxml.etree import _Element

W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
MC = "{http://schemas.openxmlformats.org/markup-compatibility/2006}"
_HEADING_STYLE = re.compile(r"heading ([1-9])")
_TOC_STYLE = re.compile(r"toc( [1-9]| heading)")


def _malformed() -> tuple[type[BaseException], ...]:
    """Exceptions a damaged package or XML part raises in python-docx and lxml."""
    from docx.opc.exceptions import OpcError
    from lxml import etree

    return (OpcError, etree.LxmlError, SyntaxError, TypeError, AttributeError, IndexError, RecursionError, *ZIP_ERRORS)


def read_docx(raw: bytes) -> Extracted:
    """Body text of a Word document; Heading 1 paragraphs (or the top level used) open sections."""
    import docx

    with open_zip(raw, "DOCX") as archive:  # sizes, encryption and markup are checked before python-docx unpacks
        check_markup_parts(archive, _docx_parts(archive), "DOCX")
    try:
        document = docx.Document(io.BytesIO(raw))
        styles = _DocxStyles(document.part)
        blocks = list(_docx_blocks(document.element.body, styles))
        title = document.core_properties.title or ""
    except _malformed() as exc:
        raise unreadable("DOCX", exc) from exc
    return assemble(blocks, title)


def _docx_parts(archive: zipfile.ZipFile) -> list[str]:
    """The XML parts python-docx parses into trees: every ``.xml`` and ``.rels`` part."""
    return [n for n in archive.namelist() if n.endswith((".xml", ".rels"))]


class _DocxStyles:
    """What a paragraph is by its style chain and own properties: heading level, list item, TOC line."""

    def __init__(self, part: DocumentPart) -> None:
        self._part = part
        self._cache: dict[str | None, tuple[int, bool, bool]] = {}

    def describe(self, p: _Element) -> tuple[int, bool, bool]:
        """``(heading level or 0, is a list item, is a table-of-contents line)`` of paragraph ``p``."""
        ppr = p.find(W + "pPr")
        style = ppr.find(W + "pStyle") if ppr is not None else None
        level, listed, toc = self._style(style.get(W + "val") if style is not None else None)
        own_level = _outline_level(ppr)
        if own_level is not None:
            level = own_level
        own_numbering = _numbered(ppr)
        if own_numbering is not None:
            listed = own_numbering
        return level, listed and not level, toc

    def _style(self, style_id: str | None) -> tuple[int, bool, bool]:
        if style_id not in self._cache:
            from docx.enum.style import WD_STYLE_TYPE

            style = self._part.get_style(style_id, WD_STYLE_TYPE.PARAGRAPH)  # the default style when unknown
            level, listed, toc = 0, None, False
            seen: set[str] = set()
            while style is not None and style.style_id not in seen and len(seen) < 20:
                seen.add(style.style_id)
                name = (style.name or "").lower()
                found = _HEADING_STYLE.fullmatch(name)
                level = level or (int(found.group(1)) if found else _outline_level(style.element.pPr) or 0)
                toc = toc or bool(_TOC_STYLE.fullmatch(name))
                if listed is None:
                    listed = True if name.startswith("list") else _numbered(style.element.pPr)
                style = style.base_style  # type: ignore[attr-defined]  # a paragraph style: get_style gives that type
            self._cache[style_id] = (level, bool(listed), toc)
        return self._cache[style_id]


def _outline_level(ppr: _Element | None) -> int | None:
    """The heading level (1-9) a ``w:outlineLvl`` sets, 0 for body text, None when absent."""
    node = ppr.find(W + "outlineLvl") if ppr is not None else None
    if node is None:
        return None
    value = node.get(W + "val", "")
    return int(value) + 1 if value.isdigit() and int(value) < 9 else 0


def _numbered(ppr: _Element | None) -> bool | None:
    """Whether ``w:numPr`` makes a paragraph a list item (numId 0 removes numbering); None when absent."""
    numbering = ppr.find(W + "numPr") if ppr is not None else None
    if numbering is None:
        return None
    num_id = numbering.find(W + "numId")
    return num_id is None or num_id.get(W + "val") != "0"


#: Block-level wrappers whose content is read as if it were in the body.
_DOCX_WRAPPERS = {W + "sdt", W + "sdtContent", W + "customXml", W + "ins", W + "moveTo", W + "smartTag"}
#: Left out: properties, deleted or moved-away text, field codes, duplicates of text boxes, text boxes.
_DOCX_SKIP = {
    W + "pPr",
    W + "rPr",
    W + "sdtPr",
    W + "del",
    W + "moveFrom",
    W + "delText",
    W + "instrText",
    MC + "Fallback",
    W + "txbxContent",
    W + "tblPr",
    W + "trPr",
    W + "tcPr",
}


def _docx_elements(container: _Element) -> Iterator[_Element]:
    """Paragraphs and tables of a body or cell in reading order, unwrapping content controls."""
    for el in container.iterchildren():
        if el.tag in (W + "p", W + "tbl"):
            yield el
        elif el.tag in _DOCX_WRAPPERS:
            yield from _docx_elements(el)


def _docx_blocks(body: _Element, styles: _DocxStyles) -> Iterator[Block]:
    items: list[str] = []
    for el in _docx_elements(body):
        if el.tag == W + "p":
            level, listed, toc = styles.describe(el)
            if toc:
                continue
            if listed:
                items.append(one_line(_docx_text(el)))
                continue
        if items:
            yield Block("\n".join(items))
            items = []
        if el.tag == W + "tbl":
            yield Block(table_block(_docx_rows(el)))
        else:
            yield Block(_docx_text(el), level)
    if items:
        yield Block("\n".join(items))


def _docx_rows(table: _Element) -> Iterator[list[str]]:
    """Each row's cells as text (a cell's paragraphs and nested tables on one line)."""
    for row in _docx_children(table, W + "tr"):
        yield [_docx_cell_text(cell) for cell in _docx_children(row, W + "tc")]


def _docx_cell_text(cell: _Element) -> str:
    parts = []
    for el in _docx_elements(cell):
        parts.append(_docx_text(el) if el.tag == W + "p" else " ".join(" ".join(row) for row in _docx_rows(el)))
    return " ".join(parts)


def _docx_children(el: _Element, tag: str) -> Iterator[_Element]:
    for child in el.iterchildren():
        if child.tag == tag:
            yield child
        elif child.tag in _DOCX_WRAPPERS:
            yield from _docx_children(child, tag)


def _docx_text(el: _Element) -> str:
    """The visible text under ``el``: tabs as tabs, line breaks as newlines."""
    parts: list[str] = []
    _docx_collect(el, parts)
    return "".join(parts)


def _docx_collect(el: _Element, parts: list[str]) -> None:
    for child in el.iterchildren():
        tag = child.tag
        if not isinstance(tag, str) or tag in _DOCX_SKIP:
            continue
        if tag == W + "t":
            parts.append((child.text or "").replace("\n", " "))
        elif tag in (W + "tab", W + "ptab"):
            parts.append("\t")
        elif tag in (W + "br", W + "cr"):
            parts.append("\n")
        elif tag == W + "noBreakHyphen":
            parts.append("-")
        else:
            _docx_collect(child, parts)


# --- ODT -----------------------------------------------------------------------------

TEXT = "{urn:oasis:names:tc:opendocument:xmlns:text:1.0}"
TABLE = "{urn:oasis:names:tc:opendocument:xmlns:table:1.0}"
OFFICE = "{urn:oasis:names:tc:opendocument:xmlns:office:1.0}"
MANIFEST = "{urn:oasis:names:tc:opendocument:xmlns:manifest:1.0}"
DRAW = "{urn:oasis:names:tc:opendocument:xmlns:drawing:1.0}"
DC = "{http://purl.org/dc/elements/1.1/}"

#: Block-level parts left out: deleted text kept for change tracking, generated indexes, declarations.
_ODT_SKIP_BLOCKS = {
    TEXT + name
    for name in (
        "tracked-changes",
        "table-of-content",
        "alphabetical-index",
        "illustration-index",
        "object-index",
        "user-index",
        "table-index",
        "bibliography",
        "sequence-decls",
        "variable-decls",
        "user-field-decls",
        "dde-connection-decls",
        "soft-page-break",
    )
} | {OFFICE + "forms", OFFICE + "annotation", TABLE + "shapes"}
#: Inline parts left out: footnote bodies, comments, frames (pictures, text boxes).
_ODT_SKIP_INLINE = {TEXT + "note", OFFICE + "annotation", DRAW + "frame", DRAW + "a", TEXT + "ruby-text"}


def read_odt(raw: bytes) -> Extracted:
    """Text of an OpenDocument text file; headings of the top outline level open sections."""
    with open_zip(raw, "ODT") as archive:
        check_markup_parts(archive, ("content.xml", "styles.xml", "meta.xml", "META-INF/manifest.xml"), "ODT")
        manifest = read_entry(archive, "META-INF/manifest.xml", "ODT")
        content = read_entry(archive, "content.xml", "ODT")
        meta = read_entry(archive, "meta.xml", "ODT")
    try:
        if manifest is not None and any(el.tag == MANIFEST + "encryption-data" for el in parse_xml(manifest).iter()):
            raise DocumentError(Said("doc_odt_encrypted"))
    except _malformed():
        pass  # a damaged manifest does not matter when content.xml reads
    if content is None:
        raise DocumentError(Said("doc_odt_no_content"))
    try:
        body = parse_xml(content).find(OFFICE + "body")
        blocks = list(_odt_blocks(body)) if body is not None else []
    except _malformed() as exc:
        raise unreadable("ODT", exc) from exc
    return assemble(blocks, _odt_title(meta))


def _odt_title(meta: bytes | None) -> str:
    """``dc:title`` from meta.xml; "" when absent or unreadable (the first line stands in)."""
    try:
        node = parse_xml(meta).find(f"{OFFICE}meta/{DC}title") if meta is not None else None
    except _malformed():
        return ""
    return (node.text or "") if node is not None else ""


def _odt_blocks(container: _Element) -> Iterator[Block]:
    for el in container.iterchildren():
        tag = el.tag
        if not isinstance(tag, str) or tag in _ODT_SKIP_BLOCKS:
            continue
        if tag == TEXT + "h":
            level = el.get(TEXT + "outline-level", "1")
            yield Block(_odt_text(el), int(level) if level.isdigit() and 0 < int(level) < 11 else 1)
        elif tag == TEXT + "p":
            yield Block(_odt_text(el))
        elif tag == TEXT + "list":
            yield Block("\n".join(_odt_items(el)))
        elif tag == TABLE + "table":
            yield Block(table_block(_odt_rows(el)))
        else:  # office:text, text:section and other containers
            yield from _odt_blocks(el)


def _odt_items(lst: _Element) -> Iterator[str]:
    """One line per list item, nested lists after their parent item."""
    for item in lst.iterchildren(TEXT + "list-item", TEXT + "list-header"):
        for child in item.iterchildren():
            if child.tag == TEXT + "list":
                yield from _odt_items(child)
            elif isinstance(child.tag, str):
                yield one_line(_odt_text(child))


def _odt_rows(table: _Element) -> Iterator[list[str]]:
    """Rows of this table (not of tables nested in its cells), merged-away cells left out."""
    for row in table.iter(TABLE + "table-row"):
        if next(row.iterancestors(TABLE + "table"), None) is table:
            yield [
                " ".join(block.text for block in _odt_blocks(cell)) for cell in row.iterchildren(TABLE + "table-cell")
            ]


def _odt_text(el: _Element) -> str:
    """Visible text of a paragraph: ``text:s`` spaces, tabs, line breaks; XML newlines are blanks."""
    parts = [_blank(el.text)]
    for child in el.iterchildren():
        tag = child.tag
        if isinstance(tag, str) and tag not in _ODT_SKIP_INLINE:
            if tag == TEXT + "s":
                count = child.get(TEXT + "c", "1")
                parts.append(" " * (min(int(count), 100) if count.isdigit() else 1))
            elif tag == TEXT + "tab":
                parts.append("\t")
            elif tag == TEXT + "line-break":
                parts.append("\n")
            else:
                parts.append(_odt_text(child))
        parts.append(_blank(child.tail))
    return "".join(parts)


def _blank(text: str | None) -> str:
    return (text or "").replace("\r", " ").replace("\n", " ")
