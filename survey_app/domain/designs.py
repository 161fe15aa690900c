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
from collections.abc import Callable, Mapping
from fractions import Fraction
from typing import Protocol

from survey_app.domain.definitions import (
    DEFAULT_CHOICE_NUMBER_EPSILON,
    DEFAULT_MECHANISM,
    QuestionDefinition,
)
from survey_app.privacy import (
    DiscreteLaplace,
    DuchiBinary,
    GeneralizedRandomizedResponse,
    Mechanism,
    OptimizedUnaryEncoding,
    PlainChoice,
    PlainNumber,
    TwoCoinDesign,
    choice_mechanism,
    number_mechanism,
    yes_no_mechanism,
)

FINGERPRINT_HEX_DIGITS = 16  # 64 bits: tells designs apart, never a secret
#: A stored mechanism's name -> the ``mechanism`` a survey file asks for it by.
_FILE_MECHANISM_NAMES = {
    GeneralizedRandomizedResponse.name: "grr",
    OptimizedUnaryEncoding.name: "oue",
    DiscreteLaplace.name: "laplace",
    DuchiBinary.name: "duchi",
}


class QuestionOfSomeKind(Protocol):
    """A question as defined in a file or as stored: what choosing a mechanism needs."""

    @property
    def type(self) -> str: ...
    @property
    def options(self) -> tuple[str, ...]: ...
    @property
    def min(self) -> int | None: ...
    @property
    def max(self) -> int | None: ...


def question_mechanism(question: QuestionDefinition) -> Mechanism:
    """The mechanism a defined question's answers go through (``none`` for plain ones)."""
    if question.type == "choice" and not question.sensitive:
        return PlainChoice(len(question.options))
    if question.type == "number" and not question.sensitive:
        assert question.min is not None and question.max is not None
        return PlainNumber(question.min, question.max)
    if question.type == "yes_no":
        return yes_no_mechanism(question.epsilon)
    epsilon = question.epsilon if question.epsilon is not None else DEFAULT_CHOICE_NUMBER_EPSILON
    return _family(question.type, question.options, question.min, question.max)(
        epsilon, question.mechanism
    )


def file_mechanism_name(mechanism: Mechanism) -> str:
    """How a survey file asks for this mechanism by name: what ``auto`` chose, written out,
    so the file gives the same mechanism back ("auto" for yes/no and plain questions,
    which have no choice to make)."""
    return _FILE_MECHANISM_NAMES.get(mechanism.name, DEFAULT_MECHANISM)


def mechanism_at(question: QuestionOfSomeKind, epsilon: Fraction) -> Mechanism:
    """The mechanism the same question would get at another ε (auto's choice): for
    planning what a number of respondents allows."""
    if question.type == "yes_no":
        return yes_no_mechanism(epsilon)
    return _family(question.type, question.options, question.min, question.max)(epsilon, "auto")


def _family(
    kind: str, options: tuple[str, ...], low: int | None, high: int | None
) -> Callable[[Fraction, str], Mechanism]:
    if kind == "choice":
        return lambda epsilon, name: choice_mechanism(len(options), epsilon, name)
    if kind == "number":
        assert low is not None and high is not None
        return lambda epsilon, name: number_mechanism(low, high, epsilon, name)
    raise ValueError(f"unknown question type {kind!r}")


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
