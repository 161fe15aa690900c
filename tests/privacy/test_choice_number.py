"""Choice and number mechanisms: exact report distributions, ε from what is sampled, auto."""

import itertools
import json
import math
from collections import Counter
from fractions import Fraction

import numpy as np
import pytest

from survey_app.privacy import (
    DiscreteLaplace,
    DuchiBinary,
    GeneralizedRandomizedResponse,
    OptimizedUnaryEncoding,
    PlainChoice,
    PlainNumber,
    choice_mechanism,
    mechanism_from_parameters,
    number_mechanism,
    simulate,
)
from tests.support.statistics import assert_distribution

EPSILONS = ["0.01", "0.1", "0.5", "1", "1.5", "2", "3.333", "5", "10"]
DRAWS = 20_000


# --- report distributions through the real (secure) randomize ----------------------------


@pytest.mark.parametrize("value", [0, 2, 3])
def test_grr_reports_follow_probability(value: int) -> None:
    grr = GeneralizedRandomizedResponse.from_epsilon(4, Fraction(1))
    counts = Counter(grr.randomize(value) for _ in range(DRAWS))
    assert_distribution(counts, {r: float(grr.probability(r, value)) for r in range(4)})
    assert sum(grr.probability(r, value) for r in range(4)) == 1


@pytest.mark.parametrize("value", [0, 3])
def test_oue_reports_follow_probability(value: int) -> None:
    oue = OptimizedUnaryEncoding.from_epsilon(4, Fraction(1))
    reports = list(itertools.product((0, 1), repeat=4))
    assert sum(oue.probability(r, value) for r in reports) == 1
    counts = Counter(oue.randomize(value) for _ in range(DRAWS))
    assert_distribution(counts, {r: float(oue.probability(r, value)) for r in reports})


@pytest.mark.slow
@pytest.mark.parametrize("value", [0, 3, 5])
def test_discrete_laplace_reports_follow_probability(value: int) -> None:
    laplace = DiscreteLaplace.from_epsilon(0, 5, Fraction(2))  # γ = 2/5
    draws = 6_000
    counts = Counter(laplace.randomize(value) for _ in range(draws))
    support = range(value - 80, value + 81)
    assert_distribution(counts, {r: laplace.probability(r, value) for r in support})


@pytest.mark.slow
@pytest.mark.parametrize("value", [0, 3, 7, 10])
def test_duchi_reports_follow_probability(value: int) -> None:
    duchi = DuchiBinary.from_epsilon(0, 10, Fraction(1))
    counts = Counter(duchi.randomize(value) for _ in range(DRAWS))
    assert set(counts) <= {0, 1}
    assert_distribution(counts, {r: float(duchi.probability(r, value)) for r in (0, 1)})
    # P(1 | x) = 1/2 + r·u/2, u = (2x - 10)/10.
    r = duchi.lean
    assert duchi.probability(1, value) == Fraction(1, 2) + r * Fraction(2 * value - 10, 10) / 2


def test_plain_mechanisms_store_the_answer() -> None:
    assert PlainChoice(3).randomize(2) == 2
    assert PlainNumber(-5, 5).randomize(-5) == -5
    assert PlainChoice(3).probability(2, 2) == 1 and PlainChoice(3).probability(1, 2) == 0
    assert PlainChoice(3).epsilon == math.inf == PlainNumber(0, 1).epsilon


# --- ε from the exact parameters ---------------------------------------------------------


@pytest.mark.parametrize("epsilon", EPSILONS)
@pytest.mark.parametrize("k", [2, 5, 20])
def test_choice_realized_epsilon_never_exceeds_requested(epsilon: str, k: int) -> None:
    requested = Fraction(epsilon)
    for mechanism in (
        GeneralizedRandomizedResponse.from_epsilon(k, requested),
        OptimizedUnaryEncoding.from_epsilon(k, requested),
    ):
        assert mechanism.epsilon <= float(requested)
        assert mechanism.epsilon == pytest.approx(float(requested), abs=1e-11)


def test_grr_epsilon_is_ln_p_over_q_exactly() -> None:
    grr = GeneralizedRandomizedResponse.from_epsilon(5, Fraction(1))
    p, q = grr.keep_probability, grr.other_probability
    assert q == (1 - p) / 4 and p + 4 * q == 1
    assert grr.epsilon == math.log(p / q)
    assert p == Fraction(float(p))  # a float's dyadic value, as sampled


