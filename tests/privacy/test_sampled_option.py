"""Tick all that apply, one sampled option: the sampler's exact distribution, every
likelihood ratio between two sets, the per-option estimator's unbiasedness and exact
variance, its intervals' coverage, the report's encoding, and a sampler whose report
reveals how many options were ticked, caught exactly and by the audit's statistics."""

from __future__ import annotations

import itertools
import math
from collections import Counter
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
import pytest

from survey_app.cli.audit import PYTHON, format_report, run_audit
from survey_app.domain.survey_limits import QUESTION_TYPES
from survey_app.privacy.audit import AuditCase, shipped_cases, tick_all_cases
from survey_app.privacy.choosing import mechanism_for, yes_no_mechanism
from survey_app.privacy.coins import SECURE, RandomSource, bernoulli, uniform_below
from survey_app.privacy.mechanisms import UNWIRED, SampledOption
from survey_app.privacy.mechanisms.cells import CellRule
from survey_app.privacy.question_types import AnswerSpace, QuestionType
from survey_app.privacy.rationals import within_epsilon
from survey_app.privacy.ticked_shares import estimate_ticked
from survey_app.privacy.wire import ReportFormat
from tests.privacy.test_subset_selection import exact_distribution
from tests.support.statistics import assert_distribution

EPSILONS = ["0.01", "0.1", "0.5", "1", "2", "3.333", "5", "10"]


def every_set(k: int) -> list[tuple[int, ...]]:
    """Every answer to a question of k options, as its k bits: 2^k of them."""
    return list(itertools.product((0, 1), repeat=k))


def every_report(k: int) -> list[tuple[int, int]]:
    return [(index, bit) for index in range(k) for bit in (0, 1)]


def drawn(mechanism: SampledOption, value: tuple[int, ...]) -> dict[Hashable, Fraction]:
    """The exact distribution of ``mechanism.randomize(value)``, every coin path enumerated."""
    return exact_distribution(lambda source: mechanism.randomize(value, source))


# --- the sampler's exact distribution -----------------------------------------------------

#: Small denominators for p, so every path of the Bernoulli coin can be enumerated.
SMALL_DESIGNS = [(2, Fraction(3, 4)), (3, Fraction(2, 3)), (4, Fraction(5, 7)), (5, Fraction(4, 5))]


@pytest.mark.parametrize(("k", "p"), SMALL_DESIGNS)
def test_the_sampler_draws_exactly_the_stated_distribution(k: int, p: Fraction) -> None:
    """For every set of the k options (the empty one and the full one included), every
    coin path of ``randomize`` gives ``probability`` exactly: (1/k)·p for the drawn
    option's truth, (1/k)·(1 - p) for its opposite, and every report has one shape."""
    mechanism = SampledOption(k, p)
    for value in every_set(k):
        chances = drawn(mechanism, value)
        assert sum(chances.values()) == 1
        assert chances == {r: mechanism.probability(r, value) for r in every_report(k)}


def test_the_secure_sampler_and_the_simulation_follow_the_probabilities() -> None:
    mechanism = SampledOption.from_epsilon(4, Fraction(1))
    value = (1, 0, 1, 1)
    expected = {r: float(mechanism.probability(r, value)) for r in every_report(4)}
    assert_distribution(Counter(mechanism.randomize(value) for _ in range(20_000)), expected)
    simulated = mechanism.simulate(np.tile(value, (20_000, 1)), np.random.default_rng(5))
    assert_distribution(Counter((int(j), int(b)) for j, b in simulated), expected)


# --- ε: every likelihood ratio between two sets -------------------------------------------


