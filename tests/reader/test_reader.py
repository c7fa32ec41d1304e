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


@pytest.mark.slow
def test_a_load_started_in_the_background_is_the_one_a_read_uses() -> None:
    reader = Reader()
    reader.load_in_background()
    document = "El chip tiene 144 GB de memoria HBM."
    result = reader.run("¿Cuánta memoria tiene el chip?", [_chunk(document, 0, len(document))])
    best = result.answers[0].span
    assert "144" in document[best.start : best.end]


def test_a_background_load_that_fails_leaves_its_error_to_the_caller(tmp_path: Path) -> None:
    reader = Reader(cache=tmp_path, delta=tmp_path / "absent.safetensors")
    reader.load_in_background()
    with pytest.raises(ModelError, match="reinstall citeqa, or use --reader off"):
        reader.warm_up()


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


def test_other_paragraph_questions_ask_a_near_miss_that_holds_no_answer(repo: Path, monkeypatch) -> None:
    monkeypatch.syspath_prepend(str(repo / "training"))
    from prepare import other_paragraph_questions

    def record(qid: str, context: str, question: str, answer: str | None, title: str = "Faro") -> dict:
        answers = [{"text": answer, "start": context.index(answer)}] if answer else []
        return {"id": qid, "lang": "es", "source": "f.json", "title": title, "context": context,
                "question": question, "answers": answers, "impossible": answer is None}  # fmt: skip

    a = "El faro de Punta Brava se encendió en 1896."
    b = "El faro de Punta Brava mide 32 metros y se ve desde el puerto."
    c = "La costa tiene playas de arena blanca."
    d = "En 1896 llegó también el telégrafo al faro."  # holds the answer: never the near miss
    records = [
        record("q1", a, "¿En qué año se encendió el faro de Punta Brava?", "1896"),
        record("q2", b, "¿Cuánto mide el faro?", "32 metros"),
        record("q3", c, "¿Cómo son las playas?", "arena blanca"),
        record("q4", d, "¿Qué llegó al faro?", "el telégrafo"),
        record("q5", a, "¿Quién lo construyó?", None),  # already unanswerable: not copied
        record("q6", "Sola.", "¿Qué?", "Sola", title="Otro"),  # no other paragraph in its article
    ]
    out = other_paragraph_questions(records, 1.0, "seed")
    by_id = {r["id"]: r for r in out}
    assert set(by_id) == {"q1#other", "q2#other", "q3#other", "q4#other"}
    assert by_id["q1#other"]["context"] == b  # shares most words and does not say 1896
    assert all(r["impossible"] and r["answers"] == [] for r in out)
    assert all(r["question"] == next(x for x in records if x["id"] + "#other" == r["id"])["question"] for r in out)
    assert other_paragraph_questions(records, 1.0, "seed") == out
    assert other_paragraph_questions(records, 0.0, "seed") == []


def test_training_windows_round_trip_through_their_cache(repo: Path, monkeypatch, tmp_path: Path) -> None:
    monkeypatch.syspath_prepend(str(repo / "training"))
    from squad import Feature, load_features, save_features

    from citeqa.reader.windows import Window

    def window(passage: int, ids: list[int], starts: list[int]) -> Window:
        ends = [s + 3 if s >= 0 else -1 for s in starts]
        return Window(passage, *(np.array(v, dtype=np.int64) for v in (ids, starts, ends)))

    made = [
        Feature(window(0, [0, 9, 2, 2, 70000, 51, 2], [-1, -1, -1, -1, 0, 4, -1]), 4, 5, True),
        Feature(window(0, [0, 9, 2, 2, 8, 2], [-1, -1, -1, -1, 9, -1]), 0, 0, True),
        Feature(window(3, [0, 9, 2, 2, 2], [-1, -1, -1, -1, -1]), 0, 0, False),
    ]
    path = tmp_path / "features.npz"
    save_features(made, path)
    back = load_features(path)
    assert [(f.start, f.end, f.answerable, f.window.passage) for f in back] == [
        (f.start, f.end, f.answerable, f.window.passage) for f in made
    ]
    for a, b in zip(made, back):
        for name in ("ids", "starts", "ends"):
            assert getattr(b.window, name).dtype == np.int64
            assert np.array_equal(getattr(a.window, name), getattr(b.window, name))
    assert not list(tmp_path.glob("*.tmp*"))


