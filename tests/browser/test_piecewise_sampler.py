"""The piecewise mechanism's browser sampler (static/mechanisms/piecewise.js) in real
Chromium, against the Python module's exact distribution.

Every report's count is within 5 binomial standard errors of n·P(report | answer) and the
chi-square p-value above 1e-6 (``check_cells``), with ``DiscretePiecewise.probability``
as the truth, for designs from the range 0–1 to 0–50 and ε from 1 to 4, at both ends and
the middle. The served (minified) text is what runs. Breaks: a window one report late and
the piecewise part never mixed with Duchi's are both caught.
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from typing import Any

import pytest

from survey_app.privacy.mechanisms.piecewise import DiscretePiecewise
from tests.support.samplers import (
    DRAWS,
    STATIC,
    assert_each_throws,
    check_cells,
    load_broken_module,
    sample,
)

MODULE = STATIC / "mechanisms" / "piecewise.js"
WINDOW_DRAW = "return Number(start + below(w));"
SHARE_COIN = "if (!bern(...rational(p.piecewise_share))) {"


def exact(mechanism: DiscretePiecewise, value: int) -> dict[str, float]:
    """P(report | value) for every report, keyed as the sampler writes it."""
    low, high = mechanism.report_range()
    return {str(y): float(mechanism.probability(y, value)) for y in range(low, high + 1)}


CASES = [
    pytest.param(DiscretePiecewise.best_for(0, 10, Fraction(1)), value, id=f"0-10-eps1-{value}")
    for value in (0, 5, 10)
] + [
    pytest.param(DiscretePiecewise.best_for(0, 50, Fraction(4)), 37, id="0-50-eps4"),
    pytest.param(DiscretePiecewise.best_for(0, 1, Fraction(3)), 1, id="0-1-eps3"),
    pytest.param(DiscretePiecewise.best_for(-5, 12, Fraction(2)), -5, id="negative-min-eps2"),
]


@pytest.mark.parametrize(("mechanism", "value"), CASES)
def test_every_report_comes_at_its_exact_probability(
    strict_randomizer: Any, mechanism: DiscretePiecewise, value: int
) -> None:
    observed = sample(strict_randomizer, mechanism.parameters(), value)
    check_cells(observed, exact(mechanism, value), DRAWS)


def test_the_report_is_posted_padded(strict_randomizer: Any) -> None:
    parameters = DiscretePiecewise.best_for(0, 50, Fraction(4)).parameters()
    posted = strict_randomizer.evaluate(
        """([p, v]) => Array.from({ length: 50 }, () => window.surveyRandomizer.wire(p, v))""",
        [parameters, "7"],
    )
    assert {len(text) for text in posted} == {17}


def test_answers_and_parameters_outside_the_question_throw(strict_randomizer: Any) -> None:
    parameters = DiscretePiecewise.best_for(0, 10, Fraction(1)).parameters()
    bad: list[tuple[Mapping[str, Any], object]] = [
        (parameters, 11),
        (parameters, -1),
        (parameters, "1.5"),
        ({**parameters, "ratio": "1/2"}, 1),
        ({**parameters, "step": 0}, 1),
        ({**parameters, "piecewise_share": "3/2"}, 1),
    ]
    assert_each_throws(strict_randomizer, bad)


@pytest.mark.parametrize(
    ("shipped", "broken"),
    [
        pytest.param(WINDOW_DRAW, "return Number(start + 1n + below(w));", id="window-late"),
        pytest.param(SHARE_COIN, "if (false) {", id="never-duchi"),
    ],
)
def test_a_biased_sampler_is_caught(page: Any, shipped: str, broken: str) -> None:
    load_broken_module(page, MODULE, shipped, broken)
    mechanism, value = DiscretePiecewise.best_for(0, 10, Fraction(1)), 4
    observed = sample(page, mechanism.parameters(), value)
    with pytest.raises(AssertionError):
        check_cells(observed, exact(mechanism, value), DRAWS)
