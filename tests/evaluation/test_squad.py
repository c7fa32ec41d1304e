"""SQuAD in and out: parse a v2 file, write its corpus, index, evaluate, and write the official predictions file."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from citeqa.errors import ConfigError, QAFileError
from citeqa.evaluation import file_kind, user_json
from citeqa.evaluation.squad import (
    MARKER,
    document_name,
    load_squad,
    squad_folders,
    squad_prediction,
    write_corpus,
)
from citeqa.index.manifest import MANIFEST_NAME
from citeqa.index.store import current_generation

FARO = (
    "El faro de Punta Brava se construyó en 1887 con piedra traída de una cantera cercana. "
    "Mide 42 metros de altura y su luz alcanza 24 millas náuticas."
)
GUARDIANA = (
    "La última guardiana, Marta Ruiz, vivió en el faro hasta 1994, cuando el sistema se automatizó "
    "por completo. Hoy el edificio funciona como museo y la entrada cuesta 6 euros."
)
MILL = (
    "The windmill of Greyhill was built in 1760 by the miller Thomas Hale. Its four sails span 26 metres.\n"
    "The mill ground wheat until 1921, when a storm broke its main shaft."
)


def answer(context: str, text: str) -> dict:
    return {"text": text, "answer_start": context.index(text)}


SQUAD = {
    "version": "v2.0",
    "data": [
        {
            "title": "El faro: Punta Brava",
            "paragraphs": [
                {
                    "context": FARO,
                    "qas": [
                        {
                            "id": "es-1",
                            "question": "¿En qué año se construyó el faro de Punta Brava?",
                            "answers": [answer(FARO, "1887"), answer(FARO, "1887")],
                            "is_impossible": False,
                        },
                        {
                            "id": "es-2",
                            "question": "¿Quién diseñó el faro de Punta Brava?",
                            "answers": [],
                            "plausible_answers": [answer(FARO, "1887")],
                            "is_impossible": True,
                        },
                    ],
                },
                {
                    "context": GUARDIANA,
                    "qas": [
                        {
                            "id": "es-3",
                            "question": "¿Cuánto cuesta la entrada al museo del faro?",
                            "answers": [answer(GUARDIANA, "6 euros")],
                        },
                    ],
                },
            ],
        },
        {
            "title": "The Windmill of Greyhill",
            "paragraphs": [
                {
                    "context": MILL,
                    "qas": [
                        {
                            "id": "en-1",
                            "question": "Who built the windmill of Greyhill?",
                            "answers": [answer(MILL, "Thomas Hale"), answer(MILL, "the miller Thomas Hale")],
                        },
                        {
                            "id": "en-2",
                            "question": "What colour are the sails of the windmill?",
                            "answers": [],
                            "is_impossible": True,
                        },
                    ],
                },
            ],
        },
    ],
}
IDS = ["es-1", "es-2", "es-3", "en-1", "en-2"]
NAMES = ["000-000-El_faro_Punta_Brava.txt", "000-001-El_faro_Punta_Brava.txt", "001-000-The_Windmill_of_Greyhill.txt"]


@pytest.fixture
def squad_file(tmp_path: Path) -> Path:
    path = tmp_path / "dev-v2.json"
    path.write_text(json.dumps(SQUAD, ensure_ascii=False), encoding="utf-8")
    return path


def test_load_squad_maps_questions(squad_file: Path) -> None:
    squad = load_squad(squad_file)
    assert squad.version == "v2.0" and [c.name for c in squad.contexts] == NAMES
    assert [c.lang for c in squad.contexts] == ["es", "es", "en"] and squad.contexts[2].text == MILL
    items = {i.id: i for i in squad.items}
    assert list(items) == IDS
    assert items["es-1"].answers == ("1887",) and items["es-1"].doc == NAMES[0] and items["es-1"].lang == "es"
    assert items["en-1"].answers == ("Thomas Hale", "the miller Thomas Hale") and items["en-1"].doc == NAMES[2]
    assert items["es-2"].answers == () and items["es-2"].doc is None and not items["es-2"].answerable
    assert items["en-2"].answers == () and items["en-2"].lang == "en"


def test_v1_file_without_is_impossible(tmp_path: Path) -> None:
    path = tmp_path / "v1.json"
    path.write_text(
        json.dumps(
            {
                "version": "1.1",
                "data": [
                    {
                        "title": "T",
                        "paragraphs": [
                            {
                                "context": MILL,
                                "qas": [{"id": 7, "question": "Who?", "answers": [answer(MILL, "Thomas Hale")]}],
                            }
                        ],
                    }
                ],
            }
        )
    )
    (item,) = load_squad(path).items
    assert item.id == "7" and item.answers == ("Thomas Hale",) and item.doc == "000-000-T.txt"


def test_document_names_are_stable_and_safe() -> None:
    assert document_name(3, 12, "Beyoncé / Knowles") == "003-012-Beyonce_Knowles.txt"
    assert document_name(1, 2, "北京") == "001-002.txt"
    assert document_name(0, 0, "") == "000-000.txt" and document_name(0, 1, "../..") == "000-001.txt"
    assert len(document_name(0, 0, "x" * 500)) == len("000-000-") + 60 + len(".txt")


def test_write_corpus_exact_contexts_and_stale_files(squad_file: Path, tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "mine.txt").write_text("not from SQuAD", encoding="utf-8")
    (corpus / "001-007-Old.txt").write_text("not listed in the marker", encoding="utf-8")
    squad = load_squad(squad_file)
    paths = write_corpus(squad, corpus)
    assert [p.name for p in paths] == NAMES
    for context, path in zip(squad.contexts, paths):
        assert path.read_bytes() == context.text.encode("utf-8")
    for a, article in enumerate(SQUAD["data"]):
        for p, paragraph in enumerate(article["paragraphs"]):
            text = (corpus / document_name(a, p, article["title"])).read_text(encoding="utf-8")
            for qa in paragraph["qas"]:
                for ans in qa["answers"]:
                    assert text[ans["answer_start"] : ans["answer_start"] + len(ans["text"])] == ans["text"]
    smaller = SQUAD | {"data": SQUAD["data"][:1]}
    squad_file.write_text(json.dumps(smaller), encoding="utf-8")
    write_corpus(load_squad(squad_file), corpus)
    assert sorted(p.name for p in corpus.iterdir()) == sorted([MARKER, "mine.txt", "001-007-Old.txt", *NAMES[:2]])


def test_squad_folders(tmp_path: Path) -> None:
    assert squad_folders(Path("data/dev-v2.0.json"), None, None) == (
        Path("out/squad-dev-v2.0/index"),
        Path("out/squad-dev-v2.0/corpus"),
    )
    assert squad_folders(Path("dev.json"), tmp_path / "idx", None) == (tmp_path / "idx", tmp_path / "squad-dev-corpus")
    assert squad_folders(Path("dev.json"), None, tmp_path / "c")[1] == tmp_path / "c"
    with pytest.raises(ConfigError, match="must be separate"):
        squad_folders(Path("dev.json"), tmp_path / "idx", tmp_path / "idx" / "corpus")
    with pytest.raises(ConfigError, match="must be separate"):
        squad_folders(Path("dev.json"), tmp_path / "c" / "idx", tmp_path / "c")


def test_squad_prediction_prefers_the_short_answer() -> None:
    def record(answer: str | None, short: str | None = None) -> SimpleNamespace:
        return SimpleNamespace(abstained=answer is None, answer=answer, short_answer=short)

    assert squad_prediction(record("Built in 1887.", "1887")) == "1887"
    assert squad_prediction(record("Built in 1887.")) == "Built in 1887."
    assert squad_prediction(record(None)) == ""
    assert squad_prediction(SimpleNamespace(abstained=False, answer="A sentence.")) == "A sentence."


def test_eval_squad_round_trip(keyword_cli, squad_file: Path, tmp_path: Path, capsys) -> None:
    index, corpus = tmp_path / "idx", tmp_path / "squad-corpus"
    out, pred, report = tmp_path / "out" / "squad-pred.json", tmp_path / "pred.jsonl", tmp_path / "report"
    args = [
        "eval",
        "--squad",
        str(squad_file),
        "--index",
        str(index),
        "--squad-corpus",
        str(corpus),
        "--squad-predictions",
        str(out),
        "--predictions",
        str(pred),
        "--report",
        str(report),
    ]
    assert keyword_cli(args) == 0
    printed = capsys.readouterr().out
    assert f"SQuAD corpus {corpus}: 3 paragraphs; index {index}: 3 passages (embedded 3, reused 0)" in printed
    assert sorted(p.name for p in corpus.glob("*.txt")) == sorted(NAMES)
    assert (current_generation(index) / MANIFEST_NAME).is_file()
    predictions = json.loads(out.read_text(encoding="utf-8"))
    assert list(predictions) == IDS and all(isinstance(v, str) for v in predictions.values())
    records = {r["id"]: r for r in map(json.loads, pred.read_text(encoding="utf-8").splitlines())}
    assert list(records) == IDS
    for qid, text in predictions.items():
        assert text == ("" if records[qid]["abstained"] else records[qid].get("short_answer") or records[qid]["answer"])
    assert records["es-3"]["correct"] and "6 euros" in predictions["es-3"]
    provenance = json.loads((report / "report.json").read_text(encoding="utf-8"))["provenance"]
    assert provenance["qa_file"]["name"] == "dev-v2.json" and provenance["index"]["documents"] == 3
    assert keyword_cli(args) == 0  # a second run finds the index up to date
    assert "index " + str(index) + ": 3 passages (up to date)" in capsys.readouterr().out


def test_eval_squad_default_folders(keyword_cli, squad_file: Path, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert keyword_cli(["eval", "--squad", str(squad_file)]) == 0
    assert sorted(p.name for p in (tmp_path / "out" / "squad-dev-v2" / "corpus").glob("*.txt")) == sorted(NAMES)
    assert current_generation(tmp_path / "out" / "squad-dev-v2" / "index") is not None


def _mutated(change) -> dict:
    data = json.loads(json.dumps(SQUAD))
    change(data)
    return data


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("{not json", "invalid JSON"),
        ([1, 2], 'not a SQuAD file (expected an object with a "data" list)'),
        ({"version": "v2.0"}, "not a SQuAD file"),
        ({"data": []}, "holds no questions"),
        (_mutated(lambda d: d["data"].append("x")), "data[2]: expected an object, got str"),
        (_mutated(lambda d: d["data"][1].pop("paragraphs")), 'data[1]: missing "paragraphs" list'),
        (
            _mutated(lambda d: d["data"][0]["paragraphs"][1].update(context=" ")),
            "data[0].paragraphs[1].context: missing",
        ),
        (
            _mutated(lambda d: d["data"][0]["paragraphs"][0]["qas"][1].pop("question")),
            "data[0].paragraphs[0].qas[1].question: missing or empty",
        ),
        (
            _mutated(lambda d: d["data"][1]["paragraphs"][0]["qas"][0]["answers"][1].pop("text")),
            "data[1].paragraphs[0].qas[0].answers[1].text: missing or empty",
        ),
        (
            _mutated(lambda d: d["data"][1]["paragraphs"][0]["qas"][1].update(is_impossible="yes")),
            "data[1].paragraphs[0].qas[1].is_impossible: must be true or false",
        ),
        (
            _mutated(lambda d: d["data"][1]["paragraphs"][0]["qas"][1].update(id="es-1")),
            "data[1].paragraphs[0].qas[1]: duplicate id 'es-1' (first used at data[0].paragraphs[0].qas[0])",
        ),
        (_mutated(lambda d: d["data"][0]["paragraphs"][0].update(context="a\r\nb")), "carriage return"),
    ],
)
def test_malformed_squad_files_are_one_line_errors(keyword_cli, tmp_path: Path, capsys, content, expected) -> None:
    path = tmp_path / "bad.json"
    path.write_text(content if isinstance(content, str) else json.dumps(content), encoding="utf-8")
    with pytest.raises(QAFileError) as info:
        load_squad(path)
    assert str(info.value).startswith(f"{path}: ") and expected in str(info.value)
    assert keyword_cli(["eval", "--squad", str(path), "--index", str(tmp_path / "idx")]) == 2
    err = capsys.readouterr().err.strip()
    assert err == f"citeqa: error: {info.value}" and "\n" not in err
    assert not (tmp_path / "idx").exists() and not (tmp_path / "squad-bad-corpus").exists()


def test_several_problems_are_summarised(tmp_path: Path) -> None:
    data = _mutated(lambda d: [qa.pop("id") for a in d["data"] for p in a["paragraphs"] for qa in p["qas"]])
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(QAFileError, match=r"qas\[0\]\.id: missing or empty; .*; and 2 more problems$"):
        load_squad(path)


@pytest.mark.parametrize(
    ("extra", "expected"),
    [([], "give either a QA file or --squad FILE"), (["qa.jsonl", "--squad", "s.json"], "give either")],
)
def test_qa_file_or_squad(keyword_cli, capsys, extra: list[str], expected: str) -> None:
    assert keyword_cli(["eval", *extra]) == 2
    assert expected in capsys.readouterr().err


@pytest.mark.parametrize("indent", [None, 2], ids=["one-line", "indented"])
def test_a_squad_file_given_as_a_qa_file_is_evaluated_as_with_squad(
    keyword_cli, tmp_path: Path, capsys, monkeypatch, indent: int | None
) -> None:
    """Issue [3/6] item 8: ``citeqa eval dev-v2.json`` said "line 1: invalid JSON … and N more problems"."""
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "dev-v2.json"
    path.write_text(json.dumps(SQUAD, ensure_ascii=False, indent=indent), encoding="utf-8")
    predictions = tmp_path / "squad-pred.json"
    assert keyword_cli(["eval", str(path), "--squad-predictions", str(predictions)]) == 0
    captured = capsys.readouterr()
    assert captured.err == f"citeqa: {path} is a SQuAD file: evaluating it as --squad does\n"
    assert "SQuAD corpus out/squad-dev-v2/corpus: 3 paragraphs" in captured.out
    assert sorted(p.name for p in (tmp_path / "out" / "squad-dev-v2" / "corpus").glob("*.txt")) == sorted(NAMES)
    assert list(json.loads(predictions.read_text(encoding="utf-8"))) == IDS


def test_the_kind_of_a_json_file_is_told_by_its_shape(tmp_path: Path, monkeypatch) -> None:
    text = json.dumps(SQUAD)
    for name, content, kind in [
        ("one-line.json", text, "squad"),
        ("indented.json", json.dumps(SQUAD, indent=1), "squad"),
        ("squad.jsonl", text, "qa"),  # a SQuAD file is .json
        ("qa.json", '{"question": "Q?", "answers": [], "lang": "en", "data": []}\n', "qa"),
        ("list.json", "[\n" + text + "\n]", "qa"),
        ("claims.json", '{"claim": "c", "verdict": "supported"}\n', "claims"),
        ("empty.json", "", "qa"),
    ]:
        (tmp_path / name).write_text(content, encoding="utf-8")
        assert file_kind(tmp_path / name) == kind, name
    monkeypatch.setattr(
        user_json, "PEEK_BYTES", 64
    )  # its one line is longer than the peek, as SQuAD 2.0's 4 MB line is
    assert file_kind(tmp_path / "one-line.json") == "squad"


def test_a_broken_squad_file_given_as_a_qa_file_gets_the_squad_loader_s_message(keyword_cli, tmp_path: Path, capsys):
    path = tmp_path / "dev.json"
    path.write_text(json.dumps(SQUAD, indent=1)[:-40], encoding="utf-8")  # cut off
    assert file_kind(path) == "squad"
    assert keyword_cli(["eval", str(path), "--index", str(tmp_path / "idx")]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"citeqa: {path} is a SQuAD file: evaluating it as --squad does\nciteqa: error: {path}: ")
    assert "invalid JSON (" in err and "more problems" not in err and err.count("\n") == 2
    assert not (tmp_path / "idx").exists()


def test_shipped_sample_answers_are_verbatim_corpus_text(repo: Path) -> None:
    raw = json.loads((repo / "eval" / "squad_sample.json").read_text(encoding="utf-8"))
    corpus = [p.read_text(encoding="utf-8") for p in sorted((repo / "corpus").glob("*.txt"))]
    squad = load_squad(repo / "eval" / "squad_sample.json")
    assert len(squad.items) >= 10 and {i.lang for i in squad.items} == {"es", "pt", "en"}
    assert sum(not i.answerable for i in squad.items) >= 3
    for article in raw["data"]:
        for paragraph in article["paragraphs"]:
            context = paragraph["context"]
            assert any(context in text for text in corpus)
            for qa in paragraph["qas"]:
                for ans in qa["answers"]:
                    assert context[ans["answer_start"] : ans["answer_start"] + len(ans["text"])] == ans["text"]
