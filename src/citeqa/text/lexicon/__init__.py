"""Word lists of claim checking, per language: which words say the same thing ("compró" =
"bought" = "comprou" = "adquirió"), and the prepositions after which a claim's name is its value
("fundada en Bristol", "designed by Eiffel"). The lists are data, one JSON file per language
(``<lang>.json``: ``concepts``, concept -> words, and ``value_prepositions``); a word's concepts
are looked up by its Snowball stem, so inflections meet. A language without a file has neither
(its words still meet by stem and cognate key)."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

from citeqa.errors import ConfigError
from citeqa.text.analysis import fold_accents, stem

_DIR = Path(__file__).parent


@cache
def _data(lang: str) -> dict:
    path = _DIR / f"{lang}.json"
    if not path.exists():
        return {}
    try:
        data = json.loads(path.read_text("utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigError(f"{path}: not a word list ({exc})") from None
    for key, words in [("value_prepositions", data.get("value_prepositions", [])), *data.get("concepts", {}).items()]:
        if not isinstance(words, list) or not all(isinstance(w, str) for w in words):
            raise ConfigError(f"{path}: {key!r} must list words")
    return data


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


def concepts(words: list[str] | tuple[str, ...], lang: str) -> frozenset[str]:
    """The concepts the (lower-case) ``words`` in ``lang`` express."""
    table = _table(lang)
    if not table:
        return frozenset()
    out: set[str] = set()
    for s in stem([fold_accents(w) for w in words], lang):
        out |= table.get(s, frozenset())
    return frozenset(out)