@pytest.mark.parametrize("epsilon", EPSILONS)
@pytest.mark.parametrize("k", [2, 3, 4, 5])
def test_every_likelihood_ratio_between_two_sets_is_within_e_to_the_epsilon(
    k: int, epsilon: str
) -> None:
    """Over all pairs of sets S, S' (sizes 0 to k) and every report, P(r|S)/P(r|S')
    reaches exactly p/(1 - p), whose logarithm is the ε shown: never above the ε asked
    for (exactly) and within 1e-9 of it."""
    requested = Fraction(epsilon)
    mechanism = SampledOption.from_epsilon(k, requested)
    reports = every_report(k)
    chances = [[mechanism.probability(r, value) for r in reports] for value in every_set(k)]
    assert all(sum(row) == 1 for row in chances)
    worst = max(
        a / b
        for row_a, row_b in itertools.product(chances, repeat=2)
        for a, b in zip(row_a, row_b, strict=True)
    )
    p = mechanism.keep_probability
    assert worst == mechanism.worst_ratio == p / (1 - p)
    assert within_epsilon(worst, requested)
    assert mechanism.epsilon <= float(requested)
    assert mechanism.epsilon == pytest.approx(float(requested), rel=1e-9, abs=1e-12)


def test_a_tighter_request_is_refused_by_the_exact_check() -> None:
    mechanism = SampledOption.from_epsilon(6, Fraction(1))
    assert within_epsilon(mechanism.worst_ratio, Fraction(1))
    assert not within_epsilon(mechanism.worst_ratio, Fraction(1) - Fraction(1, 10**9))


def test_the_parameters_refuse_what_would_not_be_private_or_useful() -> None:
    with pytest.raises(ValueError, match="between"):
        SampledOption(4, Fraction(1, 2))  # the tick no likelier kept than flipped
    with pytest.raises(ValueError, match="between"):
        SampledOption(4, Fraction(1))  # ε infinite
    with pytest.raises(ValueError, match="Fraction"):
        SampledOption(4, 0.7)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="options"):
        SampledOption(1, Fraction(3, 4))


# --- a sampler whose report reveals how many options were ticked --------------------------


@dataclass(frozen=True)
class DrawsFromTheTicked(SampledOption):
    """Claims the honest ε but draws the option among the ticked ones when there are any,
    then reports it "ticked" with p: the drawn option and bit give |S| > 0 away."""

    def randomize(self, value: Sequence[int], source: RandomSource = SECURE) -> tuple[int, int]:
        ticked = [index for index, bit in enumerate(self.ticked(value)) if bit]
        if not ticked:
            return super().randomize(value, source)
        chosen = ticked[uniform_below(len(ticked), source)]
        return chosen, int(bernoulli(self.keep_probability, source))


def test_a_sampler_revealing_the_number_ticked_is_caught_exactly() -> None:
    """Its exact distribution, by enumeration, breaks e^ε between {0} and the empty set:
    (0, 1) has p against (1 - p)/k, a ratio of k·p/(1 - p)."""
    honest = SampledOption(3, Fraction(2, 3))
    broken = DrawsFromTheTicked(honest.k, honest.keep_probability)
    chances = {value: drawn(broken, value) for value in every_set(3)}
    worst = max(
        chances[a].get(r, Fraction(0)) / chances[b][r]
        for a, b in itertools.product(every_set(3), repeat=2)
        for r in every_report(3)
        if chances[b].get(r)
    )
    assert worst == 3 * honest.worst_ratio > honest.worst_ratio
    # ...while the honest sampler's enumeration stays at e^ε (the test above, and here).
    honest_chances = {value: drawn(honest, value) for value in every_set(3)}
    assert (
        max(
            honest_chances[a][r] / honest_chances[b][r]
            for a, b in itertools.product(every_set(3), repeat=2)
            for r in every_report(3)
        )
        == honest.worst_ratio
    )


