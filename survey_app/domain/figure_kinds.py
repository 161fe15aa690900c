"""The kinds of figure a survey can publish under the central budget.

A figure's id starts with its kind (``histogram:year``, ``groups:cheated:year``), and the
stored releases and snapshots keep these exact strings: members are ``StrEnum``s, so the
ids, the JSON and the pages are the bytes they always were. Code asks a kind what it is
(how many question keys its id names, whether it is free) rather than comparing names.
"""

from __future__ import annotations

import enum


class FigureKind(enum.StrEnum):
    """What a published figure shows."""

    #: Every sensitive question's estimates, from noisy counts.
    ESTIMATES = "estimates"
    #: The same from exact counts: free, and outside the central guarantee.
    EXACT_ESTIMATES = "exact-estimates"
    #: A plain choice question's noisy counts.
    HISTOGRAM = "histogram"
    #: A sensitive yes/no question by the options of a plain choice covariate.
    GROUPS = "groups"
    #: A plain choice question's most common answer, by Report Noisy Max.
    MODE = "mode"

    @property
    def key_count(self) -> int:
        """How many question keys an id of this kind names after the kind."""
        return _KEY_COUNTS[self]

    @property
    def free(self) -> bool:
        """Computed from exact counts, costing no ε and outside the central guarantee."""
        return self is FigureKind.EXACT_ESTIMATES

    @property
    def is_estimates(self) -> bool:
        """Every sensitive question's estimates, from noisy or from exact counts."""
        return self in (FigureKind.ESTIMATES, FigureKind.EXACT_ESTIMATES)

    @property
    def of_a_plain_choice(self) -> bool:
        """About one plain choice question's answers (its counts or its mode)."""
        return self in (FigureKind.HISTOGRAM, FigureKind.MODE)

    @property
    def only_the_winner(self) -> bool:
        """Shows only a plain choice question's most common answer, never a count."""
        return self is FigureKind.MODE

    @property
    def by_groups(self) -> bool:
        """A sensitive question by the groups of a plain covariate."""
        return self is FigureKind.GROUPS

    @property
    def preselected(self) -> bool:
        """Ticked before the owner chooses, and published by ``survey-app publish``
        without ``--figure``."""
        return self in (FigureKind.ESTIMATES, FigureKind.HISTOGRAM)


_KEY_COUNTS = {
    FigureKind.ESTIMATES: 0,
    FigureKind.EXACT_ESTIMATES: 0,
    FigureKind.HISTOGRAM: 1,
    FigureKind.GROUPS: 2,
    FigureKind.MODE: 1,
}
