"""Check the claims-dev set against its corpora and count its rows.

Every supported or conflicting row's ``evidence`` must be a verbatim substring of its gold ``doc``, every
not_found row with a ``near_doc`` must quote ``near_text`` from it, every variant must point (``of``) at a true
claim of the same file and language. Prints rows per language x variant x verdict (the README's table).

    python eval/claims-dev/check.py
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
#: claim file -> its corpus (each file is checked against the index of its own corpus)
FILES = {"dev2.jsonl": "eval/dev2/corpus", "de.jsonl": "eval/de/corpus", "fr.jsonl": "eval/fr/corpus"}
LANGS = ("ca", "de", "en", "es", "fr", "it", "pt")
VARIANTS = ("true", "wrong_number", "wrong_year", "wrong_entity", "unit_spelling", "not_given")


def rows_of(name: str) -> list[dict]:
    """The rows of one claim file of this folder."""
    lines = (HERE / name).read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def problems(name: str, rows: list[dict]) -> list[str]:
    """What is wrong with the rows of ``name`` (empty when nothing)."""
    corpus = REPO / FILES[name]
    docs = {p.name: p.read_text(encoding="utf-8") for p in corpus.iterdir()}
    true_ids = {r["id"]: r["lang"] for r in rows if r["variant"] == "true"}
    found = []
    for r in rows:
        if r["verdict"] == "not_found":
            if r["doc"] is not None or r["evidence"] is not None:
                found.append(f"{r['id']}: not_found with a doc or evidence")
            if "near_doc" in r and r["near_text"] not in docs[r["near_doc"]]:
                found.append(f"{r['id']}: near_text not in {r['near_doc']}")
        elif r["doc"] not in docs or r["evidence"] not in docs[r["doc"]]:
            found.append(f"{r['id']}: evidence not in {r['doc']}")
        if true_ids.get(r["of"]) != r["lang"]:
            found.append(f"{r['id']}: 'of' is not a true claim of its language")
        if r["variant"] not in VARIANTS or r["lang"] not in LANGS:
            found.append(f"{r['id']}: unknown variant or language")
    return found


def main() -> int:
    counts: Counter[tuple[str, str, str]] = Counter()
    bad = []
    for name in FILES:
        rows = rows_of(name)
        bad += problems(name, rows)
        counts.update((r["lang"], r["variant"], r["verdict"]) for r in rows)
    columns = [(v, g) for v in VARIANTS for g in ("supported", "conflicting", "not_found") if counts_any(counts, v, g)]
    print("| lang | " + " | ".join(f"{v} {g}" for v, g in columns) + " | rows |")
    print("|---" * (len(columns) + 2) + "|")
    for lang in LANGS:
        cells = [str(counts[lang, v, g]) for v, g in columns]
        total = sum(n for (lg, _, _), n in counts.items() if lg == lang)
        print(f"| {lang} | " + " | ".join(cells) + f" | {total} |")
    verdicts: Counter[str] = Counter()
    for (_, _, g), n in counts.items():
        verdicts[g] += n
    print(f"rows {sum(counts.values())}; by verdict {dict(verdicts)}")
    for line in bad:
        print("PROBLEM", line, file=sys.stderr)
    return 1 if bad else 0


def counts_any(counts: Counter[tuple[str, str, str]], variant: str, verdict: str) -> bool:
    """Whether any language has a row of ``variant`` with gold ``verdict``."""
    return any(n for (_, v, g), n in counts.items() if v == variant and g == verdict)


if __name__ == "__main__":
    sys.exit(main())
