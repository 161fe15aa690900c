"""A survey as the app holds it: questions, texts per language, the ε each question asks.

Frozen values with no parsing in them, so storage, the builder and the designs can hold a
``SurveyDefinition`` without caring whether it came from a file, the builder or the
database. ``SurveyDefinitionError`` is here too: every step from a file to a survey raises
it, and it says where the file went wrong (everywhere it went wrong, when it can tell).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction

from survey_app.domain.display_logic import ShowIf
from survey_app.domain.display_order import AS_WRITTEN
from survey_app.domain.survey_limits import (
    DEFAULT_CHOICE_NUMBER_EPSILON,
    DEFAULT_LANGUAGES,
    DEFAULT_MECHANISM,
    DEFAULT_QUESTION_TYPE,
    DEFAULT_YES_NO_EPSILON,
)
from survey_app.privacy import QuestionType


@dataclass(frozen=True)
class QuestionTexts:
    """A question's words in one language: its text and its options, in option order."""

    text: str
    options: tuple[str, ...] = ()


@dataclass(frozen=True)
class SurveyTexts:
    """A survey's own words in one language (its questions carry theirs)."""

    title: str
    description: str = ""
    consent: str = ""
    contact: str = ""
    thank_you: str = ""


@dataclass(frozen=True)
class Completion:
    """Where a panel's participant goes once their response is stored: a ``code`` they
    copy back to the panel, or a ``redirect`` address the thank-you page links to."""

    kind: str  # "code" or "redirect", the survey file's key
    value: str


@dataclass(frozen=True)
class SectionTexts:
    """A section's own words in one language: the heading of its page and what it says
    under it."""

    title: str
    description: str = ""


@dataclass(frozen=True)
class SectionDefinition:
    """One page of a sectioned survey: where it starts among the survey's questions and
    its words.

    A section holds the questions from ``start`` up to the next section's start (the last
    one, to the end): the questions stay one flat tuple, so every analysis, export and
    tally works on them as on a survey of one page. ``title`` and ``description`` are in
    the survey's main language; ``translations`` holds them in each other language.
    """

    start: int
    title: str
    description: str = ""
    translations: dict[str, SectionTexts] = field(default_factory=dict, hash=False)
    #: The order its questions are shown in (``display_order.QUESTION_ORDERS``); None:
    #: the survey's ``question_order``.
    question_order: str | None = None

    def texts(self, language: str) -> SectionTexts:
        """The section's words in ``language``; the main language's if it has no others."""
        return self.translations.get(language, SectionTexts(self.title, self.description))


@dataclass(frozen=True)
class QuestionDefinition:
    """One question; ``key`` names its form field and its CSV column.

    ``text`` and ``options`` are in the survey's main language; ``translations`` holds the
    same words in each of its other languages, by language code.
    """

    key: str
    text: str
    type: QuestionType = DEFAULT_QUESTION_TYPE
    #: As written; None means the type's default (see requested_epsilon) or, for a
    #: plain question, none at all.
    epsilon: Fraction | None = None
    mechanism: str = DEFAULT_MECHANISM
    options: tuple[str, ...] = ()
    #: A scale's score of each option, strictly increasing (validation gives 0, 1, … when
    #: the file gives none); empty for the other types.
    scores: tuple[int, ...] = ()
    min: int | None = None
    max: int | None = None
    #: False (choice and number only): stored as given, outside any privacy guarantee.
    sensitive: bool = True
    #: False: the respondent may skip it.
    required: bool = True
    #: Shown only when an earlier plain question's answer meets this (``display_logic``).
    show_if: ShowIf | None = None
    #: How its options are shown (``display_order.OPTION_ORDERS``): as written, in random
    #: order, or (a scale) reversed for half the respondents. Display only.
    option_order: str = AS_WRITTEN
    #: Indexes (from 0) of the options that keep their place when the order is drawn; the
    #: file gives 1-based positions.
    fixed_options: tuple[int, ...] = ()
    #: The survey's other languages: code -> text and options (same count and order).
    #: Not hashed (a dict cannot be); equal definitions still need equal translations.
    translations: dict[str, QuestionTexts] = field(default_factory=dict, hash=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "type", QuestionType(self.type))

    def texts(self, language: str) -> QuestionTexts:
        """The question's words in ``language``; the main language's if it has no others."""
        return self.translations.get(language, QuestionTexts(self.text, self.options))

    @property
    def requested_epsilon(self) -> Fraction | float | None:
        """The ε this question asks for per respondent: None for a plain question,
        ln 3 (a float: it is irrational) for a yes/no question without epsilon."""
        if not self.sensitive:
            return None
        if self.epsilon is not None:
            return self.epsilon
        default = default_epsilon(self.type)
        return DEFAULT_YES_NO_EPSILON if default is None else default


