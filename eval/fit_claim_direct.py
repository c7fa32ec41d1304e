"""Fit claim checking with direct evidence first (citeqa.claims.direct.DirectRule) and report it out of
fold, per claim file and per claim language, before and after.

    PYTHONPATH=src .venv/bin/python eval/fit_claim_direct.py \\
        --set eval/claims.jsonl=index --set eval/dev2/claims.jsonl=out/dev2-index \\
        --set eval/dev2/claims-reading.jsonl=out/dev2-index --set eval/de/claims.jsonl=out/de-index \\
        --set eval/fr/claims.jsonl=out/fr-index --set eval/claims-dev/dev2.jsonl=out/dev2-index \\
        --set eval/claims-dev/de.jsonl=out/de-index --set eval/claims-dev/fr.jsonl=out/fr-index \\
        --folds 5 --cache out/claim-direct.json [--forms replace] [--write]

Every claim is judged and read once (``eval/fit_claim_reading.py``'s rows and readings, with the
questions of this code), and each unit of its retrieved passages is looked at for direct evidence
(:func:`citeqa.claims.direct.find_values`: each value of the claim stated for its subject, another
value, or none). Claims are split into ``--folds`` folds by a hash of their id, or of the true claim
they were derived from (``of`` in ``eval/claims-dev``: a claim and its variants share a fold). On
the other folds the judge and reading rule are fitted as ``eval/fit_claim_reading.py`` does, then
the direct rule (names share, words cover, cosine, whether a unit giving another value conflicts):
the most accurate on the training claims among those keeping the precision of supported at 0.99
there, the middle of the tie. "before" is the judge and reading alone, fitted the same
way out of fold (the method shipped before direct evidence, with this code's questions); with
``--shipped-rule`` the shipped judge thresholds and reading rule are kept (before: them alone, in
sample where they were fitted on the claims) and only the direct rule is fitted. ``--write``
stores the choice fitted on every claim in ``src/citeqa/claims/weights/claim_reading.json`` with its
provenance. The script never edits source code.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
from collections import Counter
from dataclasses import asdict
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))

from fit_claim_reading import VARIANTS, MemoReader, _arrays, combined, fit_joint, variant
from fit_claims import Claim, fitted_block, verdicts

from citeqa.claims.check import analyse_claim, claim_thresholds, judge_candidates
from citeqa.claims.direct import DIFFERENT, SAME, DirectRule, _holder, find_values
from citeqa.claims.judge import FEATURES
from citeqa.claims.parts import ClaimParts
from citeqa.claims.questions import claim_values
from citeqa.claims.reading import read_claim
from citeqa.claims.rule import RULE_FILE, ReadingRule, judge_block, reading_rule, rule_dict
from citeqa.engine import Engine
from citeqa.reader.reader import Reader

NAMES = (0.5, 0.75, 1.0)
COVERS = (0.0, 0.3, 0.5, 0.8, 1.0, 1.1)
DENSES = (0.8, 0.84, 0.88, 0.92, 1.1)
GRID = [DirectRule(n, c, d, k) for n, c, d, k in itertools.product(NAMES, COVERS, DENSES, (True, False))]
_CODE = {"none": 0, SAME: 1, DIFFERENT: 2}
#: the version of the direct rows a cache holds (2: each value's holder must hold no other value of the claim)
DIRECT_ROWS = 2


def one_pass(  # type: ignore[no-untyped-def]
    engine: Engine, reader: Reader, path: Path, cache: dict, variants: list, save, cached_only: bool = False
) -> None:
    """Each claim of ``path`` retrieved once: the judge's rows (as ``eval/fit_claims.py`` stores
    them), its direct rows and its readings (as ``eval/fit_claim_reading.py`` stores them), into
    ``cache`` (``save``d every 20 claims: a long run keeps what it read)."""
    memo = MemoReader(reader)
    judge_rows = cache.setdefault(f"rows::{path}", {})
    direct = cache.setdefault(f"direct::{path}", {})
    for n, line in enumerate(x for x in path.read_text("utf-8").splitlines() if x.strip()):
        row = json.loads(line)
        key = f"{path}::{row['id']}"
        done = row["id"] in judge_rows and key in cache
        old = done and row["id"] in direct and direct[row["id"]].get("v") != DIRECT_ROWS
        if old and not _several_holders(analyse_claim(row["claim"], direct[row["id"]]["lang"])):
            direct[row["id"]]["v"] = DIRECT_ROWS  # one holder: version 2 finds what version 1 found
        if (done and direct.get(row["id"], {}).get("v") == DIRECT_ROWS) or (cached_only and not done):
            continue
        inputs = engine.claim_inputs(row["claim"])
        parts = analyse_claim(inputs.claim, inputs.language)
        judged = judge_candidates(parts, inputs.hits, inputs.candidates, inputs.similarities, engine.documents)
        judge_rows[row["id"]] = (row["verdict"], [j.judgement.row() for j in judged])
        units = []
        for j in judged:
            found = {f.relation for f in find_values(parts, j.unit)}
            says = 1 if found == {SAME} else 2 if DIFFERENT in found and "none" not in found else 0
            g = j.judgement
            units.append([g.names, g.cover, g.dense, float(g.opposed), float(says)])
        direct[row["id"]] = {
            "lang": inputs.language,
            "group": row.get("of") or row["id"],
            "rows": units,
            "v": DIRECT_ROWS,
        }
        if done:
            continue  # read before: only the direct rows were out of date
        cache[key] = {}
        for form, holder in variants:
            rule = ReadingRule(form=form, holder_margin=holder)
            rs = read_claim(memo, parts, inputs.hits, rule, documents=engine.documents)  # type: ignore[arg-type]
            cache[key][variant(form, holder)] = [
                (r.relation, r.margin if r.margin is not None else -99.0, r.names, r.cover, False) for r in rs
            ]
        if n % 20 == 19:
            save()
            print(f"  {path}: {n + 1} claims", flush=True)
    save()


def _several_holders(parts: ClaimParts) -> bool:
    """Whether the claim's values belong to more than one of its names (the rows of version 1 differ)."""
    return len({_holder(parts.text, v.start, parts.lang) for v in claim_values(parts)} - {None}) > 1


