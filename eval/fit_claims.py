"""Fit the thresholds of claim checking (citeqa.answer.claims.ClaimThresholds) and report them held out.

    .venv/bin/python eval/fit_claims.py --set eval/claims.jsonl=index [--set eval/dev2/claims.jsonl=out/dev2-index]
        [--folds 2]

Every claim is checked once (retrieval, candidate sentences, features); then a grid of
thresholds is searched on some claims and judged on the others. Claims are split into
``--folds`` folds by a hash of their id; each fold is judged with the thresholds chosen on
the other folds, so the printed "held out" numbers never saw their claims. A choice must call
no ``not_found`` claim ``supported`` on its training claims; among the most accurate, the
strictest thresholds win (the verdict should never claim more than the evidence shows).
The last lines fit on every claim; ``--write`` stores those thresholds as the ``claims`` block
of the index model's weights file (citeqa/answer/weights/<model>.json), with how they were
fitted. The script never edits source code.
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import os
import sys
from collections import Counter
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from citeqa.answer.claims import VERDICTS, ClaimThresholds, analyse_claim, judge_candidates
from citeqa.engine import Engine
from citeqa.evaluation.claims_file import load_claims

#: Candidate values of each threshold; support and conflict thresholds are searched jointly.
SUPPORT_GRID = {
    "support_names_facts": (0.67, 0.75, 0.8, 1.0),  # "states the claim's names": most of them
    "support_terms_facts": (0.0, 0.1, 0.2, 0.3, 0.4, 0.5),
    "support_names_plain": (0.5, 0.6, 0.67, 0.75, 0.8, 1.0),
    "support_terms_plain": (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7),
    "support_dense_plain": (0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.1),
}
CONFLICT_GRID = {
    "conflict_names": (0.25, 0.5, 0.67, 0.75, 1.0),
    "conflict_terms": (0.0, 0.1, 0.2, 0.3, 0.4, 1.1),
    "conflict_dense": (0.3, 0.4, 0.5, 0.6, 0.7, 1.1),
}


@dataclass
class Claim:
    id: str
    gold: str
    # one row per candidate sentence: names, terms, dense, n_facts, all_same, has_different
    rows: np.ndarray


def fold_of(claim_id: str, folds: int) -> int:
    return int(hashlib.sha1(claim_id.encode()).hexdigest(), 16) % folds


def features(engine: Engine, path: Path) -> list[Claim]:
    out = []
    for item in load_claims(path):
        trace, cands, dense = engine.claim_inputs(item.claim)
        parts = analyse_claim(trace.question, trace.language)
        titles = {h.chunk.doc_id: engine.data.documents[h.chunk.doc_id].title for h in trace.hits}
        judged = judge_candidates(parts, trace.hits, cands, dense, titles)
        rows = [
            (
                j.judgement.names,
                j.judgement.terms,
                j.judgement.dense,
                j.judgement.n_facts,
                float(j.judgement.all_same),
                float(j.judgement.different is not None),
            )
            for j in judged
        ]
        out.append(Claim(item.id, item.verdict, np.asarray(rows, dtype=float).reshape(-1, 6)))
    return out


def _support_table(claims: list[Claim], combos: np.ndarray) -> np.ndarray:
    """[combo, claim] -> some sentence supports the claim (the rule of citeqa.answer.claims.sentence_relation)."""
    nf_, tf, np_, tp, dp = (combos[:, i][:, None] for i in range(5))
    out = np.zeros((len(combos), len(claims)), dtype=bool)
    for i, c in enumerate(claims):
        if not len(c.rows):
            continue
        names, terms, dense, nf, same, _ = (c.rows[:, j][None, :] for j in range(6))
        facts = (nf > 0) & (same > 0) & (names >= nf_) & (terms >= tf)
        plain = (nf == 0) & (names >= np_) & ((terms >= tp) | (dense >= dp))
        out[:, i] = (facts | plain).any(axis=1)
    return out


def _conflict_table(claims: list[Claim], combos: np.ndarray) -> np.ndarray:
    cn, ct, cd = (combos[:, i][:, None] for i in range(3))
    out = np.zeros((len(combos), len(claims)), dtype=bool)
    for i, c in enumerate(claims):
        if not len(c.rows):
            continue
        names, terms, dense, diff = (c.rows[:, j][None, :] for j in (0, 1, 2, 5))
        out[:, i] = ((diff > 0) & (names >= cn) & ((terms >= ct) | (dense >= cd))).any(axis=1)
    return out


def _combos(grid: dict[str, tuple[float, ...]]) -> np.ndarray:
    return np.asarray(list(itertools.product(*grid.values())), dtype=float)


def verdicts(claims: list[Claim], t: ClaimThresholds) -> list[str]:
    """The verdicts :func:`citeqa.answer.claims.decide` gives with ``t``, from the stored rows."""
    s = _support_table(claims, np.asarray([[getattr(t, k) for k in SUPPORT_GRID]]))[0]
    c = _conflict_table(claims, np.asarray([[getattr(t, k) for k in CONFLICT_GRID]]))[0]
    return ["supported" if si else "conflicting" if ci else "not_found" for si, ci in zip(s, c)]


def fit(claims: list[Claim]) -> ClaimThresholds:
    """The most accurate thresholds that call no not_found claim supported; the strictest on a tie."""
    s_combos, c_combos = _combos(SUPPORT_GRID), _combos(CONFLICT_GRID)
    supports = _support_table(claims, s_combos)  # [s, claim]
    conflicts = _conflict_table(claims, c_combos)  # [c, claim]
    gold = np.asarray([c.gold for c in claims])
    is_s, is_c, is_n = gold == "supported", gold == "conflicting", gold == "not_found"
    right_s = (supports & is_s).sum(axis=1)  # supported claims called supported
    false_s = (supports & is_n).sum(axis=1)
    # a claim not supported is conflicting when a conflict fires, else not_found
    rest = ~supports
    right_c = (rest[:, None, :] & conflicts[None, :, :] & is_c).sum(axis=2)
    right_n = (rest[:, None, :] & ~conflicts[None, :, :] & is_n).sum(axis=2)
    right = right_s[:, None] + right_c + right_n
    right = np.where(false_s[:, None] > 0, -1, right)
    strict = s_combos.sum(axis=1)[:, None] + c_combos.sum(axis=1)[None, :]
    key = right * 1000.0 + strict
    si, ci = np.unravel_index(int(np.argmax(key)), key.shape)
    values = dict(zip(SUPPORT_GRID, s_combos[si])) | dict(zip(CONFLICT_GRID, c_combos[ci]))
    return ClaimThresholds(**{k: float(v) for k, v in values.items()})


def report(label: str, claims: list[Claim], got: list[str]) -> None:
    by = Counter()
    for c, g in zip(claims, got):
        by[(c.gold, g)] += 1
    parts = []
    for v in VERDICTS:
        n = sum(n for (gold, _), n in by.items() if gold == v)
        parts.append(f"{v} {by[(v, v)] / n:.3f} ({by[(v, v)]}/{n})" if n else f"{v} n/a")
    right = sum(by[(v, v)] for v in VERDICTS)
    print(
        f"{label}: accuracy {right / len(claims):.3f} ({right}/{len(claims)}); "
        + ", ".join(parts)
        + f"; not_found called supported: {by[('not_found', 'supported')]}"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--set",
        action="append",
        required=True,
        metavar="CLAIMS=INDEX",
        help="a claim file and the index of its corpus (repeatable)",
    )
    parser.add_argument("--folds", type=int, default=2)
    parser.add_argument("--write", action="store_true", help="write the thresholds into the model's weights file")
    args = parser.parse_args(argv)
    claims, sets, models = [], {}, set()
    for spec in args.set:
        path, _, index = spec.partition("=")
        engine = Engine.open(Path(index or "index"))
        models.add(engine.data.manifest.model)
        found = features(engine, Path(path))
        sets[path] = {c.id for c in found}
        claims += found
    held_out: dict[str, str] = {}
    for f in range(args.folds):
        train = [c for c in claims if fold_of(c.id, args.folds) != f]
        test = [c for c in claims if fold_of(c.id, args.folds) == f]
        t = fit(train)
        got = verdicts(test, t)
        held_out.update({c.id: g for c, g in zip(test, got)})
        print(f"fold {f}: fitted on {len(train)} claims: {asdict(t)}")
        report(f"  fold {f} train", train, verdicts(train, t))
        report(f"  fold {f} held out", test, got)
    report(
        "held out (every claim judged by thresholds fitted on the other folds)",
        claims,
        [held_out[c.id] for c in claims],
    )
    if len(sets) > 1:
        for path, ids in sets.items():
            part = [c for c in claims if c.id in ids]
            report(f"  held out, {path}", part, [held_out[c.id] for c in part])
    final = fit(claims)
    current = engine.settings.claims
    report("current thresholds", claims, verdicts(claims, current))
    if len(sets) > 1:
        for path, ids in sets.items():
            part = [c for c in claims if c.id in ids]
            report(f"  current thresholds, {path}", part, verdicts(part, current))
    report("fitted on all claims (in-sample)", claims, verdicts(claims, final))
    print("fitted:", asdict(final))
    if args.write:
        if len(models) != 1:
            raise SystemExit(f"the indexes were built with different models: {sorted(models)}")
        write_claims(
            models.pop(), final, args, {c.id: h for c, h in zip(claims, [held_out[c.id] for c in claims])}, claims
        )
    return 0


def write_claims(
    model: str, thresholds: ClaimThresholds, args: argparse.Namespace, held_out: dict[str, str], claims: list[Claim]
) -> None:
    """Store ``thresholds`` as the ``claims`` block of ``model``'s weights file."""
    import json
    import subprocess
    from datetime import date

    from citeqa.answer.scoring import read_weights, weights_path

    path = weights_path(model)
    if path.stem != model.replace("/", "__"):
        raise SystemExit(f"{model} has no weights file of its own; fit its scorer first (eval/fit_scorer.py --write)")
    data = read_weights(path=path)
    right = sum(held_out[c.id] == c.gold for c in claims)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    data["claims"] = {
        **asdict(thresholds),
        "fitted": {
            "by": "eval/fit_claims.py " + " ".join(f"--set {s}" for s in args.set) + f" --folds {args.folds} --write",
            "date": date.today().isoformat(),
            "commit": commit or None,
            "held_out_accuracy": round(right / len(claims), 3),
            "claims": len(claims),
        },
    }
    path.write_text(json.dumps(data, ensure_ascii=False, indent=2) + "\n", "utf-8")
    print(f"wrote the claims block of {path}")


if __name__ == "__main__":
    sys.exit(main())
