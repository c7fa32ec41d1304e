"""The answer scorer: a logistic ranker over named span features, and a calibration of its choice.

The ranker's logit orders the candidate spans; the calibration turns the ranker score and
a few features of a span into the observed probability that it is a right answer, which
is the answer's ``confidence``; below ``abstain_below`` the engine abstains.

The parameters are data, not code: ``weights/<model>.json`` beside this module, one file per
embedding model (its vectors give the dense signals their scale), keyed by feature name, with
the retrieval fusion weights and how they were fitted. ``python -m citeqa.fitting.scorer --write`` writes it,
with ``headline_above``: the confidence from which answers were right often enough out of fold to be
shown as the answer (below it, a reader sees a possible answer and its source), and ``bands``: the
confidence bands the chat names an answer by (:class:`Band`, fitted by :func:`fit_bands` on the same
out-of-fold answers), each with the share of its answers that were right.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, fields
from importlib import resources
from pathlib import Path
from types import MappingProxyType
from typing import Any

import numpy as np

from citeqa.errors import ConfigError, ScoreError
from citeqa.messages import Said
from citeqa.qa.features import FEATURES

#: The calibration's own inputs besides span features: the ranker's logit, and its lead over
#: the best other span (0 or less for every span but the best): a clear winner is more often right.
RANKER_SCORE = "ranker_score"
RANKER_MARGIN = "ranker_margin"
CALIBRATION_INPUTS = (RANKER_SCORE, RANKER_MARGIN, *FEATURES)
WEIGHTS_FORMAT = 1
WEIGHTS_DIR = "weights"
#: Weights for a model without a file of its own: fitted without the dense signals, whose scale
#: differs from model to model (``python -m citeqa.fitting.scorer --generic``).
FALLBACK_MODEL = "any-model"
#: Suffix of a weights file fitted with the reader's features (``<model>+reader.json``).
READER_SUFFIX = "+reader"
#: The blocks of a weights file: the scorer's (:meth:`ScoringModel.to_dict`), the retrieval fusion
#: weights and the claim thresholds (``eval/fit_claims.py --write``).
WEIGHTS_KEYS = frozenset(
    {
        "format",
        "features",
        "bias",
        "calibration",
        "abstain_below",
        "headline_above",
        "bands",
        "fitted",
        "retrieval",
        "claims",
    }
)
#: The confidence bands an answer can fall in, highest first (the catalogue has a word for each:
#: ``band_<name>``). A weights file's ``bands`` use these names, in this order; the last is the
#: lowest band, whose answers the chat hedges ("Possible answer (check it in the source)").
BAND_NAMES = ("high", "likely", "unsure")
#: :func:`fit_bands`: the share of answers that must be right from a band's bound up ...
BAND_PRECISION = {"high": 0.9, "likely": 0.7}
#: ... judged on at least this many answers (the headline rule of citeqa.fitting.scorer_fit).
BAND_SUPPORT = 10


@dataclass(frozen=True, slots=True)
class Band:
    """A confidence band: answers with a confidence at or above ``above`` (and below the band before
    it) fall in it; ``precision`` is the share of them that were right out of fold, over ``support``
    answers (both None where the band was not measured: :func:`headline_bands`, an empty band)."""

    name: str
    above: float
    precision: float | None = None
    support: int | None = None

    def to_dict(self) -> dict[str, Any]:
        """The ``bands`` entry of a weights file."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Any, where: str = "band") -> Band:
        """Inverse of :meth:`to_dict`; anything else is a :class:`ConfigError` naming ``where``."""
        names = [f.name for f in fields(cls)]
        if not isinstance(data, Mapping) or set(data) - set(names) or not {"name", "above"} <= set(data):
            raise ConfigError(
                f"scorer weights: {where} must be an object with {', '.join(names)} "
                f"(name and above required), not {data!r}"
            )
        band = cls(**data)
        band.check(where)
        return band

    def check(self, where: str = "band") -> None:
        """A :class:`ConfigError` unless the name is known, the bound and precision are numbers in
        [0, 1] and the support a count."""

        def bad(what: str) -> ConfigError:
            return ConfigError(
                f"scorer weights: {where} ({self.name!r}): {what}; refit with python -m citeqa.fitting.scorer --write"
            )

        if self.name not in BAND_NAMES:
            raise bad(f"no such band (known: {', '.join(BAND_NAMES)})")
        if not _unit(self.above):
            raise bad(f"above must be a number in [0, 1], not {self.above!r}")
        if self.precision is not None and not _unit(self.precision):
            raise bad(f"precision must be a number in [0, 1] or null, not {self.precision!r}")
        if self.support is not None and (type(self.support) is not int or self.support < 0):
            raise bad(f"support must be a count (a whole number, 0 or more) or null, not {self.support!r}")
        if self.precision is not None and not self.support:
            raise bad("a precision needs the answers it was measured on (support 1 or more)")


