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
from citeqa.reader.reader import Reader, ReaderResult, no_answer_odds
from citeqa.reader.windows import Window
from citeqa.records import Chunk

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
    inputs = {k: stamp[k] for k in ("recipe", "base", "delta")}
    content = target.read_bytes()
    assert onnx_build._verified(copy, target, inputs) == (content, stamp["onnx"])
    with target.open("r+b") as fh:
        fh.seek(1000)
        fh.write(b"\x00\x01\x02\x03")
    assert onnx_build._verified(copy, target, inputs) is None
    assert onnx_build._verified(copy, target, {**inputs, "delta": "0" * 64}) is None


@pytest.mark.slow
def test_the_built_reader_reproduces_the_model_cards_sample_figures(repo: Path) -> None:
    from citeqa.fitting.reader.evaluate import read_one
    from citeqa.fitting.reader.squad import load_examples, squad_scores

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


@pytest.mark.slow
def test_run_gives_spans_in_document_offsets() -> None:
    """The component's contract with the shipped model: every span is a range of its document."""
    document = "Notas.\n\nA Huawei lançou o Ascend 950 em 2026, disse a empresa. El chip tiene 144 GB de memoria HBM."
    cut = document.index("El chip")
    passages = [_chunk(document, 8, cut), _chunk(document, cut, len(document))]
    result = Reader().run("¿Cuánta memoria tiene el chip?", passages)
    assert result.answers and len(result.null) == 2
    for a in result.answers:
        chunk = passages[a.passage]
        assert a.span.doc_id == "notas.txt" and chunk.start <= a.span.start < a.span.end <= chunk.end
        assert document[a.span.start : a.span.end] == chunk.text_at(a.span.start, a.span.end)
        assert 0.0 <= a.probability <= 1.0


_IDLE_AFTER_A_RUN = """
import time
from citeqa.reader.reader import Reader
reader = Reader()
reader.warm_up()
reader.read("Where is the tower?", ["The tower stands in Pisa, beside the cathedral. " * 8])
before = time.process_time()
time.sleep(0.3)
print(time.process_time() - before)
"""


def test_the_readers_threads_sleep_when_a_run_ends() -> None:
    """Spinning after a run, the reader's threads held both cores while the next question was encoded;
    they spin only while a run lasts (with the Runtime's default spin and no forced stop they spent
    26-28 ms of CPU in the 300 ms after a run). Measured in a process of its own, where nothing but
    the reader's threads can spend CPU."""
    import subprocess

    reader = Reader()
    reader.warm_up()
    options = reader._session.get_session_options()
    assert options.get_session_config_entry("session.force_spinning_stop") == "1"
    done = subprocess.run([sys.executable, "-c", _IDLE_AFTER_A_RUN], capture_output=True, text=True, check=True)
    assert float(done.stdout.split()[-1]) < 0.01  # seconds of CPU the process spent while it slept


# --- the component's contract, on scripted logits -------------------------------------------------


def _chunk(document: str, start: int, end: int, doc_id: str = "notas.txt") -> Chunk:
    return Chunk.make(doc_id, start, end, document[start:end], "en")


class ScriptedLogits(Reader):
    """The real windows and decoding, with the model replaced: each window's start and end logits
    are high at the tokens that begin and end ``phrase`` (10 + its score) and 2 at the first token."""

    def __init__(self, phrase: str, score: float = 4.0) -> None:
        super().__init__()
        self.phrase, self.score = phrase, score
        self.windows: list[Window] = []

    def warm_up(self) -> None:
        from citeqa.reader.e5_file import e5_path, read_header_file
        from citeqa.reader.tokenizer import E5Tokenizer

        if self._session is None:
            self._tok, self._session = E5Tokenizer(read_header_file(e5_path()).vocab), object()

    def logits(self, windows):
        self.windows.extend(windows)
        width = max(len(w.ids) for w in windows)
        starts, ends = np.full((2, len(windows), width), -10.0, dtype=np.float32)
        for row, w in enumerate(windows):
            starts[row, 0] = ends[row, 0] = 1.0
            text = self.texts[w.passage]
            for at in _all(text, self.phrase):
                starts[row, : len(w.ids)][w.starts == at] = 5.0 + self.score / 2
                ends[row, : len(w.ids)][w.ends == at + len(self.phrase)] = 5.0 + self.score / 2
        return starts, ends

    def run(self, question, passages, top=10, max_windows=None, turn=None) -> ReaderResult:
        self.texts = [p.text for p in passages]
        return super().run(question, passages, top, max_windows, turn)


