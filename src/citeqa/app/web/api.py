"""The ``/ask`` and ``/check`` endpoints: Gradio's own API (``gr.api``), typed by the request models
of :mod:`citeqa.app.web.validation`.

Each endpoint's signature is its schema as Gradio shows it (``/gradio_api/info``, the page's
"Use via API"): ``/ask`` (question, history=None, k=5, language="auto") and ``/check`` (claim, k=5);
``gradio_client`` and the named route ``/gradio_api/call/v2/ask`` fill an omitted argument with its
default. The values reach :func:`ask_record` as sent (``gr.api`` never converts them), so the
request model, not a component's conversion (``float("abc")``), judges them and says why.

A positional call that sends fewer values than the endpoint has parameters never reaches these
functions: Gradio refuses it before any event function runs (with a traceback in the log), so under
``citeqa serve`` the guard answers it first, naming the missing argument (:func:`arguments_of`); one
that sends more, which Gradio would cut to size, and a call by name with an argument the endpoint
lacks or without a required one (:func:`required_of`) are refused by the guard too.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from citeqa.app.web.api_types import answer_reply, check_reply, documented
from citeqa.app.web.holder import ANSWER_CONCURRENCY, ANSWER_GROUP, CHECK_CONCURRENCY, CHECK_GROUP, EngineHolder
from citeqa.app.web.validation import DEFAULT_K, ApiError, AskRequest, CheckRequest, engine_language, error_record
from citeqa.errors import CiteqaError, QuestionError, RequestError

if TYPE_CHECKING:
    from citeqa.claims.check import ClaimCheck
    from citeqa.records import Answer

#: The endpoints' request models.
REQUESTS: dict[str, type[AskRequest] | type[CheckRequest]] = {"ask": AskRequest, "check": CheckRequest}
#: The endpoints' parameters, in the order a positional call sends them.
ENDPOINTS: dict[str, tuple[str, ...]] = {name: tuple(model.model_fields) for name, model in REQUESTS.items()}


def ask_record(
    holder: EngineHolder, question: Any, history: Any = None, k: Any = DEFAULT_K, language: Any = "auto"
) -> dict[str, Any]:
    """The ``/ask`` API: the answer record as JSON, or ``{"error": message, "field": argument}``.

    ``field`` names the argument at fault (absent when no argument is, e.g. a damaged index).
    """

    def answer() -> Answer:
        request = AskRequest.from_args({"question": question, "history": history, "k": k, "language": language})
        return holder.engine.ask(
            request.question, history=request.history, k=request.k, language=engine_language(request.language)
        )

    return _record(answer, "question")


def check_record(holder: EngineHolder, claim: Any, k: Any = DEFAULT_K) -> dict[str, Any]:
    """The ``/check`` API: the claim check record as JSON, or ``{"error": message, "field": argument}``."""

    def checked() -> ClaimCheck:
        request = CheckRequest.from_args({"claim": claim, "k": k})
        return holder.engine.check(request.claim, k=request.k)

    return _record(checked, "claim")


def _record(run: Callable[[], Answer | ClaimCheck], text_field: str) -> dict[str, Any]:
    """``run()``'s record as JSON, or the error record: a refused argument names itself, a text the
    engine cannot take names ``text_field``, any other citeqa error names no argument."""
    try:
        return run().to_dict()
    except RequestError as exc:
        return error_record(exc)
    except QuestionError as exc:
        return ApiError(error=str(exc), field=text_field).record()
    except CiteqaError as exc:
        return ApiError(error=str(exc)).record()


def add_endpoints(gr: Any, holder: EngineHolder) -> None:
    """Declare ``/ask`` and ``/check`` in the Blocks being built (inside its ``with`` block)."""

    def ask(
        question: str, history: list[str] | None = None, k: int = DEFAULT_K, language: str = "auto"
    ) -> dict[str, Any]:
        """An answer with its cited passages (the answer record), or an error record naming the argument."""
        return ask_record(holder, question, history, k, language)

    def check(claim: str, k: int = DEFAULT_K) -> dict[str, Any]:
        """Whether the documents support a claim (the claim check record), or an error record."""
        return check_record(holder, claim, k)

    # the records' types, so that the API's documentation (view_api, "Use via API") shows their fields
    gr.api(
        documented(ask, answer_reply()),
        api_name="ask",
        concurrency_limit=ANSWER_CONCURRENCY,
        concurrency_id=ANSWER_GROUP,
    )
    gr.api(
        documented(check, check_reply()),
        api_name="check",
        concurrency_limit=CHECK_CONCURRENCY,
        concurrency_id=CHECK_GROUP,
    )


def arguments_of(api_name: str) -> tuple[str, ...] | None:
    """The parameters of the endpoint named ``api_name`` (None: not one of the API's)."""
    return ENDPOINTS.get(api_name)


def required_of(api_name: str) -> frozenset[str]:
    """The parameters of the endpoint named ``api_name`` that have no default (none: not one of the API's)."""
    model = REQUESTS.get(api_name)
    fields = model.model_fields if model is not None else {}
    return frozenset(name for name, field in fields.items() if field.is_required())
