"""The ε audit: its statistics, and that it passes the shipped code and fails broken code.

Every broken variant is sized so that it fails by a wide margin, never by luck: the
comment at each states the chance that the audit would miss it, from the noncentral
chi-square distribution of the fit statistic and the spread of the log-ratio bound. The
audits of correct code fail only with the familywise α = 1e-6 the audit is built for.
Broken browser scripts are made by editing the shipped browser modules (``coins.js`` and
``mechanisms/*.js``, joined as the audit loads them) as text, so the tests follow the real
files (and say so when an edit no longer applies).
"""

from __future__ import annotations

import math
import os
import signal
import time
from collections import Counter
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from survey_app.cli.audit import (
    BROWSER,
    PYTHON,
    AuditReport,
    audit_command,
    browser_source,
    case_time_limit,
    format_report,
    run_audit,
)
from survey_app.domain.survey_limits import (
    EPSILON_DECIMALS,
    EPSILON_MAX,
    EPSILON_MIN,
    MAX_NUMBER_RANGE,
    MAX_OPTIONS,
)
from survey_app.privacy.audit import (
    FAMILYWISE_ALPHA,
    AuditCase,
    CaseResult,
    Cells,
    chi_square_fit,
    clopper_pearson_lower,
    clopper_pearson_upper,
    evaluate_case,
    integer_cells,
    pooled,
    privacy_loss_bound,
    report_sets,
    shipped_cases,
)
from survey_app.privacy.choosing import choice_mechanism, number_mechanism
from survey_app.privacy.coins import ONE, SECURE, RandomSource, bernoulli, uniform_below
from survey_app.privacy.mechanisms import (
    MECHANISM_NAMES,
    DiscreteLaplace,
    DiscretePiecewise,
    GeneralizedRandomizedResponse,
    SubsetSelection,
)
from survey_app.served_scripts import minify

CHROMIUM = Path("/usr/bin/chromium")
SKIP_VARIABLE = "SURVEY_APP_SKIP_BROWSER"


@pytest.fixture
def chromium() -> None:
    """Fail, not skip, without Chromium (as the browser tests do): a silently skipped
    privacy check is a missing one. SURVEY_APP_SKIP_BROWSER=1 skips on purpose."""
    if os.environ.get(SKIP_VARIABLE, "") == "1":
        pytest.skip(f"browser tests skipped on request ({SKIP_VARIABLE}=1)")
    if not CHROMIUM.exists():
        pytest.fail(f"{CHROMIUM} not found: apt-get install chromium", pytrace=False)


def case(label: str) -> AuditCase:
    """One shipped case by its label."""
    (found,) = [c for c in shipped_cases() if c.label == label]
    return found


def broken_script(old: str, new: str) -> str:
    """The shipped browser modules, joined as served (minified), with ``old`` (a statement
    as written in the source, which must occur exactly once) made ``new``."""
    source, old = browser_source(), minify(old)
    assert source.count(old) == 1, (
        f"the browser modules no longer contain {old!r} exactly once: update this test's "
        "edit so it still breaks the same step of the shipped samplers"
    )
    return source.replace(old, new)


def only(report: AuditReport, path: str) -> list[CaseResult]:
    results = [result for result in report.results if result.path == path]
    assert results, format_report(report)
    return results


# ---- the statistics ----


def test_clopper_pearson_matches_known_values() -> None:
    # The textbook two-sided 95% interval for 5 of 10 is [0.1871, 0.8129].
    assert clopper_pearson_lower(5, 10, 0.025) == pytest.approx(0.187086, abs=1e-6)
    assert clopper_pearson_upper(5, 10, 0.025) == pytest.approx(0.812914, abs=1e-6)
    # Closed forms at the ends: P(0 of n) = (1-p)^n = α, P(n of n) = p^n = α.
    assert clopper_pearson_upper(0, 20, 0.05) == pytest.approx(1 - 0.05 ** (1 / 20), rel=1e-12)
    assert clopper_pearson_lower(20, 20, 0.05) == pytest.approx(0.05 ** (1 / 20), rel=1e-12)
    assert clopper_pearson_lower(0, 20, 0.05) == 0.0
    assert clopper_pearson_upper(20, 20, 0.05) == 1.0


