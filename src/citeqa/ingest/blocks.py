"""Plain text from structured documents: blocks joined by blank lines, with section ranges.

A block is a paragraph, a heading, a whole list (one item per line) or a whole table
(one row per line, cells joined by `` | ``). Blocks are joined by ``"\\n\\n"``, so the
chunker, which cuts at blank lines first, keeps headings apart from the text around
them. Offsets are those of the assembled string, which becomes ``Document.text``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from citeqa.ingest.extracted import Extracted, check_text_size
from citeqa.records import SectionSpan

#: A section label longer than this is cut (a heading that is really a paragraph).
MAX_SECTION_TITLE_CHARS = 200
CELL_SEPARATOR = " | "

_SPACES = re.compile(r"[^\S\n]+")  # any whitespace except a newline


@dataclass(frozen=True, slots=True)
class Block:
    """A paragraph-like piece of a document; ``heading`` is its outline level (1 = top), 0 for body text."""

    text: str
    heading: int = 0


def clean_block(text: str) -> str:
    """Every line with its blanks collapsed and stripped; empty lines dropped."""
    lines = (_SPACES.sub(" ", line).strip() for line in text.replace("\r", "\n").split("\n"))
    return "\n".join(line for line in lines if line)


def one_line(text: str) -> str:
    """``text`` on one line, blanks collapsed (a table cell, a list item, a title)."""
    return _SPACES.sub(" ", text.replace("\n", " ").replace("\r", " ")).strip()


def table_block(rows: Iterable[Iterable[str]]) -> str:
    """Rows of cells as lines of ``a | b | c``; empty rows and trailing empty cells dropped."""
    lines = []
    for row in rows:
        cells = [one_line(cell) for cell in row]
        while cells and not cells[-1]:
            cells.pop()
        if cells:
            lines.append(CELL_SEPARATOR.join(cells))
    return "\n".join(lines)


class TextBuilder:
    """Joins blocks with blank lines and records the range of every section."""

    def __init__(self) -> None:
        self._parts: list[str] = []
        self._length = 0
        self._sections: list[SectionSpan] = []
        self._open: tuple[str, int | None] | None = None  # title, start (None until a block is added)
        self._last_end = 0

    def add(self, text: str) -> bool:
        """Append a block (cleaned); False when nothing is left of it."""
        text = clean_block(text)
        if not text:
            return False
        if self._parts:
            self._parts.append("\n\n")
            self._length += 2
        if self._open is not None and self._open[1] is None:
            self._open = (self._open[0], self._length)
        self._parts.append(text)
        self._length += len(text)
        self._last_end = self._length
        check_text_size(self._length)  # stop at the limit, not after reading the rest
        return True

    def open_section(self, title: str) -> None:
        """Start a section titled ``title`` at the next block (ends the open one)."""
        self.close_section()
        label = one_line(title)[:MAX_SECTION_TITLE_CHARS]
        if label:
            self._open = (label, None)

    def close_section(self) -> None:
        """End the open section after the last block added; a section without blocks is dropped."""
        if self._open is not None and self._open[1] is not None:
            self._sections.append(SectionSpan(self._open[1], self._last_end, self._open[0]))
        self._open = None

    def build(self, title: str = "") -> Extracted:
        """The joined text and its sections."""
        self.close_section()
        return Extracted("".join(self._parts), sections=tuple(self._sections), title=one_line(title)[:200])


def assemble(blocks: Iterable[Block], title: str = "") -> Extracted:
    """Blocks joined by blank lines; each heading of the top level used opens a section.

    The top level is the smallest heading level in the document: Heading 1 when there is
    one, else Heading 2 (a document that starts its outline lower still gets sections).
    """
    blocks = [b for b in blocks if b.text.strip()]
    levels = [b.heading for b in blocks if b.heading > 0]
    top = min(levels) if levels else 0
    builder = TextBuilder()
    for block in blocks:
        if top and block.heading == top:
            builder.open_section(block.text)
        builder.add(block.text)
    return builder.build(title)
