"""What ``/ask`` and ``/check`` send back, as types that Gradio turns into the API's documentation.

Gradio documents a ``gr.api`` endpoint from its function's type hints: ``typing.get_type_hints`` for
the parameters, ``inspect.signature(fn).return_annotation`` for the result (left a string under
``from __future__ import annotations``, which it reads as ``Any``), each turned into JSON schema by
``gradio_client.utils.python_type_to_json_schema``; ``Client.view_api`` shows that schema as a Python
type, with `` | None`` added to a parameter whose default is None. A TypedDict reads there as
``dict(name: type, ...)``, so the records are declared as TypedDicts made from their dataclasses
(:class:`~citeqa.records.Answer`, :class:`~citeqa.claims.check.ClaimCheck`): the documentation cannot
drift from what ``to_dict`` writes.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import types
import typing
from collections.abc import Callable
from typing import Any, TypedDict, TypeVar, Union

F = TypeVar("F", bound=Callable[..., Any])


class _Error(TypedDict):
    error: str


class ErrorRecord(_Error, total=False):
    """A refused request (:class:`~citeqa.app.web.validation.ApiError`): what is wrong, and the argument
    at fault when one is."""

    field: str


@functools.cache
def record_type(cls: type) -> Any:
    """A TypedDict named after dataclass ``cls`` with its fields as :func:`~citeqa.records.to_dict`
    writes them: a nested dataclass as its own TypedDict, a tuple as a list."""
    hints = typing.get_type_hints(cls)
    make: Any = TypedDict  # the functional form, with a name known only when called
    return make(cls.__name__, {f.name: _json_type(hints[f.name]) for f in dataclasses.fields(cls)})


def _json_type(tp: Any) -> Any:
    """``tp`` as the JSON data of a value of that type reads: dataclasses as TypedDicts, tuples as lists."""
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        return record_type(tp)
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin is tuple and len(args) == 2 and args[1] is Ellipsis:
        return list[_json_type(args[0])]  # type: ignore[misc]  # an item type known only when called
    if origin in (Union, types.UnionType):
        return Union[tuple(_json_type(a) for a in args)]  # noqa: UP007  # a union of types known only when called
    if origin is list:
        return list[_json_type(args[0])]  # type: ignore[misc]
    return tp


def answer_reply() -> Any:
    """What ``/ask`` returns: the answer record, or an error record."""
    from citeqa.records import Answer

    return Union[record_type(Answer), ErrorRecord]  # noqa: UP007


def check_reply() -> Any:
    """What ``/check`` returns: the claim check record, or an error record."""
    from citeqa.claims.check import ClaimCheck

    return Union[record_type(ClaimCheck), ErrorRecord]  # noqa: UP007


def documented(fn: F, returns: Any) -> F:
    """``fn`` with the annotations Gradio documents it by: its own, resolved, returning ``returns``;
    a parameter whose default is None declared without ``None`` (the client adds `` | None`` for that
    default itself, and would otherwise show ``None | list[str] | None``)."""
    hints = typing.get_type_hints(fn)
    for name, parameter in inspect.signature(fn).parameters.items():
        if parameter.default is None and typing.get_origin(hints[name]) in (Union, types.UnionType):
            kept = tuple(a for a in typing.get_args(hints[name]) if a is not type(None))
            hints[name] = Union[kept] if len(kept) > 1 else kept[0]  # noqa: UP007
    hints["return"] = returns
    fn.__annotations__ = hints
    return fn