def test_oue_epsilon_and_one_probability() -> None:
    oue = OptimizedUnaryEncoding.from_epsilon(5, Fraction(1))
    q = oue.flip_to_one_probability
    assert oue.one_probability == Fraction(1, 2)
    assert oue.epsilon == math.log((1 - q) / q)
    assert q >= Fraction(1 / (math.e + 1)) - Fraction(1, 10**15)  # rounded up, not down


@pytest.mark.parametrize("epsilon", EPSILONS)
def test_number_realized_epsilon(epsilon: str) -> None:
    requested = Fraction(epsilon)
    laplace = DiscreteLaplace.from_epsilon(0, 50, requested)
    assert laplace.gamma == requested / 50  # ε = Δ·γ exactly
    assert laplace.epsilon == float(requested)
    duchi = DuchiBinary.from_epsilon(0, 50, requested)
    assert duchi.epsilon <= float(requested)
    assert duchi.epsilon == pytest.approx(float(requested), abs=1e-11)
    r = duchi.lean
    assert duchi.epsilon == math.log((1 + r) / (1 - r))


def test_laplace_gamma_is_exact_text() -> None:
    laplace = DiscreteLaplace.from_epsilon(0, 50, Fraction("0.5"))
    assert laplace.parameters() == {
        "mechanism": "discrete_laplace",
        "min": 0,
        "max": 50,
        "gamma": "1/100",
    }
    assert DiscreteLaplace.from_epsilon(0, 1, Fraction(10)).parameters()["gamma"] == "10/1"


LDP_CASES = [
    GeneralizedRandomizedResponse.from_epsilon(4, Fraction("0.7")),
    OptimizedUnaryEncoding.from_epsilon(4, Fraction("0.7")),
    DuchiBinary.from_epsilon(0, 6, Fraction("0.7")),
    DiscreteLaplace.from_epsilon(0, 6, Fraction("0.7")),
]


def reports_of(mechanism: object) -> list[object]:
    if isinstance(mechanism, GeneralizedRandomizedResponse):
        return list(range(mechanism.k))
    if isinstance(mechanism, OptimizedUnaryEncoding):
        return list(itertools.product((0, 1), repeat=mechanism.k))
    if isinstance(mechanism, DuchiBinary):
        return [0, 1]
    assert isinstance(mechanism, DiscreteLaplace)
    return list(range(-30, 37))


def values_of(mechanism: object) -> list[int]:
    if isinstance(mechanism, (GeneralizedRandomizedResponse, OptimizedUnaryEncoding)):
        return list(range(mechanism.k))
    assert isinstance(mechanism, (DuchiBinary, DiscreteLaplace))
    return list(range(mechanism.min, mechanism.max + 1))


@pytest.mark.parametrize("mechanism", LDP_CASES, ids=lambda m: m.name)
def test_ldp_ratio_from_probability(mechanism: object) -> None:
    """Every report's chance under any answer is at most e^ε times its chance under another,
    and some report reaches the bound: ε is neither overstated nor understated."""
    worst = 0.0
    for report in reports_of(mechanism):
        chances = [mechanism.probability(report, v) for v in values_of(mechanism)]  # type: ignore[attr-defined]
        worst = max(worst, math.log(max(chances) / min(chances)))
    assert worst <= mechanism.epsilon * (1 + 1e-12)  # type: ignore[attr-defined]
    assert worst == pytest.approx(mechanism.epsilon, rel=1e-9)  # type: ignore[attr-defined]


# --- parameters: exact text, round trips, refusals ----------------------------------------

ALL = [
    *LDP_CASES,
    PlainChoice(3),
    PlainNumber(-2, 7),
]


@pytest.mark.parametrize("mechanism", ALL, ids=lambda m: type(m).__name__)
def test_parameters_round_trip_through_json(mechanism: object) -> None:
    params = mechanism.parameters()  # type: ignore[attr-defined]
    again = mechanism_from_parameters(json.loads(json.dumps(params)))
    assert again == mechanism and again.parameters() == params
    assert params["mechanism"] == mechanism.name  # type: ignore[attr-defined]
    for key, value in params.items():
        if key not in ("mechanism", "k", "min", "max"):
            assert isinstance(value, str)
            numerator, denominator = map(int, value.split("/"))
            assert math.gcd(numerator, denominator) == 1


