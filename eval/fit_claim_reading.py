"""Fit how claims are checked by reading (citeqa.answer.claim_reading.ReadingRule) and report it out of fold.

    PYTHONPATH=src .venv/bin/python eval/fit_claim_reading.py \\
        --set eval/claims.jsonl=index --set eval/dev2/claims.jsonl=out/dev2-index \\
        --set eval/dev2/claims-reading.jsonl=out/dev2-index --set eval/de/claims.jsonl=out/de-index \\
        --set eval/fr/claims.jsonl=out/fr-index --folds 5 [--cache out/claim-readings.json] [--write]

Every claim is checked once by the sentence judge (its rows, as ``eval/fit_claims.py`` stores them)
and read once per question form (``replace``, ``front``): one reader question per value of the
claim over the best passages. Claims are split into ``--folds`` folds by a hash of their id (the
same folds as ``eval/fit_claims.py``); on the other folds, the judge's thresholds are fitted twice
(as today, calling no not_found claim supported on its training claims, and without that
condition), then the rule that combines a judge with the readings (form, support and conflict
modes, margins) is chosen on the same training claims: the most accurate that calls no
not_found or conflicting claim supported there, the middle of the tie. The held-out fold is
judged with that choice. "before" is today's method: the shipped thresholds (fitted on the first
two files) and the judge refitted out of fold; "after" is the reading, out of fold.
``--write`` stores the choice fitted on every claim in ``src/citeqa/answer/weights/claim_reading.json``
(with the judge thresholds it goes with, and how it was fitted). The script never edits source code.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import os
import subprocess
import sys
from dataclasses import asdict
from datetime import date
from pathlib import Path

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

sys.path.insert(0, str(Path(__file__).parent))

from fit_claims import Claim, features, fit, fold_of, report, verdicts

from citeqa.answer.claim_parts import analyse_claim
from citeqa.answer.claim_reading import (
    DIFFERENT,
    FORMS,
    MODES,
    RULE_FILE,
    SAME,
    ReadingRule,
    read_claim,
    rule_dict,
)
from citeqa.answer.claims import ClaimThresholds
from citeqa.engine import Engine
from citeqa.evaluation.claims_file import load_claims
from citeqa.reader.reader import Reader

MARGINS = (-4.0, 0.0, 2.0, 4.0, 6.0, 8.0)
VETOES = (8.0, math.inf)
NAMES = (0.0, 0.5, 0.75, 1.0)
#: the judge a rule goes with: thresholds fitted as today, or without the no-false-support condition
JUDGES = ("strict", "relaxed")


def readings(engine: Engine, reader: Reader, path: Path, cache: dict) -> dict[str, dict[str, list]]:
    """claim id -> form -> [(relation, margin), ...] (one per value), read or from ``cache``."""
    out = {}
    for item in load_claims(path):
        key = f"{path}::{item.id}"
        if key not in cache:
            inputs = engine.claim_inputs(item.claim)
            parts = analyse_claim(inputs.claim, inputs.language)
            cache[key] = {}
            for form in FORMS:
                rs = read_claim(reader, parts, inputs.hits, ReadingRule(form=form), documents=engine.data.documents)
                cache[key][form] = [
                    (r.relation, r.margin if math.isfinite(r.margin) else -99.0, r.names, r.cover) for r in rs
                ]
        out[item.id] = cache[key]
    return out


def _arrays(claims: list[Claim], read: dict, form: str) -> tuple[np.ndarray, ...]:
    """Per claim: has values; the least margin and names share of the values read back (-inf unless
    all are); the most margin of a value read as another and that value's names share (-inf when none)."""
    has, same, same_n, diff, diff_n = [], [], [], [], []
    for c in claims:
        rs = read[c.id][form]
        has.append(bool(rs))
        all_same = bool(rs) and all(r[0] == SAME for r in rs)
        same.append(min(r[1] for r in rs) if all_same else -math.inf)
        same_n.append(min(r[2] for r in rs) if all_same else -math.inf)
        other = max((r for r in rs if r[0] == DIFFERENT), key=lambda r: (r[2], r[1]), default=None)
        diff.append(other[1] if other else -math.inf)
        diff_n.append(other[2] if other else -math.inf)
    return tuple(np.asarray(a) for a in (has, same, same_n, diff, diff_n))


def _mode(mode: str, judge: np.ndarray, reader: np.ndarray) -> np.ndarray:
    return {"judge": judge, "reader": reader, "both": judge & reader, "either": judge | reader}[mode]


def combined(judge: np.ndarray, arrays: tuple[np.ndarray, ...], rule: ReadingRule) -> np.ndarray:
    """The verdicts of :func:`citeqa.answer.claim_reading.combine`, vectorised over claims."""
    has, same, same_n, diff, diff_n = arrays
    j_s, j_c = judge == "supported", judge == "conflicting"
    r_s = has & (same >= rule.support_margin) & (same_n >= rule.support_names)
    r_c = (diff >= rule.conflict_margin) & (diff_n >= rule.conflict_names)
    sup = _mode(rule.support, j_s, r_s)
    veto = has & (same >= rule.veto_conflict_margin)
    con = _mode(rule.conflict, j_c & ~veto, r_c)
    out = np.where(sup, "supported", np.where(con, "conflicting", "not_found"))
    return np.where(has, out, judge)


