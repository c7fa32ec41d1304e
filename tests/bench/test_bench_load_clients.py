"""bench/load_clients.py's pure helpers (the load run itself needs the real model; see the script)."""

import sys

import pytest

from tests.paths import REPO

sys.path.insert(0, str(REPO / "bench"))

from load import Phase, Sample, summarize
from load_clients import parse_counts, row


def test_parse_counts():
    assert parse_counts("8,16,32") == [8, 16, 32] and parse_counts("4") == [4]
    for bad in ("", "0", "8,-1", "x"):
        with pytest.raises(ValueError):
            parse_counts(bad)


def test_row_shows_errors_and_differing_answers():
    phase = Phase("load-2", clients=2, wall_s=2.0)
    phase.samples = [Sample(0, 0, 0.2, True, True), Sample(1, 1, 0.4, True, False), Sample(1, 2, 9.0, False, None)]
    cells = row("2", summarize(phase), 512.4).split()
    assert cells == ["2", "3", "1.00", "300", "390", "400", "1", "1", "512"]
