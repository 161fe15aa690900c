"""Mechanisms and estimators for local differential privacy: no Flask, no SQL."""

from .estimate import INTERVAL_METHODS, Estimate, estimate_prevalence
from .mechanism import (
    FAIR_COINS,
    MECHANISM_NAME,
    TwoCoinDesign,
    randomize,
    randomize_answers,
    survey_epsilon,
)
from .planner import required_sample_size
from .simulate import simulate_reports

__all__ = [
    "FAIR_COINS",
    "INTERVAL_METHODS",
    "MECHANISM_NAME",
    "Estimate",
    "TwoCoinDesign",
    "estimate_prevalence",
    "randomize",
    "randomize_answers",
    "required_sample_size",
    "simulate_reports",
    "survey_epsilon",
]
