"""The question deadline a remote backend reads (citeqa.qa.backend): set per question, nested, per thread."""

from __future__ import annotations

import contextvars
import threading

from citeqa.qa.backend import current_deadline, question_deadline


def test_no_deadline_outside_a_question_or_without_a_limit():
    assert current_deadline() is None
    with question_deadline(None):
        assert current_deadline() is None


def test_a_deadline_counts_down_and_ends_with_its_question():
    with question_deadline(60):
        deadline = current_deadline()
        assert deadline is not None and deadline.seconds == 60 and 0 < deadline.left() <= 60
    assert current_deadline() is None


def test_the_earlier_of_nested_deadlines_ends_the_question():
    with question_deadline(5):
        with question_deadline(600):
            assert current_deadline().seconds == 5  # type: ignore[union-attr]
        with question_deadline(0.5):
            assert current_deadline().seconds == 0.5  # type: ignore[union-attr]
        assert current_deadline().seconds == 5  # type: ignore[union-attr]


def test_an_expired_deadline_leaves_nothing():
    with question_deadline(0):
        deadline = current_deadline()
        assert deadline is not None and deadline.left() <= 0


def test_a_thread_run_in_a_copy_of_the_context_sees_the_deadline():
    """As a backend's fan-out threads run (citeqa.pg.shards.Shards.each)."""
    seen: list[object] = []
    with question_deadline(60):
        thread = threading.Thread(
            target=contextvars.copy_context().run, args=(lambda: seen.append(current_deadline()),)
        )
        thread.start()
        thread.join()
    assert len(seen) == 1 and seen[0] is not None and seen[0].seconds == 60  # type: ignore[attr-defined]