def _unit(x: Any) -> bool:
    return type(x) in (int, float) and 0.0 <= x <= 1.0  # bool is not a number here; NaN fails both bounds


def check_bands(bands: Sequence[Band]) -> None:
    """A :class:`ConfigError` unless ``bands`` is empty or: each band valid, names known, unique and in
    :data:`BAND_NAMES` order, bounds not rising, and the last band from 0 (every confidence has a band)."""
    if not bands:
        return
    for i, band in enumerate(bands):
        band.check(f"bands[{i}]")
    names = [b.name for b in bands]
    if len(bands) < 2 or names != sorted(set(names), key=BAND_NAMES.index):
        raise ConfigError(
            f"scorer weights: bands {names} must be at least two of {', '.join(BAND_NAMES)}, each once, "
            "highest first; refit with python -m citeqa.fitting.scorer --write"
        )
    for i in range(1, len(bands)):
        if bands[i].above > bands[i - 1].above:
            raise ConfigError(
                f"scorer weights: bands[{i}] ({bands[i].name!r}) starts at {bands[i].above}, above the band "
                f"before it ({bands[i - 1].name!r} at {bands[i - 1].above}); bands go from high to low"
            )
    if bands[-1].above != 0.0:
        raise ConfigError(
            f"scorer weights: the last band ({bands[-1].name!r}) starts at {bands[-1].above}, not 0, so a lower "
            "confidence would have no band"
        )


def headline_bands(headline_above: float) -> tuple[Band, ...]:
    """The bands of a weights file without ``bands`` (written before they were fitted): ``high`` from
    ``headline_above``, ``unsure`` below it, neither measured: the answer headlined from the headline
    level, a possible answer below it."""
    return (Band("high", headline_above), Band("unsure", 0.0))


def band_of(confidence: float, bands: Sequence[Band]) -> Band:
    """The band ``confidence`` falls in: the first (highest) whose bound it reaches; the last band
    for anything lower (also NaN). ``bands`` as :func:`check_bands` accepts them."""
    return next((b for b in bands if confidence >= b.above), bands[-1])


