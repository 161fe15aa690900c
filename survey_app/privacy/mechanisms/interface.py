"""What every mechanism offers, so the rest of the app asks it instead of naming it.

A mechanism module holds everything about one mechanism: its exact parameters and ε, its
sampler and its exact report distribution (for the audit), what the estimators need, the
reports an honest device sends, the tally cells, the export's columns and encoding, and
its words for respondents and researchers. The forms, the storage, the exports, the
ledger, the audit and the pages reach it only through ``Mechanism``; a new mechanism is
one new module and one line in the registry (``mechanisms/__init__.py``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from ..coins import RandomSource
from ..question_types import AnswerSpace, QuestionType
from ..wire import Report, ReportFormat
from ..words import Text
from .cells import TallyCell
from .central_counting import CentralCounting

if TYPE_CHECKING:  # NumPy only simulates: the real sampler never sees it
    import numpy as np
    import numpy.typing as npt


class Mechanism(Protocol):
    """A mechanism: one class per module of ``survey_app.privacy.mechanisms``.

    Identity: ``name`` is stored with every question (several plain mechanisms share
    "none" and ``describes`` tells them apart); ``file_name`` is how a survey file asks
    for it (None: nothing to ask, as for yes/no and plain questions); ``question_type``
    the kind of answer it takes; ``browser_script`` its sampler for the browser, under
    ``survey_app/static/`` (None for a plain question: nothing to randomize).

    Privacy: ``probability(report, value)`` is the exact chance of ``report`` given the
    true ``value`` (a Fraction; discrete Laplace's pmf is a float), for the audit and the
    tests; ``randomize`` draws a report with exact coins; ``simulate`` draws many with
    NumPy, for simulations only. ``parameters()`` and ``from_parameters`` go to and from
    the stored JSON.

    The client: ``report_range()``: the least and greatest report (each bit, for unary
    encoding) an honest device sends, except with probability below 2^-60; the server
    refuses the rest. ``report_influence(n)``: the most one report in that range moves the
    question's unbiased estimate among n reports, exactly (DESIGN.md, "Forged reports").
    ``report_format`` is how a report is posted, stored and written by the browser;
    ``check_report`` refuses what the format's field lets through but no honest device
    sends (a set of options of the wrong size, repeated or out of order).

    ``auto_score``: what ``auto`` minimizes among the mechanisms of one question type (the
    variance that matters for that type's estimates; ties go to the earlier one in the
    registry).

    ``central_counting()``: how a public page's release counts its reports before adding
    noise (``privacy.central``); None for a plain question, whose answers a page shows
    only as a histogram.
    """

    name: ClassVar[str]
    file_name: ClassVar[str | None]
    question_type: ClassVar[QuestionType]
    randomized: ClassVar[bool]
    browser_script: ClassVar[str | None]
    report_format: ClassVar[ReportFormat]
    respondent_name: ClassVar[Text]
    researcher_name: ClassVar[Text]
    builder_label: ClassVar[Text | None]

    @classmethod
    def from_parameters(cls, parameters: Mapping[str, object]) -> Mechanism: ...

    @classmethod
    def describes(cls, parameters: Mapping[str, object]) -> bool: ...

    @classmethod
    def for_answers(cls, space: AnswerSpace, epsilon: Fraction | None) -> Mechanism: ...

    @property
    def epsilon(self) -> float: ...

    @property
    def auto_score(self) -> float: ...

    def parameters(self) -> dict[str, object]: ...

    def randomize(self, value: Any, source: RandomSource = ...) -> Any: ...

    def simulate(self, values: npt.ArrayLike, rng: np.random.Generator) -> npt.NDArray[Any]: ...

    def probability(self, report: Any, value: Any) -> Fraction | float: ...

    def finite_support(self) -> tuple[str, ...] | None: ...

    def report_range(self) -> tuple[int, int]: ...

    def report_influence(self, n: int) -> Fraction: ...

    def check_report(self, report: Report) -> None: ...

    def tally_cells(self) -> tuple[TallyCell, ...]: ...

    def central_counting(self) -> CentralCounting | None: ...

    def export_columns(self, key: str) -> list[str]: ...

    def export_cells(self, stored: int | str, options: Sequence[str]) -> list[object]: ...

    def export_encoding(self, key: str, options: Sequence[str]) -> str: ...

    def r_rr_design(self, key: str) -> dict[str, Any] | None: ...

    def storage_problem(self, largest: int) -> str | None: ...

    def description(self) -> Text: ...

    def report_texts(
        self, report: Report | None, options: Sequence[str]
    ) -> list[tuple[Text | str, bool]]: ...


class ProportionMechanism(Mechanism, Protocol):
    """A mechanism whose report count per category is Binomial(n, p_false + (p_true - p_false)π).

    ``exact_rates``: (p_true, p_false) as the exact rationals the coins use.
    ``small_share_variance``: one report's variance of the unbiased share estimate at π = 0.
    """

    @property
    def p_true(self) -> float: ...

    @property
    def p_false(self) -> float: ...

    @property
    def exact_rates(self) -> tuple[Fraction, Fraction]: ...

    @property
    def small_share_variance(self) -> float: ...


class ScaleMechanism(ProportionMechanism, Protocol):
    """A choice's mechanism, as a rating scale uses it: also ``pair_rates``, (a, b), the
    exact chance that one report counts in two given categories at once, a when the true
    answer is one of the two, b when it is neither: with the shares, what the covariance of
    two categories' counts needs (``scale_means``)."""

    @property
    def pair_rates(self) -> tuple[Fraction, Fraction]: ...


class NumericMechanism(Mechanism, Protocol):
    """A mechanism for integers in [min, max] with value_offset + value_scale·report unbiased.

    ``worst_case_variance``: one unbiased report's largest variance over all answer
    distributions on [min, max] (for planning). ``worst_answer_variance``: its largest
    variance given one true answer, the mechanism's noise alone (for choosing).
    ``bit_rates``: for one-bit reports, (p_true, p_false) of the share of the range their
    count of 1s estimates exactly; None when reports are on the answer's scale.
    """

    @property
    def min(self) -> int: ...

    @property
    def max(self) -> int: ...

    @property
    def value_offset(self) -> float: ...

    @property
    def value_scale(self) -> float: ...

    @property
    def worst_case_variance(self) -> float: ...

    @property
    def worst_answer_variance(self) -> float: ...

    @property
    def bit_rates(self) -> tuple[float, float] | None: ...


class MechanismDefaults:
    """What most mechanisms do alike; a mechanism module overrides what it does otherwise."""

    file_name: ClassVar[str | None] = None
    randomized: ClassVar[bool] = True
    builder_label: ClassVar[Text | None] = None

    @classmethod
    def describes(cls, parameters: Mapping[str, object]) -> bool:
        """Whether stored parameters of this mechanism's name are this mechanism's: only
        plain mechanisms share a name."""
        return True

    def export_columns(self, key: str) -> list[str]:
        """One column in the per-response CSV, named by the question's key."""
        return [key]

    def export_cells(self, stored: int | str, options: Sequence[str]) -> list[object]:
        """The report as stored."""
        return [stored]

    def r_rr_design(self, key: str) -> dict[str, Any] | None:
        """R ``rr``'s forced-response design: only for randomized shares."""
        return None

    def storage_problem(self, largest: int) -> str | None:
        """Why a survey file may not ask for this mechanism here, in the import's words:
        only reports that can pass ``largest`` in magnitude cannot be stored."""
        return None

    def check_report(self, report: Report) -> None:
        """Raise ValueError for a posted report no honest device sends that its format's
        field lets through; for most formats the field (a radio, a pattern, a range)
        already refuses every other report."""
