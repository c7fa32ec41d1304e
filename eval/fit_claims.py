"""Fit the thresholds of claim checking (citeqa.claims.check.ClaimThresholds) and report them held out.

    .venv/bin/python eval/fit_claims.py --set eval/claims.jsonl=index [--set eval/dev2/claims.jsonl=out/dev2-index]
        [--folds 2]

Every claim is checked once (retrieval, its sentences judged: citeqa.claims.judge.FEATURES);
then a grid of thresholds is searched on some claims and judged on the others. Claims are split into
``--folds`` folds by a hash of their id; each fold is judged with the thresholds chosen on
the other folds, so the printed "held out" numbers never saw their claims. A choice must call
no ``not_found`` claim ``supported`` on its training claims; among the most accurate, the one
in the middle of the tie wins (a threshold at the edge of the tie moves with every new claim).
The last lines fit on every claim; ``--write`` stores those thresholds as the ``claims`` block
of the index model's weights file (citeqa/qa/weights/<model>.json), with how they were
fitted. The script never edits source code.
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import os
import subprocess
import sys
from collections import Counter
from dataclasses import asdict, dataclass
from datetime import date
from pathlib import Path

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from citeqa.claims.check import VERDICTS, ClaimThresholds, analyse_claim, judge_candidates
from citeqa.claims.judge import FEATURES
from citeqa.engine import Engine
from citeqa.evaluation.claims_file import load_claims

#: Candidate values of each threshold. A claim with numbers or dates can be supported or
#: conflicting, one without only supported: the plain thresholds are fitted on their own, the
#: facts' support and conflict thresholds jointly.
_NAMES = (0.75, 0.8, 0.9, 1.0)  # "states the claim's names": all, or all but one in four
#: the sentence must say some of the claim's predicate: a date elsewhere never stands for "compró"
_FLOOR = (0.01, 0.1, 0.2, 0.3)
_COVER = (0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 1.0, 1.1)
_DENSE = (0.8, 0.82, 0.84, 0.86, 0.88, 0.9, 0.92, 0.94, 1.1)
FACTS_GRID = {
    "support_names_facts": _NAMES,
    "support_cover_min_facts": _FLOOR,
    "support_cover_facts": _COVER,
    "support_dense_facts": _DENSE,
}
PLAIN_GRID = {
    "support_names_plain": _NAMES,
    "support_cover_min_plain": _FLOOR,
    "support_cover_plain": _COVER,
    "support_dense_plain": _DENSE,
}
CONFLICT_GRID = {
    "conflict_names": (0.5, 0.67, 0.75, 1.0),
    "conflict_cover": (0.0, 0.2, 0.3, 0.4, 0.5, 0.6, 1.1),
    "conflict_dense": (0.75, 0.8, 0.82, 0.84, 0.86, 0.88, 0.9, 1.1),
}
_COL = {name: i for i, name in enumerate(FEATURES)}


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
        inputs = engine.claim_inputs(item.claim)
        parts = analyse_claim(inputs.claim, inputs.language)
        judged = judge_candidates(parts, inputs.hits, inputs.candidates, inputs.similarities, engine.documents)
        rows = [j.judgement.row() for j in judged]
        out.append(Claim(item.id, item.verdict, np.asarray(rows, dtype=float).reshape(-1, len(FEATURES))))
    return out


def _support_table(claims: list[Claim], combos: np.ndarray) -> np.ndarray:
    """[combo, claim] -> some unit supports the claim (the rule of citeqa.claims.judge.unit_relation),
    for the claims of one kind (with facts or without: ``combos`` are that kind's four thresholds)."""
    n_, f_, c_, d_ = (combos[:, i][:, None] for i in range(4))
    out = np.zeros((len(combos), len(claims)), dtype=bool)
    for i, c in enumerate(claims):
        if not len(c.rows):
            continue
        names, cover, dense, nf, same, named, opposed = (
            c.rows[:, _COL[k]][None, :]
            for k in ("names", "cover", "dense", "n_facts", "all_same", "values_named", "opposed")
        )
        stated = ((same > 0) | (nf == 0)) & (named > 0) & (opposed == 0)
        out[:, i] = (stated & (names >= n_) & (cover >= f_) & ((cover >= c_) | (dense >= d_))).any(axis=1)
    return out


def _conflict_table(claims: list[Claim], combos: np.ndarray) -> np.ndarray:
    cn, cc, cd = (combos[:, i][:, None] for i in range(3))
    out = np.zeros((len(combos), len(claims)), dtype=bool)
    for i, c in enumerate(claims):
        if not len(c.rows):
            continue
        names, cover, dense, diff, same, opposed = (
            c.rows[:, _COL[k]][None, :] for k in ("names", "cover", "dense", "has_different", "all_same", "opposed")
        )
        against = (diff > 0) | ((opposed > 0) & (same > 0))
        out[:, i] = (against & (names >= cn) & ((cover >= cc) | (dense >= cd))).any(axis=1)
    return out


def _combos(grid: dict[str, tuple[float, ...]]) -> np.ndarray:
    return np.asarray(list(itertools.product(*grid.values())), dtype=float)


def _has_facts(c: Claim) -> bool:
    return bool(len(c.rows)) and c.rows[0, _COL["n_facts"]] > 0


def verdicts(claims: list[Claim], t: ClaimThresholds) -> list[str]:
    """The verdicts :func:`citeqa.claims.judge.decide` gives with ``t``, from the stored rows."""
    out = []
    for c in claims:
        grid = FACTS_GRID if _has_facts(c) else PLAIN_GRID
        s = _support_table([c], np.asarray([[getattr(t, k) for k in grid]]))[0, 0]
        k = _conflict_table([c], np.asarray([[getattr(t, k) for k in CONFLICT_GRID]]))[0, 0]
        out.append("supported" if s else "conflicting" if k else "not_found")
    return out


def _choose(right: np.ndarray, false_s: np.ndarray, combos: list[np.ndarray]) -> tuple[int, ...]:
    """The index of the most accurate choice that calls no not_found claim supported. Among the
    tied choices, the one nearest the middle of the tie on every threshold (in grid steps): a
    threshold at the edge of what the claims allow would move with every new claim."""
    score = np.where(false_s > 0, -1.0, right)
    tied = np.argwhere(score == score.max())  # [n, axes]
    steps = [np.concatenate([_ranks(c) for c in combos[a : a + 1]]) for a in range(len(combos))]
    coords = np.concatenate([steps[a][tied[:, a]] for a in range(len(combos))], axis=1).astype(float)
    middle = np.median(coords, axis=0)
    return tuple(tied[int(np.argmin(np.abs(coords - middle).sum(axis=1)))])


def _ranks(combos: np.ndarray) -> np.ndarray:
    """Each combination's thresholds as grid steps (0, 1, 2, ... per column)."""
    return np.stack([np.unique(col, return_inverse=True)[1] for col in combos.T], axis=1)


def fit(claims: list[Claim], strict: bool = True) -> ClaimThresholds:
    """The most accurate thresholds that call no not_found claim supported; the strictest on a tie.
    ``strict=False`` drops that condition (the most accurate thresholds): a judge whose supports
    the reading checks may support more."""
    facts = [c for c in claims if _has_facts(c)]
    plain = [c for c in claims if not _has_facts(c)]
    values: dict[str, float] = {}
    # claims without numbers or dates: supported or not_found
    p_combos = _combos(PLAIN_GRID)
    sup = _support_table(plain, p_combos)
    gold = np.asarray([c.gold for c in plain])
    right = (sup & (gold == "supported")).sum(axis=1) + (~sup & (gold != "supported")).sum(axis=1)
    (pi,) = _choose(right, (sup & (gold == "not_found")).sum(axis=1) * strict, [p_combos])
    values |= dict(zip(PLAIN_GRID, p_combos[pi]))
    # claims with numbers or dates: support and conflict thresholds jointly
    s_combos, c_combos = _combos(FACTS_GRID), _combos(CONFLICT_GRID)
    supports = _support_table(facts, s_combos)  # [s, claim]
    conflicts = _conflict_table(facts, c_combos)  # [c, claim]
    gold = np.asarray([c.gold for c in facts])
    is_s, is_c, is_n = gold == "supported", gold == "conflicting", gold == "not_found"
    right_s = (supports & is_s).sum(axis=1)
    false_s = (supports & is_n).sum(axis=1)
    rest = ~supports
    right_c = (rest[:, None, :] & conflicts[None, :, :] & is_c).sum(axis=2)
    right_n = (rest[:, None, :] & ~conflicts[None, :, :] & is_n).sum(axis=2)
    right = right_s[:, None] + right_c + right_n
    si, ci = _choose(right, np.broadcast_to(false_s[:, None], right.shape) * strict, [s_combos, c_combos])
    values |= dict(zip(FACTS_GRID, s_combos[si])) | dict(zip(CONFLICT_GRID, c_combos[ci]))
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
    called = sum(n for (_, got), n in by.items() if got == "supported")
    parts.append(f"precision of supported {by[('supported', 'supported')] / called:.3f}" if called else "")
    print(
        f"{label}: accuracy {right / len(claims):.3f} ({right}/{len(claims)}); "
        + ", ".join(parts)
        + f"; not_found called supported: {by[('not_found', 'supported')]}"
        + f"; conflicting called supported: {by[('conflicting', 'supported')]}"
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
        models.add(engine.manifest.model)
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
    current = engine.claim_thresholds
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

    from citeqa.qa.scoring import read_weights, weights_path

    path = weights_path(model)
    if path.stem != model.replace("/", "__"):
        raise SystemExit(f"{model} has no weights file of its own; fit its scorer first (eval/fit_scorer.py --write)")
    data = read_weights(path=path)
    right = sum(held_out[c.id] == c.gold for c in claims)
    data["claims"] = {
        **asdict(thresholds),
        "fitted": fitted_block("eval/fit_claims.py", args.set, args.folds, right, len(claims)),
    }
    path.write_text(json.dumps(data, ensure_ascii=False, indent=2) + "\n", "utf-8")
    print(f"wrote the claims block of {path}")


def fitted_block(script: str, sets: list[str], folds: int, right: int, claims: int, options: str = "") -> dict:
    """How a claim rule was fitted: the command (with ``options`` that changed the fit), date, commit
    and the held-out accuracy over ``claims``."""
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    return {
        "by": f"{script} " + " ".join(f"--set {s}" for s in sets) + f" --folds {folds}{options} --write",
        "date": date.today().isoformat(),
        "commit": commit or None,
        "held_out_accuracy": round(right / claims, 3),
        "claims": claims,
    }


if __name__ == "__main__":
    sys.exit(main())
