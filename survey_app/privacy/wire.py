"""How a report travels: posted by the form, stored as JSON, drawn by the browser's audit.

A *report* is what a mechanism made of an answer: a bool (yes/no), an option's index or an
integer, a tuple of bits (unary encoding), a sorted tuple of option indexes (a set of
options), or a pair (option index, 0 or 1): one option of a tick-all-that-apply question
and whether it is reported ticked. Each mechanism names its ``ReportFormat``; the format
says how the report is posted, parsed, stored and read back, so a new mechanism with a
known format needs no new code in the forms or the storage.

On the wire every answer to a question has the same length, so the size of a POST (which
TLS does not hide) says nothing about which answer it carries: yes/no as one character,
an option as its index zero-padded to the width of the largest, unary bits one character
each, a set of options as its indexes so padded and joined by commas (every set of one
question has the same size), a sampled option as its padded index, ":" and its bit, and
the numbers the browser sends as ``NUMBER_WIDTH`` = 17 characters (a leading "-" or "0",
then 16 digits: every honest report fits, since the widest report_range a survey file
allows, bounds at ±10^9 with Δ = 10^6 at ε = 0.01, reaches ±5,158,883,083). Duchi's bit
is fixed-width already.
"""

from __future__ import annotations

import enum

Report = bool | int | tuple[int, ...]
Stored = int | str | None

#: A posted yes and no.
YES, NO = "y", "n"
#: The characters of every number report the browser posts.
NUMBER_WIDTH = 17


class ReportFormat(enum.Enum):
    """The shape of one report on the wire and in storage."""

    #: "y" or "n"; stored as 1 or 0.
    YES_NO = enum.auto()
    #: An option's index, zero-padded to the width of the last.
    OPTION = enum.auto()
    #: One character 0 or 1 per option; stored as that text.
    BITS = enum.auto()
    #: A set of options: its indexes in increasing order, joined by commas (each
    #: zero-padded to the width of the last on the wire); stored as that text unpadded.
    SUBSET = enum.auto()
    #: One option j of a tick-all-that-apply question and a bit b, "j:b" (j zero-padded to
    #: the width of the last on the wire); stored as the integer 2j + b, so each of the 2k
    #: reports is a cell counted like a chosen option (``CellRule.EQUALS``).
    OPTION_BIT = enum.auto()
    #: A whole number padded to ``NUMBER_WIDTH`` characters by the browser.
    PADDED_NUMBER = enum.auto()
    #: A whole number as written.
    INTEGER = enum.auto()

    @property
    def marks_options(self) -> bool:
        """Whether a report is a set of marked options rather than one answer."""
        return self in (ReportFormat.BITS, ReportFormat.SUBSET)

    def parse(self, text: str) -> Report:
        """The report a validated posted value stands for."""
        if self is ReportFormat.YES_NO:
            return text == YES
        if self is ReportFormat.BITS:
            return tuple(int(bit) for bit in text)
        if self is ReportFormat.SUBSET:
            return _indexes(text)
        if self is ReportFormat.OPTION_BIT:
            return _option_bit(text)
        return int(text)

    def store(self, report: Report) -> int | str:
        """The JSON value kept for a report: 1/0, an index, an integer, bits as text, a
        set's indexes as text ("0,3,5"), or an option j and its bit b as 2j + b."""
        if self is ReportFormat.SUBSET:
            return ",".join(str(int(index)) for index in report)  # type: ignore[union-attr]
        if self is ReportFormat.OPTION_BIT:
            option, bit = report  # type: ignore[misc]
            return 2 * option + bit
        if isinstance(report, tuple):
            return "".join(str(bit) for bit in report)
        return int(report)

    def load(self, stored: int | str) -> Report:
        """The report a stored JSON value holds."""
        if self is ReportFormat.SUBSET:
            return _indexes(str(stored))
        if self is ReportFormat.OPTION_BIT:
            return divmod(int(stored), 2)
        if isinstance(stored, str):
            return tuple(int(bit) for bit in stored)
        if self is ReportFormat.YES_NO:
            return bool(stored)
        return int(stored)

    def counts_for(self, stored: int | str, option: int | None) -> bool:
        """Whether a stored report counts for a category: "yes" (``option`` None), or
        option ``option`` (that option chosen, its bit set, in the set, or reported
        ticked)."""
        report = self.load(stored)
        if self is ReportFormat.YES_NO:
            return bool(report)
        if self is ReportFormat.OPTION_BIT:
            return report == (option, 1)
        if self is ReportFormat.BITS:
            return bool(report[option or 0])  # type: ignore[index]
        if self is ReportFormat.SUBSET:
            return option in report  # type: ignore[operator]
        return report == option

    def audit_key(self, report: object) -> str:
        """A report as the browser's sampler writes it for the audit: "yes"/"no", a bit
        string, a set "0,3,5", an option and its bit "3:1", or an integer in decimal (a
        string already in that form passes as it is)."""
        if self is ReportFormat.YES_NO:
            return report if isinstance(report, str) else "yes" if report else "no"
        if self is ReportFormat.BITS:
            if isinstance(report, str):
                return report
            return "".join("1" if bit else "0" for bit in report)  # type: ignore[attr-defined]
        if self is ReportFormat.SUBSET:
            if isinstance(report, str):
                return report
            return ",".join(str(int(index)) for index in report)  # type: ignore[attr-defined]
        if self is ReportFormat.OPTION_BIT:
            if isinstance(report, str):
                return report
            return ":".join(str(int(part)) for part in report)  # type: ignore[attr-defined]
        return str(int(report))  # type: ignore[call-overload]

    def from_audit_key(self, key: str) -> Report:
        """The report ``probability`` expects, from the browser's writing of it."""
        if self is ReportFormat.YES_NO:
            return key == "yes"
        if self is ReportFormat.BITS:
            return tuple(int(bit) for bit in key)
        if self is ReportFormat.SUBSET:
            return _indexes(key)
        if self is ReportFormat.OPTION_BIT:
            return _option_bit(key)
        return int(key)

    def audit_value(self, value: object) -> object:
        """A true answer as the browser's sampler takes it: "yes"/"no", the options ticked
        as their bits ("01001", as the form posts them), else the number."""
        if self is ReportFormat.YES_NO:
            return "yes" if value else "no"
        if self is ReportFormat.OPTION_BIT:
            return "".join(str(int(bit)) for bit in value)  # type: ignore[attr-defined]
        return int(value)  # type: ignore[call-overload]


def _indexes(text: str) -> tuple[int, ...]:
    """A set's indexes from their text "0,3,5" (zero-padded or not); the mechanism checks
    their number, order and range."""
    return tuple(int(index) for index in text.split(","))


def _option_bit(text: str) -> tuple[int, ...]:
    """An option and its bit from "03:1" (zero-padded or not); the mechanism checks both."""
    return tuple(int(part) for part in text.split(":"))