def test_the_audit_passes_the_honest_sampler_and_fails_one_revealing_the_number_ticked() -> None:
    """The audit's own statistics (``run_audit``, Python path) on the case written for
    the type. Broken: ε = 1 claimed, k = 5; answer {0} gives (0, 1) with p = 0.73 against
    0.054 for none ticked: the true ε is ln(5e) = 2.6, and 3,000 reports per answer put
    the bound above 2 and the fit's χ² in the thousands."""
    (case,) = tick_all_cases()
    assert case in shipped_cases()  # what ``survey-app audit`` runs
    space = AnswerSpace(QuestionType.MULTIPLE, options=5)
    assert case.mechanism == mechanism_for(space, Fraction(1))
    honest = run_audit([case], 3_000, browser=False)
    assert honest.passed, format_report(honest)
    mechanism = case.mechanism
    assert isinstance(mechanism, SampledOption)
    broken = DrawsFromTheTicked(mechanism.k, mechanism.keep_probability)
    assert broken.epsilon == mechanism.epsilon  # the claim is unchanged
    report = run_audit([AuditCase("reveals |S|", broken, case.values)], 3_000, browser=False)
    (result,) = [r for r in report.results if r.path == PYTHON]
    assert result.fit_rejected and result.epsilon_exceeded, format_report(report)
    assert result.epsilon_lower_bound > 2


# --- estimation: unbiased shares and their exact variance ----------------------------------


def _binomial(n: int, chance: Fraction, count: int) -> Fraction:
    return math.comb(n, count) * chance**count * (1 - chance) ** (n - count)


@pytest.mark.parametrize("share", [Fraction(0), Fraction(1, 5), Fraction(1, 2), Fraction(1)])
def test_given_the_reports_about_an_option_its_share_is_unbiased_with_the_stated_variance(
    share: Fraction,
) -> None:
    """From the exact distribution: a respondent drawn from a population where a share
    π ticks option 1 reports (1, 1) with chance (1/k)·λ, λ = (1 - p) + (2p - 1)π; so
    given n_j reports about it, c_j is Binomial(n_j, λ), and summing over c_j gives
    E[π̂] = π and Var[π̂] = ``conditional_variance`` exactly, π̂ inverting
    ``exact_rates`` as ``ticked_shares`` does."""
    mechanism = SampledOption.from_epsilon(3, Fraction(1))
    p = mechanism.keep_probability
    with_tick, without = (1, 1, 0), (0, 0, 1)
    about = sum(
        (share if v == with_tick else 1 - share) * mechanism.probability((1, b), v)
        for v in (with_tick, without)
        for b in (0, 1)
    )
    ticked = share * mechanism.probability((1, 1), with_tick) + (1 - share) * (
        mechanism.probability((1, 1), without)
    )
    rate = ticked / about
    assert about == Fraction(1, 3) and rate == (1 - p) + (2 * p - 1) * share
    p_true, p_false = mechanism.exact_rates  # what the estimator inverts
    for n_j in (1, 2, 7):
        estimates = {c: (Fraction(c, n_j) - p_false) / (p_true - p_false) for c in range(n_j + 1)}
        mean = sum(_binomial(n_j, rate, c) * e for c, e in estimates.items())
        second = sum(_binomial(n_j, rate, c) * e**2 for c, e in estimates.items())
        assert mean == share
        assert second - mean**2 == mechanism.conditional_variance(share, n_j)


def test_the_variance_over_surveys_sums_the_joint_distribution_of_n_j_and_c_j() -> None:
    """n = 6 reports, k = 3: every (n_j, c_j) weighed exactly, n_j = 0 left out (no
    estimate): the variance is ``share_variance``, about k·λ(1 - λ)/(n(2p - 1)²)."""
    mechanism = SampledOption.from_epsilon(3, Fraction(1, 2))
    p, n, share = mechanism.keep_probability, 6, Fraction(1, 4)
    rate = (1 - p) + (2 * p - 1) * share
    weight = mean = second = Fraction(0)
    for n_j in range(1, n + 1):
        for c in range(n_j + 1):
            chance = _binomial(n, Fraction(1, 3), n_j) * _binomial(n_j, rate, c)
            estimate = (Fraction(c, n_j) - (1 - p)) / (2 * p - 1)
            weight, mean, second = (
                weight + chance,
                mean + chance * estimate,
                second + chance * estimate**2,
            )
    assert mean / weight == share
    assert second / weight - (mean / weight) ** 2 == mechanism.share_variance(share, n)
    large = 3_000
    per_report = large * mechanism.share_variance(Fraction(0), large)
    assert per_report == pytest.approx(mechanism.small_share_variance, rel=2e-3)


