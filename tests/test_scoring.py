"""The scorer's weights are data: keyed by feature name, validated on load, written by the fit script."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from citeqa.answer.features import FEATURES
from citeqa.answer.pipeline import AnswerSettings
from citeqa.answer.scoring import RANKER_SCORE, ScoringModel, load_scoring, read_weights, weights_path, write_scoring
from citeqa.errors import ConfigError


@pytest.mark.parametrize("model_id", ["multilingual-e5-small", "all-MiniLM-L6-v2", "any-model"])
def test_shipped_weights_cover_every_feature_and_say_how_they_were_fitted(model_id: str):
    assert weights_path(model_id).stem == model_id
    model = load_scoring(model_id)
    assert model.fitted["model"] == model_id
    assert set(model.weights) == set(FEATURES)
    assert RANKER_SCORE in model.calibration and 0 < model.abstain_below < 1
    assert {"by", "data", "folds", "date", "metrics"} <= set(model.fitted)


def test_round_trip_through_the_file(tmp_path: Path):
    model = load_scoring()
    again = load_scoring(path=write_scoring(model, tmp_path / "w.json"))
    assert again == model or again.to_dict() == model.to_dict()


@pytest.mark.parametrize(
    "change,message",
    [
        (lambda d: d["features"].pop("dense"), "no weight for: dense"),
        (lambda d: d["features"].update(colour=1.0), "no such feature: colour"),
        (lambda d: d["calibration"]["inputs"].update(nope=1.0), "no such feature: nope"),
        (lambda d: d.update(format=99), "format 99"),
        (lambda d: d.pop("abstain_below"), "missing or bad entry"),
    ],
)
def test_a_file_that_does_not_match_the_code_is_refused(tmp_path: Path, change, message: str):
    data = load_scoring().to_dict()
    change(data)
    path = tmp_path / "w.json"
    path.write_text(json.dumps(data), "utf-8")
    with pytest.raises(ConfigError, match=message):
        load_scoring(path=path)


def test_weights_apply_by_name_not_by_position():
    """Reordering the mapping changes nothing: each weight meets its own feature's column."""
    base = load_scoring()
    reordered = ScoringModel(
        dict(reversed(list(base.weights.items()))), base.bias, base.calibration, base.calib_bias, base.abstain_below
    )
    rows = np.random.default_rng(0).random((5, len(FEATURES)))
    assert np.allclose(base.scores(rows), reordered.scores(rows))
    only_dense = ScoringModel({f: float(f == "dense") for f in FEATURES}, 0.0, {RANKER_SCORE: 1.0}, 0.0, 0.5)
    assert np.allclose(only_dense.scores(rows), rows[:, FEATURES.index("dense")])


def test_each_model_answers_with_its_own_weights_and_others_with_the_fallback():
    e5, minilm = AnswerSettings.for_model("multilingual-e5-small"), AnswerSettings.for_model("all-MiniLM-L6-v2")
    for settings, model_id in ((e5, "multilingual-e5-small"), (minilm, "all-MiniLM-L6-v2")):
        fusion = read_weights(model_id)["retrieval"]
        assert settings.retrieval.dense_weight == fusion["dense_weight"]
        assert settings.scoring == load_scoring(model_id)
    assert weights_path("someone/else").stem == "any-model"
    assert load_scoring("someone/else").weights["span_dense"] == 0.0  # fitted without the dense signals
