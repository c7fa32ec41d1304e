"""The benchmark's synthetic corpus and vectors are deterministic, chunk-aligned and distinct."""

import sys
from pathlib import Path

import numpy as np

from tests.paths import REPO

sys.path.insert(0, str(REPO / "bench"))

from synth import MAX_CHARS, MIN_CHARS, compose, flat_sentences, make_passages, member_matrix, text_key, write_corpus

SENTENCES = {
    "en": [f"The {i}th sentence about chips and models has some words in it." for i in range(40)],
    "es": [f"La oración número {i} habla de chips y de modelos con palabras." for i in range(40)],
}


def _tree(root: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(root.iterdir())}


def test_passages_are_unique_sized_and_repeatable():
    a = make_passages(SENTENCES, 30, seed=7)
    assert a == make_passages(SENTENCES, 30, seed=7)
    assert a != make_passages(SENTENCES, 30, seed=8)
    assert len({p.text for p in a}) == 30
    assert len({tuple(sorted(p.sentences)) for p in a}) == 30
    assert all(MIN_CHARS <= len(p.text) <= MAX_CHARS for p in a)
    assert all(p.text.split(" ", 1)[0] in ("The", "La") for p in a)


def test_sentence_ids_spell_the_passage():
    flat = flat_sentences(SENTENCES)
    for p in make_passages(SENTENCES, 20, seed=2):
        assert p.text == " ".join(flat[i] for i in p.sentences)
        assert {SENTENCES[p.lang].count(flat[i]) for i in p.sentences} == {1}


def test_corpus_is_byte_identical_and_uses_each_passage_once(tmp_path):
    passages = make_passages(SENTENCES, 25, seed=1)
    n1 = write_corpus(tmp_path / "a", passages)
    n2 = write_corpus(tmp_path / "b", passages)
    assert n1 == n2
    assert _tree(tmp_path / "a") == _tree(tmp_path / "b")
    written = [
        t for p in sorted((tmp_path / "a").iterdir()) for t in p.read_text(encoding="utf-8").strip().split("\n\n")
    ]
    assert sorted(written) == sorted(p.text for p in passages)
    lang_of = {p.text: p.lang for p in passages}
    for path in (tmp_path / "a").iterdir():
        langs = {lang_of[t] for t in path.read_text(encoding="utf-8").strip().split("\n\n")}
        assert langs == {path.stem.rsplit("_", 1)[1]}


def test_composed_vectors_are_normalised_means_and_distinct():
    rng = np.random.default_rng(0)
    sentence_vectors = rng.normal(size=(len(flat_sentences(SENTENCES)), 8)).astype(np.float32)
    passages = make_passages(SENTENCES, 40, seed=3)
    vectors = compose(sentence_vectors, member_matrix(passages))
    assert vectors.shape == (40, 8)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, rtol=1e-5)
    mean = sentence_vectors[list(passages[0].sentences)].mean(axis=0)
    np.testing.assert_allclose(vectors[0], mean / np.linalg.norm(mean), rtol=1e-5)
    assert len(np.unique(vectors, axis=0)) == 40
    assert text_key(passages[0].text) == text_key(str(passages[0].text)) >= 0
