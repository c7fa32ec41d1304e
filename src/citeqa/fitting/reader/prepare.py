"""Prepare SQuAD-format files for training the reader: drop held-out paragraphs, split by article.

    python -m citeqa.fitting.reader.prepare --file es=../shared/reader-data/squad-es-v1.1-dev-small.json \
        --file pt=../shared/reader-data/faquad-dev.json:dev ... \
        --heldout ../shared/heldout/squad-ids.txt --out out/reader-data

Every paragraph that holds a held-out question id is dropped whole (in every file: the es and
pt files are translations of the same SQuAD articles and share ids). Articles are grouped
across files and languages by the question ids they share and by their title (a translated
file may keep SQuAD's English titles with new ids), so a translation of a dev article never
lands in training; about ``--dev-share`` of the groups go to the dev split, by a hash
of the group's smallest id (seeded, reproducible). A file suffixed ``:dev`` goes to dev whole.
Answers whose offset does not match the context are moved to the occurrence of their text
nearest the given offset, or the question is dropped. Writes ``train.jsonl``, ``dev.jsonl``
and ``report.json`` (the command and date, what was kept and dropped, and why).

``--other-paragraphs RATE`` adds unanswerable training questions in every language: about that
share of the answerable ones is asked again of the paragraph of the same article (same file)
that shares most words with the question and holds none of its answers. They teach the
no-answer score the case a retriever brings: a passage about the right subject that does not
say what is asked. The dev split is left as it is.

``--answerless RATE`` adds nearer misses, in every language too: about that share of the answerable
training questions is asked again of its own paragraph without the sentences that hold an answer
(kept only where at least two sentences remain and no answer's text is left in them). The subject
and its neighbourhood stay; what is asked is gone, as in SQuAD 2.0's unanswerable questions and in
the questions a user asks about an attribute the documents never give.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import shlex
import sys
from collections import Counter
from datetime import date
from pathlib import Path
from typing import Any

from citeqa.ingest.sentences import sentence_spans

#: A question as SQuAD files and the prepared files hold it (JSON).
Record = dict[str, Any]


def main(argv: list[str] | None = None) -> None:
    args = _parser().parse_args(argv)
    heldout = set(Path(args.heldout).read_text().split())
    files = [_parse_file_arg(spec) for spec in args.file]
    articles = [(lang, src, whole_dev, art) for lang, src, whole_dev in files for art in _load(src)]
    groups = _group_articles([art for *_, art in articles])
    counts: Counter[str] = Counter()
    seen: set[tuple[str, str]] = set()
    out: dict[str, list[Record]] = {"train": [], "dev": []}
    for (lang, src, whole_dev, art), group in zip(articles, groups):
        split = "dev" if whole_dev or _is_dev(group, args.seed, args.dev_share) else "train"
        for para in art["paragraphs"]:
            ids = {q["id"] for q in para["qas"]}
            if ids & heldout:
                counts[f"dropped: paragraph holds a held-out id ({src.name})"] += len(para["qas"])
                continue
            for qa in para["qas"]:
                key = (para["context"], qa["question"])
                if key in seen:
                    counts["dropped: duplicate of a question kept from another file"] += 1
                    continue
                record, reason = _example(lang, src.name, art.get("title", ""), para["context"], qa)
                if record is None:
                    counts[f"dropped: {reason}"] += 1
                    continue
                seen.add(key)
                counts[f"kept {split} {lang} {'unanswerable' if record['impossible'] else 'answerable'}"] += 1
                out[split].append(record)
    if args.other_paragraphs > 0:
        extra = other_paragraph_questions(out["train"], args.other_paragraphs, args.seed)
        counts.update(f"kept train {r['lang']} unanswerable (other paragraph)" for r in extra)
        out["train"] += extra
    if args.answerless > 0:
        extra = answerless_questions(out["train"], args.answerless, args.seed)
        counts.update(f"kept train {r['lang']} unanswerable (answer sentences removed)" for r in extra)
        out["train"] += extra
    command = "python -m citeqa.fitting.reader.prepare " + shlex.join(sys.argv[1:] if argv is None else argv)
    _write(Path(args.out), out, counts, args, command)


def other_paragraph_questions(records: list[Record], rate: float, seed: str) -> list[Record]:
    """Unanswerable copies of about ``rate`` of the answerable ``records``: each question paired with
    the paragraph of its article (same source and title) that shares most words with it among those
    that hold none of its answers (case folded). Deterministic for a seed."""
    paragraphs: dict[tuple[str, str], list[str]] = {}
    for r in records:
        group = paragraphs.setdefault((r["source"], r["title"]), [])
        if r["context"] not in group:
            group.append(r["context"])
    out = []
    for r in records:
        if r["impossible"] or not r["title"] or not _chosen(r["id"], seed, rate):
            continue
        answers = [a["text"].casefold() for a in r["answers"]]
        asked = _words(r["question"])
        others = [
            c
            for c in paragraphs[(r["source"], r["title"])]
            if c != r["context"] and not any(a in c.casefold() for a in answers)
        ]
        if not others:
            continue
        context = max(others, key=lambda c: (len(asked & _words(c)), -others.index(c)))
        out.append({**r, "id": r["id"] + "#other", "context": context, "answers": [], "impossible": True})
    return out


def answerless_questions(records: list[Record], rate: float, seed: str) -> list[Record]:
    """Unanswerable copies of about ``rate`` of the answerable ``records``: each question asked of its
    own paragraph without the sentences that hold an answer, where at least two sentences remain and
    none holds an answer's text (case folded). Deterministic for a seed."""
    out = []
    for r in records:
        if r["impossible"] or not _chosen(r["id"], seed, rate, "answerless"):
            continue
        bounds = [(a["start"], a["start"] + len(a["text"])) for a in r["answers"]]
        kept = [
            r["context"][s.start : s.end]
            for s in sentence_spans(r["context"])
            if not any(s.start < end and start < s.end for start, end in bounds)
        ]
        context = " ".join(kept)
        if len(kept) < 2 or any(a["text"].casefold() in context.casefold() for a in r["answers"]):
            continue
        out.append({**r, "id": r["id"] + "#answerless", "context": context, "answers": [], "impossible": True})
    return out


