"""The exact coins and the two-coin mechanism: stated probabilities, ε, source of coins."""

import ast
import importlib
import inspect
import json
import math
import secrets
from collections import Counter
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from survey_app.privacy import (
    choosing,
    coins,
    mechanism_from_parameters,
    mechanisms,
    simulate_reports,
    yes_no_mechanism,
)
from survey_app.privacy.coins import (
    SECURE,
    bernoulli,
    bernoulli_exp_minus,
    discrete_laplace,
    uniform_below,
)
from survey_app.privacy.mechanisms.two_coin import (
    FAIR_COINS,
    TwoCoinDesign,
    randomize,
    randomize_answers,
    survey_epsilon,
)
from tests.support.statistics import assert_distribution

DRAWS = 30_000


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


@pytest.mark.slow
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

    # coins.secrets is the module every coin actually calls through.
    monkeypatch.setattr("survey_app.privacy.coins.secrets.randbelow", always_zero)
    # randbelow -> 0 makes the first coin say "truthful", so the truth comes back.
    assert randomize(False) is False
    assert randomize(True) is True
    assert calls == [2, 2]  # one fair coin each: randbelow(2) < 1


def test_forced_coin_also_comes_from_secrets(monkeypatch: pytest.MonkeyPatch) -> None:
    # randbelow -> upper - 1 fails every coin: not truthful, then forced "no".
    monkeypatch.setattr("survey_app.privacy.coins.secrets.randbelow", lambda upper: upper - 1)
    assert randomize(True) is False


