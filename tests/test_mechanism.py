"""The two-coin mechanism: its stated probabilities, its ε, and its source of coins."""

import ast
import inspect
import math
import secrets

import numpy as np
import pytest

from survey_app.privacy import mechanism, simulate_reports
from survey_app.privacy.mechanism import (
    FAIR_COINS,
    TwoCoinDesign,
    randomize,
    randomize_answers,
    survey_epsilon,
)

DRAWS = 200_000


def assert_rate_near(successes: int, draws: int, expected: float) -> None:
    """Within 5 standard errors: a false alarm about once in 1.7 million runs."""
    se = math.sqrt(expected * (1 - expected) / draws)
    assert abs(successes / draws - expected) <= 5 * se, (successes / draws, expected)


def test_fair_coins_report_yes_with_three_quarters_and_one_quarter() -> None:
    assert FAIR_COINS.p_yes_given_yes == 0.75
    assert FAIR_COINS.p_yes_given_no == 0.25
    assert FAIR_COINS.is_fair


def test_fair_coins_are_ln3_private() -> None:
    assert FAIR_COINS.epsilon == pytest.approx(math.log(3), rel=1e-15)


@pytest.mark.parametrize(
    ("t", "f", "p_yes_yes", "p_yes_no", "epsilon"),
    [
        # P(yes|yes) = t + (1-t) f, P(yes|no) = (1-t) f; ε from the worse of both reports.
        (0.6, 0.3, 0.72, 0.12, math.log(0.72 / 0.12)),
        # f = 0.9: the "no" report is the revealing one, 0.55 / 0.05 = 11.
        (0.5, 0.9, 0.95, 0.45, math.log(11)),
        (0.8, 0.5, 0.9, 0.1, math.log(9)),
    ],
)
def test_general_design_probabilities_and_epsilon(
    t: float, f: float, p_yes_yes: float, p_yes_no: float, epsilon: float
) -> None:
    design = TwoCoinDesign(truth_probability=t, forced_yes_probability=f)
    assert design.p_yes_given_yes == pytest.approx(p_yes_yes, rel=1e-12)
    assert design.p_yes_given_no == pytest.approx(p_yes_no, rel=1e-12)
    assert design.epsilon == pytest.approx(epsilon, rel=1e-12)
    assert not design.is_fair


@pytest.mark.parametrize("epsilon", [0.1, 0.5, 1.0, math.log(3), 2.0, 5.0])
def test_from_epsilon_round_trips(epsilon: float) -> None:
    design = TwoCoinDesign.from_epsilon(epsilon)
    assert design.forced_yes_probability == 0.5
    assert design.truth_probability == pytest.approx(
        (math.exp(epsilon) - 1) / (math.exp(epsilon) + 1), rel=1e-12
    )
    assert design.epsilon == pytest.approx(epsilon, rel=1e-9)


def test_from_epsilon_ln3_gives_fair_coins() -> None:
    assert TwoCoinDesign.from_epsilon(math.log(3)).truth_probability == pytest.approx(0.5)


@pytest.mark.parametrize("epsilon", [0.0, -1.0, math.inf, math.nan])
def test_from_epsilon_rejects_non_positive_or_infinite(epsilon: float) -> None:
    with pytest.raises(ValueError, match="epsilon"):
        TwoCoinDesign.from_epsilon(epsilon)


@pytest.mark.parametrize(
    ("t", "f"), [(0.0, 0.5), (1.0, 0.5), (-0.1, 0.5), (1.5, 0.5), (0.5, 0.0), (0.5, 1.0)]
)
def test_invalid_design_raises(t: float, f: float) -> None:
    with pytest.raises(ValueError):
        TwoCoinDesign(truth_probability=t, forced_yes_probability=f)


# P(report yes) = t + (1 - t) f for a true yes, (1 - t) f for a true no.
DISTRIBUTIONS = [
    (FAIR_COINS, True, 0.75),
    (FAIR_COINS, False, 0.25),
    (TwoCoinDesign(0.6, 0.3), True, 0.72),
    (TwoCoinDesign(0.6, 0.3), False, 0.12),
    (TwoCoinDesign(0.3, 0.8), True, 0.86),
    (TwoCoinDesign(0.3, 0.8), False, 0.56),
]


@pytest.mark.parametrize(("design", "truth", "expected"), DISTRIBUTIONS)
def test_randomize_matches_stated_distribution(
    design: TwoCoinDesign, truth: bool, expected: float
) -> None:
    yes = sum(randomize(truth, design) for _ in range(DRAWS))
    assert_rate_near(yes, DRAWS, expected)