def _chosen(key: str, seed: str, rate: float, kind: str = "other") -> bool:
    digest = hashlib.sha256(f"{seed}:{kind}:{key}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64 < rate


def _words(text: str) -> set[str]:
    return {w for w in re.findall(r"\w+", text.casefold()) if len(w) > 2}


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m citeqa.fitting.reader.prepare", description=__doc__.split("\n\n")[0])
    p.add_argument("--file", action="append", required=True, help="LANG=PATH, or LANG=PATH:dev for a dev-only file")
    p.add_argument("--heldout", required=True, help="file of question ids never to train, tune or select on")
    p.add_argument("--out", required=True)
    p.add_argument("--dev-share", type=float, default=0.12, help="share of article groups kept for dev")
    p.add_argument("--seed", default="citeqa-reader-1")
    p.add_argument(
        "--other-paragraphs",
        type=float,
        default=0.0,
        help="share of answerable training questions asked again of another paragraph of their article (unanswerable)",
    )
    p.add_argument(
        "--answerless",
        type=float,
        default=0.0,
        help="share of answerable training questions asked again of their paragraph without its answer sentences",
    )
    return p


def _parse_file_arg(spec: str) -> tuple[str, Path, bool]:
    lang, _, path = spec.partition("=")
    whole_dev = path.endswith(":dev")
    return lang, Path(path.removesuffix(":dev")), whole_dev


def _load(path: Path) -> list[Record]:
    data: list[Record] = json.loads(path.read_text(encoding="utf-8"))["data"]
    return data


def _group_articles(articles: list[Record]) -> list[str]:
    """A group key per article: articles sharing a question id or a title (translations) share a key."""
    parent = list(range(len(articles)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    owner: dict[str, int] = {}
    for i, art in enumerate(articles):
        if art.get("title"):
            j = owner.setdefault("title:" + _title_key(art["title"]), i)
            parent[find(i)] = find(j)
        for para in art["paragraphs"]:
            for qa in para["qas"]:
                j = owner.setdefault(qa["id"], i)
                parent[find(i)] = find(j)
    smallest: dict[int, str] = {}
    for i, art in enumerate(articles):
        first = min((qa["id"] for p in art["paragraphs"] for qa in p["qas"]), default=str(i))
        root = find(i)
        smallest[root] = min(smallest.get(root, first), first)
    return [smallest[find(i)] for i in range(len(articles))]


def _title_key(title: str) -> str:
    """SQuAD titles as the files spell them ("Super_Bowl_50", "Super Bowl _ 50") folded to one key."""
    return " ".join(title.replace("_", " ").lower().split())


def _is_dev(group: str, seed: str, share: float) -> bool:
    digest = hashlib.sha256(f"{seed}:{group}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64 < share


def _example(lang: str, source: str, title: str, context: str, qa: Record) -> tuple[Record | None, str]:
    impossible = bool(qa.get("is_impossible", False)) or not qa.get("answers")
    answers = []
    if not impossible:
        for ans in qa["answers"]:
            start = _fix_offset(context, ans["text"], int(ans["answer_start"]))
            if start is not None and ans["text"].strip():
                answers.append({"text": ans["text"], "start": start})
        if not answers:
            return None, "no answer text found in its context"
    record = {
        "id": qa["id"],
        "lang": lang,
        "source": source,
        "title": title,
        "context": context,
        "question": qa["question"],
        "answers": answers,
        "impossible": impossible,
    }
    return record, ""


def _fix_offset(context: str, text: str, start: int) -> int | None:
    """``start`` if the text is there, else the occurrence of the text nearest to it, else None."""
    if context[start : start + len(text)] == text:
        return start
    found, pos = [], context.find(text)
    while pos != -1:
        found.append(pos)
        pos = context.find(text, pos + 1)
    return min(found, key=lambda p: abs(p - start)) if found else None


def _write(
    out: Path, splits: dict[str, list[Record]], counts: Counter[str], args: argparse.Namespace, command: str
) -> None:
    """The splits, and ``report.json``: how they were made (``by``, ``date``) and what was kept and dropped."""
    out.mkdir(parents=True, exist_ok=True)
    for name, records in splits.items():
        with (out / f"{name}.jsonl").open("w", encoding="utf-8") as fh:
            for r in records:
                fh.write(json.dumps(r, ensure_ascii=False) + "\n")
    report = {
        "by": command,
        "date": date.today().isoformat(),
        "counts": dict(sorted(counts.items())),
        "files": args.file,
        "seed": args.seed,
        "dev_share": args.dev_share,
        "other_paragraphs": args.other_paragraphs,
        "answerless": args.answerless,
    }
    (out / "report.json").write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n")
    for key, value in sorted(counts.items()):
        print(f"{value:6d}  {key}")


if __name__ == "__main__":
    main()
