"""Questions like the ones citeqa must not answer, generated from answerable ones: the verifier's data.

    python -m citeqa.fitting.negatives --dev out/reader-data/dev.jsonl --out out/verifier-data

From the reader's dev split (``python -m citeqa.fitting.reader.prepare``'s ``dev.jsonl``: articles the reader never
trained on), per language: a corpus of whole articles (one file each) and a QA file of

- ``answerable``: the dev questions as they are;
- ``entity_swap``: the question's name replaced by another name of the same article that the
  answer's paragraph never mentions (SQuAD 2.0's kind of negative: the neighbour's value is
  there to be read, the asked entity's is not; Zhu et al. 2019, Gautam et al. 2023);
- ``attribute``: an attribute the article never states (a price, a cost, a height...) asked
  about a name the question mentions (``attributes.json``: a template is used only when none of
  its markers occurs in the article);
- ``unanswerable``: the source's own unanswerable questions (SQuAD 2.0 dev and its translations).

Paragraphs are split by a hash of their text: the questions made from ``--measure-share`` of them
are kept for measuring only (``split`` = ``measure``), the rest fit the verifier (``fit``); some
languages have only six dev articles, too few to split by article. Everything is seeded.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any, TypedDict

from citeqa.text.facts import find_names

#: Languages with templates in ``attributes.json``.
LANGUAGES = ("en", "es", "pt", "fr", "it")
KINDS = ("answerable", "entity_swap", "attribute", "unanswerable")


class DevAnswer(TypedDict):
    """A gold answer of a dev record: its text and where it starts in the context."""

    text: str
    start: int


class DevQuestion(TypedDict):
    """A record of the dev split (``training/prepare.py`` writes them)."""

    id: str
    lang: str
    source: str
    title: str
    context: str
    question: str
    answers: list[DevAnswer]
    impossible: bool


class Template(TypedDict):
    """A template of ``attributes.json``: the question about ``{e}``, the attribute it asks, and the markers
    (regexes) of an article that may state it."""

    attribute: str
    template: str
    markers: list[str]


@dataclass(frozen=True)
class Article:
    """One article of the dev split in one language: its paragraphs in order and their questions."""

    lang: str
    title: str
    paragraphs: tuple[str, ...]
    questions: tuple[DevQuestion, ...] = field(default=(), repr=False)

    @property
    def file_name(self) -> str:
        return f"{_slug(self.title)}-{_digest(self.lang + self.title)[:8]}.txt"

    @property
    def text(self) -> str:
        return "\n\n".join(self.paragraphs)


@cache
def templates() -> dict[str, list[Template]]:
    data = json.loads((Path(__file__).with_name("attributes.json")).read_text(encoding="utf-8"))
    return {lang: list(rows) for lang, rows in data["templates"].items()}


def load_articles(dev: Path, langs: Sequence[str]) -> list[Article]:
    """The dev split's articles in ``langs`` (paragraphs in file order, each once)."""
    paragraphs: dict[tuple[str, str], dict[str, list[DevQuestion]]] = defaultdict(dict)
    with dev.open(encoding="utf-8") as f:
        for line in f:
            rec = json.loads(line)
            if rec["lang"] in langs:
                paragraphs[rec["lang"], rec["title"]].setdefault(rec["context"], []).append(rec)
    return [
        Article(lang, title, tuple(paras), tuple(q for qs in paras.values() for q in qs))
        for (lang, title), paras in sorted(paragraphs.items())
    ]


def names_in(text: str) -> list[str]:
    """The names of ``text`` (models, people, places), each once, longest first for replacing."""
    found = {text[f.start : f.end] for f in find_names(text) if len(text[f.start : f.end]) >= 3}
    return sorted(found, key=lambda n: (-len(n), n))


def entity_swap(question: DevQuestion, article: Article, rng: random.Random) -> str | None:
    """``question`` about another name of its article, one its own paragraph never mentions."""
    context = question["context"]
    asked = [n for n in names_in(question["question"]) if n in context and not _sentence_start(question["question"], n)]
    if not asked:
        return None
    pool = sorted({n for p in article.paragraphs if p != context for n in names_in(p)} - set(names_in(context)))
    pool = [n for n in pool if n not in context and not _overlaps(n, asked) and _like(n, asked[0])]
    if not pool:
        return None
    text: str = question["question"]
    return text.replace(asked[0], rng.choice(pool), 1)


def attribute_question(question: DevQuestion, article: Article, rng: random.Random) -> tuple[str, str] | None:
    """A question for an attribute ``article`` never states, about a name ``question`` mentions."""
    asked = [n for n in names_in(question["question"]) if n in question["context"]]
    if not asked:
        return None
    text = article.text
    usable = [t for t in templates()[article.lang] if not any(re.search(m, text, re.I) for m in t["markers"])]
    if not usable:
        return None
    t = rng.choice(usable)
    return str(t["template"]).format(e=asked[0]), str(t["attribute"])


