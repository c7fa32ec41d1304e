"""The shape of a call to one of Gradio's event routes, checked before Gradio reads it.

Gradio answers some malformed calls with a 500 and a traceback in the log (an unknown endpoint
name, an unknown or missing argument of ``/call/v2/NAME``, an ``fn_index`` that names no event),
others with FastAPI's 422 listing every pydantic error with the input echoed back, and silently
drops fields and positional values it does not take. :func:`check_call` refuses each of these with
one line (a :class:`~citeqa.app.web.guard.middleware.Refusal`) before the app sees the request:

- ``/gradio_api/call/NAME``, ``run/NAME``, ``api/NAME`` (positional): the body must be a JSON
  object that fits Gradio's body model (``SimplePredictBody`` for ``call/``, ``PredictBody`` for
  the others) with no field the model lacks; ``NAME`` must be an event's API name whose
  visibility is not private (the page reaches its private events through ``queue/join``), unless
  the body's ``fn_index`` names the event, as Gradio's page does for an unqueued event (on ``run/``
  and ``api/``, where ``fn_index`` must then be an event, and the one ``NAME`` names if any);
- ``/gradio_api/call/v2/NAME`` (by name): ``NAME`` must be an endpoint of citeqa's API, and the body
  an object holding its arguments by name: every required one, nothing else (``oauth_token``, which
  Gradio takes itself, aside);
- ``/gradio_api/queue/join`` (the page's route, and ``gradio_client``'s): the body must fit
  ``PredictBody`` (fields it lacks are let through, as Gradio does) and its ``fn_index`` be an event.

How many values a positional call of the API sends is checked by the guard with the endpoint's
parameters (:func:`citeqa.app.web.guard.middleware.Guard.check_files`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ValidationError

from citeqa.app.web.guard.middleware import Refusal
from citeqa.messages import SERVER

PREFIX = "/gradio_api/"
V2 = "call/v2/"
POSITIONAL = ("call/", "run/", "api/")
JOIN = "queue/join"
#: Fields of a by-name call that are Gradio's, not the endpoint's arguments.
V2_OWN = frozenset({"oauth_token"})

#: An API endpoint's parameters in order, and those without a default.
Parameters = tuple[tuple[str, ...], frozenset[str]]


def check_call(fns: Mapping[int, Any], api: Mapping[str, Parameters], path: str, data: Any) -> None:
    """Refusal for a POST to a Gradio event route at ``path`` whose JSON body ``data`` (None: empty) does
    not fit it; nothing for any other route.

    ``fns`` are the app's events by id (``Blocks.fns``), ``api`` the public API's endpoints by name.
    """
    if not path.startswith(PREFIX):
        return
    route = path[len(PREFIX) :]
    if route.rstrip("/") == JOIN:
        from gradio.data_classes import PredictBody

        index = _parsed(PredictBody, data).fn_index
        if index is not None and index not in fns:
            raise Refusal(404, SERVER["unknown_event"].format(index=index))
        return
    if route.startswith(V2):
        _check_by_name(api, route[len(V2) :].strip("/"), data)
        return
    for prefix in POSITIONAL:
        if route.startswith(prefix):
            _check_positional(fns, prefix, route[len(prefix) :].strip("/"), data)
            return


def _check_by_name(api: Mapping[str, Parameters], name: str, data: Any) -> None:
    if name not in api:
        raise Refusal(404, _unknown_endpoint(name, api))
    if not isinstance(data, dict):
        raise Refusal(422, SERVER["body_not_object"].format(shape='{"argument": value, ...}'))
    names, required = api[name]
    takes = ", ".join(names)
    for key in data:
        if key not in names and key not in V2_OWN:
            shown = _shown(key)
            raise Refusal(
                422, SERVER["unknown_argument"].format(name=shown, endpoint=f"/{name}", names=takes), field=key[:40]
            )
    for key in names:
        if key in required and key not in data:
            raise Refusal(422, SERVER["missing_argument"].format(name=key, endpoint=f"/{name}", names=takes), field=key)


def _check_positional(fns: Mapping[int, Any], prefix: str, name: str, data: Any) -> None:
    from gradio.data_classes import PredictBody, SimplePredictBody

    model: type[BaseModel] = SimplePredictBody if prefix == "call/" else PredictBody
    route = f"{PREFIX}{prefix}{name}"
    if isinstance(data, dict):
        for key in data:
            if key not in model.model_fields:
                fields = ", ".join(model.model_fields)
                raise Refusal(422, SERVER["unknown_field"].format(field=_shown(key), route=route, fields=fields))
    named = next((i for i, fn in fns.items() if fn.api_name == name), None)
    index = getattr(_parsed(model, data), "fn_index", None)
    if index is not None:  # run/ and api/ only: call/'s model has no fn_index
        if index not in fns:
            raise Refusal(404, SERVER["unknown_event"].format(index=index))
        if named is not None and named != index:
            raise Refusal(422, SERVER["other_event"].format(index=index, route=route))
        return
    if named is None or fns[named].api_visibility == "private":
        public = {fn.api_name: () for fn in fns.values() if fn.api_visibility == "public" and fn.api_name}
        raise Refusal(404, _unknown_endpoint(name, public))


def _parsed(model: type[BaseModel], data: Any) -> Any:
    """``data`` read by Gradio's body ``model`` as its route would; Refusal with the first problem."""
    if not isinstance(data, dict):
        raise Refusal(422, SERVER["body_not_object"].format(shape='{"data": [value, ...]}'))
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        error = exc.errors()[0]
        field = ".".join(str(part) for part in error["loc"]) or "body"
        if error["type"] == "missing":
            raise Refusal(422, SERVER["missing_field"].format(field=field)) from None
        raise Refusal(422, SERVER["bad_field"].format(field=field, problem=error["msg"])) from None


def _unknown_endpoint(name: str, api: Mapping[str, Any]) -> str:
    return SERVER["unknown_endpoint"].format(name=_shown(name), names=", ".join(f"/{n}" for n in api))


def _shown(text: str, limit: int = 40) -> str:
    """A name from the request for a message: quoted, printable, at most ``limit`` characters."""
    printable = "".join(c if c.isprintable() else "?" for c in text[:limit])
    return repr(printable) + ("…" if len(text) > limit else "")
