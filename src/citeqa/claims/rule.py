"""The fitted rule that says when the readings of a claim's values make it supported or conflicting
(:class:`ReadingRule`, data: :data:`RULE_FILE`, written by eval/fit_claim_reading.py), and the sentence
judge's thresholds fitted with it (:func:`judge_block`); :mod:`citeqa.claims.reading` applies it."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields
from functools import cache
from pathlib import Path
from types import MappingProxyType
from typing import Any

from citeqa.claims.questions import FORMS
from citeqa.errors import ConfigError

MODES = ("judge", "reader", "both", "either", "unless")
RULE_FILE = Path(__file__).parent / "weights" / "claim_reading.json"


@dataclass(frozen=True, slots=True)
class ReadingRule:
    """When the readings make a claim supported or conflicting (see :func:`citeqa.claims.reading.combine`). Data: the
    fitted file :data:`RULE_FILE`; these defaults serve without it."""

    form: str = "replace"  #: how the question is formed (:data:`FORMS`)
    passages: int = 4  #: the best retrieved passages the reader reads
    spans: int = 5  #: the reader's best spans looked at, best first
    #: ``supported``: from the judge, the reading, both or either
    support: str = "both"
    #: ``conflicting`` (when not supported): from the judge, the reading, both or either
    conflict: str = "either"
    #: a value counts as read back when its span's score beats the passage's no-answer score by this
    support_margin: float = 0.0
    #: another value counts as the subject's when its span beats the no-answer score by this
    conflict_margin: float = 0.0
    #: a reading of ``same`` this confident vetoes the judge's conflict (+inf: never)
    veto_conflict_margin: float = math.inf
    #: share of the claim's names the sentence read must have for the reading to support / conflict
    support_names: float = 0.0
    conflict_names: float = 0.0
    #: a value read counts as another name's, neither support nor conflict, when the reader reads
    #: that name as its holder (:func:`citeqa.claims.reading.read_holder`) with this margin (+inf: holders not asked)
    holder_margin: float = math.inf
    #: words either side of the document's value that the holder question is read over
    holder_words: int = 30
    #: the judge's conflict is set aside when every value read is another name's: the value it
    #: conflicts with is a neighbour's, not the subject's
    holder_veto: bool = False


def reading_rule(values: Mapping[str, Any] | None = None) -> ReadingRule:
    """:class:`ReadingRule` from the fitted file's data (the file itself when None; defaults if absent)."""
    if values is None:
        values = _rule_file()
    known = {f.name: f.type for f in fields(ReadingRule)}
    unknown = sorted(set(values) - set(known) - {"fitted", "_about", "judge", "direct", "reading_fitted"})
    if unknown:
        raise ConfigError(f"claim reading rule: no such setting {', '.join(unknown)}; refit with eval/fit_claims.py")
    rule = ReadingRule(**{k: v for k, v in values.items() if k in known})
    if rule.form not in FORMS or rule.support not in MODES or rule.conflict not in MODES:
        raise ConfigError(f"claim reading rule: form must be one of {FORMS}, support and conflict one of {MODES}")
    return ReadingRule(
        rule.form,
        int(rule.passages),
        int(rule.spans),
        rule.support,
        rule.conflict,
        float(rule.support_margin),
        float(rule.conflict_margin),
        float(rule.veto_conflict_margin),
        float(rule.support_names),
        float(rule.conflict_names),
        math.inf if rule.holder_margin is None else float(rule.holder_margin),  # null: holders not asked
        int(rule.holder_words),
        bool(rule.holder_veto),
    )


def direct_block() -> dict[str, Any]:
    """The direct-evidence thresholds fitted with the rule (the ``direct`` block of :data:`RULE_FILE`;
    empty without one: :class:`citeqa.claims.direct.DirectRule`'s defaults serve)."""
    block = _rule_file().get("direct", {})
    return dict(block) if isinstance(block, dict) else {}


def judge_block() -> dict[str, Any]:
    """The sentence judge's thresholds fitted to go with the rule (the ``judge`` block of
    :data:`RULE_FILE`; empty without one: the model's own claim thresholds serve)."""
    block = _rule_file().get("judge", {})
    return dict(block) if isinstance(block, dict) else {}


@cache
def _rule_file() -> Mapping[str, Any]:
    """:data:`RULE_FILE`'s data, read once per process (empty without the file)."""
    return MappingProxyType(json.loads(RULE_FILE.read_text("utf-8")) if RULE_FILE.exists() else {})


def rule_dict(rule: ReadingRule) -> dict[str, Any]:
    data = asdict(rule)
    if math.isinf(rule.veto_conflict_margin):
        data["veto_conflict_margin"] = 1e9
    if math.isinf(rule.holder_margin):
        data["holder_margin"] = None
    return data
