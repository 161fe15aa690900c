"""A survey's design: the mechanism each question's answers go through, and its fingerprint.

One place turns a question's definition (type, ε, mechanism name, options, bounds,
sensitive) into the mechanism with its exact parameters. Storage keeps those parameters
as JSON and never changes them; the fingerprint names one survey's set of them, so a
response records exactly what it was randomized under, and the browser's submission can
be checked against the survey's current design.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from fractions import Fraction
from typing import Protocol

from survey_app.domain.survey_limits import DEFAULT_CHOICE_NUMBER_EPSILON, DEFAULT_MECHANISM
from survey_app.domain.survey_model import QuestionDefinition
from survey_app.privacy import (
    AnswerSpace,
    Mechanism,
    QuestionType,
    TwoCoinDesign,
    mechanism_for,
)

FINGERPRINT_HEX_DIGITS = 16  # 64 bits: tells designs apart, never a secret


class QuestionOfSomeKind(Protocol):
    """A question as defined in a file or as stored: what choosing a mechanism needs."""

    @property
    def type(self) -> QuestionType: ...
    @property
    def options(self) -> tuple[str, ...]: ...
    @property
    def min(self) -> int | None: ...
    @property
    def max(self) -> int | None: ...


def answer_space(question: QuestionOfSomeKind) -> AnswerSpace:
    """The answers ``question`` allows, as the mechanisms take them."""
    return AnswerSpace(question.type, len(question.options), question.min, question.max)


def question_mechanism(question: QuestionDefinition) -> Mechanism:
    """The mechanism a defined question's answers go through (``none`` for plain ones).

    A yes/no question without ε gets fair coins; a choice or number question without one
    the default ε."""
    epsilon = question.epsilon
    if epsilon is None and not question.type.always_randomized:
        epsilon = DEFAULT_CHOICE_NUMBER_EPSILON
    return mechanism_for(
        answer_space(question), epsilon, question.mechanism, sensitive=question.sensitive
    )


def file_mechanism_name(mechanism: Mechanism) -> str:
    """How a survey file asks for this mechanism by name: what ``auto`` chose, written out,
    so the file gives the same mechanism back ("auto" for yes/no and plain questions,
    which have no choice to make)."""
    return mechanism.file_name or DEFAULT_MECHANISM


def mechanism_at(question: QuestionOfSomeKind, epsilon: Fraction) -> Mechanism:
    """The mechanism the same question would get at another ε (auto's choice): for
    planning what a number of respondents allows."""
    return mechanism_for(answer_space(question), epsilon)


def survey_fingerprint(parameters_by_key: Mapping[str, Mapping[str, object]]) -> str:
    """A short hash of every question's mechanism and parameters, in question order."""
    canonical = json.dumps(list(parameters_by_key.items()), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()[:FINGERPRINT_HEX_DIGITS]


def legacy_two_coin_parameters(truth_probability: float, forced_yes_probability: float) -> str:
    """The JSON parameters of a question stored before questions kept their own mechanism.

    Those stored t and f as floats, which are exact dyadic rationals: the conversion loses
    nothing.
    """
    design = TwoCoinDesign(truth_probability, forced_yes_probability)
    return json.dumps(design.parameters(), sort_keys=True)
