"""What kind of fact a question asks for, from its interrogative phrase.

The wh-word, the preposition before it and the noun after it decide ("¿A qué empresa...",
"What word accuracy...", "Qual foi a pontuação..."). Every word involved is data: the
``questions`` lists of each language's file in :mod:`citeqa.text.lexicon` (wh-words and their
roles, prepositions, the nouns that ask for a quantity, a date, a price, a place or a phrase).
Questions mix languages ("¿Qué score...?"), so the lists of every language are read together;
a language without a file has no wh-words, and its questions ask for no particular kind.
A question as typed is first checked and tidied (:func:`clean_question`; claims too).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum
from functools import cache

from citeqa.errors import QuestionError
from citeqa.messages import Said
from citeqa.text.analysis import fold_accents
from citeqa.text.facts_words import alternation
from citeqa.text.lexicon import entry, folded, languages, shared_list

#: Longest question accepted, in characters (a long paragraph; longer input is pasted text, not a question).
MAX_QUESTION_CHARS = 2000


class AnswerType(str, Enum):
    """The kind of fact a question asks for."""

    QUANTITY = "quantity"
    DATE = "date"
    PRICE = "price"
    NAME = "name"
    PLACE = "place"
    OTHER = "other"


@dataclass(frozen=True, slots=True)
class QuestionShape:
    """What a question asks for: the answer ``kind``; ``head``, the noun after which/what/qué/qual
    ("chip" in "¿A qué chip...?"), or ""; ``plural`` when the question asks for several
    ("¿Qué bibliotecas...", "Which cards..."); ``phrase`` when the answer is a common-noun
    phrase or a clause rather than a name ("¿Qué técnica...", "What kind of task...": the
    kind is then OTHER, as for why and how); ``person`` for who/quién/quem."""

    kind: AnswerType
    head: str = ""
    plural: bool = False
    phrase: bool = False
    person: bool = False


# --- the words, from the lexicon ------------------------------------------------------------


@cache
def question_list(key: str) -> frozenset[str]:
    """A ``questions`` list of every language, folded (made once per key: it is asked per candidate)."""
    return frozenset(shared_list("questions", key))


@cache
def wh_roles() -> dict[str, tuple[str, str]]:
    """Folded wh-word -> (its role: which, who, when, how_many, ...; its language)."""
    out: dict[str, tuple[str, str]] = {}
    for lang in languages():
        for word, role in (entry(lang, "questions", "wh", {}) or {}).items():
            out.setdefault(folded(word), (role, lang))
    return out


@cache
def question_words() -> frozenset[str]:
    """Words and phrases that open a question or a request, in every language (folded):
    the wh-words and each file's ``question_starts`` ("is", "tell", "dime", "o que")."""
    return frozenset(wh_roles()) | question_list("question_starts")


@cache
def _pattern(name: str) -> re.Pattern[str]:
    """The regexes of question_shape, from the word lists."""

    def alt(key: str) -> str:
        return alternation(question_list(key), fold=False)

    patterns = {
        "lead": rf"^[\W_]*(?:(?:{alt('conjunctions')})\s+)?(?:(?:{alt('adverbs')})\s+)?"
        rf"(?:(?P<prep>{alt('prepositions')})\s+)?(?P<pronoun>(?:{alt('pronoun_what')})\s+)?"
        rf"(?P<wh>{alternation(wh_roles(), fold=False)})\b(?P<rest>.*)$",
        "part_of": rf"^(?:{alt('part_of')})\s+(?:{alt('of')})\b",
        "kind_of": rf"^(?:{alt('kind_of')})\s+(?:{alt('of')})\s+",
        "name_verbs": rf"\b({alt('name_verbs')})\b",
        "say_or_happen": rf"^\W*.*?\b({alt('say_or_happen_late')})\b|^\W*({alt('say_or_happen')})\b",
        "measure": rf"^\W*({alt('measure_adjectives')})\b",
        "score": rf"\b({alt('score_verbs')})\b",
        "cost": rf"\b({alt('cost_words')})\b",
        "currency": rf"\b(?:{alt('currency_prepositions')})\s+(?:{alt('currency_names')})\b",
        "price": rf"\b({alt('price_words')})\b",
        "how_many": rf"\b({alt('how_many')})\b",
    }
    marked = {w.casefold() for lang in languages() for w in entry(lang, "questions", "wh_marked", ()) or ()}
    if name == "wh_mid":  # an interrogative inside the question (accents tell "qué" from the relative "que")
        return re.compile(rf"(?<!\w)({alternation(marked, fold=False)})\s+(?P<rest>\w.*)$", re.S)
    return re.compile(patterns[name], re.S if name == "lead" else 0)


#: A noun listed for several kinds asks for the first of them.
_NOUN_KINDS = ("quantity", "price", "date", "place", "phrase")


@cache
def _nouns() -> dict[str, str]:
    """Folded noun -> the kind it asks for (quantity, price, date, place, phrase), every language."""
    out: dict[str, str] = {}
    for lang in languages():
        for kind, nouns in (entry(lang, "questions", "nouns", {}) or {}).items():
            for noun in nouns:
                word = folded(noun)
                if word not in out or _NOUN_KINDS.index(kind) < _NOUN_KINDS.index(out[word]):
                    out[word] = kind
    return out