def test_parameter_keys_are_the_spec_keys() -> None:
    keys = {type(m).__name__: set(m.parameters()) for m in ALL}  # type: ignore[attr-defined]
    assert keys == {
        "GeneralizedRandomizedResponse": {"mechanism", "k", "keep_probability"},
        "OptimizedUnaryEncoding": {"mechanism", "k", "one_probability", "flip_to_one_probability"},
        "DuchiBinary": {"mechanism", "min", "max", "lean"},
        "DiscreteLaplace": {"mechanism", "min", "max", "gamma"},
        "PlainChoice": {"mechanism", "k"},
        "PlainNumber": {"mechanism", "min", "max"},
    }


@pytest.mark.parametrize(
    "params",
    [
        {"mechanism": "generalized_randomized_response", "k": 1, "keep_probability": "1/2"},
        {"mechanism": "generalized_randomized_response", "k": 4, "keep_probability": "1/5"},
        {"mechanism": "generalized_randomized_response", "k": "4", "keep_probability": "1/2"},
        {
            "mechanism": "optimized_unary_encoding",
            "k": 4,
            "one_probability": "1/2",
            "flip_to_one_probability": "1/2",
        },
        {"mechanism": "discrete_laplace", "min": 5, "max": 5, "gamma": "1/10"},
        {"mechanism": "discrete_laplace", "min": 0, "max": 5, "gamma": "0/1"},
        {"mechanism": "discrete_laplace", "min": 0, "max": 5, "gamma": "-1/10"},
        {"mechanism": "duchi_binary", "min": 0, "max": 5, "lean": "1/1"},
        {"mechanism": "duchi_binary", "min": 0.5, "max": 5, "lean": "1/2"},
        {"mechanism": "none"},
    ],
)
def test_bad_parameters_raise(params: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        mechanism_from_parameters(params)


@pytest.mark.parametrize(
    ("mechanism", "value"),
    [
        (GeneralizedRandomizedResponse.from_epsilon(3, Fraction(1)), 3),
        (GeneralizedRandomizedResponse.from_epsilon(3, Fraction(1)), -1),
        (GeneralizedRandomizedResponse.from_epsilon(3, Fraction(1)), True),
        (OptimizedUnaryEncoding.from_epsilon(3, Fraction(1)), "1"),
        (DiscreteLaplace.from_epsilon(0, 10, Fraction(1)), 11),
        (DiscreteLaplace.from_epsilon(0, 10, Fraction(1)), 2.0),
        (DuchiBinary.from_epsilon(0, 10, Fraction(1)), -1),
        (PlainChoice(2), 2),
        (PlainNumber(0, 3), 4),
    ],
)
def test_randomize_refuses_values_out_of_range(mechanism: object, value: object) -> None:
    with pytest.raises(ValueError, match="value"):
        mechanism.randomize(value)  # type: ignore[attr-defined]


@pytest.mark.parametrize("epsilon", [Fraction(0), Fraction(-1), math.inf, math.nan])
def test_bad_epsilon_raises(epsilon: object) -> None:
    with pytest.raises(ValueError, match="epsilon"):
        choice_mechanism(3, epsilon)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="epsilon"):
        number_mechanism(0, 3, epsilon)  # type: ignore[arg-type]


def test_bad_k_and_range_raise() -> None:
    with pytest.raises(ValueError, match="2 options"):
        choice_mechanism(1, Fraction(1))
    with pytest.raises(ValueError, match="min must be below max"):
        number_mechanism(3, 3, Fraction(1))
    with pytest.raises(ValueError, match="mechanism"):
        choice_mechanism(3, Fraction(1), "laplace")
    with pytest.raises(ValueError, match="mechanism"):
        number_mechanism(0, 3, Fraction(1), "grr")


# --- auto -------------------------------------------------------------------------------


@pytest.mark.parametrize("epsilon", ["0.1", "0.5", "1", "1.5", "2", "3"])
def test_auto_choice_follows_wang_et_al(epsilon: str) -> None:
    """GRR's small-share variance is (e^ε + k - 2)/(e^ε - 1)², OUE's 4e^ε/(e^ε - 1)²:
    GRR wins iff k < 3e^ε + 2. (``auto`` also weighs subset selection, which ties GRR where
    sets of one are best and otherwise wins: tests/privacy/test_subset_selection.py.)"""
    threshold = 3 * math.exp(float(epsilon)) + 2
    for k in range(2, 61):
        if abs(k - threshold) < 1e-6:
            continue
        grr, oue = (choice_mechanism(k, Fraction(epsilon), name) for name in ("grr", "oue"))
        chosen = min(grr, oue, key=lambda mechanism: mechanism.small_share_variance)
        expected = (
            "generalized_randomized_response" if k < threshold else "optimized_unary_encoding"
        )
        assert chosen.name == expected, (k, epsilon)