def test_chi_square_fit_rejects_a_biased_sample_and_accepts_a_fair_one() -> None:
    half = np.array([0.5, 0.5])
    biased = chi_square_fit(np.array([600, 400]), half)
    assert biased.statistic == pytest.approx(40.0)  # (100² + 100²) / 500
    assert biased.degrees_of_freedom == 1
    assert biased.p_value < 1e-9 and biased.rejects(1e-6)
    fair = chi_square_fit(np.array([510, 490]), half)
    assert fair.p_value == pytest.approx(0.5271, abs=1e-4) and not fair.rejects(1e-6)


def test_a_report_that_cannot_occur_rejects_outright() -> None:
    fit = chi_square_fit(np.array([500, 500, 1]), np.array([0.5, 0.5, 0.0]))
    assert fit.rejects(1e-300) and fit.p_value == 0.0
    cells = Cells(support=("0", "1"))
    counts, impossible = cells.counts({"0": 10, "1": 10, "7": 1})
    assert list(counts) == [10, 10] and impossible == {"7": 1}
    assert chi_square_fit(counts, np.array([0.5, 0.5]), impossible).rejects(1e-300)


def test_sparse_cells_are_pooled_until_five_are_expected() -> None:
    groups = pooled(np.array([100.0, 3.0, 1.0, 96.0]))
    # 3 + 1 < 5: the pool joins the smallest large cell.
    assert groups[1] == groups[2] == groups[3] != groups[0]
    groups = pooled(np.array([100.0, 3.0, 4.0, 96.0]))
    assert groups[1] == groups[2] and len(set(groups)) == 3


def test_laplace_cells_cover_the_line_and_hold_the_whole_distribution() -> None:
    laplace = number_mechanism(0, 10, Fraction(1), "laplace")
    cells = integer_cells(laplace, [0, 10], 20_000)
    # Every integer expected ≥ 5 times in 20,000 reports is a cell of its own:
    # (1-α)/(1+α)·α^d·20000 ≥ 5 with α = e^-0.1 reaches d = 52 beyond each answer.
    assert (cells.low, cells.high) == (-52, 62)
    assert cells.index("-1000") == 0 and cells.index("1000") == len(cells) - 1
    assert cells.index("0") == 53 and cells.index("x") is None
    for value in (0, 10):
        probabilities = cells.probabilities(laplace, value)
        assert probabilities.sum() == pytest.approx(1, abs=1e-12)
        # The tail below -52 for answer 0: P(Z ≤ -53) = α^53/(1+α).
        alpha = math.exp(-0.1)
        tail = alpha ** (53 + value) / (1 + alpha)
        assert probabilities[0] == pytest.approx(tail, rel=1e-9)


def test_report_sets_include_the_tails_and_the_likelihood_ratio_sets() -> None:
    laplace = number_mechanism(0, 10, Fraction(1), "laplace")
    cells = integer_cells(laplace, [0, 10], 1_000)
    first, second = cells.probabilities(laplace, 0), cells.probabilities(laplace, 10)
    labels = {s.label for s in report_sets(cells, first, second)}
    assert {"{≤ 0}", "{≥ 10}", "{≤ -5}", "{≥ 15}", "{3}", "{<-23}", "{>33}"} <= labels

    # OUE: the reports with the answer's bit 1 and the other's 0 have the top ratio e^ε;
    # as one set they hold a quarter of answer 0's reports, far more than any single one.
    oue = choice_mechanism(5, Fraction(1), "oue")
    support = tuple(f"{j:05b}" for j in range(32))
    cells = Cells(support=support)
    first, second = cells.probabilities(oue, 0), cells.probabilities(oue, 4)
    expected = {f"1{middle:03b}0" for middle in range(8)}
    (top,) = [
        s
        for s in report_sets(cells, first, second)
        if {support[i] for i in np.flatnonzero(s.members)} == expected
    ]
    assert top.label.startswith("{ln ratio ≥ 1")
    assert first[top.members].sum() == pytest.approx(0.5 * (1 - oue.p_false))
    assert first[top.members].sum() / second[top.members].sum() == pytest.approx(
        math.exp(oue.epsilon)
    )


