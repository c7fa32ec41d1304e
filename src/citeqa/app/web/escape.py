"""Text as inert HTML. Every piece of document or user text the web app shows goes through here.

Escaping covers HTML (``<script>``, ``<img onerror>``) and Markdown/LaTeX syntax (an
image ``![x](url)`` or a link), because the chat renders Markdown: untrusted text is
turned into character references, which no renderer treats as markup.
"""

from __future__ import annotations

import re

_MARKUP_CHARS = {c: f"&#{ord(c)};" for c in "\\`*_[]()!#|~$&<>\"'{}:="}


_MARKUP_TABLE = str.maketrans(_MARKUP_CHARS)


def safe(text: str) -> str:
    """Text as inert HTML: every markup-significant character becomes a reference."""
    return "".join(_MARKUP_CHARS.get(c, c) for c in text).replace("\n", "<br>")


def safe_block(text: str) -> str:
    """:func:`safe` for long texts and ``<pre>`` blocks: newlines kept as they are (one
    ``str.translate`` pass, fast enough for a whole 1,000,000-character document)."""
    return text.translate(_MARKUP_TABLE)


_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def cell_text(text: str) -> str:
    """Text for a table cell: no control characters (a table shows text, never markup)."""
    return _CONTROL.sub(" ", text)


def marked(text: str, start: int, end: int, tag: str = "mark") -> str:
    """``text`` escaped, with ``[start, end)`` wrapped in ``<tag>``."""
    return f"{safe(text[:start])}<{tag}>{safe(text[start:end])}</{tag}>{safe(text[end:])}"
