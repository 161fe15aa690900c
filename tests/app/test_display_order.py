"""Display order: the shuffles exactly uniform (every draw enumerated through an injected
random source), fixed options never moving, and the survey file's ``question_order``,
``option_order`` and ``fixed_options``: accepted, refused with file, line and field,
stored and given back by ``survey_definition`` and the export."""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections import Counter
from collections.abc import Iterator, Sequence

import pytest
from flask import Flask

from survey_app.domain import display_order as order
from survey_app.domain.definitions import parse_definition
from survey_app.domain.survey_model import QuestionDefinition, SurveyDefinitionError
from survey_app.domain.survey_yaml import definition_yaml
from survey_app.privacy import QuestionType
from survey_app.storage.surveys import get_survey, store_survey, survey_definition
from survey_app.web.database_session import get_db


class Scripted:
    """A random source that gives back the draws it was handed, checking each bound."""

    def __init__(self, draws: Sequence[int], bounds: Sequence[int]) -> None:
        self.draws = list(draws)
        self.bounds = list(bounds)

    def randbelow(self, n: int, /) -> int:
        assert n == self.bounds.pop(0), "drawn with another bound than expected"
        return self.draws.pop(0)

    def used_up(self) -> bool:
        return not self.draws and not self.bounds


def every_draw(bounds: Sequence[int]) -> Iterator[Scripted]:
    """A scripted source for every sequence of draws below ``bounds``: each sequence has
    the same chance from a uniform source, so counting outcomes over them is exact."""
    for draws in itertools.product(*(range(bound) for bound in bounds)):
        yield Scripted(draws, bounds)


def shuffle_bounds(movable: int) -> list[int]:
    """Fisher–Yates on ``movable`` items draws below movable, movable - 1, ..., 2."""
    return list(range(movable, 1, -1))


@pytest.mark.parametrize(
    ("count", "fixed"),
    [
        (2, frozenset()),
        (4, frozenset()),
        (5, frozenset({4})),
        (6, frozenset({0, 3})),
        (3, frozenset({1})),
    ],
)
def test_every_order_of_the_movable_items_is_exactly_equally_likely(
    count: int, fixed: frozenset[int]
) -> None:
    items = [f"option {index}" for index in range(count)]
    movable = count - len(fixed)
    outcomes: Counter[tuple[str, ...]] = Counter()
    for source in every_draw(shuffle_bounds(movable)):
        shown = order.shuffled(items, frozenset(fixed), source)
        assert source.used_up()
        assert all(shown[index] == items[index] for index in fixed)  # fixed ones stay
        outcomes[tuple(shown)] += 1
    # Every permutation of the movable items, each from exactly one sequence of draws:
    # so each movable item takes each movable position equally often.
    assert len(outcomes) == math.factorial(movable)
    assert set(outcomes.values()) == {1}


def test_each_movable_option_takes_each_place_equally_often() -> None:
    question = QuestionDefinition(
        "q", "Q?", QuestionType.CHOICE, options=("a", "b", "c", "none"), fixed_options=(3,)
    )
    question = _with(question, option_order="random")
    places: Counter[tuple[int, int]] = Counter()
    for source in every_draw(shuffle_bounds(3)):
        for place, index in enumerate(order.option_display_order(question, source)):
            places[index, place] += 1
    assert places == {
        **{(index, place): 2 for index in range(3) for place in range(3)},
        (3, 3): 6,  # "none" is last in all 3! orders
    }


def test_a_reversible_scale_is_as_written_or_reversed_half_the_time_each() -> None:
    question = _with(
        QuestionDefinition(
            "s", "S?", QuestionType.SCALE, options=("1", "2", "3", "4", "n/a"), fixed_options=(4,)
        ),
        option_order="reverse",
    )
    seen = [order.option_display_order(question, source) for source in every_draw([2])]
    assert seen == [[0, 1, 2, 3, 4], [3, 2, 1, 0, 4]]


def test_options_as_written_draw_nothing() -> None:
    question = QuestionDefinition("q", "Q?", QuestionType.CHOICE, options=("a", "b", "c"))
    source = Scripted([], [])
    assert order.option_display_order(question, source) == [0, 1, 2]


