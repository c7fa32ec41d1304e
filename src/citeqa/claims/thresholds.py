"""When a claim counts as backed: the thresholds of :func:`citeqa.claims.judge.unit_relation`.

Fitted values are data, one set per embedding model: the ``claims`` block of the model's weights
file (``qa/weights/<model>.json``), written by ``eval/fit_claims.py --write``. They are part of
the engine's settings (:class:`citeqa.settings.Settings`), beside the answer settings, which
know nothing of claims.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

from citeqa.errors import ConfigError
from citeqa.qa.scoring import read_weights


@dataclass(frozen=True, slots=True)
class ClaimThresholds:
    """The thresholds of :func:`~citeqa.claims.judge.unit_relation` (:func:`fitted_thresholds`: those
    fitted for a model). The defaults serve a weights file without a ``claims`` block."""

    #: a claim with numbers or dates, all of them the same in the sentence: share of its names in the unit
    support_names_facts: float = 1.0
    #: ... share of its other words the sentence must say in any case (above 0: some of its predicate)
    support_cover_min_facts: float = 0.01
    #: ... and either this share of them
    support_cover_facts: float = 0.5
    #: ... or this cosine of the sentence to the claim
    support_dense_facts: float = 0.9
    #: a claim without numbers or dates: the same four
    support_names_plain: float = 1.0
    support_cover_min_plain: float = 0.01
    support_cover_plain: float = 0.6
    support_dense_plain: float = 0.9
    #: another value in the claim's place is a conflict when the unit has this share of the claim's names
    conflict_names: float = 1.0
    #: ... and either this share of its other words
    conflict_cover: float = 0.3
    #: ... or this cosine of the sentence to the claim
    conflict_dense: float = 0.85


def claim_thresholds(values: Mapping[str, Any]) -> ClaimThresholds:
    """:class:`ClaimThresholds` from a weights file's ``claims`` block; unknown names are a ConfigError."""
    known = {f.name for f in fields(ClaimThresholds)}
    unknown = sorted(set(values) - known - {"fitted"})
    if unknown:
        raise ConfigError(f"claim thresholds: no such threshold {', '.join(unknown)}; refit with eval/fit_claims.py")
    return ClaimThresholds(**{k: float(v) for k, v in values.items() if k in known})


def fitted_thresholds(model: str) -> ClaimThresholds:
    """The thresholds fitted for ``model``'s vectors (the defaults where its weights file has no
    ``claims`` block); an unknown name in it is a ConfigError."""
    return claim_thresholds(read_weights(model).get("claims", {}))
