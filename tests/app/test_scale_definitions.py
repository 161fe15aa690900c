"""A rating scale in a survey file: its keys, its default and written scores, and every
wrong one refused with the file, line and field (the import's own machinery)."""

from __future__ import annotations

from fractions import Fraction

import pytest

from survey_app.domain.definitions import parse_definition
from survey_app.domain.survey_model import SurveyDefinitionError
from survey_app.privacy import QuestionType

HEAD = """\
slug: moods
title: Moods
questions:
  - key: low
    text: How often did you feel low?
    type: scale
"""


def _scale(extra: str) -> str:
    return HEAD + extra


def test_a_scale_gets_scores_0_1_2_by_default_and_a_choices_mechanisms() -> None:
    (low,) = parse_definition(_scale("    options: [Never, Sometimes, Often]\n")).questions
    assert low.type is QuestionType.SCALE and low.scores == (0, 1, 2)
    assert (low.sensitive, low.mechanism, low.requested_epsilon) == (True, "auto", 1)


def test_written_scores_plain_and_a_named_mechanism() -> None:
    text = _scale(
        "    options: [Never, Sometimes, Often]\n"
        "    scores: [-1, 0, 4]\n"
        "    mechanism: oue\n"
        "    epsilon: 2\n"
    )
    (low,) = parse_definition(text).questions
    assert (low.scores, low.mechanism, low.epsilon) == ((-1, 0, 4), "oue", Fraction(2))
    plain = _scale("    options: [Rarely, Often]\n    sensitive: false\n")
    assert not parse_definition(plain).questions[0].sensitive


@pytest.mark.parametrize(
    ("extra", "located"),
    [
        ("", "s.yaml:4: questions[0].options: is required for a rating scale"),
        ("    options: []\n", "s.yaml:7: questions[0].options: must list 2 to 20 options (got 0)"),
        (
            "    options: [Never, Never]\n",
            "s.yaml:7: questions[0].options[1]: duplicate option 'Never' "
            "(already questions[0].options[0])",
        ),
        (
            "    options: [Never, '']\n",
            "s.yaml:7: questions[0].options[1]: must not be empty",
        ),
        (
            "    options: [a, b, c]\n    scores: [0, 1]\n",
            "s.yaml:8: questions[0].scores: must give one score per option: 3 (got 2)",
        ),
        (
            "    options: [a, b, c]\n    scores: [0, 2, 1]\n",
            "s.yaml:8: questions[0].scores[2]: must increase from each option to the next "
            "(got 1 after 2)",
        ),
        (
            "    options: [a, b]\n    scores: [0, 1.5]\n",
            "s.yaml:8: questions[0].scores[1]: must be a whole number from -1000000 to "
            "1000000 (got 1.5)",
        ),
        (
            "    options: [a, b]\n    scores: [0, '1']\n",
            "s.yaml:8: questions[0].scores[1]: must be a whole number from -1000000 to "
            "1000000 (got the text '1')",
        ),
        (
            "    options: [a, b]\n    scores: 3\n",
            "s.yaml:8: questions[0].scores: must be a list of whole numbers, one per option "
            "(got a number)",
        ),
        (
            "    options: [a, b]\n    epsilon: 11\n",
            "s.yaml:8: questions[0].epsilon: must be a number from 0.01 to 10 with at most 3 "
            "decimals (got 11)",
        ),
        (
            "    options: [a, b]\n    mechanism: laplace\n",
            "s.yaml:8: questions[0].mechanism: must be one of: auto, grr, oue, subset "
            "(got 'laplace')",
        ),
    ],
)
def test_a_wrong_scale_is_refused_at_its_line_and_field(extra: str, located: str) -> None:
    with pytest.raises(SurveyDefinitionError) as caught:
        parse_definition(_scale(extra), "s.yaml")
    assert located in str(caught.value).splitlines()


def test_only_a_scale_has_scores() -> None:
    text = HEAD.replace("type: scale", "type: choice") + "    options: [a, b]\n    scores: [0, 1]\n"
    with pytest.raises(SurveyDefinitionError) as caught:
        parse_definition(text, "s.yaml")
    assert str(caught.value) == (
        "s.yaml:8: questions[0].scores: only rating scales have scores (this one is choice)"
    )