def _all(text: str, phrase: str) -> list[int]:
    out, at = [], text.find(phrase)
    while at >= 0:
        out.append(at)
        at = text.find(phrase, at + 1)
    return out


def test_run_places_spans_in_their_documents_once_and_scores_no_answer() -> None:
    """The contract: ``run(question, passages)`` on passages of a document (slices with their document
    offsets) gives spans in document offsets, ``document[start:end]`` the text read; a place read by
    two overlapping windows counts once; every passage has its no-answer score."""
    filler = " ".join(f"palabra{i}" for i in range(90))
    document = f"Título\n\n{filler} El faro mide 42 metros. {filler}\n\nOtro texto. El faro mide 42 metros."
    second = document.index("Otro texto")
    passages = [_chunk(document, 8, second - 2), _chunk(document, second, len(document))]
    reader = ScriptedLogits("42 metros")
    result = reader.run("¿Cuánto mide el faro?", passages)
    at = passages[0].text.index("42 metros")
    holding = [w for w in reader.windows if w.passage == 0 and (w.starts == at).any()]
    assert len(holding) == 2  # the first passage's phrase is read in two overlapping windows
    assert len({(a.passage, a.span) for a in result.answers}) == len(result.answers)  # no duplicate
    read = sorted((a for a in result.answers if a.score > 10), key=lambda a: a.passage)
    assert [a.passage for a in read] == [0, 1] and set(result.answers[:2]) == set(read)  # once per passage
    for a, at in zip(read, [document.index("42 metros"), document.rindex("42 metros")]):
        assert (a.span.doc_id, a.span.start, a.span.end) == ("notas.txt", at, at + len("42 metros"))
        assert document[a.span.start : a.span.end] == "42 metros"
        assert a.score == pytest.approx(2 * (5.0 + 2.0)) and a.probability == pytest.approx(no_answer_odds(14.0, 2.0))
    assert result.null == (2.0, 2.0) and result.best is result.answers[0] and result.question == "¿Cuánto mide el faro?"
    for a in result.answers:  # every span, best or not, is a range of its passage's document
        assert document[a.span.start : a.span.end] == passages[a.passage].text_at(a.span.start, a.span.end)


def test_a_passage_without_text_has_no_spans_and_an_infinite_no_answer_score() -> None:
    document = "El faro mide 42 metros."
    result = ScriptedLogits("42 metros").run("¿Cuánto?", [_chunk(document, 0, len(document)), _chunk(document, 5, 5)])
    assert {a.passage for a in result.answers} == {0} and result.null[1] == float("inf")


def test_no_answer_odds_is_a_two_way_softmax() -> None:
    assert no_answer_odds(3.0, 3.0) == 0.5
    assert no_answer_odds(1000.0, 0.0) == 1.0 and no_answer_odds(-1000.0, 0.0) == 0.0
    assert no_answer_odds(2.0, 0.0) == pytest.approx(1 / (1 + np.exp(-2.0)))
    assert np.isnan(no_answer_odds(float("nan"), 0.0))


@pytest.mark.slow
def test_the_build_keeps_the_feed_forward_outputs_float_quantises_the_rest_and_drops_nan_guards() -> None:
    import onnx

    graph = onnx.load(str(onnx_build.reader_onnx(onnx_build.default_cache()))).graph
    kept = [n.name for n in graph.node if n.op_type == "MatMul" and onnx_build.is_feed_forward_output(n.name)]
    quantised = [n.name for n in graph.node if n.op_type in ("MatMulInteger", "DynamicQuantizeMatMul")]
    assert len(kept) == 12  # one per layer
    assert quantised and not any(onnx_build.is_feed_forward_output(name) for name in quantised)
    assert "IsNaN" not in {n.op_type for n in graph.node}  # the attention's NaN guards are dropped


def test_feed_forward_outputs_are_told_from_the_attention_outputs() -> None:
    assert onnx_build.is_feed_forward_output("/bert/encoder/layer.3/output/dense/MatMul")
    assert not onnx_build.is_feed_forward_output("/bert/encoder/layer.3/attention/output/dense/MatMul")
    assert not onnx_build.is_feed_forward_output("/bert/encoder/layer.3/intermediate/dense/MatMul")