def test_questions_in_random_order_keep_their_written_index_and_options() -> None:
    questions = [
        QuestionDefinition(key, f"{key}?", QuestionType.CHOICE, options=("a", "b"))
        for key in ("x", "y", "z")
    ]
    outcomes: Counter[tuple[str, ...]] = Counter()
    for source in every_draw(shuffle_bounds(3)):
        shown = order.display_order(questions, "random", source)
        assert [questions[s.index] for s in shown] == [s.question for s in shown]
        assert all(s.options == (0, 1) for s in shown)
        outcomes[tuple(s.question.key for s in shown)] += 1
    assert len(outcomes) == 6 and set(outcomes.values()) == {1}
    as_written = order.display_order(questions, "as_written", Scripted([], []))
    assert [s.question.key for s in as_written] == ["x", "y", "z"]


def test_the_default_source_is_the_secure_one() -> None:
    """Respondents' orders come from ``secrets``, never from a seedable generator."""
    from survey_app.privacy.coins import SECURE

    for function in (order.shuffled, order.reversed_or_not, order.display_order):
        assert function.__defaults__ is not None and function.__defaults__[-1] is SECURE


def _with(question: QuestionDefinition, **changes: object) -> QuestionDefinition:
    return dataclasses.replace(question, **changes)  # type: ignore[arg-type]


# The survey file. Line numbers below refer to this text.
ORDERED = """\
slug: ordered
title: Ordered
question_order: random
questions:
  - key: used
    text: Which have you used?
    type: multiple
    options: [Cannabis, Cocaine, Ecstasy]
    option_order: random
  - key: where
    text: Where do you live?
    type: choice
    options: [Halls, Flat, With family, Somewhere else]
    option_order: random
    fixed_options: [4]
  - key: binge
    text: How often?
    type: scale
    options: [Never, Monthly, Weekly]
    option_order: reverse
  - key: cheated
    text: Cheated?
"""


def test_the_orders_are_read_from_the_file() -> None:
    definition = parse_definition(ORDERED, "ordered.yaml")
    assert definition.question_order == "random"
    assert [(q.option_order, q.fixed_options) for q in definition.questions] == [
        ("random", ()),
        ("random", (3,)),
        ("reverse", ()),
        ("as_written", ()),
    ]


@pytest.mark.parametrize(
    ("old", "new", "line", "field", "message"),
    [
        (
            "question_order: random",
            "question_order: shuffled",
            3,
            "question_order",
            "must be one of: as_written, random (got 'shuffled')",
        ),
        (
            "fixed_options: [4]",
            "fixed_options: [5]",
            15,
            "questions[1].fixed_options[0]",
            "must be an option's position, a whole number from 1 to 4 (got 5)",
        ),
        (
            "fixed_options: [4]",
            "fixed_options: [0]",
            15,
            "questions[1].fixed_options[0]",
            "from 1 to 4 (got 0)",
        ),
        (
            "fixed_options: [4]",
            "fixed_options: [4, 1, 4]",
            15,
            "questions[1].fixed_options[2]",
            "position 4 is listed twice (already questions[1].fixed_options[0])",
        ),
        (
            "fixed_options: [4]",
            "fixed_options: [last]",
            15,
            "questions[1].fixed_options[0]",
            "(got the text 'last')",
        ),
        (
            "fixed_options: [4]",
            "fixed_options: 4",
            15,
            "questions[1].fixed_options",
            "must be a list of option positions, 1 for the first (got a number)",
        ),
        (
            "    option_order: random\n    fixed_options: [4]",
            "    fixed_options: [4]",
            14,
            "questions[1].fixed_options",
            "keep their place anyway unless option_order is random or reverse",
        ),
        (
            "    type: choice\n    options: [Halls, Flat, With family, Somewhere else]\n"
            "    option_order: random",
            "    type: choice\n    options: [Halls, Flat, With family, Somewhere else]\n"
            "    option_order: reverse",
            14,
            "questions[1].option_order",
            "must be one of: as_written, random (got 'reverse')",
        ),
        (
            "    option_order: random\n  - key: where",
            "    option_order: sorted\n  - key: where",
            9,
            "questions[0].option_order",
            "must be one of: as_written, random (got 'sorted')",
        ),
        (
            "    text: Cheated?\n",
            "    text: Cheated?\n    option_order: random\n",
            23,
            "questions[3].option_order",
            "only choice, rating scale and tick-all questions have options to order "
            "(this one is yes_no)",
        ),
        (
            "    text: Cheated?\n",
            "    text: Cheated?\n    type: number\n    min: 0\n    max: 9\n"
            "    fixed_options: [1]\n",
            26,
            "questions[3].fixed_options",
            "only choice, rating scale and tick-all questions have options to order "
            "(this one is number)",
        ),
    ],
)
def test_a_bad_order_is_refused_with_its_file_line_and_field(
    old: str, new: str, line: int, field: str, message: str
) -> None:
    assert ORDERED.count(old) == 1
    with pytest.raises(SurveyDefinitionError) as refused:
        parse_definition(ORDERED.replace(old, new), "ordered.yaml")
    problem = refused.value
    assert (problem.source, problem.line, problem.field) == ("ordered.yaml", line, field)
    assert message in problem.message
    assert str(problem).startswith(f"ordered.yaml:{line}: {field}: ")