@cache
def _own_nouns(lang: str) -> dict[str, str]:
    """Nouns read only in questions of ``lang`` (pt "data" is a date; en "data" is not)."""
    table = entry(lang, "questions", "nouns_in_language", {}) or {}
    return {folded(n): kind for kind, nouns in table.items() for n in nouns}


_KINDS = {
    "quantity": AnswerType.QUANTITY,
    "price": AnswerType.PRICE,
    "date": AnswerType.DATE,
    "place": AnswerType.PLACE,
}


# --- the shape of a question ----------------------------------------------------------------


def _clause(folded_question: str) -> str:
    """The interrogative clause: after the last "¿", else from the last comma-separated part
    that starts with a wh-word ("If not X, what did ..." -> "what did ..."), to the end."""
    text = folded_question
    if "¿" in text:
        text = text[text.rindex("¿") + 1 :]
    starts = [0] + [m.end() for m in re.finditer(r"[,;:]", text)]
    for start in reversed(starts):
        if _pattern("lead").match(text[start:]):
            return text[start:].strip()
    return text.strip()


def _is_plural(word: str) -> bool:
    return len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is"))


def _singulars(word: str) -> list[str]:
    """The word and its possible singulars in es/pt/en ("pontuacoes" -> "pontuacao")."""
    forms = [word]
    if word.endswith("oes") or word.endswith("aes"):
        forms.append(word[:-3] + "ao")
    if word.endswith("ones"):
        forms.append(word[:-2])
    if word.endswith("es"):
        forms.append(word[:-2])
    if word.endswith("s"):
        forms.append(word[:-1])
    return forms


def _noun_class(word: str, lang: str) -> str | None:
    """The kind the noun ``word`` asks for in a question whose wh-word is in ``lang``."""
    for form in _singulars(word):
        found = _nouns().get(form) or _own_nouns(lang).get(form)
        if found is not None:
            return found
    return None


def _head_words(rest: str, english: bool, original_rest: str) -> list[str]:
    """The noun phrase right after which/what/qual: up to three words in English (where
    modifiers come first: "word accuracy"), the first word in es/pt ("precisión de palabra")."""
    tokens = re.findall(r"\w+", rest)
    while tokens and tokens[0] in question_list("skip_before_head"):
        tokens.pop(0)
    if not tokens:
        return []
    if not english:
        return tokens[:1]
    phrase: list[str] = []
    for tok in tokens[:4]:
        if tok in question_list("head_stop"):
            break
        if tok in question_list("determiners"):
            return phrase[:-1] if len(phrase) > 1 else phrase
        phrase.append(tok)
    if len(phrase) == 4:
        # no auxiliary or preposition closes the noun phrase ("Which Acme unit designs ..."):
        # its first lower-case word in the question is the likeliest noun
        lower = {fold_accents(w.casefold()) for w in re.findall(r"\w+", original_rest) if w[:1].islower()}
        first = next((w for w in phrase if w in lower), phrase[0])
        return phrase[: phrase.index(first) + 1]
    return phrase


def _asks_price(rest: str) -> bool:
    return bool(_pattern("cost").search(rest) or _pattern("currency").search(rest))


def question_shape(question: str) -> QuestionShape:
    """The answer type, head noun, number and phrase-ness a question asks for (worked out once per
    question: :class:`~citeqa.qa.answer_types.Wanted` holds it)."""
    folded_question = fold_accents(question.casefold())
    original = fold_accents(question)
    clause = _clause(folded_question)
    lead = _pattern("lead").match(clause)
    if lead is None:
        if _pattern("how_many").search(clause):
            return QuestionShape(AnswerType.PRICE if _asks_price(clause) else AnswerType.QUANTITY)
        mid = _pattern("wh_mid").search(question.casefold())  # "¿Y el barco zarpó con qué carga?"
        if mid is None:
            return QuestionShape(AnswerType.OTHER)
        return _which_shape(fold_accents(mid.group(1)), None, fold_accents(mid.group("rest")), original)
    wh, prep, rest = lead.group("wh"), lead.group("prep"), lead.group("rest")
    role = wh_roles()[re.sub(r"\s+", " ", wh)][0]
    if role == "why" or (wh in question_list("bare_what") and prep in question_list("reason_prepositions")):
        return QuestionShape(AnswerType.OTHER)  # a reason or a purpose: "why", "¿por qué?", "para qué"
    if role.startswith("how_many"):
        if _asks_price(rest):
            return QuestionShape(AnswerType.PRICE)
        return QuestionShape(AnswerType.QUANTITY, plural=role.endswith("plural"))
    if role == "how":
        return _how_shape(rest)
    if role == "manner":
        return QuestionShape(AnswerType.NAME if _pattern("name_verbs").search(rest) else AnswerType.OTHER)
    if role == "when":
        return QuestionShape(AnswerType.DATE)
    if role == "where":
        return QuestionShape(AnswerType.PLACE)
    if role.startswith("who"):
        return QuestionShape(AnswerType.NAME, plural=role.endswith("plural"), person=True)
    if lead.group("pronoun") and wh in question_list("bare_what"):  # "o que", "lo que": a pronoun, no noun follows
        return QuestionShape(AnswerType.OTHER if _pattern("say_or_happen").match(rest) else AnswerType.NAME)
    return _which_shape(wh, prep, rest, original)


