"""Every user-facing string of the UI and the terminal: one catalogue to translate.

The strings live in ``citeqa/catalogue/<lang>.json``, one file per language, so a translator
adds a language by copying ``en.json`` and translating its values (docs/languages.md). Each
file has the sections of :data:`TRANSLATED` (every string a page shows, in every tab);
``en.json`` also holds the sections that are English only (:data:`ENGLISH_ONLY`: the server's
refusals, answered as JSON to programs), which a language file may add too.
A language without a file is spoken in English. Files are read on first use, not at import.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from functools import cache
from importlib import resources
from typing import Any, TypeVar

#: Sections every language file has, with every key of English's.
TRANSLATED = (
    "labels",
    "claim",
    "evidence",
    "corpus",
    "corpus_status",
    "evaluate",
    "outcome",
    "languages",
    "errors",
)
#: Sections of en.json that other languages may leave out (they are shown in English).
ENGLISH_ONLY = ("server",)


@cache
def catalogue_languages() -> tuple[str, ...]:
    """The languages with a catalogue file: es, pt and en first (the first corpus's), then by code."""
    folder = resources.files("citeqa.catalogue")
    found = sorted(p.name.removesuffix(".json") for p in folder.iterdir() if p.name.endswith(".json"))
    first = [lang for lang in ("es", "pt", "en") if lang in found]
    return (*first, *(lang for lang in found if lang not in first))


@cache
def catalogue(lang: str) -> dict[str, dict[str, str]]:
    """The sections of ``lang``'s catalogue file (KeyError for a language without one)."""
    if lang not in catalogue_languages():
        raise KeyError(lang)
    text = resources.files("citeqa.catalogue").joinpath(f"{lang}.json").read_text(encoding="utf-8")
    return {name: section for name, section in json.loads(text).items() if not name.startswith("_")}


_V = TypeVar("_V")


class _Lazy(Mapping[str, _V]):
    """A mapping built on first use from the catalogue files (nothing is read at import)."""

    def __init__(self, build: Callable[[], Mapping[str, _V]]) -> None:
        self._build = cache(build)

    def __getitem__(self, key: str) -> _V:
        return self._build()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._build())

    def __len__(self) -> int:
        return len(self._build())


class _LazyLanguages(Sequence[str]):
    """:func:`catalogue_languages` as a constant that reads the folder on first use."""

    def __getitem__(self, index: Any) -> Any:
        return catalogue_languages()[index]

    def __len__(self) -> int:
        return len(catalogue_languages())

    def __repr__(self) -> str:
        return repr(catalogue_languages())


def _per_language(section: str) -> _Lazy[Mapping[str, str]]:
    return _Lazy(lambda: {lang: catalogue(lang)[section] for lang in catalogue_languages()})


#: The languages the interface speaks (one catalogue file each).
UI_LANGUAGES: Sequence[str] = _LazyLanguages()

#: UI strings per language (the chat, its labels and notices).
LABELS: Mapping[str, Mapping[str, str]] = _per_language("labels")
#: Claim checking (:mod:`citeqa.claims.check`): verdict names and the one-line message.
CLAIM_LABELS: Mapping[str, Mapping[str, str]] = _per_language("claim")
#: The chat's claim mode, citation tools, document viewer and downloads.
EVIDENCE_LABELS: Mapping[str, Mapping[str, str]] = _per_language("evidence")
#: The Corpus tab: its labels and its status lines, in the page's language.
CORPUS_LABELS: Mapping[str, Mapping[str, str]] = _Lazy(
    lambda: {
        lang: {**catalogue(lang)["corpus"], **catalogue(lang).get("corpus_status", {})}
        for lang in catalogue_languages()
    }
)
#: The Evaluate tab's strings per language (its name is in LABELS, with the other tabs').
EVALUATE_LABELS: Mapping[str, Mapping[str, str]] = _per_language("evaluate")
#: What each outcome means, as the tab says it next to the filter, per language.
OUTCOME_LABELS: Mapping[str, Mapping[str, str]] = _per_language("outcome")
#: The names of languages (ISO 639-1 codes), per interface language.
LANGUAGE_NAMES: Mapping[str, Mapping[str, str]] = _per_language("languages")
#: The Evaluate tab's strings in English (:func:`evaluate_labels` for another language).
EVALUATE: Mapping[str, str] = _Lazy(lambda: catalogue("en")["evaluate"])
#: What each outcome means, in English (:func:`outcome_help` for another language).
OUTCOME_HELP: Mapping[str, str] = _Lazy(lambda: catalogue("en")["outcome"])
#: The web server's refusals (:mod:`citeqa.app.web.server`), one line each, as JSON ``{"error": ...}``.
SERVER: Mapping[str, str] = _Lazy(lambda: catalogue("en")["server"])


def labels(lang: str) -> Mapping[str, str]:
    """UI strings in ``lang``, English when the language has none."""
    return LABELS.get(lang, LABELS["en"])


def not_found(lang: str) -> str:
    """ "I couldn't find this in the documents", in ``lang`` (English when unknown)."""
    return labels(lang)["not_found"]


def claim_labels(lang: str) -> Mapping[str, str]:
    """Claim-checking strings in ``lang``, English when the language has none."""
    return CLAIM_LABELS.get(lang, CLAIM_LABELS["en"])


