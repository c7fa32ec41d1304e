"""The shipped reader: built once into the cache, checked by hash, and as good as its model card says."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest

from citeqa.engine import make_reader
from citeqa.errors import ConfigError, ModelError
from citeqa.reader import onnx_build
from citeqa.reader.reader import Reader

META = Path(onnx_build.shipped_path()).with_suffix(".json")


def test_the_reader_is_used_only_where_a_scorer_was_fitted_with_it() -> None:
    assert make_reader("keyword-test-model", "auto") is None
    assert make_reader("multilingual-e5-small", "off") is None
    assert isinstance(make_reader("multilingual-e5-small", "auto"), Reader)
    with pytest.raises(ConfigError, match="--reader off"):
        make_reader("keyword-test-model", "on")


def test_missing_weights_are_one_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ModelError, match="reinstall citeqa, or use --reader off"):
        onnx_build.reader_onnx(tmp_path, delta=tmp_path / "absent.safetensors")


def test_the_shipped_weights_are_small_and_described() -> None:
    shipped = onnx_build.shipped_path()
    assert shipped.stat().st_size < 25_000_000
    meta = json.loads(META.read_text())
    assert {"base", "data", "training", "metrics"} <= set(meta)
    assert (shipped.parent / "MODEL_CARD.md").is_file()


@pytest.mark.slow
def test_a_damaged_or_stale_build_is_rebuilt(tmp_path: Path) -> None:
    built = onnx_build.reader_onnx(onnx_build.default_cache())
    copy = tmp_path / "reader" / built.parent.name
    shutil.copytree(built.parent, copy)
    target = copy / built.name
    stamp = json.loads((copy / "build.json").read_text())
    inputs = {k: stamp[k] for k in ("recipe", "bits", "base", "delta")}
    content = target.read_bytes()
    assert onnx_build._verified(copy, target, inputs) == (content, stamp["onnx"])
    with target.open("r+b") as fh:
        fh.seek(1000)
        fh.write(b"\x00\x01\x02\x03")
    assert onnx_build._verified(copy, target, inputs) is None
    assert onnx_build._verified(copy, target, {**inputs, "delta": "0" * 64}) is None


def test_the_no_answer_separation_counts_what_it_says(repo: Path, monkeypatch) -> None:
    monkeypatch.syspath_prepend(str(repo / "training"))
    from evaluate import null_separation

    answerable = np.linspace(-1.0, 18.0, 20)  # margins of answerable questions: one below 0
    unanswerable = np.array([-5.0, -3.0, -0.01, 2.0, 30.0])
    got = null_separation(answerable, unanswerable)
    assert got["unanswerable"] == 5
    assert got["false_null_at_0"] == 0.05 and got["null_recall_at_0"] == 0.6
    assert got["null_recall_at_5"] == 0.4  # below the answerable margins' 5% quantile (-0.05)
    assert got["null_auc"] == 0.755  # 75 of the 100 pairs ordered right, one tie (2.0) counted half


@pytest.mark.slow
def test_the_built_reader_reproduces_the_model_cards_sample_figures(repo: Path) -> None:
    sys.path.insert(0, str(repo / "training"))
    from evaluate import read_one
    from squad import load_examples, squad_scores

    expected = json.loads(META.read_text())["metrics"]["test_sample"]
    sample = load_examples(repo / "tests" / "data" / "reader-dev.jsonl")
    reader = Reader()
    em, f1 = squad_scores(sample, [read_one(reader, e) for e in sample])
    assert len(sample) == expected["questions"]
    assert f1 == pytest.approx(expected["f1"], abs=0.02)
    assert em == pytest.approx(expected["em"], abs=0.04)


@pytest.mark.slow
def test_spans_are_exact_ranges_of_the_passages() -> None:
    passages = ["A Huawei lançou o Ascend 950 em 2026, disse a empresa.", "El chip tiene 144 GB de memoria HBM."]
    reading = Reader().read("¿Cuánta memoria tiene el chip?", passages)
    assert reading.spans and len(reading.null) == 2
    for s in reading.spans:
        text = passages[s.passage]
        assert 0 <= s.start < s.end <= len(text)
        assert text[s.start : s.end].strip() == text[s.start : s.end]
