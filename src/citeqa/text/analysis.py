"""Lexical analysis shared by BM25 and answer extraction: tokens, stopwords, stems.

Words are case-folded, stemmed with the Snowball stemmer of their language (PyStemmer)
and then stripped of accents, so "Información", "informaciones" and "informacion" meet.
A language without a stemmer (see :mod:`citeqa.text.language`) is only case-folded and
stripped of accents, never stemmed as if it were English. Numbers keep their decimal part
("0,979" and "0.979" both become "0.979").
"""

from __future__ import annotations

import importlib.util
import re
import sys
import unicodedata
from collections.abc import Iterable
from functools import cache, lru_cache
from importlib import resources
from types import ModuleType
from typing import TYPE_CHECKING

from citeqa.text.language import language_data, stemmer_name

if TYPE_CHECKING:  # PyStemmer loads on first use
    import Stemmer

_TOKEN = re.compile(r"\d+(?:[.,]\d+)*|[^\W\d_]+(?:['’][^\W\d_]+)?|\d+", re.UNICODE)


def fold_accents(text: str) -> str:
    """Remove combining marks: "Cómo" -> "Como", "ação" -> "acao"."""
    if text.isascii():  # nothing to decompose: most words of most texts
        return text
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def normalize(text: str) -> str:
    """NFKC, case-folded, accents removed: the form used to compare surface text."""
    return fold_accents(unicodedata.normalize("NFKC", text).casefold())


def word_tokens(text: str) -> list[str]:
    """Lower-cased word and number tokens of a text (accents kept, for the stemmer)."""
    return [m.group(0) for m in _TOKEN.finditer(unicodedata.normalize("NFKC", text).casefold())]


def is_number(token: str) -> bool:
    """True for tokens such as "2026", "0,979" or "744"."""
    return token[:1].isdigit()


#: The languages whose stopwords are always removed: the first corpus's, where names and quotes mix.
SHARED_STOPWORDS = ("en", "es", "pt")


@cache
def own_stopwords(lang: str) -> tuple[str, ...]:
    """The stopwords of ``lang`` alone: bm25s's list (named in languages.json), else the list
    citeqa ships in ``text/stopwords/<lang>.txt``, else none (docs/languages.md lists which)."""
    name = language_data()["stopwords"].get(lang)
    if name:
        return tuple(getattr(_bm25s_stopwords(), name, ()))
    shipped = resources.files("citeqa.text").joinpath("stopwords", f"{lang}.txt")
    if not shipped.is_file():
        return ()
    lines = (line.strip() for line in shipped.read_text(encoding="utf-8").splitlines())
    return tuple(line for line in lines if line and not line.startswith("#"))


@cache
def _bm25s_stopwords() -> ModuleType:
    """``bm25s.stopwords``: bm25s's own module where bm25s is imported, else :func:`read_bm25s_stopwords`."""
    loaded = sys.modules.get("bm25s.stopwords")
    return loaded if loaded is not None else read_bm25s_stopwords()


def read_bm25s_stopwords() -> ModuleType:
    """``bm25s/stopwords.py`` (tuples of words, it imports nothing) run from its file without running
    ``bm25s/__init__``, which imports scipy.sparse and tqdm: a question needs neither, and they were
    about half a second of a cold ``citeqa ask``."""
    package = importlib.util.find_spec("bm25s")  # finds the package without running it
    folders = list(package.submodule_search_locations or ()) if package is not None else []
    spec = (
        importlib.util.spec_from_file_location("citeqa._bm25s_stopwords", f"{folders[0]}/stopwords.py")
        if folders
        else None
    )
    if spec is None or spec.loader is None:
        raise ModuleNotFoundError("bm25s.stopwords is not found", name="bm25s.stopwords")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@cache
def stopwords(lang: str) -> frozenset[str]:
    """Stopwords of es, pt and en together (folded), plus the language's own list.

    Questions and passages mix languages in names and quotes, so the shared list of the
    three corpus languages is always removed; its words carry no content in any of them.
    """
    lists = [own_stopwords(code) for code in (*SHARED_STOPWORDS, lang)]
    return frozenset(normalize(w) for lst in lists for w in lst)


@cache
def _stemmer(lang: str) -> Stemmer.Stemmer | None:
    """PyStemmer's Snowball stemmer of ``lang``, None for a language without one."""
    import Stemmer

    name = stemmer_name(lang)
    return Stemmer.Stemmer(name) if name is not None else None


def stem(tokens: Iterable[str], lang: str) -> list[str]:
    """Snowball stems of tokens in ``lang``, accent-folded; numbers pass unchanged; a language
    without a stemmer keeps its words whole."""
    tokens = list(tokens)
    stemmer = _stemmer(lang)
    out = []
    for tok in tokens:
        if is_number(tok):
            out.append(tok.replace(",", "."))
        else:
            out.append(fold_accents(stemmer.stemWord(tok) if stemmer is not None else tok))
    return out


def terms(text: str, lang: str) -> list[str]:
    """Content terms of a text: tokens minus stopwords, stemmed for ``lang``."""
    return list(_cached_terms(text, lang))


@lru_cache(maxsize=16384)
def _cached_terms(text: str, lang: str) -> tuple[str, ...]:
    """Passages and their sentences recur across questions: stem each once."""
    stop = stopwords(lang)
    kept = [t for t in word_tokens(text) if is_number(t) or (len(t) > 1 and fold_accents(t) not in stop)]
    return tuple(stem(kept, lang))


#: Characters kept by :func:`cognate_keys`; Romance and English cognates share them
#: ("processor"/"procesador"/"processador", "licenses"/"licencia"/"licenca").
COGNATE_PREFIX = 5


@lru_cache(maxsize=16384)
def cognate_keys(text: str) -> frozenset[str]:
    """Language-free content keys: folded words cut to :data:`COGNATE_PREFIX` characters.

    Truncation matches cognates across es/pt/en where each language's stemmer cannot
    (McNamee and Mayfield's n-gram/truncation results for cross-language retrieval).
    Numbers keep their decimal part, as in :func:`stem`; stopwords of every language drop.
    """
    stop = stopwords("en")
    keys = set()
    for token in word_tokens(text):
        folded = fold_accents(token)
        if is_number(token):
            keys.add(token.replace(",", "."))
        elif len(folded) > 2 and folded not in stop:
            keys.add(folded[:COGNATE_PREFIX])
    return frozenset(keys)


def query_terms(text: str, langs: Iterable[str]) -> list[str]:
    """Terms of a question stemmed for each language in ``langs``, without repeats.

    Stemming the question once per corpus language lets a Portuguese question meet a
    Spanish passage on shared stems, while identical stems count only once.
    """
    seen: dict[str, None] = {}
    for lang in langs:
        for term in terms(text, lang):
            seen.setdefault(term, None)
    return list(seen)
