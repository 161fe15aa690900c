"""Why a release or a budget is refused: facts, not sentences.

Each error carries what was asked (the figure, the question's key, the ε typed, the limit),
never words: the publish page (``web/research/publishing.py``, in the reader's language)
and the command line (``cli/releases.py``) each put them in their own. ``REFUSALS`` adds
the ledger's own refusals (``privacy.central.LedgerError``: no budget, over the budget,
a budget below what is spent), so a caller catches every refusal in one ``except``.
Nothing was stored when one is raised.
"""

from __future__ import annotations

from fractions import Fraction

from survey_app.privacy.central import LedgerError


class ReleaseError(ValueError):
    """A release or budget the rules refuse; nothing was stored."""


class UnknownFigureError(ReleaseError):
    """An id that names no kind of figure (``figure``: the id as given)."""

    def __init__(self, figure: str) -> None:
        super().__init__(figure)
        self.figure = figure


class UnknownQuestionError(ReleaseError):
    """A figure about a question the survey does not have."""

    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


class NotPlainChoiceError(ReleaseError):
    """A histogram, a most-common answer or a grouping needs a plain choice question:
    a sensitive question's stored values are randomized reports, not answers to count."""

    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


class NotSensitiveYesNoError(ReleaseError):
    """By-group estimates are of a sensitive yes/no question's share."""

    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


class BothEstimatesError(ReleaseError):
    """The estimates from noisy and from exact counts at once: the exact ones give away
    what the noise hides, and the noisy ones would only spend ε for nothing."""


class NothingChosenError(ReleaseError):
    """A release of no figure."""


class NoResponsesError(ReleaseError):
    """The estimates from exact counts of a survey nobody has answered yet."""


class EpsilonError(ReleaseError):
    """An ε or budget that is not a decimal within its limits (``most``): ``text`` as typed,
    None when noisy figures came with no ε at all."""

    def __init__(self, text: str | None, most: Fraction) -> None:
        super().__init__(text, most)
        self.text = text
        self.most = most


REFUSALS = (ReleaseError, LedgerError)
