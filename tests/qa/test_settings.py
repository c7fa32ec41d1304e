"""Answer settings come from the model's fitted weights file and change only by validated name."""

from __future__ import annotations

from pathlib import Path

import pytest

from citeqa.embedding.keyword import KeywordEmbedder
from citeqa.engine import Engine
from citeqa.errors import ConfigError
from citeqa.qa import settings as settings_module
from citeqa.qa.fusion import FusionMode
from citeqa.qa.scoring import read_weights
from citeqa.qa.settings import AnswerSettings, setting_names

E5 = "multilingual-e5-small"


def test_there_are_no_unfitted_defaults():
    with pytest.raises(TypeError):
        AnswerSettings()  # type: ignore[call-arg]


def test_for_model_reads_the_fitted_fusion_weights_and_claim_thresholds():
    data = read_weights(E5)
    s = AnswerSettings.for_model(E5)
    assert s.retrieval.dense_weight == data["retrieval"]["dense_weight"]
    assert s.retrieval.lexical_weight == data["retrieval"]["lexical_weight"]
    assert s.claims.conflict_cover == data["claims"]["conflict_cover"]
    assert s.scoring.abstain_below == data["abstain_below"]
    reader = AnswerSettings.for_model(E5, reader=True)
    assert reader.scoring.abstain_below == read_weights(E5, reader=True)["abstain_below"]
    assert reader.retrieval == s.retrieval and reader.claims == s.claims


def test_overrides_change_only_what_they_name():
    s = AnswerSettings.for_model(E5)
    o = s.with_overrides({"pool": 20, "retrieval.dense_weight": 1, "claims.conflict_cover": 0.5})
    assert o.pool == 20 and o.retrieval.dense_weight == 1.0 and isinstance(o.retrieval.dense_weight, float)
    assert o.retrieval.lexical_weight == s.retrieval.lexical_weight and o.claims.conflict_cover == 0.5
    assert o.claims.conflict_dense == s.claims.conflict_dense and o.scoring == s.scoring
    assert s.with_overrides(short_answers="rules").short_answers == "rules"
    assert s.with_overrides({"retrieval.fusion": "rrf"}).retrieval.fusion is FusionMode("rrf")
    assert s.with_overrides() == s
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
    ],
)
def test_an_unknown_name_or_a_wrong_value_is_a_config_error(overrides, message):
    with pytest.raises(ConfigError, match=message) as err:
        AnswerSettings.for_model(E5).with_overrides(overrides)
    assert "\n" not in str(err.value)


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
    with pytest.raises(ConfigError, match=message):
        AnswerSettings.for_model(E5)


def test_engine_open_takes_named_overrides(shared_index: Path):
    engine = Engine.open(shared_index, embedder=KeywordEmbedder(), overrides={"pool": 20, "answer_passages": 1})
    fitted = AnswerSettings.for_model(engine.manifest.model)
    assert engine.settings == fitted.with_overrides(pool=20, answer_passages=1)
    assert engine.reload().settings == engine.settings
    with pytest.raises(ConfigError, match="no such setting 'pools'"):
        Engine.open(shared_index, embedder=KeywordEmbedder(), overrides={"pools": 20})
