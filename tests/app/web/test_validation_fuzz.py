"""Property-based tests of the API's payload validation (``app/web/validation.py``): any JSON-like value for
any argument of ``/ask`` and ``/check``, and any set of argument names, gives a checked request within the
schema or a :class:`~citeqa.errors.RequestError` naming a field, in one line; any other exception fails.

The full runs (1,000 examples each) are marked ``slow``; the default suite runs a few.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from citeqa.app.web.validation import (
    ARGUMENTS,
    CHECK_ARGUMENTS,
    MAX_HISTORY_ITEMS,
    MAX_K,
    AskRequest,
    CheckRequest,
    language_choices,
    validate_ask,
    validate_check,
)
from citeqa.errors import RequestError
from citeqa.qa.questions import MAX_QUESTION_CHARS


def _fuzz(examples: int, *, quick: bool) -> Callable:
    return settings(
        max_examples=examples,
        deadline=None,
        database=None,
        derandomize=quick,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )


FULL = 1000
QUICK = 100

TEXT = st.text(max_size=20)
NUMBERS = st.integers() | st.floats() | st.integers(-(10**4000), 10**4000)  # a JSON number has up to 4,300 digits
SCALARS = st.none() | st.booleans() | NUMBERS | TEXT
JSON_VALUES = st.recursive(
    SCALARS, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3), max_leaves=8
)
LONG_TEXT = st.text(min_size=MAX_QUESTION_CHARS - 2, max_size=MAX_QUESTION_CHARS + 2)


def mostly(valid: st.SearchStrategy, other: st.SearchStrategy) -> st.SearchStrategy:
    """``valid`` four times in five, else ``other``: a refusal must not be all the test sees."""
    return st.integers(0, 4).flatmap(lambda n: other if n == 0 else valid)


QUESTIONS = mostly(TEXT, LONG_TEXT | JSON_VALUES)
HISTORIES = mostly(
    st.none() | st.lists(TEXT, max_size=3) | TEXT,
    st.lists(TEXT, min_size=MAX_HISTORY_ITEMS - 1, max_size=MAX_HISTORY_ITEMS + 1)
    | st.lists(LONG_TEXT, max_size=2)
    | st.lists(JSON_VALUES, max_size=3)
    | JSON_VALUES,
)
KS = mostly(st.integers(1, MAX_K), st.integers(-2, MAX_K + 2) | NUMBERS | JSON_VALUES)


@st.composite
def _languages(draw: st.DrawFn) -> Any:
    choice = draw(st.sampled_from(language_choices()))
    spelled = st.sampled_from([choice, choice.upper(), f" {choice}\t", choice.title()])
    return draw(mostly(spelled, st.none() | TEXT | JSON_VALUES))


def _refused_in_one_line(exc: RequestError, fields: tuple[str, ...]) -> None:
    message = str(exc)
    assert exc.field in fields and message and len(message.splitlines()) == 1, (exc.field, message)


def check_ask(question: Any, history: Any, k: Any, language: Any) -> None:
    try:
        request = validate_ask(question, history, k, language)
    except RequestError as exc:
        _refused_in_one_line(exc, ARGUMENTS)
        return
    assert isinstance(request.question, str) and len(request.question) <= MAX_QUESTION_CHARS
    assert len(request.history) <= MAX_HISTORY_ITEMS
    assert all(isinstance(h, str) and len(h) <= MAX_QUESTION_CHARS for h in request.history)
    assert type(request.k) is int and 1 <= request.k <= MAX_K and request.language in language_choices()


def check_check(claim: Any, k: Any) -> None:
    try:
        request = validate_check(claim, k)
    except RequestError as exc:
        _refused_in_one_line(exc, CHECK_ARGUMENTS)
        return
    assert isinstance(request.claim, str) and len(request.claim) <= MAX_QUESTION_CHARS
    assert type(request.k) is int and 1 <= request.k <= MAX_K


def check_named(model: type[AskRequest] | type[CheckRequest], values: dict[str, Any]) -> None:
    """A named call (``/call/v2/ask``, gradio_client's keywords): any names, any values."""
    try:
        model.from_args(values)
    except RequestError as exc:
        assert exc.field in (*model.model_fields, *values) and len(str(exc).splitlines()) == 1, str(exc)


def named(required: str, optional: dict[str, st.SearchStrategy]) -> st.SearchStrategy:
    """Named arguments: mostly the endpoint's own (one sometimes missing, sometimes another endpoint's), else any."""
    return mostly(
        st.fixed_dictionaries({required: QUESTIONS}, optional=optional)
        | st.fixed_dictionaries({}, optional={required: QUESTIONS, **optional}),
        st.dictionaries(st.sampled_from([*ARGUMENTS, *CHECK_ARGUMENTS]) | TEXT, JSON_VALUES, max_size=5),
    )


NAMED_ASK = named("question", {"history": HISTORIES, "k": KS, "language": _languages()})
NAMED_CHECK = named("claim", {"k": KS, "question": QUESTIONS})


@pytest.mark.slow
@_fuzz(FULL, quick=False)
@given(question=QUESTIONS, history=HISTORIES, k=KS, language=_languages())
def test_any_ask_arguments_are_checked_or_refused_in_one_line(question, history, k, language):
    check_ask(question, history, k, language)


@pytest.mark.slow
@_fuzz(FULL, quick=False)
@given(claim=QUESTIONS, k=KS)
def test_any_check_arguments_are_checked_or_refused_in_one_line(claim, k):
    check_check(claim, k)


@pytest.mark.slow
@_fuzz(FULL, quick=False)
@given(ask=NAMED_ASK, check=NAMED_CHECK)
def test_any_named_arguments_are_checked_or_refused_in_one_line(ask, check):
    check_named(AskRequest, ask)
    check_named(CheckRequest, check)


@_fuzz(QUICK, quick=True)
@given(
    question=QUESTIONS,
    history=HISTORIES,
    k=KS,
    language=_languages(),
    claim=QUESTIONS,
    ask=NAMED_ASK,
    check=NAMED_CHECK,
)
def test_a_few_payloads_are_checked_or_refused_in_one_line(question, history, k, language, claim, ask, check):
    """The default suite's short run of the three tests above (a fixed sample)."""
    check_ask(question, history, k, language)
    check_check(claim, k)
    check_named(AskRequest, ask)
    check_named(CheckRequest, check)
