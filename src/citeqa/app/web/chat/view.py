"""The chat as HTML: each turn's reply with its own sources under it, and the conversation as a log.

A turn's source cards carry ids unique in the conversation (:func:`~citeqa.app.web.chat.answers.card_id`),
so the ``[n]`` links of every reply, old or new, lead to that reply's own sources. Every piece of
document or user text is escaped by :mod:`citeqa.app.web.escape`; the labels screen readers get are
plain text.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from citeqa.app import cited
from citeqa.app.web.chat import answers, claims
from citeqa.app.web.escape import safe, safe_block
from citeqa.messages import claim_labels, labels
from citeqa.qa.questions import MAX_QUESTION_CHARS
from citeqa.qa.scoring import Band
from citeqa.records import Answer, Document, DocumentInfo

if TYPE_CHECKING:
    from citeqa.claims.check import ClaimCheck

Message = dict[str, str]  #: {"role": "user" | "assistant", "content": HTML, "label": plain text}


def next_turn(messages: Sequence[Message]) -> int:
    """The number of the turn about to be added (1 for the first)."""
    return 1 + sum(1 for m in messages if m.get("role") == "assistant")


def user_message(text: str, lang: str) -> Message:
    """The user's question or claim, inert."""
    return {"role": "user", "content": answers.user_html(text), "label": f"{labels(lang)['you']}: {text}"}


def answer_message(
    answer: Answer,
    turn: int,
    documents: Mapping[str, Document],
    infos: Mapping[str, DocumentInfo],
    show_confidence: bool = True,
    bands: Sequence[Band] = (),
) -> Message:
    """The reply to a question: the answer (or "not found"), then its sources; ``bands``: the engine's
    confidence bands (``settings.answer_bands()``)."""
    possible = cited.hedged(answer, bands)
    reply = answers.answer_html(answer, show_confidence, turn, bands)
    sources = answers.answer_sources_html(answer, documents, infos, turn, open_first=possible)
    return {"role": "assistant", "content": reply + sources, "label": answer_label(answer, bands)}


def check_message(
    check: ClaimCheck, turn: int, documents: Mapping[str, Document], infos: Mapping[str, DocumentInfo]
) -> Message:
    """The reply to a claim: the verdict and its message, then the passages that bear on it."""
    lab = claim_labels(check.language)
    return {
        "role": "assistant",
        "content": claims.check_html(check, turn) + claims.check_sources_html(check, documents, infos, turn),
        "label": f"citeqa: {lab[check.verdict]}: {check.message}",
    }


def answer_label(answer: Answer, bands: Sequence[Band] = ()) -> str:
    """The reply as one plain sentence, for screen readers, with its band's word."""
    lab = labels(answer.language)
    if answer.abstained or answer.answer is None:
        return f"citeqa: {lab['not_found']}"
    _, word, _ = cited.band_words(answer, bands)
    if cited.hedged(answer, bands):
        return f"citeqa: {lab['possible']} {answer.answer} ({word})"
    return f"citeqa: {answer.short_answer or answer.answer} ({word})"


def conversation_html(messages: Sequence[Message], lang: str = "en") -> str:
    """The conversation as an ARIA log of articles, each named by its plain-text label."""
    lab = labels(lang)
    if not messages:
        body = f'<p class="citeqa-empty">{safe(lab["empty_chat"])}</p>'
    else:
        body = "".join(
            f'<article class="citeqa-msg citeqa-{"user" if m.get("role") == "user" else "bot"}" '
            f'aria-label="{safe_block(m.get("label", ""))}">{m.get("content", "")}</article>'
            for m in messages
        )
    return (
        f'<div class="citeqa-log" role="log" aria-live="polite" aria-label="{safe_block(lab["conversation"])}">'
        f"{body}</div>"
    )


def input_refusal(text: str, lang: str, claim: bool = False) -> str | None:
    """Why ``text`` (a question, or a ``claim``) is not taken as a turn (blank, or longer than the
    limit), in ``lang``; None when it is."""
    lab = labels(lang)
    stripped = text.strip()
    if not stripped:
        return lab["empty_claim" if claim else "empty_question"]
    if len(stripped) > MAX_QUESTION_CHARS:
        return lab["too_long"].format(n=len(stripped), limit=MAX_QUESTION_CHARS)
    return None


def question_info_html(lang: str, refusal: str = "") -> str:
    """Under the question box: a refusal (why the input was not taken), and the character counter
    that the page's script fills in."""
    fmt = labels(lang)["counter"]
    shown = f'<p class="citeqa-refusal" role="alert">{safe(refusal)}</p>' if refusal else ""
    return f'{shown}<span id="question-count" data-format="{safe_block(fmt)}"></span>'
