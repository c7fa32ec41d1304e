"""Which shipped QA file fits the live index: its question count and how many of its gold documents
the index holds, so the Evaluate tab can preselect the file that fits and warn before a run whose
gold documents are missing (every answer would then be graded wrong); and, before it runs, whether a
file is within the questions one run may take and about how long its run would take."""

from __future__ import annotations

import sys
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from citeqa.errors import CiteqaError, QAFileError
from citeqa.evaluation.rows import CSV_SUFFIXES
from citeqa.evaluation.user_json import BadInput, first_line, loads
from citeqa.messages import Said, evaluate_labels

if TYPE_CHECKING:
    from citeqa.app.web.evaluate.runner import Pace


@dataclass(frozen=True, slots=True)
class FileFit:
    """A QA file against the live index: questions, distinct gold documents, and those indexed."""

    name: str
    questions: int
    gold_docs: int
    indexed: int

    @property
    def fits(self) -> bool:
        """Every gold document is in the index (a file naming none fits any index)."""
        return self.indexed == self.gold_docs


def file_fit(path: Path, name: str, documents: Collection[str]) -> FileFit | None:
    """How ``path`` fits an index holding ``documents``; None when it cannot be read as a QA file."""
    from citeqa.evaluation.qa_file import load_qa

    try:
        items = load_qa(path, name)
    except CiteqaError:
        return None
    gold = {item.doc for item in items if item.doc is not None}
    return FileFit(name, len(items), len(gold), sum(1 for doc in gold if doc in documents))


def shipped_fits(folder: Path | None, names: Sequence[str], documents: Collection[str]) -> list[FileFit]:
    """The fit of every shipped file that reads as a QA file."""
    if folder is None:
        return []
    found = (file_fit(Path(folder) / name, name, documents) for name in names)
    return [fit for fit in found if fit is not None]


def choice_label(fit: FileFit, lang: str = "en") -> str:
    """``qa.jsonl (137 questions)``, in ``lang``."""
    return evaluate_labels(lang)["file_choice"].format(name=fit.name, n=fit.questions)


def best_fit(fits: Sequence[FileFit]) -> str | None:
    """The file to preselect: the one with the most gold documents in the index (more questions on a tie)."""
    usable = [f for f in fits if f.indexed > 0 or f.gold_docs == 0]
    if not usable:
        return None
    return max(usable, key=lambda f: (f.indexed / max(f.gold_docs, 1), f.indexed, f.questions)).name


def fit_note(fit: FileFit | None, lang: str = "en") -> str:
    """What a run of the file would be graded against, said before it runs, in ``lang``."""
    if fit is None:
        return ""
    if fit.gold_docs == 0:
        return evaluate_labels(lang)["fit_any"].format(n=fit.questions)
    key = "fit_all" if fit.fits else ("fit_none" if fit.indexed == 0 else "fit_some")
    return evaluate_labels(lang)[key].format(n=fit.questions, gold=fit.gold_docs, indexed=fit.indexed)


def fit_html(fit: FileFit | None, lang: str = "en", limit: int | None = None, pace: Pace | None = None) -> str:
    """:func:`fit_note` as the page shows it: a plain line when the file fits the live index, a warning
    (an alert a screen reader announces) when some or all of its gold documents are not indexed.

    With ``limit`` (the most questions one run may take), a file over it gets the refusal a run of it
    would get, as a warning; otherwise, with ``pace``, a line with the estimated time of its run."""
    from citeqa.app.web.escape import safe

    note = fit_note(fit, lang)
    if not note or fit is None:
        return ""
    if fit.fits:
        shown = f'<p class="citeqa-fit">{safe(note)}</p>'
    else:
        shown = f'<p class="citeqa-fit citeqa-fit-warning" role="alert">{safe(note)}</p>'
    if limit is not None and fit.questions > limit:
        refused = too_many_note(fit.name, fit.questions, limit, lang)
        return f'{shown}<p class="citeqa-fit citeqa-fit-warning" role="alert">{safe(refused)}</p>'
    if pace is not None:
        return f'{shown}<p class="citeqa-fit citeqa-estimate">{safe(estimate_note(fit.questions, pace, lang))}</p>'
    return shown


def too_many_note(name: str, questions: int, limit: int, lang: str = "en") -> str:
    """Why a file of ``questions`` is not run from the page (more than ``limit``), naming the server's option, in ``lang``."""
    return evaluate_labels(lang)["too_many_questions"].format(name=name, n=questions, limit=limit)


