"""The scorer's fit (python -m citeqa.fitting.scorer): bands, headline level, abstention ceiling, trace cache, provenance."""

from __future__ import annotations

import pickle
from pathlib import Path

import numpy as np

from citeqa.fitting.scorer import cached_collect, load_questions, provenance, without_cache
from citeqa.fitting.scorer_fit import Outcome, Question, abstention_ceiling, headline_level, outcome_bands
from citeqa.qa.scoring import BAND_NAMES, fit_bands


def test_fits_bands_on_the_answers_given_and_high_starts_at_the_headline_level() -> None:
    rng = np.random.default_rng(3)
    conf = rng.random(300)
    right = rng.random(300) < conf
    outcomes = [Outcome(None, bool(r), False, False, float(c)) for c, r in zip(conf, right)]
    outcomes += [Outcome(None, False, False, True, 0.95)] * 50  # abstentions are no answers
    bands = outcome_bands(outcomes)
    assert bands == fit_bands(conf, right) and [b.name for b in bands] == list(BAND_NAMES)
    assert bands[0].above == headline_level(outcomes) < 1.0
    assert sum(b.support for b in bands) == 300
    assert "fit_bands" in provenance([("qa.jsonl", "index")], "m", 5, {}, None)["bands"]


def test_keeps_traces_in_its_cache_and_collects_again_for_another_key(tmp_path: Path) -> None:
    made: list[str] = []

    def make(tag: str):
        return lambda: made.append(tag) or [tag]

    assert cached_collect(tmp_path, "set-a", make("a")) == ["a"]
    assert cached_collect(tmp_path, "set-a", make("a again")) == ["a"]  # from the cache
    assert cached_collect(tmp_path, "set-b", make("b")) == ["b"]
    assert cached_collect(None, "set-a", make("no cache")) == ["no cache"]
    assert made == ["a", "b", "no cache"]


def test_records_the_command_it_ran_without_its_cache() -> None:
    argv = ["--set", "eval/qa.jsonl=index", "--cache", "out/fit/cache", "--reader", "--candidates", "reader", "--write"]
    command = without_cache(argv)
    assert command == ["--set", "eval/qa.jsonl=index", "--reader", "--candidates", "reader", "--write"]
    block = provenance([("eval/qa.jsonl", "index")], "m", 5, {}, None, True, command=command)
    assert (
        block["by"] == "python -m citeqa.fitting.scorer --set eval/qa.jsonl=index --reader --candidates reader --write"
    )
    counted = provenance([("eval/qa.jsonl", "index")], "m", 5, {}, None, counts={"questions": 3, "spans": 40})
    assert (counted["questions"], counted["spans"], counted["data"]) == (3, 40, ["eval/qa.jsonl"])
    assert counted["date"] and counted["by"].endswith("--set eval/qa.jsonl=index --write")


def test_reads_a_trace_cache_written_when_the_fit_was_a_script(tmp_path: Path) -> None:
    """eval/fit_scorer.py, run as a script, pickled its questions as ``__main__.Question``."""
    flags = np.array([True, False])
    kept = [Question("eval/qa.jsonl", None, None, flags, flags, ~flags)]  # type: ignore[arg-type]
    old = pickle.dumps(kept, protocol=0).replace(b"citeqa.fitting.scorer_fit\nQuestion", b"__main__\nQuestion")
    assert b"__main__" in old
    (tmp_path / "a.pkl").write_bytes(old)
    back = load_questions(tmp_path / "a.pkl")
    assert isinstance(back[0], Question) and back[0].set_name == "eval/qa.jsonl"
    assert np.array_equal(back[0].cited, ~flags)


def test_abstention_ceiling_is_the_roc_point_at_a_false_abstention_share() -> None:
    answerable = [0.1, 0.2, 0.5, 0.6, 0.7, 0.8, 0.9, 0.9, 0.95, 0.99]
    unanswerable = [0.05, 0.15, 0.3, 0.55, 0.9]
    assert abstention_ceiling(answerable, unanswerable, 0.0) == 0.2  # below 0.1: only 0.05
    assert abstention_ceiling(answerable, unanswerable, 0.1) == 0.4  # one answerable may fall: below 0.2
    assert abstention_ceiling(answerable, unanswerable, 0.35) == 0.8  # three may fall: below 0.6
    assert abstention_ceiling(answerable, unanswerable, 1.0) == 1.0
