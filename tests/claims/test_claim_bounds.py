"""What one claim check may cost (qa/bounds.py, claims/reading.py): the worst legal claim reads a
bounded number of values in a bounded number of windows, says which values it did not read, asks
each value it reads with the words around it, and takes its turns at the models as one question."""

from __future__ import annotations

from citeqa.claims.check import ClaimCheck
from citeqa.claims.parts import analyse_claim, fact_anchors, match_fact, match_facts
from citeqa.claims.questions import claim_values, slot_question, split_values, value_question
from citeqa.claims.reading import read_claim
from citeqa.claims.rule import ReadingRule
from citeqa.embedding.protocol import count_pieces
from citeqa.qa.bounds import RequestBounds
from citeqa.reader.reader import ReaderResult, Reading, placed
from citeqa.records import Chunk, Hit
from citeqa.text.facts import find_facts
from tests.fakes import CountingSession

FARO = (
    "El faro de Punta Brava se construyó en 1887, mide 42 metros, su luz alcanza 24 millas náuticas, "
    "Marta Ruiz vivió en el faro hasta 1994, la entrada cuesta 6 euros, lo visitan 30.000 personas"
)


def worst_claim(chars: int = 2000) -> str:
    """A legal claim as costly as the schema allows: one sentence of ``chars`` characters at most
    that lists dozens of values and names ("el molino Greyhill-7 mide 17 metros, ...")."""
    parts = [FARO]
    n = 1
    while True:
        part = f"el molino Greyhill-{n} mide {n + 10} metros"
        if len(", ".join([*parts, part])) + 1 > chars:
            return ", ".join(parts) + "."
        parts.append(part)
        n += 1


WORST = worst_claim()


class RecordingReader:
    """A reader that reads nothing and records each question with the windows it was allowed."""

    def __init__(self) -> None:
        self.asked: list[tuple[str, int | None]] = []
        self.turns: list = []

    def warm_up(self) -> None:
        return None

    def run(self, question, passages, top=10, max_windows=None, turn=None) -> ReaderResult:
        self.asked.append((question, max_windows))
        self.turns.append(turn)
        if turn is not None:  # one model call of 100 tokens, in its turn
            with turn(100):
                pass
        return placed(question, Reading((), tuple(0.0 for _ in passages)), passages)


def test_the_worst_legal_claim_states_dozens_of_values_within_the_schema() -> None:
    assert len(WORST) <= 2000
    assert len(claim_values(analyse_claim(WORST, "es"))) > 40


def test_the_worst_legal_claim_reads_a_bounded_number_of_values_and_windows(
    built_index, embedder, reader_parts
) -> None:
    """The real reader (its model replaced by a counter) over the engine: the claim's first values
    are read, in at most one question's windows together; the others are named in the record."""
    from citeqa.engine import Engine
    from citeqa.reader.reader import Reader

    reader = Reader()
    reader._tok, reader._embed = reader_parts
    reader._session = session = CountingSession()
    engine = Engine.open(built_index, embedder=embedder).adjusted(reader=reader)  # type: ignore[arg-type]
    bounds = engine.settings.bounds
    check = engine.check(WORST, k=10)
    values = [v.text for v in claim_values(analyse_claim(check.claim, check.language))]
    assert len(check.readings) == bounds.claim_values
    assert [r.claim_value for r in check.readings] == values[: bounds.claim_values]
    assert 0 < sum(session.runs) <= bounds.claim_windows
    assert check.unread == tuple(values[bounds.claim_values :]) and len(check.unread) > 40
    assert ClaimCheck.from_dict(check.to_dict()) == check
    normal = engine.check("El faro de Punta Brava se construyó en 1887.", k=3)
    assert normal.unread == () and len(normal.readings) == 1


