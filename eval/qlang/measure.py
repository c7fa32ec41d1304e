"""Question-language detection per language, before and after, on short questions.

    PYTHONPATH=src .venv/bin/python eval/qlang/measure.py                      # eval/qlang/questions.jsonl
    PYTHONPATH=src .venv/bin/python eval/qlang/measure.py eval/claims.jsonl    # any file with lang + question/claim
    PYTHONPATH=src .venv/bin/python eval/qlang/measure.py --corpus de eval/de/qa.jsonl

Each row is a gold language: how many of its texts are read as it. "before" is the reading of
commit 6a95827 (the corpus's languages and es/pt/en, lingua's best; ties in the detector's order),
"after" is :func:`citeqa.text.language.question_language` over the interface's and the corpus's
languages with no page language (the terminal, the API), "page = own" with the page in the text's
language (a reader asking in the language their browser speaks), "page = other" with the page in each
of the other interface languages in turn (a reader asking in another language than their browser's).
No history; the corpus's languages are ``--corpus`` (the shipped corpus: es, pt, en).
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path

from citeqa.messages import catalogue_languages
from citeqa.text import language as L

OLD_QUESTION_LANGUAGES = ("es", "pt", "en")


def before(text: str, corpus: frozenset[str]) -> str | None:
    """The reading before: lingua's best among the corpus's languages and es/pt/en."""
    candidates = [lang for lang in L.detected_languages() if lang in corpus | set(OLD_QUESTION_LANGUAGES)]
    found = L.ranked(text, candidates)
    return found[0].lang if found else None


def rows(path: Path) -> list[tuple[str, str]]:
    """(text, gold language) of every line: a question or a claim."""
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [(r.get("question") or r["claim"], r["lang"]) for r in lines]


def measure(items: list[tuple[str, str]], corpus: frozenset[str]) -> dict[str, dict[str, list[int]]]:
    """Per gold language and reading: [right, asked]."""
    ui = catalogue_languages()
    candidates = L.question_candidates(corpus, ui)
    default = sorted(corpus)[0]
    out: dict[str, dict[str, list[int]]] = defaultdict(lambda: defaultdict(lambda: [0, 0]))

    def count(lang: str, how: str, got: str | None) -> None:
        out[lang][how][0] += got == lang
        out[lang][how][1] += 1

    for text, lang in items:
        count(lang, "before", before(text, corpus))
        count(lang, "after", L.question_language(text, (), candidates, default, corpus))
        count(lang, "page = own", L.question_language(text, (), candidates, default, corpus, lang))
        for page in (p for p in ui if p != lang):
            count(lang, "page = other", L.question_language(text, (), candidates, default, corpus, page))
    return out


def table(path: Path, result: dict[str, dict[str, list[int]]]) -> str:
    """A Markdown table: one row per language, then all."""
    hows = ("before", "after", "page = own", "page = other")
    lines = [f"{path} (accuracy of the question's language)", "", "| lang | n | " + " | ".join(hows) + " |"]
    lines.append("|---|---|" + "---|" * len(hows))
    total = {how: [0, 0] for how in hows}
    for lang, per in result.items():
        cells = []
        for how in hows:
            right, n = per[how]
            total[how][0] += right
            total[how][1] += n
            cells.append(f"{right / n:.3f}")
        lines.append(f"| {lang} | {per['before'][1]} | " + " | ".join(cells) + " |")
    lines.append(f"| all | {total['before'][1]} | " + " | ".join(f"{r / n:.3f}" for r, n in total.values()) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="*", type=Path, default=[Path(__file__).with_name("questions.jsonl")])
    parser.add_argument("--corpus", default="es,pt,en", help="the corpus's languages, comma-separated")
    args = parser.parse_args()
    corpus = frozenset(args.corpus.split(","))
    for path in args.files:
        print(table(path, measure(rows(path), corpus)), end="\n\n")


if __name__ == "__main__":
    main()
