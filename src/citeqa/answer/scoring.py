"""The answer scorer: a logistic ranker over named span features, and a calibration of its choice.

The ranker's logit orders the candidate spans; the calibration turns the ranker score and
a few features of a span into the observed probability that it is a right answer, which
is the answer's ``confidence``; below ``abstain_below`` the engine abstains.

The parameters are data, not code: ``weights/<model>.json`` beside this module, one file per
embedding model (its vectors give the dense signals their scale), keyed by feature name, with
the retrieval fusion weights and how they were fitted. ``eval/fit_scorer.py --write`` writes it,
with ``headline_above``: the confidence from which answers were right often enough out of fold to be
shown as the answer (below it, a reader sees a possible answer and its source).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from types import MappingProxyType
from typing import Any

import numpy as np

from citeqa.answer.features import FEATURES
from citeqa.errors import ConfigError, ScoreError

#: The calibration's own inputs besides span features: the ranker's logit, and its lead over
#: the best other span (0 or less for every span but the best): a clear winner is more often right.
RANKER_SCORE = "ranker_score"
RANKER_MARGIN = "ranker_margin"
CALIBRATION_INPUTS = (RANKER_SCORE, RANKER_MARGIN, *FEATURES)
WEIGHTS_FORMAT = 1
WEIGHTS_DIR = "weights"
#: Weights for a model without a file of its own: fitted without the dense signals, whose scale
#: differs from model to model (eval/fit_scorer.py --generic).
FALLBACK_MODEL = "any-model"
#: Suffix of a weights file fitted with the reader's features (``<model>+reader.json``).
READER_SUFFIX = "+reader"
#: The blocks of a weights file: the scorer's (:meth:`ScoringModel.to_dict`), the retrieval fusion
#: weights and the claim thresholds (``eval/fit_claims.py --write``).
WEIGHTS_KEYS = frozenset(
    {"format", "features", "bias", "calibration", "abstain_below", "headline_above", "fitted", "retrieval", "claims"}
)


@dataclass(frozen=True, slots=True)
class ScoringModel:
    """Ranker weights per feature name, calibration weights per input name, the abstention threshold,
    and the level from which an answer is headlined (1.0, never, when the fit has not set one)."""

    weights: Mapping[str, float]
    bias: float
    calibration: Mapping[str, float]
    calib_bias: float
    abstain_below: float
    fitted: Mapping[str, Any] = field(default_factory=dict)
    headline_above: float = 1.0

    def __post_init__(self) -> None:
        check_names("ranker", self.weights, FEATURES, exact=True)
        check_names("calibration", self.calibration, CALIBRATION_INPUTS, exact=False)
        object.__setattr__(self, "weights", MappingProxyType(dict(self.weights)))
        object.__setattr__(self, "calibration", MappingProxyType(dict(self.calibration)))

    def scores(self, features: np.ndarray) -> np.ndarray:
        """The ranker's logit for each row of ``features`` (columns in :data:`FEATURES` order)."""
        if len(features) == 0:
            return np.zeros(0)
        return features @ np.array([self.weights[f] for f in FEATURES]) + self.bias

    def probabilities(self, features: np.ndarray) -> np.ndarray:
        """Calibrated P(the span is a right answer) for each row of ``features``."""
        if len(features) == 0:
            return np.zeros(0)
        scores = self.scores(features)
        columns = {
            RANKER_SCORE: scores,
            RANKER_MARGIN: margins(scores),
            **{f: features[:, i] for i, f in enumerate(FEATURES)},
        }
        z = sum(w * columns[name] for name, w in self.calibration.items()) + self.calib_bias
        return 1.0 / (1.0 + np.exp(-np.clip(z, -30, 30)))

    def to_dict(self) -> dict[str, Any]:
        """The ``weights.json`` form."""
        return {
            "format": WEIGHTS_FORMAT,
            "features": dict(self.weights),
            "bias": self.bias,
            "calibration": {"inputs": dict(self.calibration), "bias": self.calib_bias},
            "abstain_below": self.abstain_below,
            "headline_above": self.headline_above,
            "fitted": dict(self.fitted),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ScoringModel:
        """Inverse of :meth:`to_dict`; a wrong format or a missing key is a :class:`ConfigError`."""
        if data.get("format") != WEIGHTS_FORMAT:
            raise ConfigError(f"scorer weights: format {data.get('format')!r}, expected {WEIGHTS_FORMAT}")
        try:
            calib = data["calibration"]
            return cls(
                data["features"],
                float(data["bias"]),
                calib["inputs"],
                float(calib["bias"]),
                float(data["abstain_below"]),
                data.get("fitted", {}),
                float(data.get("headline_above", 1.0)),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise ConfigError(f"scorer weights: missing or bad entry {exc}") from None


def margins(scores: np.ndarray) -> np.ndarray:
    """Each score minus the best of the others (a lone span leads by 0)."""
    if len(scores) < 2:
        return np.zeros(len(scores))
    top2 = np.sort(scores)[-2:]
    best_other = np.where(scores >= top2[1], top2[0], top2[1])
    return scores - best_other


def check_scores(scores: np.ndarray, probabilities: np.ndarray) -> None:
    """:class:`ScoreError` unless every ranker score is finite and every probability lies in [0, 1].

    A NaN would otherwise be picked by ``argmax`` and pass the abstention threshold (``NaN < x`` is
    false): an answer given with a confidence that means nothing, whatever made it (a damaged reader
    file, damaged weights, a feature gone wrong)."""
    bad = ~np.isfinite(scores) | ~((probabilities >= 0.0) & (probabilities <= 1.0))
    if bad.any():
        raise ScoreError(
            f"{int(bad.sum())} of {len(bad)} candidate answers scored NaN, infinity or a confidence outside "
            "[0, 1], so no answer is given; the reader or the scorer's weights are damaged: "
            "try --reader off, and reinstall citeqa if that fails too"
        )


def check_names(what: str, given: Mapping[str, float], known: tuple[str, ...], exact: bool) -> None:
    """Every name in ``given`` is known, and (``exact``) every known name has a weight."""
    unknown = sorted(set(given) - set(known))
    missing = sorted(set(known) - set(given)) if exact else []
    if unknown or missing:
        parts = [f"no such feature: {', '.join(unknown)}"] * bool(unknown)
        parts += [f"no weight for: {', '.join(missing)}"] * bool(missing)
        raise ConfigError(
            f"scorer {what} weights do not match the features the code computes "
            f"({'; '.join(parts)}); refit with eval/fit_scorer.py --write"
        )


def weights_path(model: str, reader: bool = False) -> Path:
    """The weights file of ``model`` shipped with citeqa (``<model>+reader.json`` for the scorer
    fitted with the reader's features), or the fallback model's."""
    folder = Path(str(resources.files("citeqa.answer").joinpath(WEIGHTS_DIR)))
    own = folder / f"{model.replace('/', '__')}{READER_SUFFIX if reader else ''}.json"
    return own if own.is_file() else folder / f"{FALLBACK_MODEL}.json"


def has_reader_weights(model: str) -> bool:
    """Whether a scorer was fitted for ``model`` with the reader (the reader is used only then)."""
    return weights_path(model, reader=True).name.endswith(f"{READER_SUFFIX}.json")


def read_weights(model: str | None = None, path: Path | None = None, reader: bool = False) -> dict[str, Any]:
    """The raw weights file (``path``, or the one for ``model``, with or without the reader)."""
    path = path if path is not None else weights_path(model or "multilingual-e5-small", reader)
    try:
        data = json.loads(path.read_text("utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise ConfigError(f"cannot read scorer weights {path}: {exc}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"scorer weights {path} are not a JSON object")
    return data


def check_weights_keys(data: Mapping[str, Any], what: str) -> None:
    """A :class:`ConfigError` naming any block of a weights file the code does not read."""
    unknown = sorted(set(data) - WEIGHTS_KEYS)
    if unknown:
        raise ConfigError(
            f"weights for {what}: no such entry {', '.join(unknown)} (known: {', '.join(sorted(WEIGHTS_KEYS))})"
        )


def load_scoring(model: str | None = None, path: Path | None = None) -> ScoringModel:
    """The scorer for ``model`` (or from ``path``)."""
    return ScoringModel.from_dict(read_weights(model, path))


def write_scoring(model: ScoringModel, path: Path, retrieval: Mapping[str, float] | None = None) -> Path:
    """Write ``model`` (and the retrieval fusion weights) as a weights file, one value per line; the
    file's other blocks (the claim thresholds) are kept."""
    kept = {}
    if path.is_file():
        kept = {k: v for k, v in read_weights(path=path).items() if k == "claims"}
    data = {**model.to_dict(), **({"retrieval": dict(retrieval)} if retrieval is not None else {}), **kept}
    path.write_text(json.dumps(data, ensure_ascii=False, indent=2) + "\n", "utf-8")
    return path
