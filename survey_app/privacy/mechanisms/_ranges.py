"""What the number mechanisms have in common: bounds, answers, how far one report moves a
mean, the cells of a mean, and a number's text of fixed width."""

from __future__ import annotations

from fractions import Fraction
from typing import TYPE_CHECKING

from ..rationals import parse_integer
from ..wire import NUMBER_WIDTH, Report
from ..words import Text
from .cells import ANSWERED, CellRule, TallyCell

if TYPE_CHECKING:  # NumPy only simulates: the real sampler never sees it
    import numpy as np
    import numpy.typing as npt

#: A mean's cells: n, and the sum and the sum of squares of the reports.
MEAN_CELLS = (
    ANSWERED,
    TallyCell("sum", CellRule.SUM),
    TallyCell("sum_squares", CellRule.SUM_SQUARES),
)


def check_range(low: object, high: object) -> tuple[int, int]:
    low, high = parse_integer(low, "min"), parse_integer(high, "max")
    if not low < high:
        raise ValueError(f"min must be below max, got min = {low}, max = {high}")
    return low, high


def answer(value: object, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ValueError(f"value must be an integer in [{low}, {high}], got {value!r}")
    return value


def integer_report(report: object) -> int:
    if isinstance(report, bool) or not isinstance(report, int):
        raise ValueError(f"report must be an integer, got {report!r}")
    return report


def mean_influence(report_range: tuple[int, int], scale: Fraction, n: int) -> Fraction:
    """How far one report moves a mean of n unbiased values offset + scale·report: from
    one end of the range to the other, scale·(high - low)/n."""
    if parse_integer(n, "n") < 1:
        raise ValueError(f"n must be at least 1, got {n}")
    low, high = report_range
    return scale * (high - low) / n


def number_text(report: Report | None) -> list[tuple[Text | str, bool]]:
    """A stored number as one text of fixed width (HTML does not show the padding)."""
    text = "" if report is None else str(report)
    return [(text.rjust(NUMBER_WIDTH), report is not None)]


def simulated_numbers(values: npt.ArrayLike, low: int, high: int) -> npt.NDArray[np.int64]:
    """Simulated true numbers as an integer array, refusing anything outside [low, high]."""
    import numpy as np  # here only: see the module's TYPE_CHECKING note

    numbers = np.asarray(values)
    if not np.issubdtype(numbers.dtype, np.integer) or ((numbers < low) | (numbers > high)).any():
        raise ValueError(f"values must be integers in [{low}, {high}]")
    return numbers.astype(np.int64)