def claim_message(
    verdict: str,
    lang: str,
    claim_value: str | None = None,
    doc_value: str | None = None,
    subject: str | None = None,
    value_missing: bool = False,
) -> str:
    """The verdict as one sentence in ``lang``; a conflict names both values where it has them. ``not_found`` with the
    claim's ``subject`` (the documents mention it) says so instead of "nothing speaks to this claim":
    "… mention “X”, but not this value" (``value_missing``: no retrieved sentence states the claim's
    values, and the reader read none back), else "… mention “X”, but do not confirm this claim"."""
    lab = claim_labels(lang)
    if verdict == "not_found" and subject:
        return lab["not_found_subject_value" if value_missing else "not_found_subject"].format(subject=subject)
    if verdict == "conflicting" and claim_value and doc_value:
        return lab["conflicting_msg"].format(doc=doc_value, claim=claim_value)
    if verdict == "supported":  # the value when it is written out ("744 billion"), not an ellipsis ("the third")
        shown = doc_value if doc_value and any(c.isdigit() for c in doc_value) else None
        return lab["supported_value"].format(doc=shown) if shown else lab["supported_msg"]
    if verdict == "conflicting":  # a conflict without both values (the judge's, on a sentence): none to name
        return lab["conflicting_plain"]
    return lab["not_found_msg"]


def evidence_labels(lang: str) -> Mapping[str, str]:
    """Strings of the claim mode, citation tools, viewer and downloads in ``lang`` (English by default)."""
    return EVIDENCE_LABELS.get(lang, EVIDENCE_LABELS["en"])


def corpus_labels(lang: str) -> dict[str, str]:
    """The Corpus tab's strings in ``lang``, English for unknown languages."""
    return {**CORPUS_LABELS["en"], **CORPUS_LABELS.get(lang, {})}


def evaluate_labels(lang: str) -> Mapping[str, str]:
    """The Evaluate tab's strings in ``lang``, English when the language has none."""
    return EVALUATE_LABELS.get(lang, EVALUATE_LABELS["en"])


def outcome_help(lang: str) -> Mapping[str, str]:
    """What each outcome of a graded question means, in ``lang`` (English when unknown)."""
    return OUTCOME_LABELS.get(lang, OUTCOME_LABELS["en"])


def counted(section: Mapping[str, str], key: str, n: int, **values: object) -> str:
    """``section[key]`` for ``n`` things, or ``section[key + "_one"]`` when ``n`` is 1 and it has one
    (every interface language says 1 in the singular and any other count in the plural)."""
    one = section.get(f"{key}_one")
    return (one if n == 1 and one else section[key]).format(n=n, **values)


def language_name(code: str, lang: str) -> str:
    """The name of language ``code`` in interface language ``lang`` (the code itself when it has none)."""
    return LANGUAGE_NAMES.get(lang, LANGUAGE_NAMES["en"]).get(code, code)


def language_list(codes: Sequence[str], lang: str) -> str:
    """Language names joined as ``lang`` joins a list: "Spanish, Portuguese and English"."""
    names = [language_name(code, lang) for code in codes]
    if len(names) < 2:
        return "".join(names)
    return labels(lang)["list_and"].format(first=", ".join(names[:-1]), last=names[-1])


#: The errors raised below the web layer (:class:`Said`), per language.
ERRORS: Mapping[str, Mapping[str, str]] = _per_language("errors")


class Said(str):
    """A message of the catalogue's ``errors`` section: the English line (what ``str()`` gives, so the
    CLI, the logs and the API print it as before) that also carries its key and values, so that a page
    says it in its own language (:meth:`said`). An error raised with one (``raise QAFileError(Said(
    "file_empty", path=path, what=Said("file_qa")))``) is defined once, in the catalogue.

    A value may be a ``Said`` too (said in the same language), an error carrying one, or a tuple of
    them (joined with the ``separator`` of the language, "; "); a value ``n`` picks the ``_one`` form of the line for 1 (:func:`counted`).
    """

    key: str
    values: dict[str, object]

    def __new__(cls, key: str, /, **values: object) -> Said:
        made = super().__new__(cls, _error_line(key, "en", values))
        made.key, made.values = key, values
        return made

    def said(self, lang: str = "en") -> str:
        """The message in ``lang`` (English where the language has no catalogue file)."""
        return _error_line(self.key, lang, self.values)

    def __reduce__(self) -> tuple[Any, tuple[str, dict[str, object]]]:  # pickled with its key (a worker's error)
        return (_said_again, (self.key, self.values))


def _said_again(key: str, values: dict[str, object]) -> Said:
    return Said(key, **values)


def _error_line(key: str, lang: str, values: Mapping[str, object]) -> str:
    section = ERRORS.get(lang, ERRORS["en"])
    shown = {name: said_in(value, lang) for name, value in values.items() if name != "n"}
    n = values.get("n")
    return counted(section, key, n, **shown) if isinstance(n, int) else section[key].format(**shown)


def said_in(value: object, lang: str) -> object:
    """``value`` as a page in ``lang`` shows it: a message that knows its key (:class:`Said`, a refusal's
    reason) or an error raised with one in ``lang``, a tuple of them joined as ``lang`` joins a list of problems
    ("; ", in French " ; "), anything else as it is."""
    if isinstance(value, BaseException):
        value = value.args[0] if len(value.args) == 1 else str(value)
    said = getattr(value, "said", None)
    if callable(said):
        return said(lang)
    if isinstance(value, tuple):
        return ERRORS.get(lang, ERRORS["en"])["separator"].join(str(said_in(part, lang)) for part in value)
    return value


def error_said(exc: BaseException, lang: str) -> str:
    """The message of ``exc`` in ``lang`` where it was raised with a :class:`Said`, else its own (English) text."""
    return str(said_in(exc, lang)) or type(exc).__name__
