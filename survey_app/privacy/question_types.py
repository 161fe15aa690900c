"""What a respondent's answer is: yes or no, one of k options, one of k ordered labels with
scores (a rating scale), the options ticked among k ("tick all that apply"), or a whole
number in a range.

Each mechanism takes one kind of answer (``question_type`` on its class). The members are
``StrEnum``s, so a stored question's type, a survey file's ``type:`` and the export are
the same bytes as the plain strings they always were. Code elsewhere asks a member what
it has (options, bounds) rather than comparing names.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .wire import ReportFormat
from .words import Text, lazy_gettext

if TYPE_CHECKING:
    from .mechanisms import Mechanism


class QuestionType(enum.StrEnum):
    """The kinds of question a survey can ask."""

    YES_NO = "yes_no"
    CHOICE = "choice"
    NUMBER = "number"
    SCALE = "scale"
    #: Tick all that apply: any set of the k options, none of them included.
    MULTIPLE = "multiple"

    @property
    def is_yes_no(self) -> bool:
        return self is QuestionType.YES_NO

    @property
    def is_choice(self) -> bool:
        return self is QuestionType.CHOICE

    @property
    def is_number(self) -> bool:
        return self is QuestionType.NUMBER

    @property
    def is_scale(self) -> bool:
        return self is QuestionType.SCALE

    @property
    def is_multiple(self) -> bool:
        """Tick all that apply: the answer is any set of the options, one share each."""
        return self is QuestionType.MULTIPLE

    @property
    def has_options(self) -> bool:
        """Whether a question of this kind lists its options (and k is their count): a
        scale's labels are its options."""
        return self in (QuestionType.CHOICE, QuestionType.SCALE, QuestionType.MULTIPLE)

    @property
    def has_scores(self) -> bool:
        """Whether each option carries a score, summed up by the mean score."""
        return self is QuestionType.SCALE

    @property
    def mechanism_kind(self) -> QuestionType:
        """The kind whose mechanisms answer this one: a scale is one of k options, so it is
        randomized (and chosen by ``auto``) exactly as a choice. Each mechanism names its
        one ``question_type``; the registry looks a question up by this."""
        return QuestionType.CHOICE if self is QuestionType.SCALE else self

    @property
    def has_range(self) -> bool:
        """Whether a question of this kind has bounds ``min`` and ``max``."""
        return self is QuestionType.NUMBER

    @property
    def always_randomized(self) -> bool:
        """Yes/no questions exist to be randomized: a plain one would be a choice."""
        return self is QuestionType.YES_NO

    @property
    def estimates_mean(self) -> bool:
        """Whether its answers are summed up by their mean (numbers) or by shares."""
        return self is QuestionType.NUMBER

    @property
    def answer_format(self) -> ReportFormat:
        """How a true answer is posted by the form without JavaScript."""
        return _ANSWER_FORMATS[self]

    @property
    def builder_label(self) -> Text:
        """The kind in the builder's words."""
        return _BUILDER_LABELS[self]

    @property
    def add_label(self) -> Text:
        """The builder's button that adds a question of this kind."""
        return _ADD_LABELS[self]

    @property
    def mechanisms_label(self) -> Text | None:
        """The heading of this kind's mechanisms in the builder (None: nothing to choose)."""
        return _MECHANISMS_LABELS.get(self)

    @property
    def file_mechanisms(self) -> tuple[type[Mechanism], ...]:
        """The mechanisms a survey file may name for a sensitive question of this kind."""
        from .mechanisms import randomized  # the registry imports this module

        return tuple(m for m in randomized(self) if m.file_name is not None)


_ANSWER_FORMATS = {
    QuestionType.YES_NO: ReportFormat.YES_NO,
    QuestionType.CHOICE: ReportFormat.OPTION,
    QuestionType.NUMBER: ReportFormat.INTEGER,
    QuestionType.SCALE: ReportFormat.OPTION,
    # One character per option, ticked or not: every set, the empty one too, posts alike.
    QuestionType.MULTIPLE: ReportFormat.BITS,
}
_BUILDER_LABELS = {
    QuestionType.YES_NO: lazy_gettext("Yes or no"),
    QuestionType.CHOICE: lazy_gettext("One of several options"),
    QuestionType.NUMBER: lazy_gettext("A whole number in a range"),
    QuestionType.SCALE: lazy_gettext("A rating scale (ordered labels with scores)"),
    QuestionType.MULTIPLE: lazy_gettext("Tick all that apply"),
}
_ADD_LABELS = {
    QuestionType.YES_NO: lazy_gettext("Add a yes/no question"),
    QuestionType.CHOICE: lazy_gettext("Add a choice question"),
    QuestionType.NUMBER: lazy_gettext("Add a number question"),
    QuestionType.SCALE: lazy_gettext("Add a rating scale"),
    QuestionType.MULTIPLE: lazy_gettext("Add a tick-all-that-apply question"),
}
_MECHANISMS_LABELS = {
    QuestionType.CHOICE: lazy_gettext("For choice questions and rating scales"),
    QuestionType.NUMBER: lazy_gettext("For number questions"),
    QuestionType.MULTIPLE: lazy_gettext("For tick-all-that-apply questions"),
}


@dataclass(frozen=True)
class AnswerSpace:
    """The answers one question allows: its kind, its option count, its bounds."""

    kind: QuestionType
    options: int = 0
    min: int | None = None
    max: int | None = None

    def bounds(self) -> tuple[int, int]:
        """``min`` and ``max`` of a number question."""
        if self.min is None or self.max is None:
            raise ValueError(f"a {self.kind} question has no bounds")
        return self.min, self.max
