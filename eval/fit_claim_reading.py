"""Fit how claims are checked by reading (citeqa.claims.rule.ReadingRule) and report it out of fold.

    PYTHONPATH=src .venv/bin/python eval/fit_claim_reading.py \\
        --set eval/claims.jsonl=index --set eval/dev2/claims.jsonl=out/dev2-index \\
        --set eval/dev2/claims-reading.jsonl=out/dev2-index --set eval/de/claims.jsonl=out/de-index \\
        --set eval/fr/claims.jsonl=out/fr-index --folds 5 [--cache out/claim-readings.json] [--write]

Every claim is checked once by the sentence judge (its rows, as ``eval/fit_claims.py`` stores them)
and read once per way of reading: each question form (``replace``, ``front``) with each holder
margin (:data:`HOLDERS`: how sure the reader must be that another name holds a value read,
``ReadingRule.holder_margin``); one reader question per value of the claim over the best passages,
and one short one per value read asking who holds it. Claims are split into ``--folds`` folds by a hash of their id (the
same folds as ``eval/fit_claims.py``); on the other folds, the judge's thresholds are fitted twice
(as today, calling no not_found claim supported on its training claims, and without that
condition), then the rule that combines a judge with the readings (form, support and conflict
modes, margins, and a veto of the judge's conflict by values read back surely) is chosen on the
same training claims: the most accurate that calls no not_found or conflicting claim supported
there, the middle of the tie. The held-out fold is judged with that choice. "before" is today's method: the shipped thresholds (fitted on the first
two files) and the judge refitted out of fold; "after" is the reading, out of fold.
``--write`` stores the choice fitted on every claim in ``src/citeqa/claims/weights/claim_reading.json``
(with the judge thresholds it goes with, and how it was fitted). The script never edits source code.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import os
import sys
from dataclasses import asdict
from pathlib import Path

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

sys.path.insert(0, str(Path(__file__).parent))

from fit_claims import (
    CONFLICT_GRID,
    FACTS_GRID,
    PLAIN_GRID,
    Claim,
    _combos,
    _conflict_table,
    _has_facts,
    _support_table,
    features,
    fit,
    fitted_block,
    fold_of,
    report,
    verdicts,
)

from citeqa.claims.check import ClaimThresholds
from citeqa.claims.judge import FEATURES
from citeqa.claims.parts import analyse_claim
from citeqa.claims.questions import FORMS
from citeqa.claims.reading import DIFFERENT, SAME, read_claim
from citeqa.claims.rule import MODES, RULE_FILE, ReadingRule, rule_dict
from citeqa.engine import Engine
from citeqa.evaluation.claims_file import load_claims
from citeqa.reader.reader import Reader

MARGINS = (-4.0, 0.0, 2.0, 4.0, 6.0, 8.0)
#: how sure a reading of each value back for the claim's subject must be to set the judge's conflict
#: aside (ReadingRule.veto_conflict_margin; +inf first: a veto is kept only where it gets more right)
VETOES = (math.inf, 2.0, 4.0, 6.0, 8.0)
NAMES = (0.0, 0.5, 0.75, 1.0)
#: how sure the reader must be that another name holds a value for the value to count as that
#: name's (ReadingRule.holder_margin; +inf: holders not asked)
HOLDERS = (math.inf, -2.0, 0.0, 2.0, 4.0)
DEFAULT_HOLDERS = ",".join(f"{h:g}" for h in HOLDERS)  #: every holder margin: the fit chooses


def variant(form: str, holder: float) -> str:
    """The cache key of one way of reading: a question form and a holder margin ("front@2")."""
    return f"{form}@{holder:g}"


VARIANTS = [(form, h) for form in FORMS for h in HOLDERS]


class MemoReader:
    """A reader that reads each (question, passages) once: the ways of reading share their questions."""

    def __init__(self, reader: Reader) -> None:
        self.reader, self.memo = reader, {}

    def run(self, question, passages, top=10, max_windows=None, turn=None):  # type: ignore[no-untyped-def]
        key = (question, tuple(p.chunk_id for p in passages), top, max_windows)
        if key not in self.memo:
            self.memo[key] = self.reader.run(question, passages, top=top, max_windows=max_windows, turn=turn)
        return self.memo[key]


def readings(
    engine: Engine, reader: Reader, path: Path, cache: dict, variants: list[tuple[str, float]] = VARIANTS
) -> dict[str, dict[str, list]]:
    """claim id -> way of reading (:func:`variant`) -> [(relation, margin, names, cover, another's),
    ...] (one per value; a value the way counts as another name's is ``none``), read or from ``cache``."""
    out = {}
    memo = MemoReader(reader)
    for item in load_claims(path):
        key = f"{path}::{item.id}"
        stale = key in cache and any(len(row) < 5 for rows in cache[key].values() for row in rows)
        if key not in cache or stale or any(variant(f, h) not in cache[key] for f, h in variants):
            inputs = engine.claim_inputs(item.claim)
            parts = analyse_claim(inputs.claim, inputs.language)
            cache[key] = {}
            for form, holder in variants:
                rule = ReadingRule(form=form, holder_margin=holder)
                rs = read_claim(memo, parts, inputs.hits, rule, documents=engine.documents)  # type: ignore[arg-type]
                cache[key][variant(form, holder)] = [
                    (
                        "none" if r.is_anothers(rule) else r.relation,
                        r.margin if r.margin is not None else -99.0,
                        r.names,
                        r.cover,
                        r.is_anothers(rule),
                    )
                    for r in rs
                ]
        out[item.id] = cache[key]
    return out


def _arrays(claims: list[Claim], read: dict, form: str) -> tuple[np.ndarray, ...]:
    """Per claim: has values; the least margin and names share of the values read back (-inf unless
    all are); the most margin of a value read as another and that value's names share (-inf when none);
    every value read is another name's."""
    has, same, same_n, diff, diff_n, others = [], [], [], [], [], []
    for c in claims:
        rs = read[c.id][form]
        has.append(bool(rs))
        all_same = bool(rs) and all(r[0] == SAME for r in rs)
        same.append(min(r[1] for r in rs) if all_same else -math.inf)
        same_n.append(min(r[2] for r in rs) if all_same else -math.inf)
        other = max((r for r in rs if r[0] == DIFFERENT), key=lambda r: (r[2], r[1]), default=None)
        diff.append(other[1] if other else -math.inf)
        diff_n.append(other[2] if other else -math.inf)
        others.append(bool(rs) and all(r[4] for r in rs))
    return tuple(np.asarray(a) for a in (has, same, same_n, diff, diff_n, others))


def _mode(mode: str, judge: np.ndarray, reader: np.ndarray) -> np.ndarray:
    return {
        "judge": judge,
        "reader": reader,
        "both": judge & reader,
        "either": judge | reader,
        "unless": judge & ~reader,  # the reader array is then "some value read as another"
    }[mode]


def combined(judge: np.ndarray, arrays: tuple[np.ndarray, ...], rule: ReadingRule) -> np.ndarray:
    """The verdicts of :func:`citeqa.claims.reading.combine`, vectorised over claims."""
    has, same, same_n, diff, diff_n, others = arrays
    j_s, j_c = judge == "supported", judge == "conflicting"
    r_s = has & (same >= rule.support_margin) & (same_n >= rule.support_names)
    r_c = (diff >= rule.conflict_margin) & (diff_n >= rule.conflict_names)
    r_o = (diff >= rule.support_margin) & (diff_n >= rule.support_names)
    sup = _mode(rule.support, j_s, r_o if rule.support == "unless" else r_s)
    veto = has & (same >= rule.veto_conflict_margin)
    if rule.holder_veto:
        veto |= others
    con = _mode(rule.conflict, j_c & ~veto, r_c)
    out = np.where(sup, "supported", np.where(con, "conflicting", "not_found"))
    return np.where(has, out, judge)


def _middle(mask: np.ndarray) -> tuple[int, ...]:
    """The middle one (in grid order) of the best choices ``mask`` marks."""
    tied = np.argwhere(mask)
    return tuple(int(v) for v in tied[len(tied) // 2])


def _support_judge(claims: list[Claim], plain: ClaimThresholds) -> tuple[np.ndarray, np.ndarray]:
    """[facts combo, claim]: the judge supports (a claim without numbers or dates by ``plain``'s
    thresholds, the same for every combo), and the combos."""
    s_combos = _combos(FACTS_GRID)
    out = np.zeros((len(s_combos), len(claims)), dtype=bool)
    facts = [i for i, c in enumerate(claims) if _has_facts(c)]
    if facts:
        out[:, facts] = _support_table([claims[i] for i in facts], s_combos)
    p = np.asarray([[getattr(plain, k) for k in PLAIN_GRID]])
    for i, c in enumerate(claims):
        if not _has_facts(c):
            out[:, i] = _support_table([c], p)[0, 0]
    return out, s_combos


def fit_joint(
    claims: list[Claim], read: dict, variants: list[tuple[str, float]] = VARIANTS, precision: float | None = None
) -> tuple[ClaimThresholds, ReadingRule, dict]:
    """The judge's thresholds and the reading rule fitted together on ``claims``, in two stages.

    Support: among the judge's support thresholds (``fit_claims.FACTS_GRID``; a claim without
    numbers or dates keeps the plain thresholds fitted as today), the reading's support margin and
    names share, and how the two combine (judge, reader, both, either), the choice that supports the
    most supported claims and no not_found or conflicting one. Conflict: then, on the claims not
    supported, the judge's conflict thresholds, the reading's conflict margin and names share and
    how they combine, the most accurate. Each stage takes the middle of its tie (grid order); the
    way of reading (question form and holder margin) is the one that gets more right."""
    gold = np.asarray([c.gold for c in claims])
    plain = fit(claims)
    s_judge, s_combos = _support_judge(claims, plain)  # [k, i]
    c_combos = _combos(CONFLICT_GRID)
    c_judge = _conflict_table(claims, c_combos)  # [c, i]
    params = list(itertools.product(MARGINS, NAMES))
    best: tuple | None = None
    for form, holder in variants:
        has, same, same_n, diff, diff_n, others = _arrays(claims, read, variant(form, holder))
        r_s = np.stack([has & (same >= m) & (same_n >= n) for m, n in params])  # [p, i]
        r_o = np.stack([(diff >= m) & (diff_n >= n) for m, n in params])  # a value read as another
        r_c = np.stack([(diff >= m) & (diff_n >= n) for m, n in params])
        sup = np.stack(
            [
                np.where(
                    has,
                    np.broadcast_to(
                        _mode(mode, s_judge[:, None, :], (r_o if mode == "unless" else r_s)[None, :, :]),
                        (len(s_combos), len(params), len(claims)),
                    ),
                    s_judge[:, None, :],
                )
                for mode in MODES
            ]
        )  # [mode, k, p, i]
        right_s = (sup & (gold == "supported")).sum(axis=-1)
        false_s = (sup & (gold != "supported")).sum(axis=-1)
        allowed = false_s == false_s.min()
        if precision is not None:  # a precision of supported to keep instead of the fewest false supports
            precise = false_s <= (1 - precision) * (right_s + false_s)
            allowed = precise if precise.any() else allowed
        score = np.where(allowed, right_s, -1)
        sm, k, p = _middle(score == score.max())
        chosen_sup, judge_sup = sup[sm, k, p], s_judge[k]
        best_c: tuple | None = None
        for holder_veto, veto in itertools.product((False, True), VETOES):
            j_c = c_judge & ~judge_sup  # the judge's verdict is conflicting only where it supports nowhere
            if holder_veto:  # a judge's conflict set aside when every value read is another's
                j_c = j_c & ~others[None, :]
            j_c = j_c & ~(has & (same >= veto))[None, :]  # ... or when every value is read back surely
            con = np.stack(
                [
                    np.where(
                        has,
                        np.broadcast_to(
                            _mode(mode, j_c[:, None, :], r_c[None, :, :]), (len(c_combos), len(params), len(claims))
                        ),
                        j_c[:, None, :],
                    )
                    for mode in MODES[:4]  # "unless" is a support mode
                ]
            )  # [mode, c, q, i]
            right_c = ((con & (gold == "conflicting")) | (~con & (gold == "not_found"))) & ~chosen_sup
            score_c = right_c.sum(axis=-1)
            if best_c is None or score_c.max() > best_c[0].max():
                best_c = (score_c, holder_veto, veto)
        assert best_c is not None
        score_c, holder_veto, veto = best_c
        cm, c, q = _middle(score_c == score_c.max())
        total = int(right_s[sm, k, p]) + int(score_c[cm, c, q])
        key = (0 if precision is not None else -int(false_s[sm, k, p]), total)
        if best is None or key > best[0]:
            rule = ReadingRule(
                form,
                4,
                5,
                MODES[sm],
                MODES[cm],
                params[p][0],
                params[q][0],
                veto,
                params[p][1],
                params[q][1],
                holder,
                holder_veto=holder_veto,
            )
            values = asdict(plain) | dict(zip(FACTS_GRID, s_combos[k])) | dict(zip(CONFLICT_GRID, c_combos[c]))
            best = (key, ClaimThresholds(**{n: float(v) for n, v in values.items()}), rule)
    assert best is not None
    return best[1], best[2], {"right": best[0][1], "false_supported": -best[0][0]}


def _options(holders: str) -> str:
    """The options beyond the sets that changed the fit, as its record's command writes them."""
    return "" if holders == DEFAULT_HOLDERS else f" --holders={holders}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", action="append", required=True, metavar="CLAIMS=INDEX")
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--cache", type=Path, help="a JSON file keeping the readings between runs")
    parser.add_argument(
        "--holders",
        default=DEFAULT_HOLDERS,
        help="the holder margins the fit may choose, comma-separated (inf: no holder question); all by default",
    )
    parser.add_argument("--write", action="store_true", help=f"write the rule fitted on every claim to {RULE_FILE}")
    args = parser.parse_args(argv)
    variants = [(f, h) for f, h in VARIANTS if h in {float(v) for v in args.holders.split(",")}]
    cache = json.loads(args.cache.read_text()) if args.cache and args.cache.exists() else {}
    reader = Reader()
    claims: list[Claim] = []
    sets: dict[str, set[str]] = {}
    read: dict = {}
    shipped: ClaimThresholds | None = None
    for spec in args.set:
        path, _, index = spec.partition("=")
        engine = Engine.open(Path(index or "index"))
        shipped = engine.claim_thresholds
        rows_key = f"rows::{path}"
        if rows_key in cache:  # the judge's rows, kept with the readings
            found = [Claim(i, g, np.asarray(r, dtype=float).reshape(-1, len(FEATURES))) for i, g, r in cache[rows_key]]
        else:
            found = features(engine, Path(path))
            cache[rows_key] = [(c.id, c.gold, c.rows.tolist()) for c in found]
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
        before.update(zip([c.id for c in test], verdicts(test, fit(train))))
        judge_t, rule, _ = fit_joint(train, read, variants)
        got = combined(
            np.asarray(verdicts(test, judge_t)), _arrays(test, read, variant(rule.form, rule.holder_margin)), rule
        )
        after.update(zip([c.id for c in test], got.tolist()))
        j = asdict(judge_t)
        print(f"fold {f}: judge {j}, rule {rule_dict(rule)}")
    per_set("judge refitted out of fold", before)
    print("== after: the judge and the reading, out of fold")
    per_set("reading, out of fold", after)
    for c in claims:  # the errors the targets are about: claims called supported that are not
        if after[c.id] == "supported" and c.gold != "supported":
            print(f"  out of fold, {c.gold} called supported: {c.id}")
    for form, holder in VARIANTS:  # which way reads best: values read back / read as another, per gold verdict
        arrays = _arrays(claims, read, variant(form, holder))
        gold = np.asarray([c.gold for c in claims])
        line = []
        for v in ("supported", "conflicting", "not_found"):
            m = arrays[0] & (gold == v)
            line.append(
                f"{v}: read back {int((arrays[1][m] > -math.inf).sum())}/{int(m.sum())}, "
                f"other value {int((arrays[3][m] > -math.inf).sum())}/{int(m.sum())}"
            )
        print(f"form {variant(form, holder)}: " + "; ".join(line))
    judge_t, rule, _ = fit_joint(claims, read, variants)
    final = combined(
        np.asarray(verdicts(claims, judge_t)), _arrays(claims, read, variant(rule.form, rule.holder_margin)), rule
    )
    j = asdict(judge_t)
    per_set("fitted on every claim (in-sample)", dict(zip([c.id for c in claims], final.tolist())))
    print("fitted:", j, rule_dict(rule))
    if args.write:
        right = sum(after[c.id] == c.gold for c in claims)
        data = {
            "_about": "How claims are checked by reading (citeqa.claims.rule.ReadingRule) and the "
            "sentence judge's thresholds it goes with (judge); written by eval/fit_claim_reading.py --write.",
            **rule_dict(rule),
            "judge": asdict(judge_t),
            "fitted": fitted_block(
                "eval/fit_claim_reading.py", args.set, args.folds, right, len(claims), _options(args.holders)
            ),
        }
        RULE_FILE.write_text(json.dumps(data, ensure_ascii=False, indent=2) + "\n", "utf-8")
        print(f"wrote {RULE_FILE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
