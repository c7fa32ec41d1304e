"""eval/snapshot.py: what another machine's records hold a run to (the outcome of each record)."""

from __future__ import annotations

import json
from pathlib import Path


def _answer(short: str | None, abstained: bool = False, confidence: float = 0.5, cited: int = 0) -> dict:
    return {
        "answer": None if abstained else f"It is {short}.",
        "short_answer": short,
        "abstained": abstained,
        "language": "en",
        "confidence": confidence,
        "citations": [["a.txt", cited, cited + 10]],
    }


def test_other_machines_records_are_compared_by_outcome_only(load_script) -> None:
    snap = load_script("eval/snapshot.py")
    expected = {"q1": _answer("744"), "q2": _answer("2027"), "q3": _answer(None, abstained=True)}
    # other confidences and other passages cited: the same outcomes
    got = {"q1": _answer("744", confidence=0.9, cited=40), "q2": _answer("2027", cited=7), "q3": expected["q3"]}
    assert snap.agreement("answer", got, expected) == (1.0, [])

    got["q2"] = _answer("2026")  # another short answer
    got["q3"] = _answer("744")  # answered where the record abstained
    alike, differ = snap.agreement("answer", got, expected)
    assert (round(alike, 3), differ) == (0.333, ["q2", "q3"])
    del got["q1"]  # a record missing counts as differing
    assert snap.agreement("answer", got, expected)[1] == ["q1", "q2", "q3"]


def test_claims_are_compared_by_verdict(load_script) -> None:
    snap = load_script("eval/snapshot.py")
    record = {"verdict": "supported", "language": "en", "evidence": [["a.txt", 0, 10]]}
    moved = {**record, "evidence": [["b.txt", 5, 9]]}
    assert snap.agreement("claim", {"c": moved}, {"c": record}) == (1.0, [])
    assert snap.agreement("claim", {"c": {**record, "verdict": "not_found"}}, {"c": record}) == (0.0, ["c"])


def test_snapshots_say_which_fitted_data_wrote_them(load_script, tmp_path: Path) -> None:
    snap = load_script("eval/snapshot.py")
    digest = snap.fitted_digest()
    assert len(digest) == 12 and digest == snap.fitted_digest()  # the installed weights, hashed alike
    (tmp_path / "corpus.jsonl").write_text("")
    assert snap.written_with(tmp_path / "corpus.jsonl") is None  # no record: never taken as this data's
    (tmp_path / snap.WRITTEN).write_text(json.dumps({"corpus.jsonl": digest}))
    assert snap.written_with(tmp_path / "corpus.jsonl") == digest
    assert snap.written_with(tmp_path / "dev2.jsonl") is None


def test_a_machines_own_records_of_other_fitted_data_are_not_held_against_it(load_script, tmp_path: Path) -> None:
    snap = load_script("eval/snapshot.py")
    digest = snap.fitted_digest()
    own = tmp_path / "abc"
    own.mkdir()
    (own / "corpus.jsonl").write_text("")
    (own / snap.WRITTEN).write_text(json.dumps({"corpus.jsonl": "0" * 12}))  # an older reader's or rule's
    assert snap.held_to(tmp_path, "corpus.jsonl", None, key="abc") is None
    (tmp_path / "corpus.jsonl").write_text("")
    (tmp_path / snap.WRITTEN).write_text(json.dumps({"corpus.jsonl": digest}))
    assert snap.held_to(tmp_path, "corpus.jsonl", None, key="abc") == (tmp_path / "corpus.jsonl", False)
    (own / snap.WRITTEN).write_text(json.dumps({"corpus.jsonl": digest}))
    assert snap.held_to(tmp_path, "corpus.jsonl", None, key="abc") == (own / "corpus.jsonl", True)


def test_the_committed_snapshots_record_their_fitted_data(repo: Path, load_script) -> None:
    """Every snapshot file has the digest it was written with beside it (eval/snapshot.py writes it)."""
    snap = load_script("eval/snapshot.py")
    for path in (repo / "tests" / "data" / "snapshot").rglob("*.jsonl"):
        assert snap.written_with(path) is not None, path
