"""Answer records of a QA file and verdicts of a claims file, written without latencies.

    .venv/bin/python eval/snapshot.py --index index --qa eval/qa.jsonl --claims eval/claims.jsonl \
        --out tests/data/snapshot/corpus.jsonl

A refactoring must not change what the engine answers: `tests/e2e/test_e2e.py` (and `test_e2e_claims.py`) rebuild the
index and compare every record with the file this writes (see :func:`comparable`). The reader's int8 build
is the same on every CPU (7-bit weights, exact integer sums with or without VNNI), so one file serves
every machine; dev2: ``--index out/dev2-index --qa eval/dev2/qa.jsonl --claims eval/dev2/claims.jsonl``.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from citeqa import evaluation as ev
from citeqa.engine import Engine

#: Citations asked for, as `citeqa eval` does.
K = 10


def comparable(kind: str, record: dict[str, Any]) -> dict[str, Any]:
    """The parts of a record a refactoring must keep: text, verdicts and places exactly, scores to
    3 decimals (float noise across library versions), nothing about time."""
    if kind == "answer":
        return {
            "answer": record["answer"],
            "short_answer": record["short_answer"],
            "abstained": record["abstained"],
            "language": record["language"],
            "confidence": round(record["confidence"], 3),
            "citations": [[c["doc_id"], c["start"], c["end"]] for c in record["citations"]],
        }
    return {
        "verdict": record["verdict"],
        "language": record["language"],
        "evidence": [
            [e["citation"]["doc_id"], e["citation"]["start"], e["citation"]["end"]] for e in record["evidence"]
        ],
    }


def read(path: Path, kind: str) -> dict[str, dict[str, Any]]:
    """The records of one kind ("answer" or "claim") in a file :func:`main` wrote, by id."""
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    return {line.pop("id"): line for line in lines if line.pop("kind") == kind}


def snapshot(engine: Engine, qa: Path | None, claims: Path | None, judge: Engine | None = None) -> list[dict[str, Any]]:
    """One line per question and per claim: its id, kind and :func:`comparable` record. Claims are
    checked by ``judge`` where given (main: the sentence judge alone, reader off, as
    ``tests/e2e/test_e2e_claims.py`` checks them)."""
    lines = []
    for item in ev.load_qa(qa) if qa else []:
        answer = engine.ask(item.question, history=item.history, k=K)
        lines.append({"id": item.id, "kind": "answer", **comparable("answer", answer.to_dict())})
    for item in ev.load_claims(claims) if claims else []:
        check = (judge or engine).check(item.claim)
        lines.append({"id": item.id, "kind": "claim", **comparable("claim", check.to_dict())})
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--index", type=Path, default=Path("index"))
    parser.add_argument("--qa", type=Path)
    parser.add_argument("--claims", type=Path)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    engine = Engine.open(args.index)
    lines = snapshot(engine, args.qa, args.claims, Engine.open(args.index, reader="off") if args.claims else None)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines), encoding="utf-8")
    print(f"{len(lines)} records -> {args.out}")


if __name__ == "__main__":
    main()
