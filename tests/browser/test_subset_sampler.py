"""Subset selection's browser sampler (static/mechanisms/subset_selection.js) in real
Chromium, against the Python module's exact distribution.

Every set's count is within 5 binomial standard errors of n·P(set | answer) and the
chi-square p-value above 1e-6 (``check_cells``, as for the other samplers), with
``SubsetSelection.probability`` as the truth; where there are too many sets to fill, each
option's inclusion rate is checked against p and q. The sampler posts the fixed-width
wire format the Python side reads back (``ReportFormat.SUBSET``, ``members``). Breaks: a
modulo-biased draw in the shuffle and a truth kept too often are both caught.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Mapping
from fractions import Fraction
from typing import Any

import pytest

from survey_app.privacy.mechanisms.subset_selection import SubsetSelection
from survey_app.privacy.wire import ReportFormat
from tests.support.samplers import (
    DRAWS,
    STATIC,
    assert_each_throws,
    check_cells,
    load_broken_module,
    sample,
)

MODULE = STATIC / "mechanisms" / "subset_selection.js"
#: The shuffle's draw as written in the module: the breaks below replace it.
SHUFFLE_DRAW = "below(BigInt(pool.length - i))"
INCLUDE_COIN = "bern(...rational(p.include_probability))"


def exact(mechanism: SubsetSelection, value: int) -> dict[str, float]:
    """P(set | value) for every set of ω options, keyed as the sampler writes it."""
    return {
        ReportFormat.SUBSET.audit_key(chosen): float(mechanism.probability(chosen, value))
        for chosen in itertools.combinations(range(mechanism.k), mechanism.size)
    }


CASES = [
    pytest.param(SubsetSelection.from_epsilon(4, 1, 2), 0, id="k4-size2-first"),
    pytest.param(SubsetSelection.from_epsilon(4, 1, 2), 3, id="k4-size2-last"),
    pytest.param(SubsetSelection.best_for(8, Fraction(1, 2)), 5, id="k8-best-at-eps-half"),
    pytest.param(SubsetSelection.from_epsilon(12, 2, 3), 11, id="k12-size3-two-digits"),
    pytest.param(SubsetSelection.from_epsilon(6, 3, 5), 2, id="k6-size5"),
]


@pytest.mark.parametrize(("mechanism", "value"), CASES)
def test_every_set_comes_at_its_exact_probability(
    strict_randomizer: Any, mechanism: SubsetSelection, value: int
) -> None:
    assert mechanism.size > 1  # sets, not GRR (best_for(8, ½) has ω = 3)
    observed = sample(strict_randomizer, mechanism.parameters(), value)
    check_cells(observed, exact(mechanism, value), DRAWS)


def test_each_option_is_in_the_set_at_p_or_q_where_the_sets_are_too_many_to_fill(
    strict_randomizer: Any,
) -> None:
    mechanism, value = SubsetSelection.best_for(20, Fraction(1, 2)), 13
    assert mechanism.size == 8  # C(20, 8) = 125,970 sets
    histogram = sample(strict_randomizer, mechanism.parameters(), value)
    for key in histogram:
        mechanism.members(ReportFormat.SUBSET.from_audit_key(key))  # ω distinct, sorted
    p, q = mechanism.exact_rates
    for index in range(mechanism.k):
        held = sum(count for key, count in histogram.items() if str(index) in key.split(","))
        rate = float(p if index == value else q)
        check_cells({"in": held, "out": DRAWS - held}, {"in": rate, "out": 1 - rate}, DRAWS)


def test_the_posted_set_is_fixed_width_and_read_back_by_the_python_side(
    strict_randomizer: Any,
) -> None:
    mechanism = SubsetSelection.from_epsilon(12, 1, 4)
    posted = strict_randomizer.evaluate(
        """([p, v]) => Array.from({ length: 300 }, () => window.surveyRandomizer.wire(p, v))""",
        [mechanism.parameters(), "07"],  # a form field's value, padded as the form sends it
    )
    assert {len(text) for text in posted} == {4 * 2 + 3}
    for text in posted:
        assert re.fullmatch(r"\d\d(,\d\d){3}", text), text
        chosen = mechanism.members(ReportFormat.SUBSET.parse(text))
        assert ReportFormat.SUBSET.store(chosen) == ",".join(str(i) for i in chosen)


def test_answers_and_parameters_outside_the_question_throw(strict_randomizer: Any) -> None:
    parameters = SubsetSelection.from_epsilon(5, 1, 2).parameters()
    bad: list[tuple[Mapping[str, Any], object]] = [
        (parameters, 5),
        (parameters, -1),
        (parameters, "1.5"),
        ({**parameters, "size": 5}, 1),
        ({**parameters, "size": 0}, 1),
        ({**parameters, "include_probability": "0.7"}, 1),
        ({**parameters, "include_probability": "3/2"}, 1),
    ]
    assert_each_throws(strict_randomizer, bad)


@pytest.mark.parametrize(
    ("shipped", "broken"),
    [
        # The classic modulo bias: a byte's worth reduced mod the pool, small indexes favoured.
        pytest.param(SHUFFLE_DRAW, "(below(8n) % BigInt(pool.length - i))", id="modulo-draw"),
        # The truth kept a little too often: p + (1 - p)/8.
        pytest.param(INCLUDE_COIN, f"({INCLUDE_COIN} || below(8n) === 0n)", id="truth-too-often"),
    ],
)
def test_a_biased_sampler_is_caught(page: Any, shipped: str, broken: str) -> None:
    load_broken_module(page, MODULE, shipped, broken)
    mechanism, value = SubsetSelection.from_epsilon(8, 1, 3), 6
    observed = sample(page, mechanism.parameters(), value)
    with pytest.raises(AssertionError):
        check_cells(observed, exact(mechanism, value), DRAWS)