def rules() -> list[ReadingRule]:
    return [
        ReadingRule(form, 4, 5, s, c, sm, cm, v, sn, cn)
        for form, s, c, sm, cm, v, sn, cn in itertools.product(
            FORMS, MODES, MODES, MARGINS, MARGINS, VETOES, NAMES, NAMES
        )
    ]


def choose(claims: list[Claim], judged: dict[str, np.ndarray], read: dict) -> tuple[str, ReadingRule]:
    """The judge and rule most accurate on ``claims`` that call no not_found or conflicting claim
    supported there (the fewest such, if none does); the middle of the tie in the grid's order."""
    gold = np.asarray([c.gold for c in claims])
    arrays = {form: _arrays(claims, read, form) for form in FORMS}
    scored = []
    for j in JUDGES:
        for rule in rules():
            got = combined(judged[j], arrays[rule.form], rule)
            false_s = int(((got == "supported") & (gold != "supported")).sum())
            scored.append((-false_s, int((got == gold).sum()), j, rule))
    best = max((f, r) for f, r, _, _ in scored)
    tied = [(j, rule) for f, r, j, rule in scored if (f, r) == best]
    return tied[len(tied) // 2]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", action="append", required=True, metavar="CLAIMS=INDEX")
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--cache", type=Path, help="a JSON file keeping the readings between runs")
    parser.add_argument("--write", action="store_true", help=f"write the rule fitted on every claim to {RULE_FILE}")
    args = parser.parse_args(argv)
    cache = json.loads(args.cache.read_text()) if args.cache and args.cache.exists() else {}
    reader = Reader()
    claims: list[Claim] = []
    sets: dict[str, set[str]] = {}
    read: dict = {}
    shipped: ClaimThresholds | None = None
    for spec in args.set:
        path, _, index = spec.partition("=")
        engine = Engine.open(Path(index or "index"))
        shipped = engine.settings.claims
        found = features(engine, Path(path))
        read.update(readings(engine, reader, Path(path), cache))
        if args.cache:
            args.cache.write_text(json.dumps(cache))
        sets[path] = {c.id for c in found}
        claims += found
    assert shipped is not None

    def per_set(label: str, got: dict[str, str]) -> None:
        report(label, claims, [got[c.id] for c in claims])
        for path, ids in sets.items():
            part = [c for c in claims if c.id in ids]
            report(f"  {label}, {path}", part, [got[c.id] for c in part])

    print("== before: the sentence judge alone")
    per_set("shipped thresholds", dict(zip([c.id for c in claims], verdicts(claims, shipped))))
    before: dict[str, str] = {}
    after: dict[str, str] = {}
    for f in range(args.folds):
        train = [c for c in claims if fold_of(c.id, args.folds) != f]
        test = [c for c in claims if fold_of(c.id, args.folds) == f]
        strict, relaxed = fit(train), fit(train, strict=False)
        before.update(zip([c.id for c in test], verdicts(test, strict)))
        judged_train = {"strict": np.asarray(verdicts(train, strict)), "relaxed": np.asarray(verdicts(train, relaxed))}
        j, rule = choose(train, judged_train, read)
        judge_test = np.asarray(verdicts(test, strict if j == "strict" else relaxed))
        got = combined(judge_test, _arrays(test, read, rule.form), rule)
        after.update(zip([c.id for c in test], got.tolist()))
        print(f"fold {f}: judge {j}, rule {rule_dict(rule)}")
    per_set("judge refitted out of fold", before)
    print("== after: the judge and the reading, out of fold")
    per_set("reading, out of fold", after)
    for form in FORMS:  # which question form reads best: values read back / read as another, per gold verdict
        arrays = _arrays(claims, read, form)
        gold = np.asarray([c.gold for c in claims])
        line = []
        for v in ("supported", "conflicting", "not_found"):
            m = arrays[0] & (gold == v)
            line.append(
                f"{v}: read back {int((arrays[1][m] > -math.inf).sum())}/{int(m.sum())}, "
                f"other value {int((arrays[3][m] > -math.inf).sum())}/{int(m.sum())}"
            )
        print(f"form {form}: " + "; ".join(line))
    strict, relaxed = fit(claims), fit(claims, strict=False)
    judged = {"strict": np.asarray(verdicts(claims, strict)), "relaxed": np.asarray(verdicts(claims, relaxed))}
    j, rule = choose(claims, judged, read)
    final = combined(judged[j], _arrays(claims, read, rule.form), rule)
    per_set("fitted on every claim (in-sample)", dict(zip([c.id for c in claims], final.tolist())))
    print("fitted:", j, rule_dict(rule))
    if args.write:
        right = sum(after[c.id] == c.gold for c in claims)
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
        data = {
            "_about": "How claims are checked by reading (citeqa.answer.claim_reading.ReadingRule) and the "
            "sentence judge's thresholds it goes with (judge); written by eval/fit_claim_reading.py --write.",
            **rule_dict(rule),
            "judge": asdict(strict if j == "strict" else relaxed),
            "fitted": {
                "by": "eval/fit_claim_reading.py "
                + " ".join(f"--set {s}" for s in args.set)
                + f" --folds {args.folds} --write",
                "date": date.today().isoformat(),
                "commit": commit or None,
                "judge": j,
                "held_out_accuracy": round(right / len(claims), 3),
                "claims": len(claims),
            },
        }
        RULE_FILE.write_text(json.dumps(data, ensure_ascii=False, indent=2) + "\n", "utf-8")
        print(f"wrote {RULE_FILE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