def test_privacy_loss_bound_stays_below_a_true_epsilon_and_exceeds_a_false_claim() -> None:
    cells = Cells(support=("yes", "no"))
    probabilities = {True: np.array([0.75, 0.25]), False: np.array([0.25, 0.75])}
    n = 1_000_000
    expected = {v: np.round(p * n).astype(np.int64) for v, p in probabilities.items()}
    bound = privacy_loss_bound(cells, expected, probabilities, (True, False), 1e-6)
    # Counts at their expectation: the bound sits just under ln 3 = 1.0986.
    assert 1.08 < bound.epsilon < math.log(3)
    assert bound.report_set in ("{yes}", "{no}") and bound.set_count == 2
    # A sampler that says "yes" for a true yes 7/8 of the time leaks ln 7 > ln 3.
    leaky = {True: np.array([875_000, 125_000]), False: expected[False]}
    assert privacy_loss_bound(cells, leaky, probabilities, (True, False), 1e-6).epsilon > 1.5


def test_the_cases_cover_every_shipped_mechanism() -> None:
    names = {c.mechanism.parameters()["mechanism"] for c in shipped_cases()}
    assert names == set(MECHANISM_NAMES) - {"none"}  # "none" claims no ε


def draw_bytes(n: int) -> int:
    """The random bytes a uniform draw below n takes: enough to hold n - 1."""
    return ((n - 1).bit_length() + 7) // 8


def largest_denominator(smallest: float) -> int:
    """The largest denominator of a double ≥ ``smallest``: 2^52 steps to its binade."""
    return 2 ** (52 - math.floor(math.log2(smallest)))


def largest_draw_bytes() -> int:
    """The most bytes one coin of any question the app accepts can draw.

    Dyadic coins: yes/no's t and Duchi's lean ≥ tanh(ε_min/2), GRR's keep > 1/k, OUE's
    q ≥ 1/(e^ε_max + 1); Duchi's coin in mechanisms/duchi.js is unreduced, 2·b·Δ. Discrete
    Laplace: t ≤ 10^decimals·Δ, times k in the exp-coin (k ≥ 64 has chance < 1/63!).
    """
    lean = largest_denominator(math.tanh(float(EPSILON_MIN) / 2))
    return max(
        draw_bytes(bound)
        for bound in (
            2 * lean * MAX_NUMBER_RANGE,
            largest_denominator(1 / MAX_OPTIONS),
            largest_denominator(1 / (math.exp(float(EPSILON_MAX)) + 1)),
            10**EPSILON_DECIMALS * MAX_NUMBER_RANGE * 64,
        )
    )


class RecordingSource:
    """The secure source, noting how many bytes each bound it is asked for takes."""

    def __init__(self) -> None:
        self.lengths: set[int] = set()

    def randbelow(self, n: int, /) -> int:
        if n > 1:
            self.lengths.add(draw_bytes(n))
        return SECURE.randbelow(n)


def test_the_python_samplers_draw_every_byte_length_the_app_can_ask_for() -> None:
    # The browser's side is in tests/browser/test_randomizer.py. 200 reports per answer:
    # the rarest length, 4 bytes (Laplace 0-10000: u/(2·10⁷) in lowest terms, u prime to
    # 10), comes with chance ≈ 0.2 per report.
    assert largest_draw_bytes() == 11  # Duchi's 2^61·10⁶
    source = RecordingSource()
    for audit_case in shipped_cases():
        for value in audit_case.values:
            for _ in range(200):
                audit_case.mechanism.randomize(value, source)
    assert source.lengths == set(range(1, largest_draw_bytes() + 1))


# ---- the shipped code passes ----


@pytest.mark.slow
def test_the_shipped_python_mechanisms_pass() -> None:
    report = run_audit(samples=3_000, browser=False)
    assert report.passed, format_report(report)
    assert len(only(report, PYTHON)) == len(shipped_cases())
    for result in report.results:
        assert result.epsilon_lower_bound <= result.claimed_epsilon


