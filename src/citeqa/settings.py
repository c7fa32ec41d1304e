"""Everything the engine is set with: the answer settings and the claim thresholds, both fitted per
embedding model and changed only by name.

The answer side (:class:`~citeqa.qa.settings.AnswerSettings`) knows nothing of claims; the claim
side (:class:`~citeqa.claims.thresholds.ClaimThresholds`) is built on it. :class:`Settings` holds
the two, so that one list of names ("pool", "retrieval.dense_weight", "claims.conflict_cover")
changes either, and an unknown name is a :class:`~citeqa.errors.ConfigError` that lists them all.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from citeqa.claims.thresholds import ClaimThresholds, claim_thresholds
from citeqa.errors import ConfigError
from citeqa.qa import settings as answer_settings
from citeqa.qa.scoring import read_weights
from citeqa.qa.settings import AnswerSettings, checked_setting

#: The prefix of the claim thresholds' names ("claims.conflict_cover"); "claims" alone is all of them.
CLAIMS = "claims"


@dataclass(frozen=True, slots=True)
class Settings:
    """The answer settings and the claim thresholds fitted for one model (:meth:`for_model`),
    changed by name with :meth:`with_overrides`."""

    answer: AnswerSettings
    claims: ClaimThresholds

    @classmethod
    def for_model(cls, model: str, reader: bool = False) -> Settings:
        """The settings fitted for ``model``'s vectors (see :meth:`AnswerSettings.for_model` and
        :func:`~citeqa.claims.thresholds.fitted_thresholds`), the model's weights file read once; an
        unknown key is a ConfigError."""
        weights = read_weights(model)
        return cls(AnswerSettings.for_model(model, reader, weights), claim_thresholds(weights.get(CLAIMS, {})))

    def with_overrides(self, overrides: Mapping[str, Any] | None = None, **named: Any) -> Settings:
        """A copy with the named settings changed: an answer setting (as
        :meth:`AnswerSettings.with_overrides` names it), a claim threshold ("claims.conflict_cover")
        or all of them ("claims"). An unknown name, or a value of the wrong kind, is a ConfigError."""
        changes = {**(overrides or {}), **named}
        known = set(setting_names())
        for name in changes:
            if name not in known:
                raise ConfigError(f"no such setting {name!r}; {setting_names_help()}")
        claims = self.claims
        if CLAIMS in changes:
            claims = checked_setting(Settings, CLAIMS, changes[CLAIMS], "")
        prefix = f"{CLAIMS}."
        thresholds = {
            n[len(prefix) :]: checked_setting(ClaimThresholds, n[len(prefix) :], v, CLAIMS)
            for n, v in changes.items()
            if n.startswith(prefix)
        }
        answer = {n: v for n, v in changes.items() if n != CLAIMS and not n.startswith(prefix)}
        return Settings(self.answer.with_overrides(answer), dataclasses.replace(claims, **thresholds))


def setting_names() -> tuple[str, ...]:
    """Every name :meth:`Settings.with_overrides` accepts: the answer settings', then the claims'."""
    claims = tuple(f"{CLAIMS}.{f.name}" for f in dataclasses.fields(ClaimThresholds))
    return (*answer_settings.setting_names(), CLAIMS, *claims)


def setting_names_help() -> str:
    return f"known settings: {', '.join(setting_names())}"
