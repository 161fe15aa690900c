"""Mechanisms and estimators for local differential privacy: no Flask, no SQL."""

from .choosing import (
    CHOICE_MECHANISMS,
    NUMBER_MECHANISMS,
    choice_mechanism,
    mechanism_for,
    number_mechanism,
    yes_no_mechanism,
)
from .coins import SECURE, RandomSource
from .estimate import (
    DEFAULT_INTERVAL_METHOD,
    INTERVAL_METHODS,
    Estimate,
    estimate_prevalence,
    estimate_proportion,
)
from .means import MeanEstimate, estimate_mean
from .mechanisms import (
    FAIR_COINS,
    MECHANISM_NAME,
    MECHANISM_NAMES,
    MECHANISMS,
    DiscreteLaplace,
    DiscretePiecewise,
    DuchiBinary,
    GeneralizedRandomizedResponse,
    Mechanism,
    NumericMechanism,
    OptimizedUnaryEncoding,
    PlainChoice,
    PlainNumber,
    ProportionMechanism,
    SampledOption,
    SubsetSelection,
    TwoCoinDesign,
    mechanism_from_parameters,
)
from .mechanisms.two_coin import randomize, randomize_answers, survey_epsilon
from .planner import epsilon_for_sample_size, required_sample_size
from .question_types import AnswerSpace, QuestionType
from .rationals import fraction_text, parse_fraction
from .shares import ChoiceEstimate, estimate_choice, norm_sub
from .simulate import simulate, simulate_reports

__all__ = [
    "CHOICE_MECHANISMS",
    "DEFAULT_INTERVAL_METHOD",
    "FAIR_COINS",
    "INTERVAL_METHODS",
    "MECHANISM_NAME",
    "MECHANISMS",
    "MECHANISM_NAMES",
    "NUMBER_MECHANISMS",
    "SECURE",
    "AnswerSpace",
    "ChoiceEstimate",
    "DiscreteLaplace",
    "DiscretePiecewise",
    "DuchiBinary",
    "Estimate",
    "GeneralizedRandomizedResponse",
    "MeanEstimate",
    "Mechanism",
    "NumericMechanism",
    "OptimizedUnaryEncoding",
    "SampledOption",
    "SubsetSelection",
    "PlainChoice",
    "PlainNumber",
    "ProportionMechanism",
    "QuestionType",
    "RandomSource",
    "TwoCoinDesign",
    "choice_mechanism",
    "epsilon_for_sample_size",
    "estimate_choice",
    "estimate_mean",
    "estimate_prevalence",
    "estimate_proportion",
    "fraction_text",
    "mechanism_for",
    "mechanism_from_parameters",
    "norm_sub",
    "number_mechanism",
    "parse_fraction",
    "randomize",
    "randomize_answers",
    "required_sample_size",
    "simulate",
    "simulate_reports",
    "survey_epsilon",
    "yes_no_mechanism",
]