@pytest.mark.browser
def test_the_shipped_browser_script_passes(chromium: None) -> None:
    report = run_audit(samples=3_000, python=False)
    assert report.passed, format_report(report)
    assert len(only(report, BROWSER)) == len(shipped_cases())


# ---- broken variants fail ----


@pytest.mark.browser
def test_a_browser_second_coin_biased_to_three_quarters_fails(chromium: None) -> None:
    script = broken_script("bern(...rational(p.forced_yes_probability))", "bern(3n, 4n)")
    # P(yes | yes) and P(yes | no) both rise by (1-t)/4; at 10,000 reports the fit
    # statistic's noncentrality is ≥ 338 (ε = 2) against a threshold of 29: missed with
    # chance < 1e-40. The "no" report's true ratio becomes 5 at fair coins (ln 5 = 1.61 >
    # ln 3): the ε bound's expected value exceeds each claim by ≥ 6.8 standard errors.
    cases = [c for c in shipped_cases() if c.label.startswith("yes/no")]
    report = run_audit(cases, 10_000, python=False, script=script)
    for result in only(report, BROWSER):
        assert result.fit_rejected and result.epsilon_exceeded, format_report(report)
    assert not report.passed
    assert "AUDIT FAILED: 3 of 3" in format_report(report)


@pytest.mark.browser
def test_a_browser_coin_from_math_random_fails(chromium: None) -> None:
    # Same distribution (a fair coin), wrong source: only the tripwire can see it. With
    # 200 reports the second coin is reached at least once except with chance 2^-200.
    script = broken_script("bern(...rational(p.forced_yes_probability))", "Math.random() < 0.5")
    report = run_audit([case("yes/no, fair coins (ε = ln 3)")], 200, python=False, script=script)
    (result,) = only(report, BROWSER)
    assert not result.passed
    assert any("called Math.random" in problem for problem in result.problems)
    assert "the browser script called Math.random" in format_report(report)


@pytest.mark.browser
def test_a_browser_script_that_never_returns_fails_instead_of_hanging(chromium: None) -> None:
    # A rejection sampler that never accepts: below(n) loops forever for every n > 1.
    script = broken_script("if (v < n) return v;", "if (v < 0n) return v;")
    cases = [case("yes/no, fair coins (ε = ln 3)"), case("GRR, k = 5, ε = 1")]
    started = time.monotonic()
    report = run_audit(cases, 100, python=False, script=script, case_timeout=3)
    assert time.monotonic() - started < 30
    first, second = only(report, BROWSER)
    assert first.problems == ("the browser script did not finish within 3 s",)
    assert second.problems == (
        "not sampled: the browser path stopped at “yes/no, fair coins (ε = ln 3)”",
    )
    assert not report.passed