@pytest.mark.slow
def test_simulated_shares_are_unbiased_with_the_stated_variance() -> None:
    """Seeded: 2,000 surveys of n = 500 (k = 6, ε = 1), options ticked independently.
    Each option's mean estimate within 5 standard errors of its share, and its variance
    within 5 standard errors of ``share_variance``."""
    mechanism = SampledOption.from_epsilon(6, Fraction(1))
    p = float(mechanism.keep_probability)
    shares = np.array([0.7, 0.4, 0.25, 0.1, 0.03, 0.0])
    rng = np.random.default_rng(2026)
    runs, n = 2_000, 500
    answers = (rng.random((runs, n, 6)) < shares).astype(np.int64)
    reports = mechanism.simulate(answers, rng)
    for j, share in enumerate(shares):
        about = (reports[..., 0] == j).sum(axis=-1)
        ticked = ((reports[..., 0] == j) & (reports[..., 1] == 1)).sum(axis=-1)
        estimates = (ticked / about - (1 - p)) / (2 * p - 1)
        variance = float(mechanism.share_variance(Fraction(share), n))
        assert abs(estimates.mean() - share) <= 5 * math.sqrt(variance / runs)
        assert abs(estimates.var(ddof=1) - variance) <= 5 * variance * math.sqrt(2 / (runs - 1))


# --- intervals: each option's and the simultaneous ones ------------------------------------


def test_an_option_no_report_was_about_has_no_estimate() -> None:
    mechanism = SampledOption.from_epsilon(3, Fraction(1))
    p_true, p_false = map(float, mechanism.exact_rates)
    estimate = estimate_ticked([200, 0, 100], [100, 0, 40], p_true, p_false)
    assert estimate is not None and estimate.options[1] is None and estimate.about[1] == 0
    first = estimate.options[0]
    joint = estimate.simultaneous[0]
    assert first is not None and joint is not None
    assert joint.low < first.low and first.high < joint.high
    assert joint.confidence == pytest.approx(1 - 0.05 / 3)
    assert estimate_ticked([0, 0, 0], [0, 0, 0], 0.7, 0.3) is None


def coverage(k: int, epsilon: Fraction, n: int, runs: int, seed: int) -> tuple[float, float]:
    """Seeded surveys of n respondents who tick options independently (shares from 0.6
    down to 0): the lowest share of surveys over the options in which an option's 95%
    interval covers its share among the respondents, and the share in which every
    option's simultaneous interval covers at once."""
    mechanism = SampledOption.from_epsilon(k, epsilon)
    p_true, p_false = map(float, mechanism.exact_rates)
    shares = np.linspace(0.6, 0.0, k)
    rng = np.random.default_rng(seed)
    covered = np.zeros(k)
    together = 0
    for _ in range(runs):
        answers = (rng.random((n, k)) < shares).astype(np.int64)
        truth = answers.mean(axis=0)  # the intervals are for these
        reports = mechanism.simulate(answers, rng)
        about = [int((reports[:, 0] == j).sum()) for j in range(k)]
        ticked = [int(((reports[:, 0] == j) & (reports[:, 1] == 1)).sum()) for j in range(k)]
        estimate = estimate_ticked(about, ticked, p_true, p_false)
        assert estimate is not None

        def holds(interval: object, share: float) -> bool:
            return interval is None or interval.low <= share <= interval.high  # type: ignore[attr-defined]

        covered += [holds(e, s) for e, s in zip(estimate.options, truth, strict=True)]
        together += all(holds(e, s) for e, s in zip(estimate.simultaneous, truth, strict=True))
    return float(covered.min()) / runs, together / runs


