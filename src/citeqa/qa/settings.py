"""The settings that shape an answer: fitted per embedding model, changed only by name.

:meth:`AnswerSettings.for_model` reads them from the model's weights file
(``qa/weights/<model>.json``: retrieval fusion weights, the scorer); the knobs no fit sets
(passages searched, pool, language margins...) keep the values chosen by measurement (docs/evaluation.md, "Answer quality").
:meth:`AnswerSettings.with_overrides` changes any of them by name ("pool",
"retrieval.dense_weight"), and an unknown name is a :class:`~citeqa.errors.ConfigError`, as is an
unknown key in a weights file: a setting is never silently dropped, and there is no unfitted
default to fall back on. The claim thresholds, the file's other fitted block, are claims' own
(:mod:`citeqa.claims.thresholds`); :class:`citeqa.settings.Settings` holds both.
"""

from __future__ import annotations

import dataclasses
import enum
import typing
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from citeqa.errors import ConfigError
from citeqa.qa.bounds import RequestBounds
from citeqa.qa.retrieval import FITTED_RETRIEVAL, RetrievalSettings
from citeqa.qa.scoring import Band, ScoringModel, check_weights_keys, read_weights
from citeqa.qa.verifier import Verifier, load_verifier

#: Sources of the short answer (see :attr:`AnswerSettings.short_answers`).
ShortAnswerSource = Literal["reader", "rules", "rules-then-reader"]
#: What the answer is chosen among with the reader on (see :attr:`AnswerSettings.candidates`).
CandidateSource = Literal["reader", "sentences"]
#: Settings made of named parts, which overrides reach as ``"<part>.<name>"``.
_NESTED = ("retrieval", "bounds")


@dataclass(frozen=True, slots=True)
class AnswerSettings:
    """Everything that shapes an answer. Build it with :meth:`for_model` (the fitted values for the
    index's model), then :meth:`with_overrides`; the two fitted parts have no defaults."""

    retrieval: RetrievalSettings  #: the hybrid retriever, its fusion weights fitted for the model
    scoring: ScoringModel  #: the span ranker and its calibration, fitted for the model
    answer_passages: int = 3  #: passages searched for the answer, overall and in the question's language
    pool: int = 10  #: passages retrieved before choosing the answer and the citations
    language_margin: float = 0.05  #: a same-language answer wins unless this much less likely ...
    language_floor: float = 0.5  #: ... and always when at least this likely
    #: Where the short answer comes from: the reader's span in the chosen sentence (then the rules
    #: when it has none there), the hand-written rules alone, or the rules and then the reader's span
    #: when they find none. Chosen by measurement (docs/languages.md, "Short answers").
    short_answers: ShortAnswerSource = "rules-then-reader"
    #: Passages the reader reads: the best-ranked of those searched for the answer (each costs a
    #: window of up to 256 tokens). Reading 3 or 2 lost answers out of fold (docs/benchmarks.md).
    reader_passages: int = 4
    #: A cascade: read the best ``reader_first`` of those passages first, and the rest only when the
    #: best span found there is less likely than :attr:`reader_sure` against "no answer" (its
    #: window's no-answer odds). 0 (or ``reader_passages`` and more): read them all at once.
    reader_first: int = 0
    #: The cascade's threshold (see :attr:`reader_first`): a first reading this sure reads no further.
    reader_sure: float = 0.9
    #: Windows instead of whole passages: read only the ``reader_focus`` best-ranked candidate
    #: sentences of the passages read (ranked by the scorer before the reader's columns are known),
    #: each with :attr:`reader_context` words either side in its passage (windows that touch are
    #: merged). 0: read the passages whole.
    reader_focus: int = 0
    #: Words read either side of a focus sentence (see :attr:`reader_focus`).
    reader_context: int = 40
    #: What ranks the sentences for :attr:`reader_focus`, before the reader has read: the scorer
    #: fitted without the reader (None: :attr:`scoring`, which is that one with the reader off).
    #: Not the reader's own scorer with its reader columns blank: that one kept a gold answer in
    #: 3 windows of ±30 words for 0.817 of the answerable dev questions, this one for 0.903.
    focus_ranker: ScoringModel | None = None
    #: With the reader on, the answer candidates: the reader's spans, each with the sentence that
    #: holds it (the span is the short answer), or every sentence of the passages searched.
    candidates: CandidateSource = "sentences"
    #: The reader's best spans kept over the passages it reads (the candidates, with ``candidates="reader"``).
    reader_spans: int = 10
    #: What one question may bring to the models (question and history tokens, reader windows).
    bounds: RequestBounds = RequestBounds()
    #: With the reader: the second judgement of the chosen span, whose probability is the answer's
    #: confidence, with its own abstention level and bands (None: the scorer's confidence).
    verifier: Verifier | None = None

    @classmethod
    def for_model(cls, model: str, reader: bool = False, weights: Mapping[str, Any] | None = None) -> AnswerSettings:
        """The settings fitted for ``model``'s vectors: retrieval fusion weights from ``<model>.json``
        (``weights``, when the caller has read it already), the scorer from it or, with the
        ``reader``, from ``<model>+reader.json``. A key the code does not know, in either file, is a
        :class:`ConfigError`."""
        data = weights if weights is not None else read_weights(model)
        check_weights_keys(data, model)
        fusion = data.get("retrieval", {})
        unknown = sorted(set(fusion) - FITTED_RETRIEVAL)
        if unknown:
            raise ConfigError(
                f"weights for {model}: no such retrieval setting {', '.join(unknown)} "
                f"(known: {', '.join(sorted(FITTED_RETRIEVAL))}); refit with python -m citeqa.fitting.scorer --write"
            )
        fused: dict[str, Any] = {k: float(v) for k, v in fusion.items()}  # FITTED_RETRIEVAL: float fields
        retrieval = RetrievalSettings(**fused)
        scorer = read_weights(model, reader=True) if reader else data
        if reader:
            check_weights_keys(scorer, f"{model} with the reader")
        scoring = ScoringModel.from_dict(scorer)
        candidates = scoring.fitted.get("candidates", "sentences")  # what the scorer was fitted to choose among
        focus = ScoringModel.from_dict(data) if reader else None  # ranks the sentences before the reader reads
        verifier = load_verifier() if reader else None
        fitted = cls(retrieval, scoring, candidates=candidates, focus_ranker=focus, verifier=verifier)
        return fitted.with_overrides(reading_settings(scoring.fitted)) if reader else fitted

    def with_overrides(self, overrides: Mapping[str, Any] | None = None, **named: Any) -> AnswerSettings:
        """A copy with the named settings changed: a field of these settings ("pool",
        "short_answers", or a whole "retrieval"), or a field of one of its parts
        ("retrieval.dense_weight", "bounds.question_tokens"). An unknown name, or a value of the
        wrong kind, is a :class:`ConfigError` that names the known ones."""
        changes = {**(overrides or {}), **named}
        top: dict[str, Any] = {}
        parts: dict[str, dict[str, Any]] = {}
        for name, value in changes.items():
            head, _, tail = name.partition(".")
            if tail and head in _NESTED:
                parts.setdefault(head, {})[tail] = checked_setting(type(getattr(self, head)), tail, value, head)
            elif not tail:
                top[head] = checked_setting(AnswerSettings, head, value, "")
            else:
                raise ConfigError(f"no such setting {name!r}; {setting_names_help()}")
        for head, fields in parts.items():
            top[head] = dataclasses.replace(top.get(head, getattr(self, head)), **fields)
        return dataclasses.replace(self, **top)

    @property
    def abstain_below(self) -> float:
        """Below this confidence the answer is "not found" (fitted with the verifier, else the scorer)."""
        return self.verifier.abstain_below if self.verifier is not None else self.scoring.abstain_below

    def answer_bands(self) -> tuple[Band, ...]:
        """The bands answers are named by: the verifier's, else the scorer's."""
        return self.verifier.bands if self.verifier is not None else self.scoring.answer_bands()


