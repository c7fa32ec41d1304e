"""Every eval question's reading (its language), one JSON line each: to diff before and after a change
that must not change how questions are read (a faster detector, a lazier load).

    PYTHONPATH=src .venv/bin/python eval/qlang/readings.py > after.jsonl
    PYTHONPATH=/tmp/before/src .venv/bin/python eval/qlang/readings.py > before.jsonl
    diff before.jsonl after.jsonl && echo same

Each line: the file, the question's id, the question and its readings by
:func:`citeqa.text.language.question_language` with no page language, then with the page in each
interface language in turn, with the line's own ``history`` where it has one and its corpus's
languages (the shipped corpus: es, pt, en; eval/de: de; eval/fr: fr).
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from citeqa.messages import catalogue_languages
from citeqa.text import language as L

ROOT = Path(__file__).resolve().parents[2]
#: Each question file and its corpus's languages.
FILES = {
    "eval/qa.jsonl": ("es", "pt", "en"),
    "eval/dev2/qa.jsonl": ("es", "pt", "en"),
    "eval/de/qa.jsonl": ("de",),
    "eval/fr/qa.jsonl": ("fr",),
    "eval/qlang/questions.jsonl": ("es", "pt", "en"),
    "eval/qlang/holdout.jsonl": ("es", "pt", "en"),
}


def main() -> None:
    pages = catalogue_languages()
    started = time.process_time()
    count = 0
    for name, langs in FILES.items():
        corpus = frozenset(langs)
        candidates = L.question_candidates(corpus, pages)
        default = sorted(corpus)[0]
        for line in (ROOT / name).read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            row = json.loads(line)
            question, history = row["question"], tuple(row.get("history") or ())
            read = [
                L.question_language(question, history, candidates, default, corpus, page) for page in (None, *pages)
            ]
            print(
                json.dumps({"file": name, "id": row.get("id"), "question": question, "read": read}, ensure_ascii=False)
            )
            count += 1
    print(
        f"{count} questions, pages: none, {', '.join(pages)}; {time.process_time() - started:.1f} s CPU",
        file=sys.stderr,
    )


if __name__ == "__main__":
    main()
