"""SQuAD v1.1/v2.0 in and out: a QA set with its corpus from a SQuAD JSON file, and the official predictions file.

``load_squad`` validates the whole file (``data[i].paragraphs[j].qas[k]``) before
returning anything. Each paragraph becomes one UTF-8 ``.txt`` document whose text is the
context, unchanged (so ``answer_start`` offsets keep their meaning); its name is
``<article>-<paragraph>-<title>.txt``. A question marked ``is_impossible``, or with no
answers, is unanswerable. ``squad_predictions`` gives ``{id: short answer or ""}``, the
file the official SQuAD v2 evaluation script reads.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from citeqa.errors import ConfigError, QAFileError
from citeqa.evaluation.grading import QuestionResult
from citeqa.evaluation.qa_file import QAItem
from citeqa.evaluation.rows import errors_message, kind, read_text, shown
from citeqa.evaluation.user_json import BadInput, loads
from citeqa.messages import Said
from citeqa.records import Answer

T = TypeVar("T")

MARKER = ".citeqa-squad"
"""Hidden file in a corpus folder listing the documents written there (so stale ones can be removed)."""

TITLE_CHARS = 60
"""Longest title part of a document name."""

_UNSAFE = re.compile(r"[^A-Za-z0-9.-]+")


@dataclass(frozen=True, slots=True)
class SquadContext:
    """One paragraph: the document name it is written to, its exact text and detected language."""

    name: str
    text: str
    lang: str


@dataclass(frozen=True, slots=True)
class SquadSet:
    """A SQuAD file as a QA set: its questions and the paragraphs they are asked about."""

    path: Path
    version: str | None
    contexts: tuple[SquadContext, ...]
    items: tuple[QAItem, ...]


class _Bad(ValueError):
    """One element of the file is invalid; the message names it."""


def load_squad(path: Path, default_lang: str = "en") -> SquadSet:
    """Read and validate a SQuAD JSON file; raises :class:`QAFileError` naming the bad elements."""
    from citeqa.ingest.documents import LANGUAGE_SAMPLE_CHARS
    from citeqa.text.language import detect_lang

    path = Path(path)
    data = _read_json(path)
    errors: list[str] = []
    contexts: list[SquadContext] = []
    items: list[QAItem] = []
    seen: dict[str, str] = {}
    for a, article in enumerate(data["data"]):
        where = f"data[{a}]"
        found = _parsed_or_noted(_article, article, where, errors)
        for p, paragraph in enumerate(found[1] if found else ()):
            here = f"{where}.paragraphs[{p}]"
            parsed = _parsed_or_noted(_paragraph, paragraph, here, errors)
            if parsed is None:
                continue
            title, (text, qas) = found[0], parsed  # type: ignore[index]  # found: this loop runs over its paragraphs
            lang = detect_lang(text[:LANGUAGE_SAMPLE_CHARS], default_lang)
            context = SquadContext(document_name(a, p, title), text, lang)
            contexts.append(context)
            for q, qa in enumerate(qas):
                try:
                    item = _item(qa, f"{here}.qas[{q}]", context)
                    if item.id in seen:
                        raise _Bad(f"{here}.qas[{q}]: duplicate id {shown(item.id)} (first used at {seen[item.id]})")
                except _Bad as exc:
                    errors.append(str(exc))
                    continue
                seen[item.id] = f"{here}.qas[{q}]"
                items.append(item)
    if errors:
        raise QAFileError(errors_message(path, errors))
    if not items:
        raise QAFileError(Said("squad_none", path=path))
    version = data.get("version")
    return SquadSet(path, version if isinstance(version, str) else None, tuple(contexts), tuple(items))


def _read_json(path: Path) -> Mapping[str, Any]:
    """The top-level object, which must hold a ``data`` list (read and parsed within the bounds of
    :mod:`citeqa.evaluation.user_json`)."""
    if not path.is_file():
        raise QAFileError(Said("file_missing", path=path, what=kind("squad")))
    try:
        data = loads(read_text(path, "squad"))
    except BadInput as exc:
        raise QAFileError(Said("path_problem", path=path, problem=exc.args[0])) from None
    if not isinstance(data, dict) or not isinstance(data.get("data"), list):
        raise QAFileError(Said("not_squad", path=path))
    return data


def _parsed_or_noted(parse: Callable[[Any, str], T], value: Any, where: str, errors: list[str]) -> T | None:
    """``parse(value, where)``, or None with its problem appended to ``errors``."""
    try:
        return parse(value, where)
    except _Bad as exc:
        errors.append(str(exc))
        return None


def _article(article: Any, where: str) -> tuple[str, list[Any]]:
    if not isinstance(article, dict):
        raise _Bad(f"{where}: expected an object, got {type(article).__name__}")
    title = article.get("title", "")
    if not isinstance(title, str):
        raise _Bad(f"{where}.title: must be a string")
    paragraphs = article.get("paragraphs")
    if not isinstance(paragraphs, list):
        raise _Bad(f'{where}: missing "paragraphs" list')
    return title, paragraphs


def _paragraph(paragraph: Any, where: str) -> tuple[str, list[Any]]:
    if not isinstance(paragraph, dict):
        raise _Bad(f"{where}: expected an object, got {type(paragraph).__name__}")
    context = paragraph.get("context")
    if not isinstance(context, str) or not context.strip():
        raise _Bad(f"{where}.context: missing or empty")
    if "\r" in context:
        raise _Bad(
            f"{where}.context: holds a carriage return (documents are read with \\n line ends, "
            "which would shift answer_start offsets)"
        )
    qas = paragraph.get("qas")
    if not isinstance(qas, list):
        raise _Bad(f'{where}: missing "qas" list')
    return context, qas


def _item(qa: Any, where: str, context: SquadContext) -> QAItem:
    if not isinstance(qa, dict):
        raise _Bad(f"{where}: expected an object, got {type(qa).__name__}")
    qid = qa.get("id")
    if isinstance(qid, int) and not isinstance(qid, bool):
        qid = str(qid)
    if not isinstance(qid, str) or not qid.strip():
        raise _Bad(f"{where}.id: missing or empty")
    question = qa.get("question")
    if not isinstance(question, str) or not question.strip():
        raise _Bad(f"{where}.question: missing or empty")
    impossible = qa.get("is_impossible", False)
    if not isinstance(impossible, bool):
        raise _Bad(f"{where}.is_impossible: must be true or false")
    answers = () if impossible else _answers(qa.get("answers", []), f"{where}.answers")
    return QAItem(qid.strip(), question.strip(), answers, context.lang, context.name if answers else None)


def _answers(answers: Any, where: str) -> tuple[str, ...]:
    """Distinct answer texts in file order (SQuAD dev sets repeat them, one per annotator)."""
    if not isinstance(answers, list):
        raise _Bad(f"{where}: must be a list")
    texts: list[str] = []
    for i, answer in enumerate(answers):
        text = answer.get("text") if isinstance(answer, dict) else None
        if not isinstance(text, str) or not text.strip():
            raise _Bad(f"{where}[{i}].text: missing or empty")
        if text.strip() not in texts:
            texts.append(text.strip())
    return tuple(texts)


def document_name(article: int, paragraph: int, title: str) -> str:
    """``<article>-<paragraph>-<title>.txt``, the title in ASCII letters, digits, ``.``, ``_`` and ``-``.

    ASCII because the name is the document id: file systems that normalise Unicode names
    (macOS) would otherwise hand back another id than the one the questions refer to.
    """
    folded = unicodedata.normalize("NFKD", title).encode("ascii", "ignore").decode("ascii")
    safe = _UNSAFE.sub("_", folded).strip("._-")[:TITLE_CHARS].rstrip("._-")
    return f"{article:03d}-{paragraph:03d}{'-' + safe if safe else ''}.txt"


def write_corpus(squad: SquadSet, folder: Path) -> list[Path]:
    """Write one ``.txt`` per paragraph into ``folder`` (files already holding that text are left alone).

    Documents written there by an earlier SQuAD file and not part of this one are
    removed; other files in the folder are never touched. Returns the documents' paths.
    """
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    names = [c.name for c in squad.contexts]
    for stale in sorted(set(_written_before(folder)) - set(names)):
        (folder / stale).unlink(missing_ok=True)
    paths = []
    for context in squad.contexts:
        path = folder / context.name
        data = context.text.encode("utf-8")
        if not path.is_file() or path.read_bytes() != data:
            path.write_bytes(data)
        paths.append(path)
    (folder / MARKER).write_text("\n".join(names) + "\n", encoding="utf-8")
    return paths


def _written_before(folder: Path) -> list[str]:
    """Names listed in the folder's marker (plain names only: never a path elsewhere)."""
    try:
        lines = (folder / MARKER).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return []
    return [n for n in lines if n and n == Path(n).name and n.endswith(".txt") and not n.startswith(".")]