class MaskOnTheLastByte:
    """coins.js's ``below(n)`` with its mask moved from the first byte to the last,
    drawn exactly and without its rejections: the low byte keeps only its r lowest bits
    (r = bits of n - 1, mod 8), the top byte goes unmasked and a value ≥ n is drawn
    again, so the result is uniform on the values below n whose low byte is below 2^r."""

    def randbelow(self, n: int, /) -> int:
        r = (n - 1).bit_length() % 8
        if n <= 256 or r == 0:  # one byte, or a mask of 0xff: the fault changes nothing
            return SECURE.randbelow(n)
        kept = 1 << r
        index = SECURE.randbelow((n // 256) * kept + min(n % 256, kept))
        return 256 * (index >> r) + (index & (kept - 1))


@pytest.mark.slow
def test_the_laplace_case_fails_a_mask_on_the_wrong_byte() -> None:
    # The fault that no case used to see: for t = 1000 (10 bits) U keeps 2 of its low
    # byte's 8 bits, takes 16 values, and the reports 31 residues of 1000. Where a unit
    # cell should get p, it gets ≈ 32p on 31 cells in 1000 and 0 elsewhere: the fit's
    # noncentrality is ≈ 31 per report, 620,000 at 20,000 per answer, against a
    # threshold of 1,705 (1,389 degrees of freedom at the default run's level). The
    # report 1 is 32 times likelier than it should be for the answer 0 (≈ 630 reports)
    # and impossible for 1000: the ε bound is ≈ 2.8, against a claim of 1. In
    # coins.js the same fault also rejects 63 of 64 draws (the top byte goes
    # unmasked), so the audit may stop it as hung instead: a failure either way.
    laplace_case = case("discrete Laplace, 0-1000, ε = 1")
    broken = MaskOnTheLastByte()
    histograms = {
        value: Counter(str(laplace_case.mechanism.randomize(value, broken)) for _ in range(20_000))
        for value in laplace_case.values
    }
    audit_tests = 2 * sum(c.test_count for c in shipped_cases())  # as in the default run
    result = evaluate_case(laplace_case, PYTHON, histograms, FAMILYWISE_ALPHA / audit_tests)
    assert result.fit_rejected and result.epsilon_exceeded
    assert result.worst_fit is not None and result.worst_fit.statistic > 100_000


@dataclass(frozen=True)
class LoopingLaplace(DiscreteLaplace):
    """An exp-coin whose k never grows: Bernoulli(1/k) stays Bernoulli(1), forever."""

    def randomize(self, value: int, source: RandomSource = SECURE) -> int:
        k = 1
        while bernoulli(ONE / k, source):
            pass
        return value + k


@pytest.mark.slow
def test_a_python_sampler_that_loops_fails_within_its_limit() -> None:
    laplace = number_mechanism(0, 10, Fraction(1), "laplace")
    assert isinstance(laplace, DiscreteLaplace)
    looping = LoopingLaplace(laplace.min, laplace.max, laplace.gamma)
    cases = [AuditCase("looping", looping, (0, 10)), case("yes/no, fair coins (ε = ln 3)")]
    handler = signal.getsignal(signal.SIGALRM)
    started = time.monotonic()
    report = run_audit(cases, 100, browser=False, case_timeout=2)
    assert 2 <= time.monotonic() - started < 5
    hung, after = only(report, PYTHON)
    assert hung.problems == ("the server's sampler did not finish within 2 s",)
    assert after.problems == ("not sampled: the python path stopped at “looping”",)
    assert not report.passed
    assert signal.getsignal(signal.SIGALRM) == handler  # the deadline left no trace


@dataclass(frozen=True)
class TruncatedLaplace(DiscreteLaplace):
    """Noise clamped to |Z| ≤ bound: the answer can no longer hide beyond it."""

    bound: int = 30

    def randomize(self, value: int, source: RandomSource = SECURE) -> int:
        report = super().randomize(value, source)
        return min(max(report, value - self.bound), value + self.bound)


@pytest.mark.slow
def test_a_truncated_laplace_tail_fails_in_python() -> None:
    # 3,000 reports per answer, α = e^-0.1, clamped at |Z| ≤ 30: P(|Z| > 30) = 5%, all of it
    # piled on ±30. Fit noncentrality 1491 against a threshold of 147 (71 degrees of
    # freedom): never missed (37 SE). The set {≤ -21} has P = 0.064 for the answer 0 and
    # none for 10 (whose reports stop at -20): ε bound ≈ 1.7, 10 SE above the claim of 1.
    laplace = number_mechanism(0, 10, Fraction(1), "laplace")
    assert isinstance(laplace, DiscreteLaplace)
    truncated = TruncatedLaplace(laplace.min, laplace.max, laplace.gamma)
    report = run_audit([AuditCase("truncated", truncated, (0, 10))], 3_000, browser=False)
    (result,) = only(report, PYTHON)
    assert result.fit_rejected and result.epsilon_exceeded, format_report(report)


@pytest.mark.browser
def test_a_truncated_laplace_tail_fails_in_the_browser(chromium: None) -> None:
    script = broken_script(
        "return Number(x + discreteLaplace(s, t));",
        "const z = discreteLaplace(s, t);return Number(x + (z > 30n ? 30n : z < -30n ? -30n : z));",
    )
    # The same clamp in the browser, the same margins as above.
    report = run_audit([case("discrete Laplace, 0-10, ε = 1")], 3_000, python=False, script=script)
    (result,) = only(report, BROWSER)
    assert result.fit_rejected and result.epsilon_exceeded, format_report(report)


@dataclass(frozen=True)
class KeepsTooOften(GeneralizedRandomizedResponse):
    """Claims the ε of its ``keep_probability`` but keeps the true option with ``actual``."""

    actual: Fraction = Fraction(1, 2)

    def randomize(self, value: int, source: RandomSource = SECURE) -> int:
        return GeneralizedRandomizedResponse(self.k, self.actual).randomize(value, source)


def test_a_grr_that_keeps_the_truth_too_often_fails_in_python() -> None:
    # k = 5, claimed ε = 1 (p = 0.405, q = 0.149), actual p = 1/2, q = 1/8: ε = ln 4 = 1.39.
    # At 10,000 reports per answer the fit's noncentrality is 378 against a threshold of
    # 36 (4 degrees of freedom): missed with chance 2e-42. The ε bound from {option 0}
    # is ≈ 1.19 at the expected counts, 6.6 standard errors above the claim.
    grr = choice_mechanism(5, Fraction(1), "grr")
    assert isinstance(grr, GeneralizedRandomizedResponse)
    broken = KeepsTooOften(grr.k, grr.keep_probability)
    assert broken.epsilon == grr.epsilon  # the claim is unchanged
    report = run_audit([AuditCase("keeps too often", broken, (0, 4))], 10_000, browser=False)
    (result,) = only(report, PYTHON)
    assert result.fit_rejected and result.epsilon_exceeded, format_report(report)


@pytest.mark.browser
def test_a_grr_that_keeps_the_truth_too_often_fails_in_the_browser(chromium: None) -> None:
    script = broken_script(
        "if (bern(...rational(p.keep_probability))) return Number(x);",
        "if (bern(1n, 2n)) return Number(x);",
    )
    # The same keep probability of 1/2 in the browser, the same margins as above.
    report = run_audit([case("GRR, k = 5, ε = 1")], 10_000, python=False, script=script)
    (result,) = only(report, BROWSER)
    assert result.fit_rejected and result.epsilon_exceeded, format_report(report)


@dataclass(frozen=True)
class IncludesTooOften(SubsetSelection):
    """Claims the ε of its ``include_probability`` but puts the truth in the set with ``actual``."""

    actual: Fraction = Fraction(3, 5)

    def randomize(self, value: int, source: RandomSource = SECURE) -> tuple[int, ...]:
        honest = SubsetSelection(self.k, self.size, self.actual)
        return honest.randomize(value, source)


def test_a_subset_sampler_that_includes_the_truth_too_often_fails_in_python() -> None:
    # k = 8, sets of 2, claimed ε = 1 (p = 0.475), actual p = 3/5: ε = ln 4.5 = 1.50.
    # At 10,000 reports per answer one run gave χ² = 629 on 27 degrees of freedom (the
    # threshold is near 80) and an ε bound of 1.27, from "answer 0 vs 7: 5057 vs 1145".
    shipped = case("subset selection, k = 8, ε = 1").mechanism
    assert isinstance(shipped, SubsetSelection)
    broken = IncludesTooOften(shipped.k, shipped.size, shipped.include_probability)
    assert broken.epsilon == shipped.epsilon  # the claim is unchanged
    report = run_audit([AuditCase("includes too often", broken, (0, 7))], 10_000, browser=False)
    (result,) = only(report, PYTHON)
    assert result.fit_rejected and result.epsilon_exceeded, format_report(report)


@pytest.mark.browser
def test_a_subset_sampler_that_includes_the_truth_too_often_fails_in_the_browser(
    chromium: None,
) -> None:
    script = broken_script("bern(...rational(p.include_probability))", "bern(3n, 5n)")
    report = run_audit(
        [case("subset selection, k = 8, ε = 1")], 10_000, python=False, script=script
    )
    (result,) = only(report, BROWSER)
    assert result.fit_rejected and result.epsilon_exceeded, format_report(report)


@dataclass(frozen=True)
class WindowTooLikely(DiscretePiecewise):
    """Claims its own ratio R but samples with 2R: a report in the answer's window twice
    as likely, against the ones outside it, as the claimed ε allows."""

    def randomize(self, value: int, source: RandomSource = SECURE) -> int:
        d = value - self.min
        if not bernoulli(self.piecewise_share, source):  # Duchi's part as shipped
            return self.high if bernoulli(self._high_chance(d), source) else self.low
        start, heavy = self.step * d, 2 * self.ratio * self.width
        if bernoulli(heavy / (heavy + self.outputs - self.width), source):
            return start + uniform_below(self.width, source)
        other = uniform_below(self.outputs - self.width, source)
        return other if other < start else other + self.width


def test_a_piecewise_sampler_with_a_too_likely_window_fails_in_python() -> None:
    shipped = case("piecewise, 0-10, ε = 1").mechanism
    assert isinstance(shipped, DiscretePiecewise)
    broken = WindowTooLikely(**vars(shipped))
    assert broken.epsilon == shipped.epsilon  # the claim is unchanged
    report = run_audit([AuditCase("window too likely", broken, (0, 10))], 20_000, browser=False)
    (result,) = only(report, PYTHON)
    assert result.fit_rejected and result.epsilon_exceeded, format_report(report)


@pytest.mark.browser
def test_a_piecewise_sampler_with_a_too_likely_window_fails_in_the_browser(
    chromium: None,
) -> None:
    script = broken_script("bern(w * a, total)", "bern(2n * w * a, total + w * a)")
    report = run_audit([case("piecewise, 0-10, ε = 1")], 20_000, python=False, script=script)
    (result,) = only(report, BROWSER)
    assert result.fit_rejected and result.epsilon_exceeded, format_report(report)


# ---- the command ----


@pytest.mark.slow
def test_command_passes_on_the_python_path_and_says_the_browser_was_not_audited() -> None:
    result = CliRunner().invoke(audit_command, ["--samples", "300", "--python-only"])
    assert result.exit_code == 0, result.output
    assert "Audit passed" in result.stdout
    assert "not audited: the browser script (--python-only)" in result.stdout


def test_command_exits_2_without_chromium(tmp_path: Path) -> None:
    missing = tmp_path / "no-chromium"
    result = CliRunner().invoke(audit_command, ["--samples", "100", "--chromium", str(missing)])
    assert result.exit_code == 2
    assert "cannot audit the browser script" in result.stderr
    assert "--python-only" in result.stderr


@pytest.mark.browser
def test_command_fails_within_its_limit_when_a_browser_exp_coin_loops(
    chromium: None, tmp_path: Path
) -> None:
    # Bernoulli(1/k) drawn as Bernoulli(1/1) at every k: bernExp(1n, 1n) never ends, so
    # the first Laplace case hangs. It fails when its own limit (10 s at 200 reports per
    # answer) runs out, not after a deadline summed over the whole audit (the old code's,
    # 72 s here), and the cases after it are reported as not sampled.
    script = tmp_path / "samplers.js"
    script.write_text(
        broken_script("while (bern(s, t * k)) k++;", "while (bern(s, t)) k++;"),
        encoding="utf-8",
    )
    samples = 200
    laplace = next(c for c in shipped_cases() if c.label.startswith("discrete Laplace"))
    limit = case_time_limit(laplace, samples)
    started = time.monotonic()
    result = CliRunner().invoke(audit_command, ["--samples", str(samples), "--script", str(script)])
    elapsed = time.monotonic() - started
    assert result.exit_code == 1, result.output
    assert f"FAIL: the browser script did not finish within {limit:.0f} s" in result.stdout
    assert f"not sampled: the browser path stopped at “{laplace.label}”" in result.stdout
    # Around the deadline: the Python path, Chromium's start, the cases before, the kill.
    assert limit < elapsed < limit + 30, result.stdout


@pytest.mark.browser
def test_command_exits_1_on_a_broken_script(chromium: None, tmp_path: Path) -> None:
    script = tmp_path / "samplers.js"
    script.write_text(
        broken_script("bern(...rational(p.forced_yes_probability))", "Math.random() < 0.5"),
        encoding="utf-8",
    )
    result = CliRunner().invoke(audit_command, ["--samples", "200", "--script", str(script)])
    assert result.exit_code == 1, result.output
    assert "AUDIT FAILED" in result.stdout
    assert "called Math.random" in result.stdout
