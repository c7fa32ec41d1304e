"""How far the current signals can go on a QA file: ceilings and the abstention trade-off.

    .venv/bin/python eval/limits.py eval/qa.jsonl --index index

Prints, per question kind (the QA file's optional ``kind`` field) and overall:

* **gold in top 10**: a passage from the gold document holding a gold answer is among the
  10 passages retrieved (the hit@1 a perfect re-ranker of those 10 could reach);
* **right span offered**: one of the answer candidates the engine scores is right (the
  answer accuracy a perfect span scorer could reach, before abstention);
* **no shared stem**: the first right span shares no content stem with the question
  (only meaning, not words, can find it).

Then, for abstention thresholds from 0.1 to 0.8, the share of unanswerable questions the
engine would abstain on (recall) and of answerable ones (false abstentions), from the
confidence of each answer: what any threshold on this confidence can buy.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

import numpy as np

from citeqa import evaluation as ev
from citeqa.engine import Engine
from citeqa.text.analysis import terms


def is_right(doc_id: str, text: str, item: ev.QAItem) -> bool:
    return (item.doc is None or doc_id == item.doc) and any(ev.contains_answer(text, a) for a in item.answers)


def kinds_of(path: Path) -> dict[str, str]:
    """The optional ``kind`` of each question id of a JSONL file ("-" when absent or CSV)."""
    if path.suffix.lower() != ".jsonl":
        return {}
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return {str(r["id"]): str(r.get("kind", "-")) for r in records}


def ceilings(engine: Engine, items: list[ev.QAItem], kinds: dict[str, str]) -> dict[str, Counter]:
    """Counts per kind: questions, gold in top 10, right span offered, no shared stem."""
    counts: dict[str, Counter] = {}
    for item in items:
        c = counts.setdefault(kinds.get(item.id, "-"), Counter())
        trace = engine.trace(item.question, item.history, k=10)
        hits, cands = trace.hits, [s.candidate for s in trace.spans]
        right = [x for x in cands if is_right(hits[x.hit_index].chunk.doc_id, x.text, item)]
        c["questions"] += 1
        c["gold in top 10"] += any(is_right(h.chunk.doc_id, h.chunk.text, item) for h in hits)
        c["right span offered"] += bool(right)
        if right:
            c["no shared stem"] += not set(terms(item.question, right[0].lang)) & set(
                terms(right[0].text, right[0].lang)
            )
    return counts


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("qa_file", type=Path)
    parser.add_argument("--index", type=Path, default=Path("index"))
    args = parser.parse_args()
    engine = Engine.open(args.index)
    items = ev.load_qa(args.qa_file)
    answerable = [i for i in items if i.answers]
    counts = ceilings(engine, answerable, kinds_of(args.qa_file))
    counts["all"] = sum(counts.values(), Counter())
    columns = ("gold in top 10", "right span offered", "no shared stem")
    print(f"{'kind':14s} {'questions':>9s} " + " ".join(f"{c:>18s}" for c in columns))
    for kind, c in counts.items():
        print(f"{kind:14s} {c['questions']:9d} " + " ".join(f"{c[k] / c['questions']:18.3f}" for k in columns))
    confidence = {i.id: engine.trace(i.question, i.history).confidence for i in items}
    unanswerable = np.array([confidence[i.id] for i in items if not i.answers])
    answered = np.array([confidence[i.id] for i in answerable])
    print("\nthreshold  abstention recall  false abstention")
    for t in np.round(np.arange(0.1, 0.81, 0.1), 1):
        print(f"{t:9.1f}  {np.mean(unanswerable < t):17.3f}  {np.mean(answered < t):16.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