def test_training_windows_are_made_again_when_the_data_changes(repo: Path, monkeypatch, tmp_path: Path) -> None:
    monkeypatch.syspath_prepend(str(repo / "training"))
    import argparse

    from squad import Feature
    from train import _cached_features

    from citeqa.reader.windows import Window

    data, out = tmp_path / "data", tmp_path / "out"
    data.mkdir()
    out.mkdir()
    (data / "train.jsonl").write_text('{"id": "a"}\n')
    args = argparse.Namespace(data=str(data), limit=None, max_tokens=192, negatives=0.35, seed=13)
    calls: list[int] = []

    def make() -> list[Feature]:
        calls.append(1)
        ids = np.arange(5, dtype=np.int64)
        return [Feature(Window(0, ids, ids - 2, ids - 1), len(calls), len(calls), True)]

    assert _cached_features(out, "base", make, args)[0].start == 1
    assert _cached_features(out, "base", make, args)[0].start == 1  # from the cache
    assert len(calls) == 1
    (data / "train.jsonl").write_text('{"id": "b"}\n')
    assert _cached_features(out, "base", make, args)[0].start == 2  # other data: made again
    assert _cached_features(out, "base", make, argparse.Namespace(**{**vars(args), "max_tokens": 128}))[0].start == 3
    assert _cached_features(out, "other base", make, args)[0].start == 4
    assert len(calls) == 4


def test_checkpoint_averaging_is_the_element_wise_mean(repo: Path, monkeypatch) -> None:
    monkeypatch.syspath_prepend(str(repo / "training"))
    from average import average

    a = {"w": np.array([[1.0, 2.0]], dtype=np.float32), "b": np.array([0.0], dtype=np.float32)}
    b = {"w": np.array([[3.0, 6.0]], dtype=np.float32), "b": np.array([1.0], dtype=np.float32)}
    mean = average([a, b])
    assert np.array_equal(mean["w"], np.array([[2.0, 4.0]], dtype=np.float32)) and mean["w"].dtype == np.float32
    assert np.array_equal(mean["b"], np.array([0.5], dtype=np.float32))
    with pytest.raises(SystemExit, match="different tensors"):
        average([a, {"w": b["w"]}])


def test_averaged_checkpoints_are_written_for_export(repo: Path, monkeypatch, tmp_path: Path) -> None:
    """Checkpoints in, one file out that ``training/export.py --checkpoint`` reads (its ``model``),
    the frozen embeddings of a checkpoint left out, the sources named."""
    import torch

    monkeypatch.syspath_prepend(str(repo / "training"))
    from average import main

    paths = []
    for i, value in enumerate((1.0, 2.0, 6.0)):
        state = {"qa_outputs.bias": torch.full((2,), value), "bert.embeddings.LayerNorm.bias": torch.zeros(3)}
        paths.append(tmp_path / f"c{i}.pt")
        torch.save({"model": state, "step": i}, paths[-1])
    out = tmp_path / "avg" / "mean.pt"
    main([*map(str, paths), "--out", str(out)])
    saved = torch.load(out, weights_only=True)
    assert set(saved["model"]) == {"qa_outputs.bias"}
    assert torch.equal(saved["model"]["qa_outputs.bias"], torch.full((2,), 3.0))
    assert saved["averaged"] == [str(p) for p in paths]