#: Surveys per (setting, n): the floor 0.95 - 5·√(0.95·0.05/runs) is 0.926.
COVERAGE_RUNS = 2_000
COVERAGE_SETTINGS = [(5, Fraction(1)), (10, Fraction(2)), (20, Fraction(1, 2))]


@pytest.mark.slow
@pytest.mark.parametrize("n", [30, 100, 300])
@pytest.mark.parametrize(("k", "epsilon"), COVERAGE_SETTINGS)
def test_each_option_and_all_options_at_once_are_covered_at_the_nominal_rate(
    k: int, epsilon: Fraction, n: int
) -> None:
    """The table in docs/tick-all.md: each option's own interval, and all simultaneous
    intervals at once, cover the respondents' shares in ≥ 95% of surveys less 5 standard
    errors."""
    each, together = coverage(k, epsilon, n, COVERAGE_RUNS, seed=k * 1000 + n)
    floor = 0.95 - 5 * math.sqrt(0.95 * 0.05 / COVERAGE_RUNS)
    assert each >= floor and together >= floor, (each, together)


# --- which mechanism, by exact variance ----------------------------------------------------


def per_option_coins(k: int, epsilon: Fraction) -> Fraction:
    """One report's variance of a rare option's share when every option gets its own coin
    at ε/k (the optimal binary design, exact): the budget split k ways."""
    p_true, p_false = yes_no_mechanism(epsilon / k).exact_rates
    return p_false * (1 - p_false) / (p_true - p_false) ** 2


@pytest.mark.parametrize("epsilon", ["0.1", "0.5", "1", "2", "4", "8"])
@pytest.mark.parametrize("k", [2, 3, 5, 10, 20])
def test_one_sampled_option_beats_coins_on_every_option_for_a_rare_option(
    k: int, epsilon: str
) -> None:
    """auto's criterion: sampling's k·p(1 - p)/(2p - 1)² against the split coins'
    e^(ε/k)/(e^(ε/k) - 1)²: sinh(ε/2) ≥ k·sinh(ε/2k), so sampling wins at every k ≥ 2
    (the ratios are the table in docs/tick-all.md). ``auto`` takes it."""
    requested = Fraction(epsilon)
    sampled = SampledOption.from_epsilon(k, requested)
    assert sampled.small_share_variance < float(per_option_coins(k, requested))
    space = AnswerSpace(QuestionType.MULTIPLE, options=k)
    assert mechanism_for(space, requested, include_unwired=True) == sampled
    assert mechanism_for(space, requested, "sampled", include_unwired=True) == sampled


def test_the_type_is_offered_with_its_one_mechanism() -> None:
    space = AnswerSpace(QuestionType.MULTIPLE, options=4)
    assert SampledOption not in UNWIRED and QuestionType.MULTIPLE in QUESTION_TYPES
    assert mechanism_for(space, Fraction(1), "sampled") == mechanism_for(space, Fraction(1))
    assert QuestionType.MULTIPLE.answer_format is ReportFormat.BITS
    assert QuestionType.MULTIPLE.has_options and not QuestionType.MULTIPLE.estimates_mean


# --- reports: encoding, validation, cells, exports, influence ------------------------------


def test_a_report_posts_at_one_width_and_is_stored_as_one_integer() -> None:
    mechanism = SampledOption.from_epsilon(12, Fraction(1))
    wire = mechanism.report_format
    assert wire is ReportFormat.OPTION_BIT and not wire.marks_options
    assert wire.parse("07:1") == (7, 1) and wire.store((7, 1)) == 15 and wire.load(15) == (7, 1)
    assert wire.from_audit_key(wire.audit_key((11, 0))) == (11, 0)
    assert wire.audit_value((0, 1, 1)) == "011"
    assert mechanism.finite_support() == tuple(f"{j}:{b}" for j in range(12) for b in (0, 1))
    report = mechanism.randomize((0,) * 12)  # none of these: a report like any other
    mechanism.check_report(report)


