"""bench/load.py's pure helpers: record comparison, client offsets, phase summaries (no server)."""

import sys

import pytest

from tests.paths import REPO

sys.path.insert(0, str(REPO / "bench"))

from load import Phase, Sample, comparable, start_offsets, summarize


def test_comparable_drops_only_the_timing():
    a = {"answer": "Año", "latency_ms": 12.5, "citations": [{"start": 1, "end": (2, 3)}]}
    b = {"answer": "Año", "latency_ms": 99.0, "citations": [{"start": 1, "end": [2, 3]}]}
    assert comparable(a) == comparable(b) == {"answer": "Año", "citations": [{"start": 1, "end": [2, 3]}]}
    assert comparable({"answer": "x", "latency_ms": 1}) != comparable({"answer": "y", "latency_ms": 1})
    assert a["latency_ms"] == 12.5  # the caller's record is left alone
    assert comparable({"error": "empty"}) == {"error": "empty"}


@pytest.mark.parametrize("clients,questions", [(1, 30), (8, 30), (3, 30), (30, 30), (40, 30)])
def test_start_offsets_spread_clients_over_the_questions(clients, questions):
    offsets = start_offsets(clients, questions)
    assert len(offsets) == clients and offsets[0] == 0
    assert offsets == sorted(offsets) and all(0 <= o < questions for o in offsets)
    assert len(set(offsets)) == min(clients, questions)


def test_start_offsets_mix_languages_for_eight_clients():
    langs = ["es"] * 10 + ["pt"] * 10 + ["en"] * 10  # the order of bench/questions.json
    assert {langs[o] for o in start_offsets(8, 30)} == {"es", "pt", "en"}


def test_summarize_counts_errors_mismatches_and_percentiles():
    phase = Phase("load", clients=2, wall_s=2.0)
    phase.samples = [Sample(0, i, 0.1 * (i + 1), True, True, server_ms=10.0) for i in range(10)]
    phase.samples += [
        Sample(1, 0, 5.0, False, None, error="TimeoutError: "),
        Sample(1, 1, 0.2, True, False, server_ms=20.0),
    ]
    out = summarize(phase)
    assert out["requests"] == 12 and out["answers"] == 11 and out["errors"] == 1
    assert out["throughput_per_s"] == pytest.approx(5.5)
    lat = out["latency_ms"]
    assert lat["n"] == 11 and lat["max"] == pytest.approx(1000)  # the failed call is not a latency
    assert lat["p50"] == pytest.approx(500) and 900 <= lat["p95"] <= 1000
    assert out["mismatches"] == 1 and out["compared"] == 11 and out["identical_to_serial"] is False
    assert out["requests_per_client"] == [10, 2]
    assert out["error_examples"] == ["TimeoutError: "]


def test_summarize_identical_only_when_every_answer_was_compared():
    phase = Phase("load", clients=1, wall_s=1.0)
    phase.samples = [Sample(0, 0, 0.1, True, True), Sample(0, 1, 0.1, True, True)]
    assert summarize(phase)["identical_to_serial"] is True
    phase.samples.append(Sample(0, 2, 0.1, True, None))
    assert summarize(phase)["identical_to_serial"] is False
    phase.client_errors.append("client 0: ConnectionError")
    assert summarize(phase)["errors"] == 1
    assert summarize(Phase("empty", 1))["identical_to_serial"] is False
    assert summarize(Phase("empty", 1))["throughput_per_s"] is None