def default_epsilon(kind: QuestionType) -> Fraction | None:
    """The ε a sensitive question of ``kind`` asks for when its file gives none: None for
    a yes/no question, whose mechanism then flips fair coins (ε = ln 3, not a decimal)."""
    return None if kind.always_randomized else DEFAULT_CHOICE_NUMBER_EPSILON


@dataclass(frozen=True)
class SurveyDefinition:
    """A survey as its definition file describes it, checked and ready to store.

    ``title``, ``description``, ``consent`` and ``contact`` are in the main language,
    ``languages[0]``; ``translations`` holds them in each other language.
    """

    slug: str
    title: str
    description: str
    questions: tuple[QuestionDefinition, ...]
    access: str = "open"
    #: When given, the questions' requested ε may add up to at most this per respondent.
    max_epsilon: Fraction | None = None
    #: Shown before the questions with an "I agree" step; "" for no consent step.
    consent: str = ""
    #: The researcher's contact, shown with the consent.
    contact: str = ""
    #: Every language the survey's texts are given in; the first is the main one.
    languages: tuple[str, ...] = DEFAULT_LANGUAGES
    #: The researcher's own words on the thank-you page; "" for none.
    thank_you: str = ""
    #: A panel's completion code or return address; None for none.
    completion: Completion | None = None
    #: The survey's other languages: code -> title, description, consent, contact, thank_you.
    translations: dict[str, SurveyTexts] = field(default_factory=dict, hash=False)
    #: Its pages, in order, each starting at one of ``questions``; empty: one page.
    sections: tuple[SectionDefinition, ...] = ()
    #: How the questions are shown (``display_order.QUESTION_ORDERS``): as written, or in
    #: an order drawn for each page shown. Display only.
    question_order: str = AS_WRITTEN
    #: The definition text as parsed, comments and all, so the survey can be given back
    #: as its author wrote it. Not part of equality: layout and comments define nothing.
    source: str = field(default="", compare=False, repr=False)

    def texts(self, language: str) -> SurveyTexts:
        """The survey's own words in ``language``; the main language's if it has no others."""
        main = SurveyTexts(self.title, self.description, self.consent, self.contact, self.thank_you)
        return self.translations.get(language, main)


class SurveyDefinitionError(ValueError):
    """A definition that cannot be used, located precisely enough for its author to fix it.

    ``field`` is a path such as ``questions[1].key`` ("" for the file as a whole),
    ``line`` is 1-based or None when unknown, ``source`` is the file name or ``<string>``.

    A file with several problems raises one error for all of them (``collected``), so its
    author fixes them in one go: ``problems`` lists each, and the error itself reads as the
    first (its ``message``, ``field`` and ``line``), which is all a one-problem file has.
    """

    def __init__(
        self, message: str, field: str = "", line: int | None = None, source: str = "<string>"
    ) -> None:
        super().__init__(message, field, line, source)
        self.message = message
        self.field = field
        self.line = line
        self.source = source
        self.problems: tuple[SurveyDefinitionError, ...] = (self,)

    @classmethod
    def collected(cls, problems: Sequence[SurveyDefinitionError]) -> SurveyDefinitionError:
        """One error to raise for ``problems`` (at least one), each kept as it was found."""
        first = problems[0]
        error = cls(first.message, first.field, first.line, first.source)
        error.problems = tuple(problems)
        return error

    def located(self) -> str:
        """This one problem as ``file:line: field: message``."""
        location = self.source if self.line is None else f"{self.source}:{self.line}"
        subject = f"{self.field}: " if self.field else ""
        return f"{location}: {subject}{self.message}"

    def __str__(self) -> str:
        """Every problem on a line of its own, as compilers list theirs."""
        return "\n".join(problem.located() for problem in self.problems)
