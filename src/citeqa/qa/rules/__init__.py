"""The hand-written short-answer rules, behind one entry: :func:`rule_answer`.

Beside the reader, these pick the short answer of the chosen sentence: the fact of the kind the
question asks for (a date, a quantity, a price, a name, a place) that the question's terms
support most (:func:`~citeqa.qa.rules.short_answer.short_answer_in`), and the phrase to
highlight when there is none (:func:`~citeqa.qa.rules.short_answer.highlight_in`). The pipeline
calls :func:`rule_answer` and nothing else here, so the package can go as a unit (the short
answer then comes from the reader alone). The facts themselves and what a question asks for
(:class:`~citeqa.qa.answer_types.Wanted`) live in :mod:`citeqa.qa.answer_types`, which the
ranker's features read too.
"""

from __future__ import annotations

from dataclasses import dataclass

from citeqa.qa.answer_types import Wanted
from citeqa.qa.rules.short_answer import highlight_in, short_answer_in
from citeqa.records import Highlight

__all__ = ["RuleAnswer", "rule_answer"]


@dataclass(frozen=True, slots=True)
class RuleAnswer:
    """What the rules find in an answer sentence, as offsets into its text (the frame of
    :class:`~citeqa.records.Highlight`): the short answer (None: the question asks for no fact, or
    the sentence holds none the question supports) and the key phrase to highlight (the short
    answer, else its fact of the expected kind, or of any kind)."""

    short: Highlight | None
    key: Highlight | None


def rule_answer(wanted: Wanted, text: str, lang: str) -> RuleAnswer:
    """The rules' short answer and key phrase in ``text`` (an answer sentence in ``lang``) for the
    question ``wanted`` describes."""
    short = short_answer_in(
        text,
        lang,
        wanted.kind,
        wanted.words,
        set(wanted.query_terms(lang)),
        question=wanted.question,
        shape=wanted.shape,
        find=wanted.find_entities,
        own_terms=frozenset(wanted.question_terms(lang)),
    )
    if short is not None:
        return RuleAnswer(short, short)
    key = highlight_in(text, wanted.kind, wanted.words, lang, find=wanted.find_entities)
    return RuleAnswer(None, key)