def test_kept_weights_are_a_point_the_averaging_reads(repo: Path, monkeypatch, tmp_path: Path) -> None:
    import torch

    monkeypatch.syspath_prepend(str(repo / "training"))
    from average import trained_tensors
    from train import _keep

    model = torch.nn.Module()
    model.bert = torch.nn.Module()
    model.bert.embeddings = torch.nn.Linear(2, 2)
    model.qa_outputs = torch.nn.Linear(2, 2)
    _keep(tmp_path / "weights-200.pt", model, 200)
    assert torch.load(tmp_path / "weights-200.pt", weights_only=True)["step"] == 200
    kept = trained_tensors(tmp_path / "weights-200.pt", {}, "")
    assert set(kept) == {"qa_outputs.weight", "qa_outputs.bias"}
    assert np.array_equal(kept["qa_outputs.weight"], model.qa_outputs.weight.detach().numpy())
    assert not list(tmp_path.glob("*.tmp"))


def test_an_annealed_schedule_follows_the_run_then_falls_to_zero_at_its_end(repo: Path, monkeypatch) -> None:
    monkeypatch.syspath_prepend(str(repo / "training"))
    from train import _annealed, _schedule

    run = _schedule(1000, 0.1, init_step=400, rewarm=10)
    fork = _annealed(run, 600, 700)
    assert [fork(s) for s in (0, 99, 405, 599)] == [run(s) for s in (0, 99, 405, 599)]  # the run's own
    assert fork(600) == pytest.approx(run(600)) and run(600) == pytest.approx(400 / 900)
    assert fork(650) == pytest.approx(run(600) / 2) and fork(700) == 0.0  # then linearly to 0 at the end
    assert run(650) > fork(650)
    with pytest.raises(SystemExit, match="--max-steps"):
        _annealed(run, 700, 700)


def test_fast_attention_computes_what_the_default_attention_does(repo: Path, monkeypatch) -> None:
    """Eager attention (training's, for speed) gives the default attention's logits on padded windows,
    and ``--attention-dropout`` reaches every layer's attention probabilities."""
    import torch
    from transformers import BertConfig, BertForQuestionAnswering

    monkeypatch.syspath_prepend(str(repo / "training"))
    from train import _fast_attention

    torch.manual_seed(0)
    config = BertConfig(vocab_size=50, hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64)
    model = BertForQuestionAnswering(config).eval()
    ids = torch.randint(1, 50, (3, 9))
    mask = torch.ones(3, 9, dtype=torch.long)
    mask[1, 5:] = 0
    before = model(input_ids=ids, attention_mask=mask).start_logits
    _fast_attention(model, 0.0)
    assert model.config._attn_implementation == "eager"
    assert [layer.attention.self.dropout.p for layer in model.bert.encoder.layer] == [0.0, 0.0]
    after = model(input_ids=ids, attention_mask=mask).start_logits
    assert torch.allclose(before[:, :5], after[:, :5], atol=1e-5)
    assert torch.allclose(before[0], after[0], atol=1e-5) and torch.allclose(before[2], after[2], atol=1e-5)


def test_answerless_questions_lose_their_answer_sentences_and_keep_the_rest(repo: Path, monkeypatch) -> None:
    monkeypatch.syspath_prepend(str(repo / "training"))
    from prepare import answerless_questions

    def record(qid: str, context: str, answer: str | None) -> dict:
        answers = [{"text": answer, "start": context.index(answer)}] if answer else []
        return {"id": qid, "lang": "es", "source": "f.json", "title": "Faro", "context": context,
                "question": "¿Cuándo?", "answers": answers, "impossible": answer is None}  # fmt: skip

    para = "El faro de Punta Brava mide 32 metros. Se encendió en 1896. Lo atienden dos fareros."
    records = [
        record("q1", para, "1896"),
        record("q2", "Se encendió en 1896. Mide 32 metros.", "1896"),  # one sentence would remain
        record("q3", para + " En 1896 llegó el telégrafo.", "1896"),  # the answer's text remains elsewhere
        record("q4", para, None),  # already unanswerable
    ]
    out = answerless_questions(records, 1.0, "seed")
    assert [r["id"] for r in out] == ["q1#answerless"]
    assert out[0]["context"] == "El faro de Punta Brava mide 32 metros. Lo atienden dos fareros."
    assert out[0]["impossible"] and out[0]["answers"] == [] and out[0]["question"] == "¿Cuándo?"
    assert answerless_questions(records, 0.0, "seed") == []
