"""The API documents what /ask and /check return and take: gradio_client's view_api on a served app shows the
records' fields, not ``Any``, and ``history`` as ``list[str] | None``; the schema it reads matches the records."""

from __future__ import annotations

from typing import Any

QUESTION = "When was the windmill of Greyhill restored?"
CLAIM = "The windmill of Greyhill was restored in 2004."


def _fields(schema: dict[str, Any], record: Any, where: str = "") -> list[str]:
    """Where ``record`` and the JSON ``schema`` disagree: an object's keys, or a value of another type."""
    kinds = {"string": str, "integer": int, "number": (int, float), "boolean": bool, "null": type(None)}
    if "oneOf" in schema or "anyOf" in schema:
        options = schema.get("oneOf", schema.get("anyOf"))
        return [] if any(not _fields(option, record, where) for option in options) else [f"{where}: no option fits"]
    kind = schema.get("type")
    if kind == "object":
        if not isinstance(record, dict) or set(record) != set(schema["properties"]):
            return [f"{where}: keys {sorted(record) if isinstance(record, dict) else record!r}"]
        return [p for key, value in record.items() for p in _fields(schema["properties"][key], value, f"{where}.{key}")]
    if kind == "array":
        if not isinstance(record, list):
            return [f"{where}: not a list"]
        return [p for i, item in enumerate(record) for p in _fields(schema["items"], item, f"{where}[{i}]")]
    ok = isinstance(record, kinds[kind]) and not (kind in ("integer", "number") and isinstance(record, bool))
    return [] if ok else [f"{where}: {record!r} is not {kind}"]


def test_view_api_documents_the_records_and_the_history_type(served: str):
    from gradio_client import Client

    client = Client(served, verbose=False)
    info = client.view_api(print_info=False, return_format="dict")["named_endpoints"]
    shown = client.view_api(print_info=False, return_format="str")
    ask, check = info["/ask"], info["/check"]
    returns = ask["returns"][0]["python_type"]["type"]
    assert returns.startswith("dict(question: str, language: str, answer: None | str, abstained: bool, ")
    assert (
        "citations: list[dict(doc_id: str, title: str, lang: str, start: int, end: int, text: str, score: float)]"
        in (returns)
    )
    assert returns.endswith(" | dict(error: str, field: str)")
    returned = check["returns"][0]["python_type"]["type"]
    assert returned.startswith("dict(claim: str, language: str, verdict: str, message: str, evidence: list[dict(")
    assert returned.endswith(" | dict(error: str, field: str)")
    assert "Any" not in returns + returned
    history = next(p for p in ask["parameters"] if p["parameter_name"] == "history")
    assert history["python_type"]["type"] == "list[str]" and history["parameter_default"] is None
    assert "history: list[str] | None (not required" in shown and "None | list[str]" not in shown

    answer = client.predict(QUESTION, None, 3, "auto", api_name="/ask")
    verdict = client.predict(CLAIM, 3, api_name="/check")
    refused = client.predict(QUESTION, None, 99, "auto", api_name="/ask")
    assert answer["citations"] and verdict["evidence"] and refused["field"] == "k"
    for endpoint, record in (("/ask", answer), ("/check", verdict), ("/ask", refused)):
        schema = info[endpoint]["returns"][0]["type"]
        assert _fields(schema, record, endpoint) == []


def test_the_error_record_type_has_the_api_error_s_fields():
    from citeqa.app.web.api_types import ErrorRecord
    from citeqa.app.web.validation import ApiError

    assert set(ErrorRecord.__annotations__) == set(ApiError.model_fields) and ErrorRecord.__required_keys__ == {"error"}
