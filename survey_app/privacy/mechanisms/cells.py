"""Tally cells: the running counts and sums a mechanism's reports are estimated from.

Each mechanism lists its cells (``tally_cells``); a cell says what it adds up over a
question's stored reports, so storage can keep it running on every response and rebuild
it from the responses without knowing any mechanism.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass


class CellRule(enum.Enum):
    """What one cell adds for one stored report."""

    #: 1: the cell counts answered responses (skips excluded).
    COUNT = enum.auto()
    #: The stored number itself (1 or 0 for a yes/no report).
    SUM = enum.auto()
    #: The stored number's square, for a mean's variance.
    SUM_SQUARES = enum.auto()
    #: 1 where the stored number is ``index`` (the chosen option).
    EQUALS = enum.auto()
    #: 1 where character ``index`` of the stored bits is "1".
    BIT = enum.auto()
    #: 1 where option ``index`` is in the stored set ("0,3,5": ``ReportFormat.SUBSET``).
    MEMBER = enum.auto()


@dataclass(frozen=True)
class TallyCell:
    """A named cell of one question and what it adds up."""

    name: str
    rule: CellRule
    index: int = 0

    @property
    def counts_matches(self) -> bool:
        """Whether the cell only counts reports that match it (an option, a bit): those
        are written only when they add 1, the others on every answered response."""
        return self.rule in (CellRule.EQUALS, CellRule.BIT, CellRule.MEMBER)

    def amount(self, stored: int | str) -> int:
        """What one stored report adds to this cell."""
        if self.rule is CellRule.COUNT:
            return 1
        if self.rule is CellRule.BIT:
            return int(str(stored)[self.index] == "1")
        if self.rule is CellRule.MEMBER:
            return int(str(self.index) in str(stored).split(","))
        number = int(stored)
        if self.rule is CellRule.SUM:
            return number
        if self.rule is CellRule.SUM_SQUARES:
            return number * number
        return int(number == self.index)


#: Every mechanism's first cell: how many answered the question.
ANSWERED = TallyCell("n", CellRule.COUNT)
