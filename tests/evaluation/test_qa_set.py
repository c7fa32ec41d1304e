"""The dev QA set is well-formed: gold answers occur verbatim in their gold documents."""

from collections import Counter
from pathlib import Path

from citeqa import evaluation as ev


def test_gold_answers_occur_verbatim_in_gold_documents(repo: Path):
    items = ev.load_qa(repo / "eval" / "qa.jsonl")
    for item in items:
        if not item.answers:
            assert item.doc is None, item.id
            continue
        text = (repo / "corpus" / item.doc).read_text(encoding="utf-8")
        for answer in item.answers:
            assert answer in text, (item.id, answer)


def test_qa_set_size_and_mix(repo: Path):
    items = ev.load_qa(repo / "eval" / "qa.jsonl")
    per_lang = Counter(i.lang for i in items)
    assert len(items) >= 90 and all(per_lang[lang] >= 25 for lang in ("es", "pt", "en"))
    assert sum(1 for i in items if not i.answers) >= 12
    assert any(i.history for i in items)
    assert any(i.doc == "002_deae1f93f1defd66.txt" and i.lang != "es" for i in items)
