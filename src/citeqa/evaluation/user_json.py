"""Parsing the JSON a user hands citeqa (QA, claim, predictions and SQuAD files) within fixed bounds.

Every such text goes through :func:`loads`. It parses with orjson, whose parser stops at
1,024 levels with a ``JSONDecodeError`` whatever the Python stack (the standard library's
``json`` raises ``RecursionError`` at a depth that depends on its caller's stack, and
overflows the C stack when the recursion limit has been raised), then refuses a value
more than :data:`MAX_DEPTH` levels deep, so that no later ``repr`` or comparison of a
value recurses far. Standard JSON only: ``NaN``, ``Infinity``, numbers beyond a double and
``\\u`` escapes of lone surrogates are refused too. A file larger than
:data:`MAX_FILE_BYTES` is refused before it is read (:func:`citeqa.evaluation.rows.read_text`),
and a file kind is guessed from its first line (:func:`first_line`) without reading more than
:data:`PEEK_BYTES`.
"""

from __future__ import annotations

import re
from itertools import accumulate
from pathlib import Path
from typing import Any

import orjson

from citeqa.messages import Said

MAX_DEPTH = 64
"""Most levels of nested arrays and objects in a user's JSON (a SQuAD file has 8, a QA line 2)."""

MAX_FILE_BYTES = 256 * 2**20
"""Largest evaluation file read (SQuAD 2.0's training set is 40 MiB)."""

PEEK_BYTES = 2**20
"""Most bytes read to find a file's first line when guessing its kind."""

_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")


class BadInput(ValueError):
    """A user's text, or one line of it, cannot be used; the message (one line) says why."""


def loads(text: str, *, single_line: bool = False) -> Any:
    """The JSON value of ``text``; :class:`BadInput` when it is not standard JSON or is nested more
    than :data:`MAX_DEPTH` levels deep. ``single_line`` names only the column of an error (a JSONL line)."""
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        if _text_depth(text[: exc.pos + 1]) > MAX_DEPTH:  # orjson's own limit, or a truncated deep prefix
            raise BadInput(too_deep()) from None
        if single_line:
            raise BadInput(Said("json_invalid_column", detail=exc.msg, column=exc.colno)) from None
        raise BadInput(Said("json_invalid", detail=exc.msg, line=exc.lineno, column=exc.colno)) from None
    if depth(value) > MAX_DEPTH:
        raise BadInput(too_deep())
    return value


def too_deep() -> Said:
    """The reason given for a value nested past :data:`MAX_DEPTH`."""
    return Said("json_too_deep", levels=MAX_DEPTH)


def depth(value: Any, limit: int = MAX_DEPTH) -> int:
    """Levels of arrays and objects in ``value`` (0 for a scalar), counted up to ``limit + 1``.

    Level by level, without recursion, so a value of any depth is measured safely.
    """
    level = [value] if type(value) in (dict, list) else []
    levels = 0
    while level and levels <= limit:
        levels += 1
        inner: list[Any] = []
        for item in level:
            inner.extend(c for c in (item.values() if type(item) is dict else item) if type(c) in (dict, list))
        level = inner
    return levels


def _text_depth(text: str) -> int:
    """The deepest bracket nesting in a (possibly broken) JSON text, strings left out."""
    brackets = _NOT_BRACKET.sub("", _STRING.sub("", text))
    return max(accumulate(1 if c in "[{" else -1 for c in brackets), default=0)


def first_line(path: Path) -> str:
    """The first non-blank line of a text file (UTF-8, BOM tolerated), read from at most
    :data:`PEEK_BYTES`; :class:`BadInput` when the file cannot be read, is not UTF-8, holds no such
    line, or its first line is longer than that."""
    try:
        with Path(path).open("rb") as fh:
            head = fh.read(PEEK_BYTES)
    except OSError as exc:
        raise BadInput(Said("read_failed", detail=exc.strerror)) from None
    lines = head.removeprefix(b"\xef\xbb\xbf").split(b"\n")
    complete = lines if len(head) < PEEK_BYTES else lines[:-1]  # the last piece may be cut off
    for raw in complete:
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise BadInput(Said("first_line_not_utf8", offset=exc.start)) from None
        if line.strip():
            return line
    if len(complete) < len(lines):
        raise BadInput(Said("first_line_too_long", limit=f"{PEEK_BYTES:,}"))
    raise BadInput(Said("empty_file"))