def direct_verdicts(ids: list[str], rows: dict, rule: DirectRule) -> np.ndarray:
    """Per claim: ``same``, ``different`` or ``none`` (citeqa.claims.direct.direct_evidence's verdict)."""
    out = []
    for i in ids:
        u = np.asarray(rows[i]["rows"], dtype=float).reshape(-1, 5)
        about = (u[:, 0] >= rule.names) & (u[:, 3] == 0) & ((u[:, 1] >= rule.cover) | (u[:, 2] >= rule.dense))
        if (about & (u[:, 4] == 1)).any():
            out.append(SAME)
        elif rule.conflict and (about & (u[:, 4] == 2)).any():
            out.append(DIFFERENT)
        else:
            out.append("none")
    return np.asarray(out)


def with_direct(direct: np.ndarray, verdict: np.ndarray) -> np.ndarray:
    """citeqa.claims.check.with_direct, vectorised."""
    return np.where(direct == SAME, "supported", np.where(direct == DIFFERENT, "conflicting", verdict))


#: the precision of supported a direct rule must keep on its training claims (the issue's target)
PRECISION = 0.99


def fit_direct(claims: list[Claim], rows: dict, base: np.ndarray) -> DirectRule:
    """The direct rule on ``claims`` whose verdicts without it are ``base``: among the rules keeping
    the precision of supported at :data:`PRECISION` or more on them (else those calling the fewest
    not_found or conflicting claims supported), the most right, the middle of the tie (grid order)."""
    gold = np.asarray([c.gold for c in claims])
    ids = [c.id for c in claims]
    got = np.stack([with_direct(direct_verdicts(ids, rows, r), base) for r in GRID])
    called = (got == "supported").sum(axis=1)
    false_s = ((got == "supported") & (gold != "supported")).sum(axis=1)
    right = (got == gold).sum(axis=1)
    precise = false_s <= (1 - PRECISION) * called
    ok = precise if precise.any() else false_s == false_s.min()
    score = np.where(ok, right, -1)
    tied = np.flatnonzero(score == score.max())
    return GRID[int(tied[len(tied) // 2])]


def _grid(claims: list[Claim], rows: dict) -> None:
    """Per direct rule, on every claim: true claims it supports alone, others it supports, conflicts
    it finds right and wrong."""
    gold = np.asarray([c.gold for c in claims])
    for r in GRID:
        d = direct_verdicts([c.id for c in claims], rows, r)
        print(
            f"direct {asdict(r)}: supports {int(((d == SAME) & (gold == 'supported')).sum())} true, "
            f"{int(((d == SAME) & (gold != 'supported')).sum())} others; conflicts "
            f"{int(((d == DIFFERENT) & (gold == 'conflicting')).sum())} right, "
            f"{int(((d == DIFFERENT) & (gold != 'conflicting')).sum())} wrong"
        )


def per_language(label: str, claims: list[Claim], got: dict[str, str], rows: dict) -> None:
    """Accuracy, precision of supported and recall of true claims, per claim language."""
    by: dict[str, Counter] = {}
    for c in claims:
        k = by.setdefault(rows[c.id]["lang"], Counter())
        k["n"] += 1
        k["right"] += got[c.id] == c.gold
        k["called"] += got[c.id] == "supported"
        k["true_called"] += got[c.id] == "supported" and c.gold == "supported"
        k["true"] += c.gold == "supported"
    cells = []
    for lang in sorted(by):
        k = by[lang]
        precision = f"{k['true_called'] / k['called']:.3f}" if k["called"] else "n/a"
        recall = f"{k['true_called'] / k['true']:.3f}" if k["true"] else "n/a"
        cells.append(f"{lang} {k['right'] / k['n']:.3f} (n {k['n']}, P {precision}, R {recall})")
    print(f"  {label} per language: " + "; ".join(cells))


def _report(label: str, claims: list[Claim], got: dict[str, str], rows: dict, sets: dict[str, set[str]]) -> None:
    from fit_claims import report

    report(label, claims, [got[c.id] for c in claims])
    for path, ids in sets.items():
        part = [c for c in claims if c.id in ids]
        report(f"  {label}, {path}", part, [got[c.id] for c in part])
    per_language(label, claims, got, rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", action="append", required=True, metavar="CLAIMS=INDEX")
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--cache", type=Path, help="a JSON file keeping rows and readings between runs")
    parser.add_argument("--forms", default="replace", help="question forms the fit may choose, comma-separated")
    parser.add_argument(
        "--shipped-rule",
        action="store_true",
        help="keep the shipped judge thresholds and reading rule (claim_reading.json); fit only the direct rule",
    )
    parser.add_argument("--cached-only", action="store_true", help="fit on the claims the cache holds; read no other")
    parser.add_argument(
        "--grid", action="store_true", help="print what each direct rule alone supports, on every claim"
    )
    parser.add_argument("--write", action="store_true", help=f"write the rule fitted on every claim to {RULE_FILE}")
    args = parser.parse_args(argv)
    forms = args.forms.split(",")
    variants = [(f, h) for f, h in VARIANTS if f in forms and h == float("inf")]
    cache = json.loads(args.cache.read_text()) if args.cache and args.cache.exists() else {}
    reader = Reader()
    claims: list[Claim] = []
    sets: dict[str, set[str]] = {}
    read: dict = {}
    rows: dict = {}

    shipped = (claim_thresholds(judge_block()), reading_rule()) if args.shipped_rule else None

    def save() -> None:
        if args.cache:
            args.cache.write_text(json.dumps(cache))

    for spec in args.set:
        path, _, index = spec.partition("=")
        engine = Engine.open(Path(index or "index"))
        one_pass(engine, reader, Path(path), cache, variants, save, args.cached_only)
        found = [
            Claim(i, g, np.asarray(r, dtype=float).reshape(-1, len(FEATURES)))
            for i, (g, r) in cache[f"rows::{path}"].items()
        ]
        rows.update(cache[f"direct::{path}"])
        read.update({c.id: cache[f"{path}::{c.id}"] for c in found})
        sets[path] = {c.id for c in found}
        claims += found
        print(f"read {path}: {len(found)} claims", flush=True)
    fold = {
        c.id: int(__import__("hashlib").sha1(rows[c.id]["group"].encode()).hexdigest(), 16) % args.folds for c in claims
    }
    if args.grid:
        _grid(claims, rows)
    before: dict[str, str] = {}
    after: dict[str, str] = {}
    for f in range(args.folds):
        train = [c for c in claims if fold[c.id] != f]
        test = [c for c in claims if fold[c.id] == f]
        judge_t, rule = shipped if shipped is not None else fit_joint(train, read, variants, PRECISION)[:2]
        key = variant(rule.form, rule.holder_margin)
        base_train = combined(np.asarray(verdicts(train, judge_t)), _arrays(train, read, key), rule)
        base_test = combined(np.asarray(verdicts(test, judge_t)), _arrays(test, read, key), rule)
        direct = fit_direct(train, rows, base_train)
        got = with_direct(direct_verdicts([c.id for c in test], rows, direct), base_test)
        before.update(zip([c.id for c in test], base_test.tolist()))
        after.update(zip([c.id for c in test], got.tolist()))
        print(f"fold {f}: rule {rule_dict(rule)}, direct {asdict(direct)}", flush=True)
    print("== before: the judge and the reading, out of fold (no direct evidence)")
    _report("before", claims, before, rows, sets)
    print("== after: direct evidence first, then the judge and the reading, out of fold")
    _report("after", claims, after, rows, sets)
    for c in claims:
        if after[c.id] == "supported" and c.gold != "supported":
            print(f"  out of fold, {c.gold} called supported: {c.id}")
    judge_t, rule = shipped if shipped is not None else fit_joint(claims, read, variants, PRECISION)[:2]
    key = variant(rule.form, rule.holder_margin)
    base = combined(np.asarray(verdicts(claims, judge_t)), _arrays(claims, read, key), rule)
    direct = fit_direct(claims, rows, base)
    final = with_direct(direct_verdicts([c.id for c in claims], rows, direct), base)
    _report("fitted on every claim (in-sample)", claims, dict(zip([c.id for c in claims], final.tolist())), rows, sets)
    print("fitted:", asdict(judge_t), rule_dict(rule), asdict(direct))
    if args.write:
        right = sum(after[c.id] == c.gold for c in claims)
        options = f" --forms {args.forms}" + (" --shipped-rule" if args.shipped_rule else "")
        data = {
            "_about": "How claims are checked: direct evidence first (citeqa.claims.direct.DirectRule: direct), then "
            "by reading (citeqa.claims.rule.ReadingRule) with the sentence judge's thresholds it goes with (judge); "
            "written by eval/fit_claim_direct.py --write.",
            **rule_dict(rule),
            "judge": asdict(judge_t),
            "direct": asdict(direct),
            **({"reading_fitted": json.loads(RULE_FILE.read_text("utf-8")).get("fitted")} if args.shipped_rule else {}),
            "fitted": fitted_block("eval/fit_claim_direct.py", args.set, args.folds, right, len(claims), options),
        }
        RULE_FILE.write_text(json.dumps(data, ensure_ascii=False, indent=2) + "\n", "utf-8")
        print(f"wrote {RULE_FILE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