def estimate_note(questions: int, pace: Pace, lang: str = "en") -> str:
    """The estimated time of a run of ``questions`` at ``pace``, said to be an estimate and where its time per
    question comes from (this server's last run, or the typical one), in ``lang``."""
    key = "estimate_measured" if pace.measured else "estimate_typical"
    seconds = f"{pace.seconds:.2g}" if pace.seconds < 10 else f"{pace.seconds:.0f}"
    return evaluate_labels(lang)[key].format(time=duration_text(pace.estimate(questions)), n=questions, seconds=seconds)


def duration_text(seconds: float) -> str:
    """``45 s``, ``17 min``, ``2 h 24 min``: a time rounded as an estimate is (SI units: the same in every language)."""
    if seconds < 59.5:
        return f"{max(round(seconds), 1)} s"
    minutes = round(seconds / 60)
    if minutes < 60:
        return f"{minutes} min"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes} min" if minutes else f"{hours} h"


def gold_fit(items: Sequence[object], documents: Collection[str]) -> tuple[int, int]:
    """The distinct gold documents of ``items`` (QA items or their graded results' items) and how many of
    them ``documents`` holds."""
    gold = {getattr(item, "doc", None) for item in items} - {None}
    return len(gold), sum(1 for doc in gold if doc in documents)


QA_SUFFIXES = (".jsonl", *CSV_SUFFIXES)
"""Shipped QA files offered: JSONL and CSV (``.json`` in eval/ is SQuAD, which the tab does not run)."""
#: The most shipped QA files listed (a huge eval folder must not stall the page).
MAX_SHIPPED = 200


def shipped_qa_files(folder: Path | None, skipped: Callable[[str, str], None] | None = None) -> list[str]:
    """The QA files in ``folder`` (and its subfolders) that look like QA files, as relative names.

    A JSONL file counts when its first record has ``question`` and ``answers``; a CSV file
    when its header names ``question`` and ``answers``. Other JSONL files (claims, SQuAD
    predictions) are not offered, nor a symbolic link that leads out of ``folder``. A file
    whose first line cannot be read or parsed (not UTF-8, nested too deeply, ...) is not offered
    either, and ``skipped(name, reason)`` is told, when given (:func:`log_skipped`).
    """
    if folder is None or not Path(folder).is_dir():
        return []
    root = Path(folder)
    real_root = root.resolve()
    names = []
    for path in sorted(root.rglob("*")):
        relative = path.relative_to(root)
        if any(part.startswith(".") for part in relative.parts) or path.suffix.lower() not in QA_SUFFIXES:
            continue
        if not path.resolve().is_relative_to(real_root):  # a link out of the folder: not the folder's file
            continue
        try:
            offered = path.is_file() and _looks_like_qa(path)
        except BadInput as exc:
            if skipped is not None:
                skipped(relative.as_posix(), str(exc))
            continue
        if offered:
            names.append(relative.as_posix())
        if len(names) >= MAX_SHIPPED:
            break
    return names


def shipped_path(folder: Path | None, name: str | None) -> Path:
    """The file of a shipped QA file chosen by its name; refuses names that are not offered."""
    if folder is None or not name or name not in shipped_qa_files(folder):
        raise QAFileError(Said("not_shipped", name=name or Said("none")))
    return Path(folder) / name


def _looks_like_qa(path: Path) -> bool:
    """Whether the file's first line is a CSV header or a JSON record with ``question`` and ``answers``;
    BadInput when that line cannot be read or parsed (:func:`citeqa.evaluation.user_json.first_line`)."""
    first = first_line(path)
    if path.suffix.lower() in CSV_SUFFIXES:
        header = {cell.strip().lower() for cell in first.split(",")}
        return {"question", "answers"} <= header
    record = loads(first, single_line=True)
    return isinstance(record, dict) and "question" in record and "answers" in record


def log_skipped(name: str, reason: str) -> None:
    """One line in the server's log for a file of the eval folder that is not offered, and why."""
    shown = name if name.isprintable() else ascii(name)
    print(f"citeqa: eval folder: skipped {shown}: {reason}", file=sys.stderr, flush=True)


def shown_error(message: str, path: Path, name: str) -> str:
    """A QA file error with the file's temporary path replaced by the name the user knows it by."""
    return message.replace(str(path), name)