def test_without_bounds_every_value_is_a_reader_question() -> None:
    """What the bounds take away: read_claim without them asks one question per value (each in as
    many windows as it has); with them, the first values, in the claim's share of windows."""
    parts = analyse_claim(WORST, "es")
    chunk = Chunk.make("faro.txt", 0, len(FARO), FARO, "es")
    unbounded, bounded = RecordingReader(), RecordingReader()
    read_claim(unbounded, parts, [Hit(chunk, 1.0)], ReadingRule())  # type: ignore[arg-type]
    bounds = RequestBounds()
    read_claim(bounded, parts, [Hit(chunk, 1.0)], ReadingRule(), bounds=bounds, count=count_pieces)  # type: ignore[arg-type]
    assert len(unbounded.asked) == len(claim_values(parts)) > 40
    assert all(windows is None for _, windows in unbounded.asked)
    assert len(bounded.asked) == bounds.claim_values
    assert sum(windows or 0 for _, windows in bounded.asked) <= bounds.claim_windows


def test_a_value_of_a_long_claim_is_asked_with_the_words_around_it() -> None:
    """The reader keeps a question's first 64 tokens: a value late in a long claim is asked from
    the claim's words around it, within the question's bound, its place kept."""
    parts = analyse_claim(WORST, "es")
    late = claim_values(parts)[40]
    question = value_question(parts, late, "replace", RequestBounds(), count_pieces)
    assert count_pieces(question) <= RequestBounds().question_tokens + 4  # the question word and marks
    before = WORST[: late.start].split()[-3:]
    assert " ".join(before) in question and late.text not in question
    whole = slot_question(WORST, late, "es")
    assert " ".join(before) not in " ".join(whole.split()[:64])  # what the reader read before


def test_a_normal_claim_is_read_as_before() -> None:
    """A claim within the bounds: the same questions, every value read, each in a question's windows."""
    bounds = RequestBounds()
    for claim, lang in [
        ("El faro de Punta Brava se construyó en 1887.", "es"),
        ("Las praderas pasaron de 2,3 a 3,1 kilómetros cuadrados entre 2019 y 2023.", "es"),
        ("The 960PR arrives in the first quarter of 2027.", "en"),
    ]:
        parts = analyse_claim(claim, lang)
        for fact in claim_values(parts):
            assert value_question(parts, fact, "replace", bounds, count_pieces) == slot_question(claim, fact, lang)
    one = analyse_claim("El faro de Punta Brava se construyó en 1887.", "es")
    assert split_values(one, bounds) == (claim_values(one), [])
    assert bounds.value_windows(1) == bounds.reader_windows
    assert bounds.value_windows(2) * 2 <= bounds.claim_windows


def test_the_judge_finds_each_facts_anchors_once_and_judges_as_before() -> None:
    """The claim's anchors are found when it is taken apart; matching with them is matching as before."""
    parts = analyse_claim(WORST, "es")
    assert parts.anchors == fact_anchors(parts) and len(parts.anchors) == len(parts.facts)
    sentence = "El molino Greyhill-3 mide 13 metros y el Greyhill-4 mide 15 metros desde 1887."
    facts = find_facts(sentence, "es")
    assert match_facts(parts, sentence, "es") == tuple(match_fact(parts, f, sentence, facts) for f in parts.facts)


def test_a_check_is_one_question_in_the_work_queue(built_index, embedder) -> None:
    """The claim's embedding and its reads wait in one ticket's turns, after the questions' calls
    (qa/work.py), its later reads with the tokens of the earlier ones counted."""
    from citeqa.engine import Engine

    reader = RecordingReader()
    engine = Engine.open(built_index, embedder=embedder).adjusted(reader=reader)  # type: ignore[arg-type]
    tickets = []
    made = engine.work.ticket

    def ticket(after_questions: bool = False):
        tickets.append(made(after_questions))
        return tickets[-1]

    engine.work.ticket = ticket  # type: ignore[method-assign]
    engine.check("El faro de Punta Brava se construyó en 1887 y mide 42 metros.", k=3)
    assert len(tickets) == 1 and tickets[0].after_questions and len(reader.asked) == 2
    embedded = tickets[0].spent - 2 * 100  # the claim's embedding, then its two reads
    assert 0 < embedded <= engine.settings.bounds.question_tokens
