"""The benchmark's synthetic corpus generator is deterministic and chunk-aligned."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))

from synth import MAX_CHARS, MIN_CHARS, make_passages, write_corpus  # noqa: E402

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
    assert len({t for _, t in a}) == 30
    assert all(MIN_CHARS <= len(t) <= MAX_CHARS for _, t in a)
    assert all(t.split(" ", 1)[0] in ("The", "La") for _, t in a)


def test_corpus_is_byte_identical_for_a_seed(tmp_path):
    passages = make_passages(SENTENCES, 12, seed=1)
    n1 = write_corpus(tmp_path / "a", passages, 25, seed=3)
    n2 = write_corpus(tmp_path / "b", passages, 25, seed=3)
    assert n1 == n2 == 3
    assert _tree(tmp_path / "a") == _tree(tmp_path / "b")
    texts = [p.read_text(encoding="utf-8") for p in sorted((tmp_path / "a").iterdir())]
    assert sum(t.count("\n\n") + 1 for t in texts) == 25
    lang_of = dict((t, lang) for lang, t in passages)
    for path in (tmp_path / "a").iterdir():
        langs = {lang_of[p] for p in path.read_text(encoding="utf-8").strip().split("\n\n")}
        assert langs == {path.stem.rsplit("_", 1)[1]}
