"""The schema of the ``/ask`` API and the one function that checks a request against it.

``/ask`` takes four positional arguments. Each is checked here, before the engine sees
it, so that a client always gets an error record naming the argument at fault instead of
a conversion error, a traceback in the server log, or a silently "fixed" value:

============ ========================================================================
argument     accepted values
============ ========================================================================
question     text (a JSON string) of 1 to ``MAX_QUESTION_CHARS`` (2000) characters
history      earlier questions: a list of at most ``MAX_HISTORY_ITEMS`` (20) strings,
             each at most 2000 characters; a single string counts as one question;
             ``null`` means none
k            passages to cite: a whole number (JSON integer) from 1 to ``MAX_K`` (10,
             the UI's maximum); booleans, fractions, NaN, infinities and strings are
             refused
language     passage language: ``auto`` (the question's), ``any``, ``es``, ``pt`` or
             ``en``, in any case and with blanks around it ignored; ``null`` means
             ``auto``
============ ========================================================================

``/check`` takes two: ``claim`` (text of 1 to 2000 characters, as a question) and ``k``
(passages to show, as above); :func:`validate_check` checks them the same way.

A refusal is :class:`~citeqa.errors.RequestError`; the API turns it into
``{"error": "<what is wrong and what is accepted>", "field": "<argument>"}``. An
argument that the request does not carry at all is refused as missing.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from citeqa.answer.pipeline import MAX_QUESTION_CHARS
from citeqa.errors import RequestError

MAX_K = 10
MAX_HISTORY_ITEMS = 20
LANGUAGES = ("auto", "any", "es", "pt", "en")
ARGUMENTS = ("question", "history", "k", "language")
CHECK_ARGUMENTS = ("claim", "k")

#: Stands for an argument the request did not send (a JSON string, so it passes Gradio's
#: own checks unchanged and reaches :func:`validate_ask`, which names it as missing).
MISSING = "\x00citeqa:missing-argument\x00"


@dataclass(frozen=True, slots=True)
class AskRequest:
    """A checked ``/ask`` request; ``language`` is lower case, one of :data:`LANGUAGES`."""

    question: str
    history: tuple[str, ...]
    k: int
    language: str


def validate_ask(question: Any, history: Any = None, k: Any = 5, language: Any = "auto") -> AskRequest:
    """Check the four ``/ask`` arguments against the schema above; RequestError when one is off."""
    for name, value in zip(ARGUMENTS, (question, history, k, language)):
        if isinstance(value, str) and value == MISSING:
            raise RequestError(name, f"missing argument: {name} (/ask takes {', '.join(ARGUMENTS)})")
    return AskRequest(_question(question), _history(history), _k(k), _language(language))


@dataclass(frozen=True, slots=True)
class CheckRequest:
    """A checked ``/check`` request."""

    claim: str
    k: int


def validate_check(claim: Any, k: Any = 5) -> CheckRequest:
    """Check the two ``/check`` arguments; RequestError naming the one that is off."""
    for name, value in zip(CHECK_ARGUMENTS, (claim, k)):
        if isinstance(value, str) and value == MISSING:
            raise RequestError(name, f"missing argument: {name} (/check takes {', '.join(CHECK_ARGUMENTS)})")
    if not isinstance(claim, str):
        raise RequestError("claim", f"the claim must be text, not {_kind(claim)}")
    if len(claim) > MAX_QUESTION_CHARS:
        raise RequestError(
            "claim", f"the claim is too long ({len(claim)} characters; the limit is {MAX_QUESTION_CHARS})"
        )
    return CheckRequest(claim, _k(k))  # emptiness is judged after cleaning, as for a question


def _question(value: Any) -> str:
    if not isinstance(value, str):
        raise RequestError("question", f"the question must be text, not {_kind(value)}")
    if len(value) > MAX_QUESTION_CHARS:
        raise RequestError(
            "question", f"the question is too long ({len(value)} characters; the limit is {MAX_QUESTION_CHARS})"
        )
    return value  # emptiness is judged by the engine after cleaning (a question of control characters is empty)


def _history(value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, (list, tuple)):
        raise RequestError("history", f"history must be a list of earlier questions, not {_kind(value)}")
    if len(value) > MAX_HISTORY_ITEMS:
        raise RequestError("history", f"history holds {len(value)} questions; the limit is {MAX_HISTORY_ITEMS}")
    for n, item in enumerate(value, start=1):
        if not isinstance(item, str):
            raise RequestError("history", f"history item {n} must be text, not {_kind(item)}")
        if len(item) > MAX_QUESTION_CHARS:
            raise RequestError(
                "history", f"history item {n} is too long ({len(item)} characters; the limit is {MAX_QUESTION_CHARS})"
            )
    return tuple(value)


def _k(value: Any) -> int:
    if type(value) is not int or not 1 <= value <= MAX_K:  # bool is an int subclass: refused too
        raise RequestError("k", f"k must be a whole number from 1 to {MAX_K}, not {_show(value)}")
    return value


def _language(value: Any) -> str:
    if value is None:
        return "auto"
    choice = value.strip().lower() if isinstance(value, str) else None
    if choice not in LANGUAGES:
        raise RequestError("language", f"language must be one of {', '.join(LANGUAGES)}, not {_show(value)}")
    return choice


def _kind(value: Any) -> str:
    """A JSON reader's name for the type of ``value``."""
    names = {
        bool: "a boolean",
        int: "a number",
        float: "a number",
        list: "a list",
        tuple: "a list",
        dict: "an object",
        type(None): "null",
    }
    return names.get(type(value), type(value).__name__)


def _show(value: Any, limit: int = 40) -> str:
    """``value`` for a message: short, printable, and the type named when it is not a plain number."""
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        text = repr(value)
        return text if len(text) <= limit else f"{text[:limit]}… ({len(text)} digits)"
    if isinstance(value, str):
        text = "".join(c if c.isprintable() else "?" for c in value[:limit])
        return repr(text) + (f"… ({len(value)} characters)" if len(value) > limit else "")
    return _kind(value)


def error_record(exc: RequestError) -> dict[str, str]:
    """The API's error record for a refused argument (``{"error": ..., "field": ...}``)."""
    return {"error": str(exc), "field": exc.field}
