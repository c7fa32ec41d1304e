"""What a claim says, taken apart: its facts (quantities and dates), names and other words,
and which of a sentence's facts sits in the place of each claim fact.

* **facts**: :mod:`citeqa.text.facts` (the extractor short answers use too), compared by
  :mod:`citeqa.text.quantities` ("744 mil millones" = "744 billion");
* **names**: name words (:func:`citeqa.text.facts_names.is_name_word`: capitals or digits,
  "GLM-5", "Kunlun P800", "Entity List"), which travel across languages unchanged; a capital on
  the first word is a name only where the evidence has it;
* **words**: the rest, minus stopwords: what the claim says about its names (its predicate).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

from citeqa.records import Highlight
from citeqa.text.analysis import cognate_keys, fold_accents, is_number, stem, stopwords, terms, word_tokens
from citeqa.text.facts import Fact, find_facts, unit_key
from citeqa.text.facts_names import month_word, strong_name_word
from citeqa.text.facts_words import hedge_pattern
from citeqa.text.lexicon import concepts, value_prepositions
from citeqa.text.quantities import same_slot, same_value

_NAME_TOKEN = re.compile(r"[^\W_](?:[\w\-.]*[^\W_])?")


@dataclass(frozen=True)
class ClaimParts:
    """A claim taken apart: its facts, its names and its other words."""

    text: str
    lang: str
    facts: tuple[Fact, ...]
    names: frozenset[str]  #: folded name tokens that must be found ("glm-5", "p800", "entity")
    soft_names: frozenset[str]  #: a capitalised first word: a name only if the evidence has it
    stems: frozenset[str]
    keys: frozenset[str]  #: cognate keys of the words that are neither names nor facts
    tokens: tuple[tuple[int, int, str], ...]  #: (start, end, folded token) of every word
    words: tuple[str, ...] = ()  #: the content words themselves (lower case), in order
    #: names that are the claim's value: where or by whom ("fundada en Bristol", "by Gustave Eiffel")
    value_names: frozenset[str] = frozenset()

    #: the names as written together ("Corrington Rovers", "Ascend 950")
    name_groups: tuple[tuple[str, ...], ...] = ()
    #: per fact of :attr:`facts`, the claim's words that tie it to its subject (:func:`fact_anchors`),
    #: found once: every sentence judged looks for them
    anchors: tuple[frozenset[str], ...] = ()
    #: per word of :attr:`words`, its stem, cognate keys and concepts (:func:`word_keys`), found once:
    #: every sentence judged is compared with them
    word_keys: tuple[WordKeys, ...] = ()

    def names_found(
        self,
        have: set[str] | frozenset[str],
        document: frozenset[str] = frozenset(),
        doc_names: frozenset[str] = frozenset(),
    ) -> float:
        """Share of the claim's names among the tokens ``have``. A soft name (the claim's capitalised
        first word) counts where it is there, or where the document writes it as a name (``doc_names``:
        capitalised inside a sentence: "Alibaba", never "Regular"). A document that writes a name in full may shorten it to its first word later
        ("Corrington Rovers" ... "Corrington"): the other words count as found where the first is
        and the ``document`` has them all, unless the name has a number ("Huawei Connect 2026")."""
        wanted = self.names | {n for n in self.soft_names if n in have}
        if not wanted:
            return 1.0
        found = {n for n in wanted if n in have}
        for group in self.name_groups:
            if any(c.isdigit() for n in group for c in n):
                continue  # "Huawei Connect 2026" is never shortened to "Huawei"
            if len(group) > 1 and group[0] in have and set(group) <= document:
                found |= {n for n in group[1:] if not any(c.isdigit() for c in n)}
        return len(found & wanted) / len(wanted)


def tokens_of(text: str) -> list[tuple[int, int, str]]:
    """Word tokens with their offsets, folded ("GLM-Image" stays one token, "5.2" too)."""
    return [(m.start(), m.end(), fold_accents(m.group(0).casefold())) for m in _NAME_TOKEN.finditer(text)]


def analyse_claim(claim: str, lang: str) -> ClaimParts:
    """The facts, names and content words of ``claim`` (in ``lang``)."""
    facts = tuple(find_facts(claim, lang))
    toks = tokens_of(claim)
    stop = stopwords(lang)
    names: set[str] = set()
    soft: set[str] = set()
    for i, (a, b, folded) in enumerate(toks):
        raw = claim[a:b]
        if any(f.start <= a and b <= f.end for f in facts) or month_word(raw):
            continue
        if strong_name_word(raw):
            names.add(folded)  # "GLM-5", "P800", "AI", "openPangu", "950" after a name
        elif raw[:1].isupper() and folded not in stop:
            (soft if i == 0 else names).add(folded)  # a capital at the start may just start the sentence
    plain = without(
        claim,
        [Highlight(f.start, f.end) for f in facts]
        + [Highlight(a, b) for a, b, f in toks if f in names]
        + _hedges(claim, facts),
    )
    groups: list[list[str]] = []
    last = -1
    for a, b, folded in toks:
        if folded in names or folded in soft:
            if groups and last >= 0 and claim[last:a].strip() == "":
                groups[-1].append(folded)
            else:
                groups.append([folded])
            last = b
        else:
            last = -1
    values: set[str] = set()
    preps = value_prepositions(lang)
    for i, (a, _, folded) in enumerate(toks):
        if folded not in names:
            continue
        before = [t for _, _, t in toks[max(1, i - 2) : i]]  # a first word opens the claim, it ties nothing
        if (before and before[-1] in preps) or (len(before) == 2 and before[0] in preps and before[1] in stop):
            values.add(folded)
        elif before and before[-1] in values and claim[toks[i - 1][1] : a].strip() == "":
            values.add(folded)  # "por Gustave Eiffel": the whole name
    parts = ClaimParts(
        claim,
        lang,
        facts,
        frozenset(names),
        frozenset(soft - names),
        frozenset(terms(plain, lang)),
        cognate_keys(plain),
        tuple(toks),
        content_words(without(plain, [Highlight(a, b) for a, b, f in toks if f in soft]), lang),
        frozenset(values),
        tuple(tuple(g) for g in groups),
    )
    return replace(parts, anchors=fact_anchors(parts), word_keys=word_keys(parts.words, lang))


#: What a content word of a claim is compared by: its stem, its cognate keys and its concepts.
WordKeys = tuple[str, frozenset[str], frozenset[str]]


def _hedges(claim: str, facts: Sequence[Fact]) -> list[Highlight]:
    """Where the hedges before the claim's approximate values stand ("roughly", "unos", "rund"): they
    qualify the value, they are no word of the predicate a sentence must say."""
    out = []
    for f in facts:
        if f.approx:
            m = hedge_pattern().search(claim[: f.start])
            if m is not None:
                out.append(Highlight(m.start(1), m.end(1)))
    return out


def word_keys(words: Sequence[str], lang: str) -> tuple[WordKeys, ...]:
    """The stem, cognate keys and concepts of each of ``words`` (a claim's content words, in ``lang``)."""
    stems = stem(list(words), lang)
    return tuple((s, cognate_keys(w), concepts([w], lang)) for w, s in zip(words, stems))


def content_words(text: str, lang: str) -> tuple[str, ...]:
    """The words of ``text`` that carry content: not stopwords, not numbers, two letters or more."""
    stop = stopwords(lang)
    return tuple(w for w in word_tokens(text) if not is_number(w) and len(w) > 1 and fold_accents(w) not in stop)


def without(text: str, spans: Sequence[Highlight]) -> str:
    """``text`` with the characters of ``spans`` (offsets into ``text``) blanked (offsets stay valid)."""
    out = list(text)
    for span in spans:
        out[span.start : span.end] = [" "] * (span.end - span.start)
    return "".join(out)


# --- which of a sentence's facts is the claim's ---------------------------------------------------

#: Words on each side of a claim's fact that tie it to its subject ("GLM-5 tiene unos 800...").
ANCHOR_WORDS = 8
#: A comma, colon, bracket or dash between two words counts as this many words: "Ascend 970 en
#: 2028, 980 en 2029" ties 980 to 2029, not to 2028.
SEPARATOR_WORDS = 2
#: A sentence's word placed for :func:`_anchor_scores`: its offsets, its folded token, its position
#: and the keys an anchor word meets it by (:func:`_anchor_key` without names).
Placed = tuple[int, int, str, int, frozenset[str]]


_SEPARATORS = re.compile(r"[,;:()\[\]\u2014\u2013]|\s-\s")


@dataclass(frozen=True)
class FactMatch:
    """One fact of the claim in a sentence: ``same`` value, a ``different`` one, or ``missing``."""

    claim: Fact
    relation: str
    doc: Fact | None = None


def match_facts(parts: ClaimParts, sentence: str, lang: str) -> tuple[FactMatch, ...]:
    """Each claim fact against the facts of ``sentence`` (in ``lang``); the sentence's words are
    placed once for all of them, when one has a candidate."""
    if not parts.facts:
        return ()
    facts = find_facts(sentence, lang)
    anchors = parts.anchors if len(parts.anchors) == len(parts.facts) else fact_anchors(parts)
    positions: list[Placed] | None = None
    out = []
    for fact, near in zip(parts.facts, anchors):
        candidates = _candidates(fact, facts)
        if candidates and positions is None:
            positions = _positions(sentence)
        out.append(_match(fact, sentence, candidates, near, positions or []))
    return tuple(out)


def _candidates(claim_fact: Fact, facts: Sequence[Fact]) -> list[Fact]:
    """The facts of ``facts`` that may stand in ``claim_fact``'s place: its value, or its slot."""
    return [f for f in facts if same_value(claim_fact, f) or same_slot(claim_fact, f)]


def match_fact(
    parts: ClaimParts,
    claim_fact: Fact,
    sentence: str,
    facts: Sequence[Fact],
    anchors: frozenset[str] | None = None,
    positions: Sequence[Placed] | None = None,
) -> FactMatch:
    """The sentence's fact in the place of ``claim_fact``: among the facts of the same kind and
    unit, the one the claim's words around ``claim_fact`` (``anchors``: :func:`_anchors`, found when
    None) sit nearest to (ties go to the same value); ``positions``: the sentence's
    :func:`_positions`, found when None."""
    candidates = _candidates(claim_fact, facts)
    if not candidates:
        return FactMatch(claim_fact, "missing")
    near = anchors if anchors is not None else _anchors(parts, claim_fact)
    return _match(claim_fact, sentence, candidates, near, positions if positions is not None else _positions(sentence))


def _match(
    claim_fact: Fact, sentence: str, candidates: Sequence[Fact], anchors: frozenset[str], positions: Sequence[Placed]
) -> FactMatch:
    """:func:`match_fact` once the sentence's ``candidates`` for ``claim_fact`` are known."""
    if not candidates:
        return FactMatch(claim_fact, "missing")
    scores = _anchor_scores(anchors, positions, candidates)
    ranked = sorted(range(len(candidates)), key=lambda i: (-scores[i], not same_value(claim_fact, candidates[i]), i))
    best = candidates[ranked[0]]
    if same_value(claim_fact, best):
        return FactMatch(claim_fact, "same", best)
    if _far_apart(claim_fact, best):
        return FactMatch(claim_fact, "missing")  # "13,80 euros" is no other value for "540 million euros"
    if claim_fact.unit and not best.unit and not _says_unit(sentence, claim_fact.unit):
        return FactMatch(claim_fact, "missing")  # "aged 19" is no count of the claim's "29 goals"
    if scores[ranked[0]] > 0 or (claim_fact.kind == "quantity" and claim_fact.unit and claim_fact.unit == best.unit):
        return FactMatch(claim_fact, "different", best)
    return FactMatch(claim_fact, "missing")


#: Two amounts further apart than this factor are not one thing stated twice: a ticket price
#: (13.80 euros) does not contradict an investment (540 million euros).
MAX_CONFLICT_RATIO = 1000.0


def _far_apart(claim: Fact, doc: Fact) -> bool:
    a, b = claim.number, doc.number
    if claim.kind != "quantity" or a is None or b is None or a <= 0 or b <= 0:
        return False
    return max(a, b) / min(a, b) > MAX_CONFLICT_RATIO


def _says_unit(sentence: str, unit: str) -> bool:
    """Whether ``sentence`` names the unit ``unit`` somewhere (a count may leave its noun for later:
    "de 9 mil millones de parámetros ... y de 7 mil millones")."""
    return any(unit_key(w) == unit for w in word_tokens(sentence))


def _anchor_key(token: str, names: frozenset[str]) -> frozenset[str]:
    if token in names or any(c.isdigit() for c in token):
        return frozenset({token})
    return cognate_keys(token)


def fact_anchors(parts: ClaimParts) -> tuple[frozenset[str], ...]:
    """:func:`_anchors` of each of the claim's facts, in order."""
    outside = _outside_facts(parts)
    return tuple(_anchors(parts, f, outside) for f in parts.facts)


def _outside_facts(parts: ClaimParts) -> list[tuple[int, int, str]]:
    """The claim's tokens that lie in none of its facts."""
    return [(a, b, t) for a, b, t in parts.tokens if not any(f.start < b and a < f.end for f in parts.facts)]


def _anchors(parts: ClaimParts, fact: Fact, outside: Sequence[tuple[int, int, str]] | None = None) -> frozenset[str]:
    """The claim's words (names, cognate keys) within :data:`ANCHOR_WORDS` words of ``fact``
    (``outside``: :func:`_outside_facts`, found when None)."""
    outside = outside if outside is not None else _outside_facts(parts)
    before = [t for a, b, t in outside if b <= fact.start][-ANCHOR_WORDS:]
    after = [t for a, b, t in outside if a >= fact.end][:ANCHOR_WORDS]
    keys: set[str] = set()
    for tok in before + after:
        keys |= _anchor_key(tok, parts.names)
    return frozenset(keys)


def _positions(text: str) -> list[Placed]:
    """Tokens with a position that counts words and (as :data:`SEPARATOR_WORDS`) separators, and
    their keys (found once per sentence: every claim fact looks for its anchors among them)."""
    out, pos, last = [], 0, 0
    for a, b, tok in tokens_of(text):
        pos += 1 + SEPARATOR_WORDS * len(_SEPARATORS.findall(text[last:a]))
        out.append((a, b, tok, pos, _anchor_key(tok, frozenset())))
        last = b
    return out


def _anchor_scores(anchors: frozenset[str], toks: Sequence[Placed], candidates: Sequence[Fact]) -> list[float]:
    """For each candidate fact, the claim's anchor words that sit nearer to it than to the other
    candidates, each counting 1/distance in words (a word equally near two shares its weight);
    ``toks``: the sentence's :func:`_positions`."""
    spans = []
    for f in candidates:
        inside = [p for a, b, _, p, _ in toks if a < f.end and f.start < b]
        spans.append((min(inside), max(inside)) if inside else (0, 0))
    scores = [0.0] * len(candidates)
    for a, b, tok, p, key in toks:
        if not (tok in anchors or key & anchors) or any(f.start < b and a < f.end for f in candidates):
            continue
        dist = [lo - p if p < lo else p - hi if p > hi else 0 for lo, hi in spans]
        if min(dist) > ANCHOR_WORDS + SEPARATOR_WORDS:
            continue
        nearest = [i for i, d in enumerate(dist) if d == min(dist)]
        for i in nearest:
            scores[i] += 1.0 / (len(nearest) * max(1, min(dist)))
    return scores
