"""Rows <-> (shard, pid) from one run per document (citeqa.pg.rows): no map per passage."""

from __future__ import annotations

import numpy as np
import pytest

from citeqa.pg.rows import RowMap


def test_rows_and_pids_round_trip_through_the_runs_of_each_document():
    # four documents in manifest order: 3 passages on shard 1 from pid 10, 2 on shard 0 from pid 1,
    # none (an empty document), 4 on shard 1 from pid 20
    where = RowMap(np.array([3, 2, 0, 4]), np.array([1, 0, 0, 1]), np.array([10, 1, 0, 20]), 2)
    assert len(where) == 9
    shards, pids = where.locate(range(9))
    assert shards.tolist() == [1, 1, 1, 0, 0, 1, 1, 1, 1]
    assert pids.tolist() == [10, 11, 12, 1, 2, 20, 21, 22, 23]
    assert where.rows(1, [23, 10, 12]).tolist() == [8, 0, 2]
    assert where.rows(0, [2, 1]).tolist() == [4, 3]
    assert where.rows(0, []).tolist() == []
    for shard, pid in ((1, 13), (1, 9), (0, 0), (0, 3)):  # outside every run of the generation
        with pytest.raises(KeyError):
            where.rows(shard, [pid])
