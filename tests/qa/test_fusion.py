import pytest

from citeqa.qa.fusion import FusionMode, fuse, minmax, reciprocal_rank, weighted_scores


def test_minmax_guards_empty_and_flat_lists():
    assert minmax({}) == {}
    assert minmax({1: 0.3, 2: 0.3}) == {1: 1.0, 2: 1.0}
    assert minmax({1: 1.0, 2: 3.0}) == {1: 0.0, 2: 1.0}


def test_reciprocal_rank_by_hand():
    fused = reciprocal_rank([[1, 2], [2, 3]], [1.0, 1.0], k=60)
    assert fused[2] == pytest.approx(1 / 62 + 1 / 61)
    assert fused[1] == pytest.approx(1 / 61) and fused[3] == pytest.approx(1 / 62)


def test_weighted_scores_missing_ids_score_zero():
    fused = weighted_scores([{1: 0.9, 2: 0.1}, {2: 5.0}], [0.5, 0.5])
    assert fused == {1: pytest.approx(0.5), 2: pytest.approx(0.5)}


@pytest.mark.parametrize("mode", list(FusionMode))
def test_fuse_orders_best_first_and_handles_empty(mode: FusionMode):
    assert fuse([{}, {}], [0.5, 0.5], mode) == []
    ranked = fuse([{1: 0.9, 2: 0.5}, {1: 3.0, 2: 1.0}], [0.5, 0.5], mode)
    assert [key for key, _ in ranked] == [1, 2]
