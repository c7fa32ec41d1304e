"""Answer settings and claim thresholds come from the model's fitted weights file and change only by validated name."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from citeqa import settings as engine_settings_module
from citeqa.claims import thresholds as thresholds_module
from citeqa.embedding.keyword import KeywordEmbedder
from citeqa.engine import Engine
from citeqa.errors import ConfigError
from citeqa.qa import settings as settings_module
from citeqa.qa.fusion import FusionMode
from citeqa.qa.scoring import read_weights
from citeqa.qa.settings import AnswerSettings
from citeqa.settings import Settings, setting_names

E5 = "multilingual-e5-small"


def test_there_are_no_unfitted_defaults():
    with pytest.raises(TypeError):
        AnswerSettings()  # type: ignore[call-arg]


def test_for_model_reads_the_fitted_fusion_weights_and_claim_thresholds():
    data = read_weights(E5)
    both = Settings.for_model(E5)
    s = both.answer
    assert s == AnswerSettings.for_model(E5)
    assert s.retrieval.dense_weight == data["retrieval"]["dense_weight"]
    assert s.retrieval.lexical_weight == data["retrieval"]["lexical_weight"]
    assert both.claims.conflict_cover == data["claims"]["conflict_cover"]
    assert s.scoring.abstain_below == data["abstain_below"]
    reader = Settings.for_model(E5, reader=True)
    assert reader.answer.scoring.abstain_below == read_weights(E5, reader=True)["abstain_below"]
    assert reader.answer.retrieval == s.retrieval and reader.claims == both.claims


def test_overrides_change_only_what_they_name():
    both = Settings.for_model(E5)
    changed = both.with_overrides({"pool": 20, "retrieval.dense_weight": 1, "claims.conflict_cover": 0.5})
    s, o = both.answer, changed.answer
    assert o.pool == 20 and o.retrieval.dense_weight == 1.0 and isinstance(o.retrieval.dense_weight, float)
    assert o.retrieval.lexical_weight == s.retrieval.lexical_weight and changed.claims.conflict_cover == 0.5
    assert changed.claims.conflict_dense == both.claims.conflict_dense and o.scoring == s.scoring
    assert o == s.with_overrides({"pool": 20, "retrieval.dense_weight": 1})
    assert both.with_overrides(claims=changed.claims) == replace(both, claims=changed.claims)
    assert s.with_overrides(short_answers="rules").short_answers == "rules"
    assert s.with_overrides({"retrieval.fusion": "rrf"}).retrieval.fusion is FusionMode("rrf")
    assert s.with_overrides() == s and both.with_overrides() == both
    assert {"pool", "retrieval.dense_weight", "claims.conflict_cover"} <= set(setting_names())


@pytest.mark.parametrize(
    "overrides,message",
    [
        ({"pol": 20}, "no such setting 'pol'"),
        ({"retrieval.weight": 0.5}, "no such setting 'retrieval.weight'"),
        ({"scoring.bias": 0.0}, "no such setting 'scoring.bias'"),
        ({"pool": "20"}, "'pool' takes a int"),
        ({"pool": True}, "'pool' takes a int"),
        ({"short_answers": "always"}, "'short_answers' is one of"),
        ({"retrieval.fusion": "best"}, "'retrieval.fusion' is one of"),
        ({"claims.conflict_covers": 0.5}, "no such setting 'claims.conflict_covers'"),
        ({"claims.conflict_cover": "high"}, "'claims.conflict_cover' takes a float"),
    ],
)
def test_an_unknown_name_or_a_wrong_value_is_a_config_error(overrides, message):
    with pytest.raises(ConfigError, match=message) as err:
        Settings.for_model(E5).with_overrides(overrides)
    assert "\n" not in str(err.value)
    if not any(name.startswith("claims") for name in overrides):
        with pytest.raises(ConfigError, match=message):
            AnswerSettings.for_model(E5).with_overrides(overrides)


@pytest.mark.parametrize(
    "block,extra,message",
    [
        (None, {"retrival": {}}, "no such entry retrival"),
        ("retrieval", {"rrf": 30.0}, "no such retrieval setting rrf"),
        ("claims", {"support_nmes_plain": 0.5}, "no such threshold support_nmes_plain"),
    ],
)
def test_an_unknown_key_in_a_weights_file_is_a_config_error(monkeypatch, block, extra, message):
    data = read_weights(E5)
    if block is None:
        data.update(extra)
    else:
        data[block] = {**data[block], **extra}
    monkeypatch.setattr(settings_module, "read_weights", lambda model, reader=False: data)
    monkeypatch.setattr(thresholds_module, "read_weights", lambda model, reader=False: data)
    monkeypatch.setattr(engine_settings_module, "read_weights", lambda model, reader=False: data)
    with pytest.raises(ConfigError, match=message):
        Settings.for_model(E5)
    with pytest.raises(ConfigError, match=message):  # an engine built without thresholds reads them itself
        thresholds_module.fitted_thresholds(E5) if block == "claims" else AnswerSettings.for_model(E5)


def test_engine_open_takes_named_overrides(shared_index: Path):
    engine = Engine.open(shared_index, embedder=KeywordEmbedder(), overrides={"pool": 20, "answer_passages": 1})
    fitted = AnswerSettings.for_model(engine.manifest.model)
    assert engine.settings == fitted.with_overrides(pool=20, answer_passages=1)
    assert engine.reload().settings == engine.settings
    assert engine.claim_thresholds == Settings.for_model(engine.manifest.model).claims
    strict = Engine.open(shared_index, embedder=KeywordEmbedder(), overrides={"claims.conflict_cover": 0.9})
    assert strict.claim_thresholds.conflict_cover == 0.9 and strict.reload().claim_thresholds.conflict_cover == 0.9
    assert strict.adjusted().claim_thresholds == strict.without_reader().claim_thresholds == strict.claim_thresholds
    with pytest.raises(ConfigError, match="no such setting 'pools'"):
        Engine.open(shared_index, embedder=KeywordEmbedder(), overrides={"pools": 20})


def test_the_reader_scorer_brings_the_reading_it_was_fitted_on(monkeypatch):
    plain = read_weights(E5)
    scorer = read_weights(E5, reader=True)
    scorer["fitted"] = {**scorer.get("fitted", {}), "reading": {"reader_focus": 3, "reader_context": 30}}
    monkeypatch.setattr(settings_module, "read_weights", lambda model, reader=False: scorer if reader else plain)
    with_reader = AnswerSettings.for_model(E5, reader=True)
    assert (with_reader.reader_focus, with_reader.reader_context) == (3, 30)
    without = AnswerSettings.for_model(E5)  # the reader-less scorer reads nothing
    assert without.reader_focus == 0
    assert with_reader.with_overrides(reader_focus=0).reader_focus == 0  # a named override still wins
    scorer["fitted"]["reading"] = {"reader_fokus": 3}
    with pytest.raises(ConfigError, match="unknown reading settings reader_fokus"):
        AnswerSettings.for_model(E5, reader=True)