def test_the_orders_are_stored_and_round_trip_through_the_export(app: Flask) -> None:
    definition = parse_definition(ORDERED, "ordered.yaml")
    with app.app_context():
        survey = store_survey(get_db(), definition)
        again = get_survey(get_db(), "ordered")
    assert again is not None and again == survey
    assert again.question_order == "random"
    assert [q.fixed_options for q in again.questions] == [(), (3,), (), ()]
    written = definition_yaml(survey_definition(again))
    assert "question_order: random" in written and "fixed_options:\n  - 4" in written
    reread = parse_definition(written, "export.yaml")
    assert reread.question_order == definition.question_order
    assert [(q.option_order, q.fixed_options) for q in reread.questions] == [
        (q.option_order, q.fixed_options) for q in definition.questions
    ]
    assert survey_definition(again) == reread


def test_a_survey_as_written_exports_no_order_keys(app: Flask) -> None:
    plain = ORDERED.replace("question_order: random\n", "").replace(
        "    option_order: reverse\n", ""
    )
    with app.app_context():
        survey = store_survey(get_db(), parse_definition(plain, "plain.yaml"))
    written = definition_yaml(survey_definition(survey))
    assert "question_order" not in written and written.count("option_order") == 2


SECTIONED = """\
slug: sectioned-orders
title: Orders by section
question_order: random
sections:
  - title: About you
    question_order: as_written
    questions:
      - {key: year, text: Year, type: choice, options: [One, Two], sensitive: false}
      - {key: campus, text: Campus, type: choice, options: [North, South], sensitive: false}
  - title: Studying
    questions:
      - {key: cheated, text: Cheated}
      - {key: copied, text: Copied}
"""


def test_a_section_keeps_its_own_order_or_the_surveys(app: Flask) -> None:
    """A section's ``question_order`` overrides the survey's; one without follows it. The
    order travels through storage and the export, and each part is drawn in its own."""
    with app.app_context():
        survey = store_survey(get_db(), parse_definition(SECTIONED, "sectioned.yaml"))
        again = get_survey(get_db(), "sectioned-orders")
    assert again is not None and again.part_orders == ("as_written", "random")
    written = definition_yaml(survey_definition(again))
    assert written.count("question_order: as_written") == 1
    assert survey_definition(again) == parse_definition(written, "export.yaml")
    # Only the second part draws (one draw below 2): the first is shown as written.
    for drawn, keys in ((0, ["copied", "cheated"]), (1, ["cheated", "copied"])):
        first, second = order.display_parts(
            survey.parts, survey.part_orders, Scripted([drawn], [2])
        )
        assert [s.question.key for s in first] == ["year", "campus"]
        assert [s.question.key for s in second] == keys


def test_a_sections_bad_order_is_refused_with_its_field() -> None:
    with pytest.raises(SurveyDefinitionError) as refused:
        parse_definition(SECTIONED.replace("as_written", "alphabetical"), "sectioned.yaml")
    problem = refused.value
    assert (problem.line, problem.field) == (6, "sections[0].question_order")
    assert "must be one of: as_written, random" in problem.message