def generate(articles: Iterable[Article], per_kind: int, measure_share: float, seed: int) -> list[dict[str, Any]]:
    """QA rows of every kind for ``articles`` (at most ``per_kind`` of each kind per language)."""
    by_lang: dict[str, list[Article]] = defaultdict(list)
    for a in articles:
        by_lang[a.lang].append(a)
    rows: list[dict[str, Any]] = []
    for lang, arts in sorted(by_lang.items()):
        rng = random.Random(f"{seed}/{lang}")
        pairs = [(a, q) for a in arts for q in a.questions]
        rng.shuffle(pairs)
        made: dict[str, int] = defaultdict(int)
        for art, q in pairs:
            base = {
                "lang": lang,
                "doc": art.file_name,
                "history": [],
                "split": split_of(q["context"], measure_share, seed),
                "source_id": q["id"],
            }
            for kind, row in _rows_of(q, art, rng):
                if made[kind] < per_kind:
                    made[kind] += 1
                    rows.append({"id": f"{lang}-{kind}-{made[kind]:04d}", **base, "kind": kind, **row})
    return rows


def _rows_of(q: DevQuestion, art: Article, rng: random.Random) -> Iterable[tuple[str, dict[str, Any]]]:
    if q.get("impossible") or not q["answers"]:
        yield "unanswerable", {"question": q["question"], "answers": []}
        return
    answers = sorted({a["text"] for a in q["answers"]})
    yield "answerable", {"question": q["question"], "answers": answers}
    swapped = entity_swap(q, art, rng)
    if swapped is not None:
        yield "entity_swap", {"question": swapped, "answers": [], "from": q["question"]}
    attr = attribute_question(q, art, rng)
    if attr is not None:
        yield "attribute", {"question": attr[0], "answers": [], "attribute": attr[1], "from": q["question"]}


def split_of(context: str, measure_share: float, seed: int) -> str:
    """``measure`` for about ``measure_share`` of the paragraphs (by a hash of the text), else ``fit``:
    every question made from one paragraph lands on the same side."""
    h = int(_digest(f"{seed}/{context}"), 16) % 10_000
    return "measure" if h < measure_share * 10_000 else "fit"


def write(out: Path, articles: Sequence[Article], rows: Sequence[dict[str, Any]], command: str) -> None:
    """One folder per language: ``corpus/`` (an article a file) and ``qa.jsonl``; ``report.json`` beside."""
    used = {(r["lang"], r["doc"]) for r in rows}
    counts: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for a in articles:
        if (a.lang, a.file_name) in used:
            corpus = out / a.lang / "corpus"
            corpus.mkdir(parents=True, exist_ok=True)
            (corpus / a.file_name).write_text(a.text, encoding="utf-8")
    for lang in sorted({r["lang"] for r in rows}):
        with (out / lang / "qa.jsonl").open("w", encoding="utf-8") as f:
            for r in rows:
                if r["lang"] == lang:
                    f.write(json.dumps(r, ensure_ascii=False) + "\n")
                    counts[lang][f"{r['split']}/{r['kind']}"] += 1
    report = {"command": command, "counts": counts, "articles": len(used)}
    (out / "report.json").write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def main(argv: Sequence[str] | None = None) -> None:
    p = argparse.ArgumentParser(
        prog="python -m citeqa.fitting.negatives", description=__doc__.split("\n")[0] if __doc__ else None
    )
    p.add_argument("--dev", type=Path, required=True, help="python -m citeqa.fitting.reader.prepare's dev.jsonl")
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--langs", default=",".join(LANGUAGES))
    p.add_argument("--paragraphs", type=int, default=400, help="articles per language until this many paragraphs")
    p.add_argument("--per-kind", type=int, default=300, help="questions of each kind per language at most")
    p.add_argument("--measure-share", type=float, default=0.3)
    p.add_argument("--seed", type=int, default=13)
    args = p.parse_args(argv)
    articles = load_articles(args.dev, args.langs.split(","))
    chosen = _some_articles(articles, args.paragraphs, args.seed)
    rows = generate(chosen, args.per_kind, args.measure_share, args.seed)
    command = "python -m citeqa.fitting.negatives " + " ".join(argv if argv is not None else [])
    write(args.out, chosen, rows, command)
    print(json.dumps(json.loads((args.out / "report.json").read_text())["counts"], indent=1))


def _some_articles(articles: Sequence[Article], paragraphs: int, seed: int) -> list[Article]:
    """Articles of each language in a seeded order, until they hold ``paragraphs`` paragraphs."""
    by_lang: dict[str, list[Article]] = defaultdict(list)
    for a in articles:
        by_lang[a.lang].append(a)
    out: list[Article] = []
    for lang, arts in sorted(by_lang.items()):
        held = 0
        for a in sorted(arts, key=lambda a: _digest(f"{seed}/{lang}/{a.title}")):
            if held >= paragraphs:
                break
            out.append(a)
            held += len(a.paragraphs)
    return out


def _sentence_start(text: str, name: str) -> bool:
    """Whether ``name`` only opens the question (a capitalised first word need not be a name)."""
    return text.lstrip("¿¡\"'« ").startswith(name) and " " not in name and not any(c.isdigit() for c in name)


def _overlaps(name: str, others: Sequence[str]) -> bool:
    low = name.lower()
    return any(low in o.lower() or o.lower() in low for o in others)


def _like(candidate: str, asked: str) -> bool:
    """Names of a like shape: both with digits or neither, about as many words."""
    digits = any(c.isdigit() for c in candidate) == any(c.isdigit() for c in asked)
    return digits and abs(len(candidate.split()) - len(asked.split())) <= 1


def _slug(title: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "_", title)[:40].strip("_") or "article"


def _digest(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8")).hexdigest()


if __name__ == "__main__":
    main()
