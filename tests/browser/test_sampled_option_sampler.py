"""Tick all that apply's browser sampler (static/mechanisms/sampled_option.js) in real
Chromium, against the Python module's exact distribution.

Every report "j:b" comes within 5 binomial standard errors of n·P(report | answer) and
the chi-square p-value stays above 1e-6 (``check_cells``), ``SampledOption.probability``
the truth, for answers of every size (none ticked, some, all). The sampler takes the
answer as the form posts it (k characters 0/1) and posts the fixed-width "07:1" the
Python side reads back. Breaks: a modulo-biased draw of the option and a tick kept too
often are both caught; the audit's browser path passes the module and fails one whose
report reveals how many options were ticked.
"""

from __future__ import annotations

import re
from fractions import Fraction
from typing import Any

import pytest

from survey_app.cli.audit import BROWSER, browser_source, format_report, run_audit
from survey_app.privacy.audit import shipped_cases, tick_all_cases
from survey_app.privacy.mechanisms.sampled_option import SampledOption
from survey_app.privacy.wire import ReportFormat
from tests.support.samplers import (
    DRAWS,
    STATIC,
    assert_each_throws,
    check_cells,
    load_broken_module,
    sample,
)

MODULE = STATIC / "mechanisms" / "sampled_option.js"
#: The module's two coins as written: the breaks below replace them.
OPTION_DRAW = "below(BigInt(k))"
KEEP_COIN = "bern(...rational(p.keep_probability))"
WIRE = ReportFormat.OPTION_BIT


def exact(mechanism: SampledOption, ticked: str) -> dict[str, float]:
    """P(report | answer) for every (option, bit), keyed as the sampler writes it."""
    value = tuple(int(bit) for bit in ticked)
    reports = {
        key: mechanism.report(WIRE.from_audit_key(key)) for key in mechanism.finite_support()
    }
    return {key: float(mechanism.probability(report, value)) for key, report in reports.items()}


CASES = [
    pytest.param(SampledOption.from_epsilon(3, 1), "000", id="k3-none-ticked"),
    pytest.param(SampledOption.from_epsilon(3, 1), "111", id="k3-all-ticked"),
    pytest.param(SampledOption.from_epsilon(5, Fraction(1, 2)), "10010", id="k5-two-ticked"),
    pytest.param(SampledOption.from_epsilon(12, 3), "000000000001", id="k12-last-ticked"),
]


@pytest.mark.parametrize(("mechanism", "ticked"), CASES)
def test_every_report_comes_at_its_exact_probability(
    strict_randomizer: Any, mechanism: SampledOption, ticked: str
) -> None:
    observed = sample(strict_randomizer, mechanism.parameters(), ticked)
    check_cells(observed, exact(mechanism, ticked), DRAWS)


def test_the_posted_report_is_fixed_width_and_read_back_by_the_python_side(
    strict_randomizer: Any,
) -> None:
    mechanism = SampledOption.from_epsilon(12, 1)
    for ticked in ("0" * 12, "1" * 12, "010000000100"):
        posted = strict_randomizer.evaluate(
            """([p, v]) => Array.from({ length: 300 }, () => window.surveyRandomizer.wire(p, v))""",
            [mechanism.parameters(), ticked],
        )
        for text in posted:
            assert re.fullmatch(r"\d\d:[01]", text), text
            mechanism.check_report(WIRE.parse(text))
        assert {text[:2] for text in posted} >= {"00", "11"}  # every option drawn


def test_answers_and_parameters_outside_the_question_throw(strict_randomizer: Any) -> None:
    parameters = SampledOption.from_epsilon(4, 1).parameters()
    bad: list[tuple[dict[str, Any], object]] = [
        (parameters, "010"),
        (parameters, "01001"),
        (parameters, "0120"),
        (parameters, 3),
        ({**parameters, "k": 1}, "0"),
        ({**parameters, "keep_probability": "0.7"}, "0101"),
        ({**parameters, "keep_probability": "3/2"}, "0101"),
    ]
    assert_each_throws(strict_randomizer, bad)


@pytest.mark.parametrize(
    ("shipped", "broken"),
    [
        # The classic modulo bias: a byte's worth reduced mod k, small options favoured.
        pytest.param(OPTION_DRAW, "(below(8n) % BigInt(k))", id="modulo-draw"),
        # The tick kept a little too often: p + (1 - p)/8.
        pytest.param(KEEP_COIN, f"({KEEP_COIN} || below(8n) === 0n)", id="kept-too-often"),
    ],
)
def test_a_biased_sampler_is_caught(page: Any, shipped: str, broken: str) -> None:
    load_broken_module(page, MODULE, shipped, broken)
    mechanism, ticked = SampledOption.from_epsilon(6, 1), "101000"
    observed = sample(page, mechanism.parameters(), ticked)
    with pytest.raises(AssertionError):
        check_cells(observed, exact(mechanism, ticked), DRAWS)


def test_the_audit_fails_a_browser_sampler_revealing_the_number_ticked() -> None:
    """The audit's browser path on the type's case: the module as served passes; drawing
    the first ticked option when there is one (the report then says a set is not empty)
    fails, as the Python break does (tests/privacy/test_sampled_option.py)."""
    (case,) = tick_all_cases()
    assert case in shipped_cases()  # what ``survey-app audit`` runs
    honest = run_audit([case], 3_000, python=False)
    assert honest.passed, format_report(honest)
    source = browser_source()
    assert source.count(OPTION_DRAW) == 1, "the module changed: update this break"
    leaky = 'Number(ticked.includes("1") ? ticked.indexOf("1") : below(BigInt(k)))'
    script = source.replace(f"Number({OPTION_DRAW})", leaky)
    report = run_audit([case], 3_000, python=False, script=script)
    (result,) = [r for r in report.results if r.path == BROWSER]
    assert result.fit_rejected and result.epsilon_exceeded, format_report(report)