def _how_shape(rest: str) -> QuestionShape:
    """English "how": "how many/much/long..." asks for a quantity (a price, a date for "how soon"),
    "how is it called" for a name, else a manner."""
    measure = _pattern("measure").match(rest)
    if measure is None:
        return QuestionShape(AnswerType.NAME if _pattern("name_verbs").search(rest) else AnswerType.OTHER)
    adjective = measure.group(1)
    if adjective in question_list("price_adjectives") or (
        adjective in question_list("amount_adjectives") and _asks_price(rest)
    ):
        return QuestionShape(AnswerType.PRICE)
    if adjective in question_list("date_adjectives"):
        return QuestionShape(AnswerType.DATE)
    return QuestionShape(AnswerType.QUANTITY, plural=adjective in question_list("plural_adjectives"))


def _which_shape(wh: str, prep: str | None, rest: str, original: str) -> QuestionShape:
    """which/what/qué/qual/cuál + a noun: the noun decides ("qué precisión" -> a quantity)."""
    role, lang = wh_roles().get(wh, ("which", ""))
    english = lang == "en"
    say = _pattern("say_or_happen")
    if say.search(rest) if english else say.match(rest):
        return QuestionShape(AnswerType.OTHER)
    original_rest = original[-len(rest) :] if rest else ""
    bare = " ".join(w for w in re.findall(r"\w+", rest) if w not in question_list("skip_before_head"))
    kind_of = _pattern("kind_of").match(bare)
    if kind_of:  # "¿Qué tipo de clústeres...?", "What kind of kernels...": a category, in common nouns
        head = _head_words(bare[kind_of.end() :], english, "")
        return QuestionShape(
            AnswerType.OTHER, head[-1] if head else "", bool(head) and _is_plural(head[-1]), phrase=True
        )
    head = _head_words(rest, english, original_rest)
    if _pattern("part_of").match(bare):
        return QuestionShape(AnswerType.OTHER, head[0] if head else "", False, phrase=True)
    if english and not head and _pattern("score").search(rest):  # "What did X score on Y?"
        return QuestionShape(AnswerType.QUANTITY)
    if not english and head and head[0] in question_list("clitics"):  # "¿Para qué se usa?", "¿En qué se diferencia?"
        return QuestionShape(AnswerType.OTHER if prep else AnswerType.NAME)
    plural = role.endswith("plural") or (bool(head) and _is_plural(head[-1]))
    for word in head:
        found = _noun_class(word, lang)
        if found in _KINDS:
            return QuestionShape(_KINDS[found], word, plural)
        if found == "phrase":
            return QuestionShape(AnswerType.OTHER, word, plural, phrase=True)
    if not head and _pattern("price").search(rest):
        return QuestionShape(AnswerType.PRICE)
    return QuestionShape(AnswerType.NAME, head[-1] if head else "", plural)


def expected_type(question: str) -> AnswerType:
    """The answer type a question asks for, from its interrogative phrase."""
    return question_shape(question).kind


# --- a question as typed ----------------------------------------------------------------------


def clean_question(question: object, what: str = "question") -> str:
    """Validate and tidy a question (``what="claim"``: a claim); raise QuestionError with what to do."""
    if not isinstance(question, str):
        raise QuestionError(Said(f"{what}_not_text"))
    cleaned = "".join(ch for ch in question if ch.isprintable() or ch in "\n\t")
    cleaned = cleaned.encode("utf-8", "replace").decode("utf-8").strip()
    if not cleaned:
        raise QuestionError(Said(f"{what}_empty"))
    if len(cleaned) > MAX_QUESTION_CHARS:
        raise QuestionError(Said(f"{what}_too_long", length=len(cleaned), limit=MAX_QUESTION_CHARS))
    return " ".join(cleaned.split())


def clean_history(history: Sequence[object]) -> tuple[str, ...]:
    """Earlier questions, cleaned like a question; empty or invalid turns are dropped."""
    cleaned = []
    for turn in history:
        try:
            cleaned.append(clean_question(turn))
        except QuestionError:
            continue
    return tuple(cleaned)


@cache
def _follow_up() -> re.Pattern[str]:
    """A leading "and"/"y"/"e" or a pronoun: the words of each language's ``follow_up_starts`` and
    ``follow_up_pronouns`` lists (:mod:`citeqa.text.lexicon`), folded."""
    starts, pronouns = question_list("follow_up_starts"), question_list("follow_up_pronouns")
    return re.compile(rf"^\W*({alternation(starts, fold=False)})\b|\b({alternation(pronouns, fold=False)})\b")


def is_follow_up(question: str, n_terms: int) -> bool:
    """Whether a question leans on the previous one (a leading "and", a pronoun, no topic)."""
    folded = fold_accents(question.casefold())
    return n_terms <= 1 or _follow_up().search(folded) is not None
