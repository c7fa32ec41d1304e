"""Training the reader (citeqa.fitting.reader): the prepared data, the windows' cache, the schedule,
checkpoint averaging and the figures the evaluation writes."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest


def test_the_no_answer_separation_counts_what_it_says() -> None:
    from citeqa.fitting.reader.evaluate import null_separation

    answerable = np.linspace(-1.0, 18.0, 20)  # margins of answerable questions: one below 0
    unanswerable = np.array([-5.0, -3.0, -0.01, 2.0, 30.0])
    got = null_separation(answerable, unanswerable)
    assert got["unanswerable"] == 5
    assert got["false_null_at_0"] == 0.05 and got["null_recall_at_0"] == 0.6
    assert got["null_recall_at_5"] == 0.4  # below the answerable margins' 5% quantile (-0.05)
    assert got["null_auc"] == 0.755  # 75 of the 100 pairs ordered right, one tie (2.0) counted half


def test_other_paragraph_questions_ask_a_near_miss_that_holds_no_answer() -> None:
    from citeqa.fitting.reader.prepare import other_paragraph_questions

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


def test_training_windows_round_trip_through_their_cache(tmp_path: Path) -> None:
    from citeqa.fitting.reader.squad import Feature, load_features, save_features
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


def test_training_windows_are_made_again_when_the_data_changes(tmp_path: Path) -> None:
    import argparse

    from citeqa.fitting.reader.squad import Feature
    from citeqa.fitting.reader.train import _cached_features
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


def test_checkpoint_averaging_is_the_element_wise_mean() -> None:
    from citeqa.fitting.reader.average import average

    a = {"w": np.array([[1.0, 2.0]], dtype=np.float32), "b": np.array([0.0], dtype=np.float32)}
    b = {"w": np.array([[3.0, 6.0]], dtype=np.float32), "b": np.array([1.0], dtype=np.float32)}
    mean = average([a, b])
    assert np.array_equal(mean["w"], np.array([[2.0, 4.0]], dtype=np.float32)) and mean["w"].dtype == np.float32
    assert np.array_equal(mean["b"], np.array([0.5], dtype=np.float32))
    with pytest.raises(SystemExit, match="different tensors"):
        average([a, {"w": b["w"]}])


def test_averaged_checkpoints_are_written_for_export(tmp_path: Path) -> None:
    """Checkpoints in, one file out that ``python -m citeqa.fitting.reader.export --checkpoint`` reads (its ``model``),
    the frozen embeddings of a checkpoint left out, the sources named."""
    import torch

    from citeqa.fitting.reader.average import main

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


def test_kept_weights_are_a_point_the_averaging_reads(tmp_path: Path) -> None:
    import torch

    from citeqa.fitting.reader.average import trained_tensors
    from citeqa.fitting.reader.train import _keep

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


def test_an_annealed_schedule_follows_the_run_then_falls_to_zero_at_its_end() -> None:
    from citeqa.fitting.reader.train import _annealed, _schedule

    run = _schedule(1000, 0.1, init_step=400, rewarm=10)
    fork = _annealed(run, 600, 700)
    assert [fork(s) for s in (0, 99, 405, 599)] == [run(s) for s in (0, 99, 405, 599)]  # the run's own
    assert fork(600) == pytest.approx(run(600)) and run(600) == pytest.approx(400 / 900)
    assert fork(650) == pytest.approx(run(600) / 2) and fork(700) == 0.0  # then linearly to 0 at the end
    assert run(650) > fork(650)
    with pytest.raises(SystemExit, match="--max-steps"):
        _annealed(run, 700, 700)


def test_fast_attention_computes_what_the_default_attention_does() -> None:
    """Eager attention (training's, for speed) gives the default attention's logits on padded windows,
    and ``--attention-dropout`` reaches every layer's attention probabilities."""
    import torch
    from transformers import BertConfig, BertForQuestionAnswering

    from citeqa.fitting.reader.train import _fast_attention

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


def test_answerless_questions_lose_their_answer_sentences_and_keep_the_rest() -> None:
    from citeqa.fitting.reader.prepare import answerless_questions

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


def test_prepared_data_says_how_it_was_made_and_drops_held_out_paragraphs(tmp_path: Path) -> None:
    from citeqa.fitting.reader.prepare import main

    def paragraph(qid: str, context: str, answer: str) -> dict:
        qa = {"id": qid, "question": "¿Cuándo?", "answers": [{"text": answer, "answer_start": context.index(answer)}]}
        return {"context": context, "qas": [qa]}

    articles = [
        {"title": "Faro", "paragraphs": [paragraph("q1", "Se encendió en 1896.", "1896")]},
        {"title": "Puerto", "paragraphs": [paragraph("q2", "Abrió en 1901.", "1901")]},
    ]
    source = tmp_path / "es.json"
    source.write_text(json.dumps({"data": articles}), encoding="utf-8")
    (tmp_path / "heldout.txt").write_text("q2\n")
    argv = ["--file", f"es={source}", "--heldout", str(tmp_path / "heldout.txt"), "--out", str(tmp_path / "out")]
    main(argv)
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert report["by"].startswith("python -m citeqa.fitting.reader.prepare --file es=")
    assert report["date"] and report["files"] == [f"es={source}"]
    assert report["counts"]["dropped: paragraph holds a held-out id (es.json)"] == 1
    kept = [json.loads(line) for name in ("train", "dev") for line in (tmp_path / "out" / f"{name}.jsonl").open()]
    assert [r["id"] for r in kept] == ["q1"]


@pytest.mark.parametrize("command", ["eval/fit_scorer.py", "python -m citeqa.fitting.scorer"])
def test_a_milestone_refits_the_scorer_with_the_shipped_scorers_arguments(
    command: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``fitted.by`` names the module, or the script it was before (the shipped files keep what was run)."""
    from citeqa.fitting.reader import milestone

    scorer = tmp_path / "scorer.json"
    scorer.write_text(json.dumps({"fitted": {"by": f"{command} --set eval/qa.jsonl=index --reader --write"}}))
    monkeypatch.setattr(milestone, "SCORER", scorer)
    assert milestone._scorer_args() == ["-m", "citeqa.fitting.scorer", "--set", "eval/qa.jsonl=index", "--reader"]
    scorer.write_text(json.dumps({"fitted": {"by": "eval/other.py --write"}}))
    with pytest.raises(SystemExit, match="not a command of the scorer's fit"):
        milestone._scorer_args()


def test_the_shipped_scorer_names_a_command_a_milestone_can_run() -> None:
    from citeqa.fitting.reader.milestone import _scorer_args

    assert _scorer_args()[:2] == ["-m", "citeqa.fitting.scorer"] and "--write" not in _scorer_args()