@pytest.mark.parametrize("report", [(12, 1), (-1, 0), (3, 2), (3, True), (3,), (3, 1, 0), 7, "3:1"])
def test_a_report_that_no_honest_device_sends_is_refused(report: object) -> None:
    mechanism = SampledOption.from_epsilon(12, Fraction(1))
    with pytest.raises(ValueError, match="report"):
        mechanism.check_report(report)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="report"):
        mechanism.probability(report, (0,) * 12)  # type: ignore[arg-type]


@pytest.mark.parametrize("value", [(0, 1), (0, 1, 2), (True, 0, 0), (0, 0, 0, 0), "011"])
def test_an_answer_that_is_not_k_bits_is_refused(value: object) -> None:
    mechanism = SampledOption.from_epsilon(3, Fraction(1))
    with pytest.raises(ValueError, match="bits"):
        mechanism.randomize(value)  # type: ignore[arg-type]


def test_cells_exports_and_the_central_count_follow_the_report() -> None:
    mechanism = SampledOption.from_epsilon(3, Fraction(1))
    stored = mechanism.report_format.store((1, 1))
    cells = mechanism.tally_cells()
    assert [c.name for c in cells] == ["n", "0:0", "0:1", "1:0", "1:1", "2:0", "2:1"]
    assert cells[0].rule is CellRule.COUNT and {c.rule for c in cells[1:]} == {CellRule.EQUALS}
    assert [cell.amount(stored) for cell in cells] == [1, 0, 0, 0, 1, 0, 0]
    assert mechanism.export_columns("used") == ["used.option", "used.ticked"]
    assert mechanism.export_cells(stored, ["a", "b", "c"]) == [1, 1]
    counting = mechanism.central_counting()
    assert counting.categories == 6 and counting.report_sensitivity == 1
    assert counting.contribution((1, 1)) == (0, 0, 0, 1, 0, 0)
    design = mechanism.r_rr_design("used")
    assert math.isclose(design["p"] + design["p0"] + design["p1"], 1.0)


def test_one_forged_report_moves_a_share_by_at_most_the_stated_influence() -> None:
    """Among reports of which m are about option 0, swap one for any other honest report:
    option 0's unbiased share moves by at most ``report_influence(m)``, and some swap
    moves it that far."""
    mechanism = SampledOption.from_epsilon(3, Fraction(1))
    p = mechanism.keep_probability

    def share(about: int, ticked: int) -> Fraction:
        return (Fraction(ticked, about) - (1 - p)) / (2 * p - 1)

    m = 4
    moves = set()
    for ticked in range(m + 1):
        for before, after in itertools.product(every_report(3), repeat=2):
            about_after = m - (before[0] == 0) + (after[0] == 0)
            ticked_after = ticked - (before == (0, 1)) + (after == (0, 1))
            present = {(0, 1): ticked, (0, 0): m - ticked}.get(before, 1)
            if not present:
                continue  # ``before`` is not among these reports
            moves.add(abs(share(about_after, ticked_after) - share(m, ticked)))
    assert max(moves) == mechanism.report_influence(m) == 1 / (m * (2 * p - 1))


def test_the_parameters_are_stored_as_exact_text_and_read_back() -> None:
    mechanism = SampledOption.from_epsilon(9, Fraction(3, 2))
    stored = mechanism.parameters()
    assert isinstance(stored["keep_probability"], str)
    assert SampledOption.from_parameters(stored) == mechanism
    with pytest.raises(ValueError, match="between"):
        SampledOption.from_parameters({**stored, "keep_probability": "1/3"})


def test_its_words_name_it_and_mark_what_was_stored() -> None:
    mechanism = SampledOption.from_epsilon(3, Fraction(1))
    assert "only whether you ticked it is stored" in str(mechanism.description())
    texts = [(str(text), flag) for text, flag in mechanism.report_texts((2, 0), ["a", "b", "c"])]
    assert texts == [
        ("a", False),
        ("b", False),
        ("c", True),
        ("ticked", False),
        ("not ticked", True),
    ]
    assert not any(flag for _, flag in mechanism.report_texts(None, ["a", "b", "c"]))