def test_secure_coin_is_exact_for_dyadic_probabilities(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # P = 0.3 is the float 5404319552844595 / 2^54: exactly that many outcomes say yes.
    numerator, denominator = (0.3).as_integer_ratio()
    outcomes = iter([numerator - 1, numerator])
    monkeypatch.setattr(secrets, "randbelow", lambda upper: next(outcomes))
    assert bernoulli(Fraction(0.3)) is True
    assert bernoulli(Fraction(0.3)) is False


def imports_of(module: object, *, simulators: bool = True) -> set[str]:
    """Every module ``module`` imports; without ``simulators``, leaving out what it imports
    for type checking only and inside a simulator (a function named ``simulate...``)."""
    tree = ast.parse(inspect.getsource(module))  # type: ignore[arg-type]
    skipped: set[ast.AST] = set()
    if not simulators:
        for node in ast.walk(tree):
            simulator = isinstance(node, ast.FunctionDef) and node.name.startswith("simulate")
            typing_only = isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING"
            if simulator or typing_only:
                skipped.update(ast.walk(node))
    imported: set[str] = set()
    for node in ast.walk(tree):
        if node in skipped:
            continue
        if isinstance(node, ast.Import):
            imported.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            imported.add(node.module)
            imported.update(f"{node.module}.{alias.name}" for alias in node.names)
    return imported


def _sampler_modules() -> list[object]:
    """The coins, the choosing and every module of the mechanisms package."""
    package = Path(inspect.getfile(mechanisms)).parent
    names = sorted(path.stem for path in package.glob("*.py") if path.stem != "__init__")
    loaded = [importlib.import_module(f"{mechanisms.__name__}.{name}") for name in names]
    return [coins, choosing, mechanisms, *loaded]


def test_coins_come_from_secrets_and_no_sampler_imports_random() -> None:
    """NumPy's seeded generators may simulate, never randomize a real answer: a mechanism
    module imports NumPy only inside its simulator."""
    assert "secrets" in imports_of(coins)
    modules = _sampler_modules()
    assert len(modules) > 10  # the package was found
    for module in modules:
        assert not {name for name in imports_of(module) if name.split(".")[-1] == "random"}
        assert "numpy" not in imports_of(module, simulators=False), module


def test_randomize_answers_keeps_keys_and_randomizes_each_independently() -> None:
    draws = 30_000
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
    monkeypatch.setattr("survey_app.privacy.coins.secrets.randbelow", lambda upper: next(outcomes))
    assert randomize_answers({"a": True, "b": True}) == {"a": True, "b": False}


def test_randomize_answers_of_nothing_is_nothing() -> None:
    assert randomize_answers({}) == {}


@pytest.mark.parametrize("k", [0, 1, 2, 5, 12])
def test_survey_epsilon_is_basic_composition(k: int) -> None:
    assert survey_epsilon(k) == pytest.approx(k * math.log(3), rel=1e-15)


def test_survey_epsilon_uses_the_design() -> None:
    design = TwoCoinDesign.from_epsilon(0.5)
    assert survey_epsilon(4, design) == pytest.approx(2.0, rel=1e-9)


# --- exact coins ----------------------------------------------------------------------


class Scripted:
    """A random source that replays given integers (and records the bounds asked for)."""

    def __init__(self, outcomes: list[int]) -> None:
        self.outcomes = iter(outcomes)
        self.bounds: list[int] = []

    def randbelow(self, n: int, /) -> int:
        self.bounds.append(n)
        value = next(self.outcomes)
        assert 0 <= value < n
        return value


@pytest.mark.parametrize("probability", [Fraction(0), Fraction(3, 7), Fraction(1, 2), Fraction(1)])
def test_bernoulli_is_exact_over_every_outcome(probability: Fraction) -> None:
    # randbelow(b) takes each of its b values once: exactly a of them give True.
    b = probability.denominator
    source = Scripted(list(range(b)))
    heads = sum(bernoulli(probability, source) for _ in range(b))
    assert Fraction(heads, b) == probability
    assert source.bounds == [b] * b


@pytest.mark.parametrize("probability", [Fraction(-1, 2), Fraction(3, 2)])
def test_bernoulli_refuses_impossible_probabilities(probability: Fraction) -> None:
    with pytest.raises(ValueError, match="probability"):
        bernoulli(probability)


def test_uniform_below() -> None:
    assert uniform_below(7, Scripted([6])) == 6
    with pytest.raises(ValueError):
        uniform_below(0)
    counts = Counter(uniform_below(5) for _ in range(DRAWS))
    assert_distribution(counts, {i: 1 / 5 for i in range(5)})


@pytest.mark.parametrize(
    "gamma", [Fraction(0), Fraction(1, 3), Fraction(1), Fraction(5, 2), Fraction(7, 100)]
)
def test_bernoulli_exp_minus_has_probability_e_to_minus_gamma(gamma: Fraction) -> None:
    draws = 10_000
    heads = sum(bernoulli_exp_minus(gamma) for _ in range(draws))
    if gamma:
        assert_rate_near(heads, draws, math.exp(-gamma))
    else:
        assert heads == draws


def test_bernoulli_exp_minus_follows_the_series() -> None:
    # γ = 1/2: draws Bernoulli(1/2) (heads), then Bernoulli(1/4) (tails): K = 2 is even -> 0.
    source = Scripted([0, 3])
    assert bernoulli_exp_minus(Fraction(1, 2), source) is False
    assert source.bounds == [2, 4]


def laplace_pmf(gamma: Fraction, z: int) -> float:
    alpha = math.exp(-gamma)
    return (1 - alpha) / (1 + alpha) * alpha ** abs(z)


@pytest.mark.slow
@pytest.mark.parametrize("gamma", [Fraction(1, 2), Fraction(3, 2), Fraction(1, 7), Fraction(3)])
def test_discrete_laplace_matches_its_pmf(gamma: Fraction) -> None:
    draws = 6_000
    counts = Counter(discrete_laplace(gamma) for _ in range(draws))
    width = max(counts, key=abs)
    support = range(-abs(width) - 5, abs(width) + 6)
    assert_distribution(counts, {z: laplace_pmf(gamma, z) for z in support})
    # And its variance 2α/(1 - α)², within 5 standard errors of the sample variance.
    alpha = math.exp(-gamma)
    variance = 2 * alpha / (1 - alpha) ** 2
    second = sum(c * z * z for z, c in counts.items()) / draws
    fourth = laplace_fourth_moment(gamma)
    assert abs(second - variance) <= 5 * math.sqrt((fourth - variance**2) / draws)


def laplace_fourth_moment(gamma: Fraction) -> float:
    return sum(laplace_pmf(gamma, z) * z**4 for z in range(-2_000, 2_001))


def test_discrete_laplace_refuses_non_positive_gamma() -> None:
    with pytest.raises(ValueError, match="gamma"):
        discrete_laplace(Fraction(0))


def test_secure_source_is_secrets(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("survey_app.privacy.coins.secrets.randbelow", lambda n: n - 1)
    assert SECURE.randbelow(10) == 9


# --- the two-coin design's exact form -------------------------------------------------


def test_fair_coins_parameters_are_exact_text() -> None:
    assert FAIR_COINS.parameters() == {
        "mechanism": "two_coin_randomized_response",
        "truth_probability": "1/2",
        "forced_yes_probability": "1/2",
    }
    assert FAIR_COINS.probability(True, True) == Fraction(3, 4)
    assert FAIR_COINS.probability(False, True) == Fraction(1, 4)
    assert FAIR_COINS.probability(True, False) == Fraction(1, 4)
    assert (FAIR_COINS.p_true, FAIR_COINS.p_false) == (0.75, 0.25)
    # At π = 0: λ = 1/4, variance (1/4)(3/4)/(1/2)² = 3/4.
    assert FAIR_COINS.small_share_variance == 0.75


def test_fair_coins_epsilon_is_ln3_from_the_fractions() -> None:
    assert FAIR_COINS.epsilon == math.log(3)
    assert yes_no_mechanism(None) is FAIR_COINS


@pytest.mark.parametrize("epsilon", ["0.01", "0.1", "0.5", "1", "1.099", "2", "3.333", "7", "10"])
def test_from_epsilon_realized_never_exceeds_requested(epsilon: str) -> None:
    requested = Fraction(epsilon)
    design = yes_no_mechanism(requested)
    assert isinstance(design.truth_probability, Fraction)
    assert design.forced_yes_probability == Fraction(1, 2)
    assert design.epsilon <= float(requested)
    assert design.epsilon == pytest.approx(float(requested), abs=1e-12)
    # ε from the exact fractions: ln((1 + t)/(1 - t)), computed exactly.
    t = design.truth_probability
    assert design.epsilon == math.log((1 + t) / (1 - t))
    # The exact ratio stays below e^ε at high precision too (not only as floats).
    import decimal

    with decimal.localcontext() as context:
        context.prec = 50
        ratio = decimal.Decimal((1 + t).numerator * (1 - t).denominator) / decimal.Decimal(
            (1 + t).denominator * (1 - t).numerator
        )
        assert ratio <= decimal.Decimal(epsilon).exp()


@pytest.mark.parametrize("design", [FAIR_COINS, TwoCoinDesign(0.6, 0.3), TwoCoinDesign(0.3, 0.8)])
def test_two_coin_ldp_ratio_from_probability(design: TwoCoinDesign) -> None:
    worst = max(
        design.probability(report, a) / design.probability(report, b)
        for report in (True, False)
        for a in (True, False)
        for b in (True, False)
    )
    assert math.log(worst) == pytest.approx(design.epsilon, rel=1e-15)
    for value in (True, False):
        assert design.probability(True, value) + design.probability(False, value) == 1


@pytest.mark.parametrize(
    "design", [FAIR_COINS, TwoCoinDesign(0.6, 0.3), yes_no_mechanism(Fraction("0.5"))]
)
def test_two_coin_parameters_round_trip(design: TwoCoinDesign) -> None:
    params = json.loads(json.dumps(design.parameters()))
    again = mechanism_from_parameters(params)
    assert again == design and again.parameters() == design.parameters()
    assert TwoCoinDesign.from_parameters(params) == design


def test_two_coin_parameters_from_legacy_float_rows() -> None:
    # Rows stored before parameters became text hold REAL t and f: exact dyadic rationals.
    legacy = {"mechanism": "two_coin_randomized_response"}
    design = TwoCoinDesign.from_parameters(
        {**legacy, "truth_probability": 0.6, "forced_yes_probability": 0.5}
    )
    assert design.truth_probability == Fraction(0.6)


@pytest.mark.parametrize(
    "params",
    [
        {"mechanism": "two_coin_randomized_response", "truth_probability": "1/2"},
        {"mechanism": "generalized_randomized_response", "truth_probability": "1/2"},
        {
            "mechanism": "two_coin_randomized_response",
            "truth_probability": "0.5",
            "forced_yes_probability": "1/2",
        },
        {
            "mechanism": "two_coin_randomized_response",
            "truth_probability": "1/1",
            "forced_yes_probability": "1/2",
        },
        {"mechanism": "telepathy"},
        {},
    ],
)
def test_bad_parameters_raise(params: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        mechanism_from_parameters(params)


@pytest.mark.parametrize("value", ["yes", 2, None, 0.5])
def test_randomize_refuses_non_yes_no_values(value: object) -> None:
    with pytest.raises(ValueError, match="yes/no"):
        FAIR_COINS.randomize(value)  # type: ignore[arg-type]


def test_randomize_at_an_epsilon_matches_probability() -> None:
    design = yes_no_mechanism(Fraction("0.5"))
    for truth in (True, False):
        yes = sum(design.randomize(truth) for _ in range(DRAWS))
        assert_rate_near(yes, DRAWS, float(design.probability(True, truth)))
