"""The schema of the ``/ask`` API and the one function that checks a request against it.

``/ask`` takes four positional arguments. Each is checked here, before the engine sees
it, so that a client always gets an error record naming the argument at fault instead of
a conversion error, a traceback in the server log, or a silently "fixed" value:

============ ========================================================================
argument     accepted values
============ ========================================================================
question     text (a JSON string) of 1 to ``MAX_QUESTION_CHARS`` (2000) characters
history      earlier questions: a list of at most ``MAX_HISTORY_ITEMS`` (20) strings,
             each at most 2000 characters; ``null`` means none; anything else (a
             single string included) is refused
k            passages to cite: a whole number (JSON integer) from 1 to ``MAX_K`` (10,
             the UI's maximum); booleans, fractions, NaN, infinities and strings are
             refused
language     passage language: ``auto`` (the question's), ``any`` or the code of a
             language passages are detected in (:func:`language_choices`: 67, such
             as ``es``, ``pt``, ``en``, ``ja``), in any case and with blanks around
             it ignored; ``null`` means ``auto``
============ ========================================================================

``/check`` takes two: ``claim`` (text of 1 to 2000 characters, as a question) and ``k``
(passages to show, as above); :func:`validate_check` checks them the same way.

The schema is :class:`AskRequest` and :class:`CheckRequest`, pydantic models whose fields
check each value with the functions below (so the JSON schema and the messages come from one
place); ``history``, ``k`` and ``language`` have defaults (none, 5, ``auto``) that an omitted
argument takes. A refusal is :class:`~citeqa.errors.RequestError`; the API turns it into
:class:`ApiError`, ``{"error": "<what is wrong and what is accepted>", "field": "<argument>"}``.
A question or claim that the request does not carry at all is refused as missing.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from functools import cache
from typing import Annotated, Any, ClassVar, Self

from pydantic import BaseModel, ConfigDict, PlainValidator, ValidationError

from citeqa.errors import RequestError
from citeqa.qa.questions import MAX_QUESTION_CHARS

MAX_K = 10
MAX_HISTORY_ITEMS = 20


@cache
def language_choices() -> tuple[str, ...]:
    """What ``language`` may be: auto (the question's), any (no preference), or a language
    passages can be detected in."""
    from citeqa.text.language import detected_languages

    return ("auto", "any", *detected_languages())


ARGUMENTS = ("question", "history", "k", "language")
CHECK_ARGUMENTS = ("claim", "k")
DEFAULT_K = 5


def engine_language(choice: str | None) -> str | None:
    """The ``language`` argument of ``Engine.ask`` for a UI choice (auto → None)."""
    return None if choice in (None, "", "auto") else choice


def _validator(check: Callable[[object], object], schema_type: Any) -> PlainValidator:
    """A field checked by ``check`` (which raises RequestError), described as ``schema_type``."""
    return PlainValidator(check, json_schema_input_type=schema_type)


def _text(name: str, value: object) -> str:
    """A question or claim: text of at most ``MAX_QUESTION_CHARS`` characters. Emptiness is judged by
    the engine after cleaning (a question of control characters is empty)."""
    if not isinstance(value, str):
        raise RequestError(name, f"the {name} must be text, not {_kind(value)}")
    if len(value) > MAX_QUESTION_CHARS:
        raise RequestError(name, f"the {name} is too long ({len(value)} characters; the limit is {MAX_QUESTION_CHARS})")
    return value


def _claim(value: object) -> str:
    return _text("claim", value)


def _question(value: object) -> str:
    return _text("question", value)


def _history(value: object) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, (list, tuple)):  # a string too: its characters are no questions, nor is it one
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


def _k(value: object) -> int:
    if type(value) is not int or not 1 <= value <= MAX_K:  # bool is an int subclass: refused too
        raise RequestError("k", f"k must be a whole number from 1 to {MAX_K}, not {_show(value)}")
    return value


def _language(value: object) -> str:
    if value is None:
        return "auto"
    choice = value.strip().lower() if isinstance(value, str) else None
    if choice not in language_choices():
        raise RequestError("language", f"language must be auto, any or a language code such as es, not {_show(value)}")
    return choice


def _kind(value: object) -> str:
    """A JSON reader's name for the type of ``value``."""
    names = {
        bool: "a boolean",
        int: "a number",
        float: "a number",
        list: "a list",
        tuple: "a list",
        dict: "an object",
        str: "text",
        type(None): "null",
    }
    return names.get(type(value), type(value).__name__)


def _show(value: object, limit: int = 40) -> str:
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


class _Request(BaseModel):
    """A checked API request: frozen, no other fields."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    endpoint: ClassVar[str]  # each request's own

    @classmethod
    def from_args(cls, values: Mapping[str, Any]) -> Self:
        """The request for the arguments that were sent; an omitted one takes its default."""
        try:
            return cls.model_validate(dict(values))
        except ValidationError as exc:  # only what the field checks do not judge: missing or unknown names
            error = exc.errors()[0]
            name = str(error["loc"][0]) if error["loc"] else ""
            names = ", ".join(cls.model_fields)
            if error["type"] == "missing":
                raise RequestError(name, f"missing argument: {name} ({cls.endpoint} takes {names})") from None
            raise RequestError(name, f"unknown argument: {name[:40]!r} ({cls.endpoint} takes {names})") from None


class AskRequest(_Request):
    """A checked ``/ask`` request; ``language`` is lower case, one of :func:`language_choices`."""

    endpoint: ClassVar[str] = "/ask"
    question: Annotated[str, _validator(_question, str)]
    history: Annotated[tuple[str, ...], _validator(_history, list[str] | None)] = ()
    k: Annotated[int, _validator(_k, int)] = DEFAULT_K
    language: Annotated[str, _validator(_language, str | None)] = "auto"


def validate_ask(
    question: object, history: object = None, k: object = DEFAULT_K, language: object = "auto"
) -> AskRequest:
    """Check the four ``/ask`` arguments against the schema above; RequestError when one is off."""
    return AskRequest.from_args(dict(zip(ARGUMENTS, (question, history, k, language))))


class CheckRequest(_Request):
    """A checked ``/check`` request."""

    endpoint: ClassVar[str] = "/check"
    claim: Annotated[str, _validator(_claim, str)]
    k: Annotated[int, _validator(_k, int)] = DEFAULT_K


def validate_check(claim: object, k: object = DEFAULT_K) -> CheckRequest:
    """Check the two ``/check`` arguments; RequestError naming the one that is off."""
    return CheckRequest.from_args(dict(zip(CHECK_ARGUMENTS, (claim, k))))


class ApiError(BaseModel):
    """The API's answer to a refused request: what is wrong, and the argument at fault (None when
    no argument is, e.g. a damaged index; left out of the JSON then)."""

    model_config = ConfigDict(frozen=True)

    error: str
    field: str | None = None

    def record(self) -> dict[str, str]:
        """The JSON record sent back: ``{"error": ...}`` plus ``"field"`` when one is named."""
        return self.model_dump(exclude_none=True)


def error_record(exc: RequestError) -> dict[str, str]:
    """The API's error record for a refused argument (``{"error": ..., "field": ...}``)."""
    return ApiError(error=str(exc), field=exc.field).record()
