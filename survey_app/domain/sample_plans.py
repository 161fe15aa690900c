"""The dashboard's planner: per question, the respondents a precision needs at its ε, and
the ε a number of respondents allows.

One half-width serves every question: a share for yes/no and choice questions (0.05 is
±5 percentage points), a share of the answer range for numbers (0.05 of 0-50 drinks is
±2.5 drinks), so a single figure compares questions of every type.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache

from survey_app.domain.designs import mechanism_at
from survey_app.privacy import epsilon_for_sample_size, required_sample_size
from survey_app.storage.surveys import Question, Survey


@dataclass(frozen=True)
class QuestionPlan:
    question: Question
    half_width: float  # in the question's own units (a share, or the answer's units)
    needed: int  # respondents for ±half_width at the question's ε
    epsilon_allowed: Fraction | None  # smallest ε reaching ±half_width with the planned n;
    # None: not even ε = 10 does (or a plain question, which has no ε)


def plan_survey(
    survey: Survey, half_width: float, respondents: int, confidence: float
) -> list[QuestionPlan]:
    return [plan_question(q, half_width, respondents, confidence) for q in survey.questions]


@lru_cache(maxsize=1024)
def plan_question(
    question: Question, half_width: float, respondents: int, confidence: float
) -> QuestionPlan:
    """Cached: the search over ε builds a mechanism from exact rationals at every step,
    which costs more than the rest of the dashboard, and its answer never changes."""
    span = (question.max - question.min) if question.type.has_range else 1  # type: ignore[operator]
    width = half_width * span
    allowed = None
    if question.sensitive:
        allowed = epsilon_for_sample_size(
            respondents, width, confidence, lambda epsilon: mechanism_at(question, epsilon)
        )
    needed = required_sample_size(width, confidence, question.mechanism)
    return QuestionPlan(question, width, needed, allowed)