@pytest.mark.parametrize(("design", "truth", "expected"), DISTRIBUTIONS)
def test_simulated_reports_match_the_same_distribution(
    design: TwoCoinDesign, truth: bool, expected: float
) -> None:
    rng = np.random.default_rng(31_337)
    reports = simulate_reports(np.full(DRAWS, truth), design, rng)
    assert reports.dtype == np.bool_ and reports.shape == (DRAWS,)
    assert_rate_near(int(reports.sum()), DRAWS, expected)


def test_simulated_reports_keep_shape_and_flip_each_answer_independently() -> None:
    rng = np.random.default_rng(2_718)
    reports = simulate_reports(np.ones((DRAWS, 2), dtype=np.int64), FAIR_COINS, rng)
    assert reports.shape == (DRAWS, 2)
    assert_rate_near(int(reports.all(axis=1).sum()), DRAWS, 9 / 16)


def test_simulated_reports_are_reproducible_from_a_seed() -> None:
    answers = np.arange(1_000) % 3 == 0
    first = simulate_reports(answers, FAIR_COINS, np.random.default_rng(5))
    again = simulate_reports(answers, FAIR_COINS, np.random.default_rng(5))
    assert np.array_equal(first, again)


def test_simulated_reports_refuse_non_boolean_answers() -> None:
    with pytest.raises(ValueError, match="booleans"):
        simulate_reports(np.array([0, 1, 2]), FAIR_COINS, np.random.default_rng(0))


def test_randomize_draws_its_coins_from_secrets(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []

    def always_zero(upper: int) -> int:
        calls.append(upper)
        return 0

    # mechanism.secrets is the module the mechanism actually calls through.
    monkeypatch.setattr(mechanism.secrets, "randbelow", always_zero)
    # randbelow -> 0 makes the first coin say "truthful", so the truth comes back.
    assert randomize(False) is False
    assert randomize(True) is True
    assert calls == [2, 2]  # one fair coin each: randbelow(2) < 1


def test_forced_coin_also_comes_from_secrets(monkeypatch: pytest.MonkeyPatch) -> None:
    # randbelow -> upper - 1 fails every coin: not truthful, then forced "no".
    monkeypatch.setattr(mechanism.secrets, "randbelow", lambda upper: upper - 1)
    assert randomize(True) is False


def test_secure_coin_is_exact_for_dyadic_probabilities(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # P = 0.3 is the float 5404319552844595 / 2^54: exactly that many outcomes say yes.
    numerator, denominator = (0.3).as_integer_ratio()
    outcomes = iter([numerator - 1, numerator])
    monkeypatch.setattr(secrets, "randbelow", lambda upper: next(outcomes))
    assert mechanism._secure_bernoulli(0.3) is True
    assert mechanism._secure_bernoulli(0.3) is False


def test_mechanism_source_never_imports_random() -> None:
    tree = ast.parse(inspect.getsource(mechanism))
    imported: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            imported.add(node.module)
            imported.update(f"{node.module}.{alias.name}" for alias in node.names)
    assert "secrets" in imported
    assert not {name for name in imported if name.split(".")[-1] == "random"}


def test_randomize_answers_keeps_keys_and_randomizes_each_independently() -> None:
    draws = 100_000
    both_yes = first_yes = second_yes = 0
    for _ in range(draws):
        reported = randomize_answers({"cheated": True, "smoked": True})
        assert reported.keys() == {"cheated", "smoked"}
        first_yes += reported["cheated"]
        second_yes += reported["smoked"]
        both_yes += reported["cheated"] and reported["smoked"]
    assert_rate_near(first_yes, draws, 0.75)
    assert_rate_near(second_yes, draws, 0.75)
    # Independent coins: 3/4 * 3/4. Shared coins would give 3/4.
    assert_rate_near(both_yes, draws, 9 / 16)


def test_randomize_answers_flips_fresh_coins_per_key(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # First key: truthful coin heads -> truth. Second key: both coins tails -> "no".
    outcomes = iter([0, 1, 1])
    monkeypatch.setattr(mechanism.secrets, "randbelow", lambda upper: next(outcomes))
    assert randomize_answers({"a": True, "b": True}) == {"a": True, "b": False}


def test_randomize_answers_of_nothing_is_nothing() -> None:
    assert randomize_answers({}) == {}


@pytest.mark.parametrize("k", [0, 1, 2, 5, 12])
def test_survey_epsilon_is_basic_composition(k: int) -> None:
    assert survey_epsilon(k) == pytest.approx(k * math.log(3), rel=1e-15)


def test_survey_epsilon_uses_the_design() -> None:
    design = TwoCoinDesign.from_epsilon(0.5)
    assert survey_epsilon(4, design) == pytest.approx(2.0, rel=1e-9)