def squad_prediction(answer: Answer) -> str:
    """What SQuAD scores: the short answer when the record has one, else the answer text; "" for an abstention."""
    if answer.abstained or answer.answer is None:
        return ""
    short = getattr(answer, "short_answer", None)
    return short if short is not None else answer.answer


def squad_predictions(results: Iterable[QuestionResult]) -> dict[str, str]:
    """``{question id: prediction}`` for graded results."""
    return {r.item.id: squad_prediction(r.answer) for r in results}


def write_squad_predictions(results: Iterable[QuestionResult], path: Path) -> Path:
    """Write :func:`squad_predictions` as a JSON object; returns the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(squad_predictions(results), ensure_ascii=False, indent=1) + "\n", "utf-8")
    return path


def squad_folders(squad_file: Path, index: Path | None, corpus: Path | None) -> tuple[Path, Path]:
    """The (index, corpus) folders of ``citeqa eval --squad``.

    By default both live in ``out/squad-<stem>/``; with only ``index`` given, the corpus
    is ``squad-<stem>-corpus`` beside it. Neither folder may hold the other.
    """
    stem = Path(squad_file).stem
    base = Path("out") / f"squad-{stem}"
    index_dir = Path(index) if index is not None else base / "index"
    if corpus is None:
        corpus = base / "corpus" if index is None else index_dir.parent / f"squad-{stem}-corpus"
    a, b = index_dir.resolve(), Path(corpus).resolve()
    if a == b or a in b.parents or b in a.parents:
        raise ConfigError(f"the SQuAD corpus folder {corpus} and the index folder {index_dir} must be separate")
    return index_dir, Path(corpus)
