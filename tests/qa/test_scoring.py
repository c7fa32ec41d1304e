"""The scorer's weights are data: keyed by feature name, validated on load, written by the fit script."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from citeqa.errors import ConfigError
from citeqa.qa.features import FEATURES
from citeqa.qa.scoring import (
    BAND_NAMES,
    RANKER_SCORE,
    Band,
    ScoringModel,
    band_of,
    choose_span,
    fit_bands,
    headline_bands,
    load_scoring,
    read_weights,
    weights_path,
    write_scoring,
)
from citeqa.qa.settings import AnswerSettings


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


# --- confidence bands ----------------------------------------------------------------------------

FITTED = (Band("high", 0.82, 0.93, 120), Band("likely", 0.55, 0.78, 60), Band("unsure", 0.0, 0.31, 45))


def test_fit_bands_picks_each_bound_where_its_share_of_right_answers_starts():
    """20 answers at 0.95 (19 right), 20 at 0.75 (16 right), 20 at 0.60 (15 right), 20 at 0.30 (6 right);
    each bound is the lowest level of the grid at which its share of right answers is reached."""
    conf = [0.95] * 20 + [0.75] * 20 + [0.60] * 20 + [0.30] * 20
    right = [i < 19 for i in range(20)] + [i < 16 for i in range(20)] + [i < 15 for i in range(20)]
    right += [i < 6 for i in range(20)]
    high, likely, unsure = fit_bands(conf, right)
    # from 0.61: 35/40 = 0.875 < 0.9; from 0.76: 19/20 = 0.95: high starts at 0.76
    assert high == Band("high", 0.76, 0.95, 20)
    # below high: from 0.61, 16/20 = 0.80; from 0.31, 31/40 = 0.775; from 0.0, 37/60 = 0.617 < 0.7
    assert likely == Band("likely", 0.31, 0.775, 40)
    assert unsure == Band("unsure", 0.0, 0.3, 20)
    assert [b.name for b in (high, likely, unsure)] == list(BAND_NAMES)


def test_fit_bands_needs_ten_answers_and_leaves_a_band_empty_when_no_level_reaches_its_share():
    few = fit_bands([0.9] * 9 + [0.2] * 30, [True] * 9 + [False] * 30)
    assert few[0] == Band("high", 1.0, None, 0) and few[1] == Band("likely", 1.0, None, 0)
    assert few[2] == Band("unsure", 0.0, 0.231, 39)  # 9 right of 39, every answer in the last band
    assert fit_bands([], []) == (Band("high", 1.0, None, 0), Band("likely", 1.0, None, 0), Band("unsure", 0.0, None, 0))
    with pytest.raises(ValueError, match="confidences"):
        fit_bands([0.5, 0.6], [True])


def test_band_of_maps_each_confidence_to_its_band():
    assert [band_of(c, FITTED).name for c in (0.99, 0.82, 0.819, 0.55, 0.549, 0.11, 0.0)] == [
        "high",
        "high",
        "likely",
        "likely",
        "unsure",
        "unsure",
        "unsure",
    ]
    assert band_of(float("nan"), FITTED).name == "unsure"  # never a better band than the lowest


def test_a_file_without_bands_keeps_the_headline_rule(tmp_path: Path):
    data = load_scoring().to_dict()
    data.pop("bands", None)
    data["headline_above"] = 0.9
    path = tmp_path / "w.json"
    path.write_text(json.dumps(data), "utf-8")
    model = load_scoring(path=path)
    assert model.bands == () and model.answer_bands() == headline_bands(0.9)
    assert [band_of(c, model.answer_bands()).name for c in (0.95, 0.9, 0.89)] == ["high", "high", "unsure"]
    assert "bands" not in model.to_dict()  # the fallback is derived, never written as if fitted


def test_bands_round_trip_through_the_weights_file(tmp_path: Path):
    model = replace(load_scoring(), bands=FITTED)
    written = write_scoring(model, tmp_path / "w.json")
    raw = json.loads(written.read_text("utf-8"))
    assert raw["bands"][1] == {"name": "likely", "above": 0.55, "precision": 0.78, "support": 60}
    again = load_scoring(path=written)
    assert again.bands == FITTED and again.answer_bands() == FITTED and again == model


@pytest.mark.parametrize(
    "bands,message",
    [
        ("high", "bands must be a list"),
        ([{"name": "high", "above": 0.8}, {"name": "unsure"}], r"bands\[1\] must be an object"),
        ([{"name": "high", "above": 0.8, "colour": 1}, {"name": "unsure", "above": 0}], "must be an object"),
        ([{"name": "great", "above": 0.8}, {"name": "unsure", "above": 0}], "no such band"),
        ([{"name": "high", "above": 1.5}, {"name": "unsure", "above": 0}], r"above must be a number in \[0, 1\]"),
        ([{"name": "high", "above": "0.8"}, {"name": "unsure", "above": 0}], "above must be a number"),
        ([{"name": "high", "above": 0.8, "precision": 2}, {"name": "unsure", "above": 0}], "precision must be"),
        ([{"name": "high", "above": 0.8, "support": -1}, {"name": "unsure", "above": 0}], "support must be a count"),
        ([{"name": "high", "above": 0.8, "support": 2.5}, {"name": "unsure", "above": 0}], "support must be a count"),
        ([{"name": "high", "above": 0.8, "precision": 0.9}, {"name": "unsure", "above": 0}], "needs the answers"),
        ([{"name": "unsure", "above": 0}, {"name": "high", "above": 0.8}], "highest first"),
        ([{"name": "high", "above": 0.8}, {"name": "high", "above": 0}], "each once"),
        ([{"name": "unsure", "above": 0}], "at least two"),
        (
            [{"name": "high", "above": 0.5}, {"name": "likely", "above": 0.7}, {"name": "unsure", "above": 0}],
            "above the band before",
        ),
        ([{"name": "high", "above": 0.8}, {"name": "unsure", "above": 0.1}], "would have no band"),
    ],
)
def test_bad_bands_are_refused_with_a_reason(tmp_path: Path, bands, message: str):
    data = load_scoring().to_dict()
    data["bands"] = bands
    path = tmp_path / "w.json"
    path.write_text(json.dumps(data), "utf-8")
    with pytest.raises(ConfigError, match=message):
        load_scoring(path=path)


def test_a_likely_same_language_span_wins_over_a_likelier_foreign_one():
    probs = np.array([0.95, 0.6, 0.3])
    scores = np.log(probs / (1 - probs))
    langs = ["pt", "es", "en"]

    def chosen(floor: float, prefer: str) -> int | None:
        return choose_span(scores, probs, langs, prefer, margin=0.05, floor=floor)

    assert chosen(0.5, "es") == 1  # 0.6 >= floor: the question's language answers
    assert chosen(0.7, "es") == 0  # below the floor and far below the best: the foreign span
    assert chosen(0.5, "en") == 0  # 0.3: the English span does not answer
    assert chosen(0.5, "pt") == 0
    assert choose_span(np.zeros(0), np.zeros(0), [], "es", 0.05, 0.5) is None
