"""The quality targets of the README's metrics table, as data: the Evaluate tab's headline cards
show a run's overall value of each against its target."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Target:
    """A metric (a :class:`~citeqa.evaluation.metrics.Scores` field) and its bound: at least
    ``bound``, or at most when ``at_most``."""

    metric: str
    bound: float
    at_most: bool = False

    def met(self, value: float | None) -> bool | None:
        """Whether ``value`` meets the target; None when there is no value (no such questions)."""
        if value is None:
            return None
        return value <= self.bound if self.at_most else value >= self.bound


#: The targets of the README's metrics table, in its order.
TARGETS: tuple[Target, ...] = (
    Target("hit1", 0.90),
    Target("accuracy", 0.80),
    Target("short_accuracy", 0.70),
    Target("abstain_recall", 0.75),
    Target("false_abstention", 0.05, at_most=True),
    Target("lang_first", 0.98),
)
