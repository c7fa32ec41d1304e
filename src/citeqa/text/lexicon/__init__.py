"""Word lists per language, as data: one JSON file per language (``<lang>.json``) and
``common.json`` for what no language owns (unit symbols, currency signs). The format is in
``README.md`` beside this file.

* ``concepts``, ``concept_opposites`` (in ``common.json``) and ``value_prepositions``: claim checking, which words say the same thing
  ("compró" = "bought" = "comprou"; looked up by Snowball stem, so inflections meet) and the
  prepositions after which a claim's name is its value ("fundada en Bristol");
* ``facts``, ``names``, ``questions``: the words of :mod:`citeqa.text.facts` (months, scales,
  units, ...), of the name finder and of the question words (:mod:`citeqa.qa.answer_types`).

Files are read on first use and cached. A language without a file has none of its words: its
words still meet by stem and cognate key, and facts fall back to the language-free rules (digits,
years, unit symbols, capitalised names)."""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path
from typing import Any

from citeqa.errors import ConfigError
from citeqa.text.analysis import fold_accents, stem

_DIR = Path(__file__).parent
#: What a word-list file may be called: a language code (ISO 639-1 or -3) or "common".
_NAME = re.compile(r"[a-z]{2,3}|common")


@cache
def _data(lang: str) -> dict[str, Any]:
    path = _DIR / f"{lang}.json"
    if not _NAME.fullmatch(lang) or not path.exists():
        return {}
    return load(path)


def load(path: Path) -> dict[str, Any]:
    """A word-list file, checked against the format (README.md); ConfigError when it is not one."""
    try:
        data: dict[str, Any] = json.loads(path.read_text("utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigError(f"{path}: not a word list ({exc})") from None
    for key, words in [("value_prepositions", data.get("value_prepositions", [])), *data.get("concepts", {}).items()]:
        if not isinstance(words, list) or not all(isinstance(w, str) for w in words):
            raise ConfigError(f"{path}: {key!r} must list words")
    for section in ("facts", "names", "questions"):
        for key, value in (data.get(section) or {}).items():
            if not _well_formed(value):
                raise ConfigError(f"{path}: {section}.{key} must be a list of words or a table of words")
    return data


def _well_formed(value: Any) -> bool:
    """A list of words, a flag, or a table from words to numbers, roles or lists of words."""
    if isinstance(value, bool):
        return True
    if isinstance(value, list):
        return all(isinstance(w, str) for w in value)
    if isinstance(value, dict):
        return all(
            isinstance(k, str) and (v is None or isinstance(v, (int, float, str)) or _well_formed(v))
            for k, v in value.items()
        )
    return False


@cache
def languages() -> tuple[str, ...]:
    """The languages with a word-list file."""
    return tuple(sorted(p.stem for p in _DIR.glob("*.json") if p.stem != "common"))


def folded(word: str) -> str:
    """The form words are compared in: case-folded, accents removed."""
    return fold_accents(word.casefold())


def entry(lang: str, section: str, key: str, default: Any = None) -> Any:
    """``<lang>.json``'s ``section`` → ``key`` (``default`` when the file or the entry is missing);
    ``lang`` "common" reads ``common.json``."""
    data = _data(lang)
    part = data.get(section, {}) if section else data
    if not isinstance(part, dict):
        raise ConfigError(f"{_DIR / (lang + '.json')}: {section!r} must be an object")
    return part.get(key, default)


@cache
def word_list(lang: str, section: str, key: str) -> tuple[str, ...]:
    """The folded words of one list of ``lang`` (empty when it has none), in file order."""
    return tuple(dict.fromkeys(folded(w) for w in entry(lang, section, key, ()) or ()))


@cache
def shared_list(section: str, key: str) -> tuple[str, ...]:
    """One list of every language's file together, folded: facts and questions mix languages
    (a Spanish passage quotes "July 31, 2026"), so most lists are read in every text."""
    return tuple(dict.fromkeys(w for lang in languages() for w in word_list(lang, section, key)))


@cache
def shared_table(section: str, key: str) -> dict[str, Any]:
    """One ``word -> value`` table of every language's file together, folded (the first file to
    give a word wins)."""
    out: dict[str, Any] = {}
    for lang in languages():
        for word, value in (entry(lang, section, key, {}) or {}).items():
            out.setdefault(folded(word), value)
    return out


@cache
def value_prepositions(lang: str) -> frozenset[str]:
    """Folded prepositions after which a name is the claim's value, in ``lang``."""
    return frozenset(fold_accents(w.casefold()) for w in _data(lang).get("value_prepositions", []))


@cache
def _table(lang: str) -> dict[str, frozenset[str]]:
    """stem -> concepts for ``lang``."""
    out: dict[str, set[str]] = {}
    for concept, words in _data(lang).get("concepts", {}).items():
        for word in words:
            for s in stem(fold_accents(word.casefold()).split() or [""], lang):
                if s:
                    out.setdefault(s, set()).add(concept)
    return {k: frozenset(v) for k, v in out.items()}


@cache
def _opposites() -> dict[str, frozenset[str]]:
    out: dict[str, set[str]] = {}
    for pair in _data("common").get("concept_opposites", []):
        if not (isinstance(pair, list) and len(pair) == 2 and all(isinstance(c, str) for c in pair)):
            raise ConfigError(f"{_DIR / 'common.json'}: concept_opposites takes pairs of concept names, got {pair!r}")
        a, b = pair
        out.setdefault(a, set()).add(b)
        out.setdefault(b, set()).add(a)
    return {k: frozenset(v) for k, v in out.items()}


def opposite_concepts(names: frozenset[str] | set[str]) -> frozenset[str]:
    """The concepts that say the opposite of any of ``names`` ("fall" for "grow"; ``common.json``)."""
    table = _opposites()
    return frozenset(o for n in names for o in table.get(n, ()))


def concepts(words: list[str] | tuple[str, ...], lang: str) -> frozenset[str]:
    """The concepts the (lower-case) ``words`` in ``lang`` express."""
    table = _table(lang)
    if not table:
        return frozenset()
    out: set[str] = set()
    for s in stem([fold_accents(w) for w in words], lang):
        out |= table.get(s, frozenset())
    return frozenset(out)