def fit_bands(confidence: Sequence[float], right: Sequence[bool]) -> tuple[Band, ...]:
    """The bands, from the confidence and the outcome (right or not) of answers given, out of fold.

    On a grid of 0.00, 0.01, ... 0.99: ``high`` starts at the lowest level from which at least
    ``BAND_PRECISION["high"]`` of the answers were right (over at least :data:`BAND_SUPPORT`
    answers; 1.0 when no level reaches it: an empty band). ``likely`` starts at the lowest level from
    which the answers below ``high`` were right at least ``BAND_PRECISION["likely"]`` of the time (as
    many answers; at ``high``'s level when none: an empty band). ``unsure`` holds the rest, from 0.
    Each band's precision and support are measured on its own answers (None for an empty band)."""
    conf = np.asarray(confidence, dtype=float)
    ok = np.asarray(right, dtype=bool)
    if conf.shape != ok.shape or conf.ndim != 1:
        raise ValueError(f"fit_bands: {conf.shape} confidences for {ok.shape} outcomes")
    grid = [round(float(t), 2) for t in np.arange(0.0, 1.0, 0.01)]

    def lowest(ceiling: float, share: float) -> float:
        for t in grid:
            if t >= ceiling:
                break
            inside = ok[(conf >= t) & (conf < ceiling)]
            if len(inside) >= BAND_SUPPORT and inside.mean() >= share:
                return t
        return ceiling

    high = min(lowest(np.inf, BAND_PRECISION["high"]), 1.0)  # no level reached: from 1.0, an empty band
    likely = lowest(high, BAND_PRECISION["likely"])
    bounds = (("high", high, np.inf), ("likely", likely, high), ("unsure", 0.0, likely))
    bands = []
    for name, low, ceiling in bounds:
        inside = ok[(conf >= low) & (conf < ceiling)] if name != "unsure" else ok[conf < ceiling]
        precision = round(float(inside.mean()), 3) if len(inside) else None
        bands.append(Band(name, low, precision, int(len(inside))))
    return tuple(bands)


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
    #: Fitted confidence bands, highest first; () for a file from before them (:meth:`answer_bands`).
    bands: tuple[Band, ...] = ()

    def __post_init__(self) -> None:
        check_names("ranker", self.weights, FEATURES, exact=True)
        check_names("calibration", self.calibration, CALIBRATION_INPUTS, exact=False)
        object.__setattr__(self, "bands", tuple(self.bands))
        check_bands(self.bands)
        object.__setattr__(self, "weights", MappingProxyType(dict(self.weights)))
        object.__setattr__(self, "calibration", MappingProxyType(dict(self.calibration)))

    def scores(self, features: np.ndarray) -> np.ndarray:
        """The ranker's logit for each row of ``features`` (columns in :data:`FEATURES` order)."""
        if len(features) == 0:
            return np.zeros(0)
        logits: np.ndarray = features @ np.array([self.weights[f] for f in FEATURES]) + self.bias
        return logits

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
        calibrated: np.ndarray = 1.0 / (1.0 + np.exp(-np.clip(z, -30, 30)))
        return calibrated

    def answer_bands(self) -> tuple[Band, ...]:
        """The bands the chat names answers by: the fitted ones, else (a file without ``bands``)
        :func:`headline_bands` of ``headline_above``."""
        return self.bands or headline_bands(self.headline_above)

    def to_dict(self) -> dict[str, Any]:
        """The ``weights.json`` form."""
        return {
            "format": WEIGHTS_FORMAT,
            "features": dict(self.weights),
            "bias": self.bias,
            "calibration": {"inputs": dict(self.calibration), "bias": self.calib_bias},
            "abstain_below": self.abstain_below,
            "headline_above": self.headline_above,
            **({"bands": [b.to_dict() for b in self.bands]} if self.bands else {}),
            "fitted": dict(self.fitted),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ScoringModel:
        """Inverse of :meth:`to_dict`; a wrong format or a missing key is a :class:`ConfigError`."""
        if data.get("format") != WEIGHTS_FORMAT:
            raise ConfigError(f"scorer weights: format {data.get('format')!r}, expected {WEIGHTS_FORMAT}")
        bands = data.get("bands", [])
        if not isinstance(bands, list):
            raise ConfigError(f"scorer weights: bands must be a list of bands, not {bands!r}")
        parsed = tuple(Band.from_dict(b, f"bands[{i}]") for i, b in enumerate(bands))
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
                parsed,
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise ConfigError(f"scorer weights: missing or bad entry {exc}") from None


def margins(scores: np.ndarray) -> np.ndarray:
    """Each score minus the best of the others (a lone span leads by 0)."""
    if len(scores) < 2:
        return np.zeros(len(scores))
    top2 = np.sort(scores)[-2:]
    best_other = np.where(scores >= top2[1], top2[0], top2[1])
    leads: np.ndarray = scores - best_other
    return leads


def check_scores(scores: np.ndarray, probabilities: np.ndarray) -> None:
    """:class:`ScoreError` unless every ranker score is finite and every probability lies in [0, 1].

    A NaN would otherwise be picked by ``argmax`` and pass the abstention threshold (``NaN < x`` is
    false): an answer given with a confidence that means nothing, whatever made it (a damaged reader
    file, damaged weights, a feature gone wrong)."""
    bad = ~np.isfinite(scores) | ~((probabilities >= 0.0) & (probabilities <= 1.0))
    if bad.any():
        raise ScoreError(Said("scores_bad", bad=int(bad.sum()), total=len(bad)))


def check_names(what: str, given: Mapping[str, float], known: tuple[str, ...], exact: bool) -> None:
    """Every name in ``given`` is known, and (``exact``) every known name has a weight."""
    unknown = sorted(set(given) - set(known))
    missing = sorted(set(known) - set(given)) if exact else []
    if unknown or missing:
        parts = [f"no such feature: {', '.join(unknown)}"] * bool(unknown)
        parts += [f"no weight for: {', '.join(missing)}"] * bool(missing)
        raise ConfigError(
            f"scorer {what} weights do not match the features the code computes "
            f"({'; '.join(parts)}); refit with python -m citeqa.fitting.scorer --write"
        )


def weights_path(model: str, reader: bool = False) -> Path:
    """The weights file of ``model`` shipped with citeqa (``<model>+reader.json`` for the scorer
    fitted with the reader's features), or the fallback model's."""
    folder = Path(str(resources.files("citeqa.qa").joinpath(WEIGHTS_DIR)))
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


def choose_span(
    scores: np.ndarray, probs: np.ndarray, langs: Sequence[str], prefer: str | None, margin: float, floor: float
) -> int | None:
    """The ranker's best span, or the best in ``prefer`` when that one is likely enough:
    at least ``floor``, or within ``margin`` of the best anywhere. None when there are no spans."""
    if len(scores) == 0:
        return None
    best = int(np.argmax(scores))
    same = [i for i, lang in enumerate(langs) if lang == prefer]
    if same and best not in same:
        best_same = max(same, key=lambda i: scores[i])
        if probs[best_same] >= min(probs[best] - margin, floor):
            return best_same
    return best
