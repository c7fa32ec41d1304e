"""BM25 recomputed from term frequencies and global statistics equals bm25s's score to the bit."""

from __future__ import annotations

import numpy as np
import pytest

from citeqa.index.backends import build_lexical, lexical_scores
from citeqa.index.terms import Terms
from citeqa.pg.bm25 import Collection, exact_score


@pytest.mark.parametrize("seed", range(5))
def test_exact_score_is_bm25s_score(seed: int):
    rng = np.random.default_rng(seed)
    vocab = [f"t{i:03d}" for i in range(40)]
    rows = [rng.integers(0, len(vocab), size=int(rng.integers(1, 60))).tolist() for _ in range(200)]
    terms = Terms.of_ids(vocab, rows)
    collection = Collection(terms.passages, int(terms.ptr[-1]), dict(zip(vocab, terms.df.tolist())))
    lexical = build_lexical(terms)
    for _ in range(20):
        query = [vocab[i] for i in rng.integers(0, len(vocab), size=int(rng.integers(1, 8)))]  # repeats too
        expected = lexical_scores(lexical, terms, query)
        idfs = [collection.idf(t) for t in query]
        for passage, row in enumerate(rows):
            tfs = [row.count(vocab.index(t)) for t in query]
            assert exact_score(tfs, len(row), idfs, collection.avgdl) == float(expected[passage])


def test_sql_parameters_carry_the_global_statistics():
    collection = Collection(passages=4, tokens=10, df={"a": 1, "b": 4})
    params = collection.params(["a", "b"], n=3, gen=7)
    assert params["avgdl"] == 2.5 and params["gen"] == 7 and params["n"] == 3
    assert params["idf"][0] > params["idf"][1] > 0


def test_index_tokens_are_letters_and_one_to_one():
    from citeqa.pg.bm25 import index_text, index_token

    terms = ["lighthouse", "qa", "quiet", "0.979", "l'eau", "faro", "日本", "straße", "x_y", "e-mail", "q", "ß"]
    tokens = [index_token(t) for t in terms]
    assert all(t.isascii() and t.isalpha() and t.islower() for t in tokens)
    assert len(set(tokens)) == len(terms) and tokens[0] == "lighthouse" and tokens[1] != "qa"
    assert index_text(["a", "0.979", "a"]).split() == [index_token("a"), index_token("0.979"), index_token("a")]