#: How the reader reads, as a scorer fitted with the reader records it: the scorer's features
#: (and so its weights and calibration) depend on what was read.
READING_SETTINGS = ("reader_passages", "reader_first", "reader_sure", "reader_focus", "reader_context")


def reading_settings(fitted: Mapping[str, Any]) -> dict[str, Any]:
    """The reading settings a scorer was fitted with (its ``fitted["reading"]``); an unknown
    name is a :class:`ConfigError`."""
    reading = dict(fitted.get("reading", {}))
    unknown = sorted(set(reading) - set(READING_SETTINGS))
    if unknown:
        raise ConfigError(
            f"the scorer was fitted with unknown reading settings {', '.join(unknown)} "
            f"(known: {', '.join(READING_SETTINGS)}); refit with python -m citeqa.fitting.scorer --write"
        )
    return reading


def setting_names() -> tuple[str, ...]:
    """Every name :meth:`AnswerSettings.with_overrides` accepts."""
    names = [f.name for f in dataclasses.fields(AnswerSettings)]
    hints = typing.get_type_hints(AnswerSettings)
    for part in _NESTED:
        names += [f"{part}.{f.name}" for f in dataclasses.fields(hints[part])]
    return tuple(names)


def setting_names_help() -> str:
    return f"known settings: {', '.join(setting_names())}"


def checked_setting(cls: type, name: str, value: Any, part: str) -> Any:
    """``value`` for the field ``name`` of ``cls``, converted where JSON would give another type
    (an int for a float, a string for an enum); ConfigError for an unknown name or a wrong kind."""
    hints = typing.get_type_hints(cls)
    full = f"{part}.{name}" if part else name
    if name not in hints or name not in {f.name for f in dataclasses.fields(cls)}:
        raise ConfigError(f"no such setting {full!r}; {setting_names_help()}")
    tp = hints[name]
    if typing.get_origin(tp) is Literal:
        if value not in typing.get_args(tp):
            raise ConfigError(f"setting {full!r} is one of {', '.join(map(repr, typing.get_args(tp)))}, not {value!r}")
        return value
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        try:
            return tp(value)
        except ValueError:
            raise ConfigError(f"setting {full!r} is one of {', '.join(repr(m.value) for m in tp)}") from None
    if tp is float and isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    if isinstance(tp, type) and isinstance(value, tp) and not (tp is int and isinstance(value, bool)):
        return value
    raise ConfigError(f"setting {full!r} takes a {getattr(tp, '__name__', tp)}, not {value!r}")