def test_small_share_variances_match_the_closed_forms() -> None:
    e = math.exp(1)
    grr = GeneralizedRandomizedResponse.from_epsilon(6, Fraction(1))
    oue = OptimizedUnaryEncoding.from_epsilon(6, Fraction(1))
    assert grr.small_share_variance == pytest.approx((e + 4) / (e - 1) ** 2, rel=1e-12)
    assert oue.small_share_variance == pytest.approx(4 * e / (e - 1) ** 2, rel=1e-12)


def test_named_choice_mechanisms() -> None:
    assert choice_mechanism(20, Fraction(1), "grr").name == "generalized_randomized_response"
    assert choice_mechanism(2, Fraction(1), "oue").name == "optimized_unary_encoding"


@pytest.mark.parametrize("span", [1, 10, 50, 1000])
def test_auto_number_duchi_at_small_epsilon_laplace_at_large(span: int) -> None:
    """Between the two (``auto`` also weighs the piecewise mechanism, which wins from
    ε ≈ 1: tests/privacy/test_piecewise.py)."""

    def better(epsilon: str) -> str:
        pair = (number_mechanism(0, span, Fraction(epsilon), n) for n in ("laplace", "duchi"))
        return min(pair, key=lambda mechanism: mechanism.auto_score).name

    for epsilon in ("0.01", "0.5", "1", "1.5"):
        assert better(epsilon) == "duchi_binary"
    for epsilon in ("3", "5", "10"):
        assert better(epsilon) == "discrete_laplace"


def test_auto_number_compares_the_noise_around_an_answer() -> None:
    laplace = DiscreteLaplace.from_epsilon(0, 50, Fraction(3))
    duchi = DuchiBinary.from_epsilon(0, 50, Fraction(3))
    alpha = math.exp(-3 / 50)
    assert laplace.worst_answer_variance == pytest.approx(2 * alpha / (1 - alpha) ** 2)
    assert duchi.worst_answer_variance == pytest.approx(25**2 / math.tanh(1.5) ** 2)
    assert laplace.worst_answer_variance < duchi.worst_answer_variance
    assert number_mechanism(0, 50, Fraction(3), "laplace") == laplace
    assert number_mechanism(0, 50, Fraction(3), "duchi") == duchi


def test_worst_case_variances_match_the_spec() -> None:
    laplace = DiscreteLaplace.from_epsilon(0, 50, Fraction(1))
    alpha = math.exp(-1 / 50)
    assert laplace.worst_case_variance == pytest.approx(25**2 + 2 * alpha / (1 - alpha) ** 2)
    duchi = DuchiBinary.from_epsilon(0, 50, Fraction(1))
    assert duchi.worst_case_variance == pytest.approx(25**2 / float(duchi.lean) ** 2)
    assert PlainNumber(0, 50).worst_case_variance == 25**2


@pytest.mark.parametrize("value", [0, 4, 10])
def test_number_reports_unbias_to_the_answer(value: int) -> None:
    """E[offset + scale·report] = x, exactly from probability()."""
    for mechanism in (
        DuchiBinary.from_epsilon(0, 10, Fraction("0.8")),
        DiscreteLaplace.from_epsilon(0, 10, Fraction("0.8")),
    ):
        reports = range(-400, 411) if isinstance(mechanism, DiscreteLaplace) else (0, 1)
        mean = sum(
            mechanism.probability(r, value) * (mechanism.value_offset + mechanism.value_scale * r)
            for r in reports
        )
        assert float(mean) == pytest.approx(value, abs=1e-9)


# --- the simulators draw from the same distributions ----------------------------------


@pytest.mark.parametrize("mechanism", LDP_CASES, ids=lambda m: m.name)
def test_simulators_match_probability(mechanism: object) -> None:
    rng = np.random.default_rng(4_242)
    value = 2
    reports = simulate(mechanism, np.full(DRAWS, value), rng)  # type: ignore[arg-type]
    counts: Counter[object]
    if isinstance(mechanism, OptimizedUnaryEncoding):
        counts = Counter(tuple(int(b) for b in row) for row in reports)
    else:
        counts = Counter(int(r) for r in reports)
    expected = {r: float(mechanism.probability(r, value)) for r in reports_of(mechanism)}  # type: ignore[attr-defined]
    assert_distribution(counts, expected)
