"""The claims-dev set (eval/claims-dev/): true claims in the seven UI languages and their variants, written from the
dev corpora before any new claim-checking method was run on it (eval/claims-dev/README.md)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from citeqa.evaluation import file_kind, load_claims

#: file, its corpus, the language of each document ("*": every document)
FILES = (
    (
        "dev2.jsonl",
        "eval/dev2/corpus",
        {
            "agua_valdoria.md": "es",
            "ferrocarril_guadiana.txt": "es",
            "ferrovia_guadiana.md": "pt",
            "pradarias_pedra_moura.md": "pt",
            "tarn_valley_league_2023_24.md": "en",
            "larkspur_press.txt": "en",
        },
    ),
    ("de.jsonl", "eval/de/corpus", {"*": "de"}),
    ("fr.jsonl", "eval/fr/corpus", {"*": "fr"}),
)
UI_LANGS = ("ca", "de", "en", "es", "fr", "it", "pt")
#: variant -> the gold verdicts it may have
VARIANTS = {
    "true": {"supported"},
    "wrong_number": {"conflicting"},
    "wrong_year": {"conflicting"},
    "wrong_entity": {"conflicting", "not_found"},
    "unit_spelling": {"supported", "conflicting"},
    "not_given": {"not_found"},
}


def _rows(repo: Path, name: str) -> list[dict]:
    path = repo / "eval" / "claims-dev" / name
    return [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]


@pytest.mark.parametrize(("name", "corpus", "doc_langs"), FILES)
def test_each_claims_dev_file_is_well_formed_and_quotes_its_corpus(repo: Path, name, corpus, doc_langs):
    path = repo / "eval" / "claims-dev" / name
    assert file_kind(path) == "claims"
    items, rows = load_claims(path), _rows(repo, name)
    assert len(items) == len(rows) and len({i.id for i in items}) == len(items)
    docs = {p.name: p.read_text("utf-8") for p in (repo / corpus).iterdir()}
    true_ids = {r["id"]: r for r in rows if r["variant"] == "true"}
    for item, row in zip(items, rows, strict=True):
        assert item.verdict in VARIANTS[row["variant"]], row["id"]
        assert item.lang in UI_LANGS, row["id"]
        parent = true_ids[row["of"]]  # every variant derives from a true claim of its own language
        assert parent["lang"] == item.lang and (row["variant"] == "true") is (parent is row), row["id"]
        if item.verdict == "not_found":
            assert item.doc is None and item.evidence is None and row["cross_lingual"] is False, row["id"]
            if "near_doc" in row:
                assert row["near_text"] in docs[row["near_doc"]], row["id"]
        else:
            assert item.evidence and item.evidence in docs[item.doc], row["id"]
            doc_lang = doc_langs.get(item.doc) or doc_langs["*"]
            assert row["cross_lingual"] is (item.lang != doc_lang), row["id"]
        if row["variant"] != "true":
            assert item.claim != parent["claim"], row["id"]


def test_claims_dev_covers_every_ui_language_and_variant(repo: Path):
    rows = [r for name, _, _ in FILES for r in _rows(repo, name)]
    assert len({r["claim"] for r in rows}) == len(rows)  # no claim twice
    for lang in UI_LANGS:
        mine = [r for r in rows if r["lang"] == lang]
        assert sum(r["variant"] == "true" for r in mine) >= 30, lang
        assert {r["variant"] for r in mine} == set(VARIANTS), lang
        # the unit spelling is checked both ways: same value (supported) and another value (conflicting)
        assert {r["verdict"] for r in mine if r["variant"] == "unit_spelling"} == {"supported", "conflicting"}, lang
        assert any(r["cross_lingual"] for r in mine), lang
    it_ca_docs = {r["doc"] for r in rows if r["lang"] in ("it", "ca") and r["doc"]}
    assert len(it_ca_docs) >= 12  # it and ca claims are about documents of all three corpora
