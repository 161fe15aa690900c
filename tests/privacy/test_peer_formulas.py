"""The exact MSE formulas the peer benchmark (benchmarks/bench_peers.py) compares auto with.

Each closed form is checked against an enumeration of the mechanism's whole channel: every
output y, its probability given every answer, and the per-report unbiased estimate f_v(y),
so that the summed MSE per report is Σ_v (Σ_y ρ_y f_v(y)² - π_v²), ρ = the output
distribution under the truth π. The enumerations also check that each f is unbiased and
each channel is ε-LDP. Only the formulas are tested, not the third-party libraries (the
benchmark measures those): the test suite needs none of them.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest

from benchmarks.bench_peers import (
    HadamardBlocks,
    Support,
    auto_design,
    grr,
    hadamard_response,
    local_hashing,
    olh_range,
    optimized_unary,
    subset_selection,
    symmetric_unary,
    threshold_of,
    thresholded_histogram,
    true_shares,
)
from survey_app.privacy import choice_mechanism
from survey_app.privacy.mechanisms._shares import share_variance

SHARES = np.array([0.4, 0.3, 0.2, 0.1, 0.0])


def enumerated_mse(channel: np.ndarray, estimate: np.ndarray, shares: np.ndarray) -> float:
    """channel[x, y] = P(y | x); estimate[y, v] = f_v(y). Checks unbiasedness first."""
    np.testing.assert_allclose(channel.sum(axis=1), 1.0, atol=1e-12)
    np.testing.assert_allclose(channel @ estimate, np.eye(len(shares)), atol=1e-9)
    outputs = shares @ channel
    return float(np.sum(outputs @ estimate**2 - shares**2))


def worst_ratio(channel: np.ndarray) -> float:
    return float(np.max(channel.max(axis=0) / channel.min(axis=0)))


def support_estimate(supports: np.ndarray, design: Support) -> np.ndarray:
    """f_v(y) = ([y supports v] - q)/(p - q)."""
    return (supports - design.q) / (design.p - design.q)


def test_grr_formula_is_the_enumerated_channel():
    k, epsilon = 5, 0.8
    design = grr(k, epsilon)
    channel = np.where(np.eye(k) == 1, design.p, design.q)
    assert worst_ratio(channel) == pytest.approx(math.exp(epsilon))
    expected = enumerated_mse(channel, support_estimate(np.eye(k), design), SHARES)
    assert design.mse(SHARES) == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("design", [symmetric_unary(1.3), optimized_unary(1.3)])
def test_unary_formulas_are_the_enumerated_bit_vectors(design):
    k = 4
    vectors = np.array(list(itertools.product((0, 1), repeat=k)))
    keep = np.where(np.eye(k)[:, None, :] == 1, design.p, design.q)  # P(bit v = 1 | x)
    channel = np.prod(np.where(vectors[None] == 1, keep, 1 - keep), axis=2)
    assert worst_ratio(channel) == pytest.approx(math.exp(1.3))
    shares = SHARES[:k] / SHARES[:k].sum()
    expected = enumerated_mse(channel, support_estimate(vectors, design), shares)
    assert design.mse(shares) == pytest.approx(expected, rel=1e-12)


def test_local_hashing_formula_is_the_enumerated_family_of_all_hashes():
    """Every hash [k] → [g] equally likely (the ideal hash): another option is supported
    with exactly 1/g, whatever the answer."""
    k, g, epsilon = 4, 3, 1.1
    design = local_hashing(epsilon, g)
    hashes = list(itertools.product(range(g), repeat=k))
    outputs = [(h, y) for h in hashes for y in range(g)]
    grr_g = np.where(np.eye(g) == 1, design.p, (1 - design.p) / (g - 1))
    channel = np.array([[grr_g[h[x], y] / len(hashes) for h, y in outputs] for x in range(k)])
    supports = np.array([[h[v] == y for v in range(k)] for h, y in outputs], dtype=float)
    assert worst_ratio(channel) == pytest.approx(math.exp(epsilon))
    shares = SHARES[:k] / SHARES[:k].sum()
    expected = enumerated_mse(channel, support_estimate(supports, design), shares)
    assert design.mse(shares) == pytest.approx(expected, rel=1e-12)


def test_olh_ties_oue_when_its_hash_range_is_exactly_e_to_the_epsilon_plus_one():
    epsilon = math.log(3)  # e^ε = 3: round(e^ε) + 1 = 4 = e^ε + 1, no rounding
    assert olh_range(epsilon) == 4
    olh, oue = local_hashing(epsilon, 4), optimized_unary(epsilon)
    assert (olh.p, olh.q) == pytest.approx((oue.p, oue.q))
    shares = true_shares("zipf", 16)
    assert olh.mse(shares) == pytest.approx(oue.mse(shares), rel=1e-12)
    # The rare-option variance per report, 4e^ε/(e^ε - 1)² (Wang et al. 2017): 3 at e^ε = 3.
    assert olh.mse(np.zeros(1)) == pytest.approx(3.0)


def test_subset_selection_formula_is_the_enumerated_sets():
    k, size, epsilon = 5, 2, 0.7
    design = subset_selection(k, epsilon, size)
    sets = list(itertools.combinations(range(k), size))
    inside, outside = math.comb(k - 1, size - 1), math.comb(k - 1, size)
    channel = np.array(
        [
            [design.p / inside if x in s else (1 - design.p) / outside for s in sets]
            for x in range(k)
        ]
    )
    supports = np.array([[v in s for v in range(k)] for s in sets], dtype=float)
    assert worst_ratio(channel) == pytest.approx(math.exp(epsilon))
    expected = enumerated_mse(channel, support_estimate(supports, design), SHARES)
    assert design.mse(SHARES) == pytest.approx(expected, rel=1e-12)
    assert subset_selection(k, epsilon, 1) == pytest.approx(grr(k, epsilon))


def test_the_thresholded_histogram_rates_are_laplace_tails():
    from scipy.stats import laplace

    epsilon = 1.5
    theta = threshold_of(epsilon)
    assert 0.5 < theta < 1
    design = thresholded_histogram(epsilon, theta)
    noise = laplace(scale=2 / epsilon)
    assert design.p == pytest.approx(noise.sf(theta - 1))  # 1 + noise above θ
    assert design.q == pytest.approx(noise.sf(theta))  # noise alone above θ
    rare = design.mse(np.zeros(1))
    for other in (0.5, 1.0, theta - 0.05, theta + 0.05):
        assert rare <= thresholded_histogram(epsilon, other).mse(np.zeros(1))


def _hadamard(size: int) -> np.ndarray:
    return np.array([[(-1) ** bin(i & j).count("1") for j in range(size)] for i in range(size)])


def test_high_privacy_hadamard_response_formula_is_the_enumerated_channel():
    k, epsilon = 5, 0.9
    design = hadamard_response(k, epsilon)
    assert isinstance(design, Support)
    rows = _hadamard(8)[1 : k + 1]  # option x uses row x + 1; the output is in C_x or not
    e = math.exp(epsilon)
    channel = np.where(rows == 1, e / (e + 1), 1 / (e + 1)) / 4  # 4 outputs on each side
    estimate = ((e + 1) / (e - 1) * rows).T
    assert worst_ratio(channel) == pytest.approx(e)
    assert design.mse(SHARES) == pytest.approx(enumerated_mse(channel, estimate, SHARES))


@pytest.mark.parametrize("order", [None, (3, 0, 4, 1, 2)])
def test_block_hadamard_response_formula_is_the_enumerated_channel(order):
    """pure-ldp's construction at ε > 1: B blocks of b outputs; option i (permuted) at
    position i mod (b - 1) + 1 of block i // (b - 1); uniform output with a, else uniform
    on the b/2 outputs of its block where its Hadamard row is +1. At k = 5 the second
    block is not full, so where the permutation puts each option changes the MSE."""
    k, epsilon = 5, 1.6
    design = hadamard_response(k, epsilon, order)
    assert isinstance(design, HadamardBlocks)
    blocks, size = design.blocks, design.block_size
    assert (blocks, size) == (4, 4)
    e = math.exp(epsilon)
    uniform, scale = 2 * blocks / (2 * blocks - 1 + e), (2 * blocks - 1 + e) / (e - 1)
    row = _hadamard(size)
    placed = order or tuple(range(k))
    in_set = np.zeros((k, blocks * size))  # option x's set S_x
    in_block = np.zeros((k, blocks * size))
    for x in range(k):
        block, position = divmod(placed[x], size - 1)
        outputs = block * size + np.arange(size)
        in_block[x, outputs] = 1
        in_set[x, outputs] = row[position + 1] == 1
    channel = uniform / (blocks * size) + (1 - uniform) * in_set * 2 / size
    estimate = (scale * (2 * in_set - in_block)).T
    assert worst_ratio(channel) == pytest.approx(e)
    assert design.mse(SHARES) == pytest.approx(enumerated_mse(channel, estimate, SHARES))


@pytest.mark.parametrize(("k", "epsilon"), [(4, "0.5"), (8, "1"), (32, "3"), (64, "2")])
def test_autos_summed_formula_is_the_apps_exact_variance(k, epsilon):
    """The benchmark's auto MSE is Σ_v share_variance(π_v) from auto's exact rates."""
    shares = true_shares("zipf", k)
    mechanism = choice_mechanism(k, Fraction(epsilon))
    rates = mechanism.exact_rates  # type: ignore[attr-defined]
    exact = sum(share_variance(*rates, Fraction(float(share))) for share in shares)
    assert auto_design(k, epsilon)[1].mse(shares) == pytest.approx(float(exact), rel=1e-12)
