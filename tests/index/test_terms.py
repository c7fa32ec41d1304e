from pathlib import Path

import numpy as np

from citeqa.index.terms import Terms, build_terms, chunk_terms
from citeqa.records import Chunk


def _chunks(*texts: str) -> list[Chunk]:
    return [Chunk.make(f"{i}.txt", 0, len(t), t, "en") for i, t in enumerate(texts)]


def test_bm25_terms_are_interned_so_a_large_build_keeps_one_string_per_term():
    first = chunk_terms(Chunk.make("a.txt", 0, 20, "Los chips de Huawei", "es"))
    second = chunk_terms(Chunk.make("b.txt", 0, 24, "Huawei fabrica sus chips", "es"))
    shared = set(first) & set(second)
    assert shared and all(next(t for t in second if t == s) is s for s in first if s in shared)


def test_frequencies_count_passages_not_occurrences():
    terms = build_terms(_chunks("lighthouse lighthouse keeper", "keeper of the mill"), [None, None], None)
    df = dict(zip(terms.vocab, terms.df.tolist()))
    assert list(terms.vocab) == sorted(terms.vocab)
    assert df[chunk_terms(_chunks("lighthouse")[0])[0]] == 1 and df[chunk_terms(_chunks("keeper")[0])[0]] == 2


def test_kept_removed_and_new_passages_give_the_terms_of_a_fresh_count(tmp_path: Path):
    old_chunks = _chunks("the red lighthouse", "a windmill by the sea", "the keeper's cottage")
    old = build_terms(old_chunks, [None] * 3, None)
    old.save(tmp_path / "terms")
    old = Terms.load(tmp_path / "terms")
    new_chunks = [old_chunks[2], *_chunks("a new harbour crane"), old_chunks[0]]
    updated = build_terms(new_chunks, [2, None, 0], old)  # passage 1 removed, one added
    fresh = build_terms(new_chunks, [None] * 3, None)
    assert updated.vocab == fresh.vocab
    for a, b in zip((updated.ids, updated.ptr, updated.df), (fresh.ids, fresh.ptr, fresh.df)):
        assert np.array_equal(a, b)
    assert "windmil" not in updated.vocab and "windmill" not in updated.vocab  # only in the removed passage


def test_terms_of_ids_count_their_frequencies():
    terms = Terms.of_ids(["a", "b", "c"], [[0, 0, 2], [2], []])
    assert terms.df.tolist() == [1, 0, 2] and terms.row(0).tolist() == [0, 0, 2] and terms.passages == 3
