"""Every user-facing string of the UI and the terminal: one catalogue to translate.

The strings live in ``citeqa/catalogue/<lang>.json``, one file per language, so a translator
adds a language by copying ``en.json`` and translating its values (docs/languages.md). Each
file has the sections of :data:`TRANSLATED`; ``en.json`` also holds the sections that are
English only (:data:`ENGLISH_ONLY`: the Corpus tab's status lines, the Evaluate tab, the
outcome definitions and the server's refusals), which a language file may add too.
A language without a file is spoken in English. Files are read on first use, not at import.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from functools import cache
from importlib import resources

#: Sections every language file has, with every key of English's.
TRANSLATED = ("labels", "claim", "evidence", "corpus")
#: Sections of en.json that other languages may leave out (they are shown in English).
ENGLISH_ONLY = ("corpus_status", "evaluate", "outcome", "server")


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


class _Lazy(Mapping):
    """A mapping built on first use from the catalogue files (nothing is read at import)."""

    def __init__(self, build: Callable[[], Mapping]) -> None:
        self._build = cache(build)

    def __getitem__(self, key):
        return self._build()[key]

    def __iter__(self) -> Iterator:
        return iter(self._build())

    def __len__(self) -> int:
        return len(self._build())


class _LazyLanguages(Sequence):
    """:func:`catalogue_languages` as a constant that reads the folder on first use."""

    def __getitem__(self, index):
        return catalogue_languages()[index]

    def __len__(self) -> int:
        return len(catalogue_languages())

    def __repr__(self) -> str:
        return repr(catalogue_languages())


def _per_language(section: str) -> _Lazy:
    return _Lazy(lambda: {lang: catalogue(lang)[section] for lang in catalogue_languages()})


#: The languages the interface speaks (one catalogue file each).
UI_LANGUAGES: Sequence[str] = _LazyLanguages()

#: UI strings per language (the chat, its labels and notices).
LABELS: Mapping[str, Mapping[str, str]] = _per_language("labels")
#: Claim checking (:mod:`citeqa.answer.claims`): verdict names and the one-line message.
CLAIM_LABELS: Mapping[str, Mapping[str, str]] = _per_language("claim")
#: The chat's claim mode, citation tools, document viewer and downloads.
EVIDENCE_LABELS: Mapping[str, Mapping[str, str]] = _per_language("evidence")
#: The Corpus tab; its labels follow the chat's language, its status lines are English.
CORPUS_LABELS: Mapping[str, Mapping[str, str]] = _Lazy(
    lambda: {
        lang: {**catalogue(lang)["corpus"], **catalogue(lang).get("corpus_status", {})}
        for lang in catalogue_languages()
    }
)
#: The Evaluate tab's strings, in English (its name is in LABELS, with the other tabs', and follows the chat's language).
EVALUATE: Mapping[str, str] = _Lazy(lambda: catalogue("en")["evaluate"])
#: What each outcome means, as the tab says it next to the filter.
OUTCOME_HELP: Mapping[str, str] = _Lazy(lambda: catalogue("en")["outcome"])
#: The web server's refusals (:mod:`citeqa.app.server`), one line each, as JSON ``{"error": ...}``.
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


def claim_message(verdict: str, lang: str, claim_value: str | None = None, doc_value: str | None = None) -> str:
    """The verdict as one sentence in ``lang``; a conflict names both values."""
    lab = claim_labels(lang)
    if verdict == "conflicting" and claim_value and doc_value:
        return lab["conflicting_msg"].format(doc=doc_value, claim=claim_value)
    if verdict == "supported":  # the value when it is written out ("744 billion"), not an ellipsis ("the third")
        shown = doc_value if doc_value and any(c.isdigit() for c in doc_value) else None
        return lab["supported_value"].format(doc=shown) if shown else lab["supported_msg"]
    if verdict == "conflicting":
        return lab["conflicting_msg"].format(doc="?", claim="?")
    return lab["not_found_msg"]


def evidence_labels(lang: str) -> Mapping[str, str]:
    """Strings of the claim mode, citation tools, viewer and downloads in ``lang`` (English by default)."""
    return EVIDENCE_LABELS.get(lang, EVIDENCE_LABELS["en"])


def corpus_labels(lang: str) -> dict[str, str]:
    """The Corpus tab's strings in ``lang``, English for the status lines and unknown languages."""
    return {**CORPUS_LABELS["en"], **CORPUS_LABELS.get(lang, {})}
