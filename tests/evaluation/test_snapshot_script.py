"""eval/snapshot.py: what another machine's records hold a run to (the outcome of each record)."""

from __future__ import annotations


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
