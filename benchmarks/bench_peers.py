"""Peer benchmark: auto's accuracy for choice questions against the best frequency oracle
that five third-party LDP libraries offer (multi-freq-ldpy, pure-ldp, ldp-toolbox,
diffprivlib, OpenDP), for k in {2, 4, 8, 16, 20, 32, 64} and ε in {0.5, 1, 2, 3, 4}, a
uniform and a Zipf (s = 1.1) truth, n = 10,000 respondents.

The measure is the MSE of the unbiased (debiased, unclipped) shares, summed over the k
options. The libraries' own aggregators clip negative estimates and renormalize (a
different, biased estimator whose error depends on the truth in other ways); here every
library's reports go through the plain unbiased estimator with the library's own
parameters (p, q, g, ω, θ), or its own decoder without clipping (Hadamard response).

Simulation noise at tens of runs is several percent of an MSE, too coarse to judge a
target of 1.02, so the comparison is made in two steps:

1. Each library's randomizer is run on seeded data and its measured MSE compared with the
   exact formula of that mechanism at the library's parameters (within 5 standard errors
   of the mean over runs): the formula is shown to describe what the library does.
2. auto's exact MSE (its exact rates: ``choice_mechanism(k, ε)``, which weighs GRR, OUE
   and subset selection) is divided by the smallest formula MSE among the peers'
   mechanisms. That ratio has no simulation noise.

At every grid point the mechanism with the smallest formula is also run through its
library's code together with auto through ``survey_app.privacy.simulate``, on the same
data, for a measured ratio; and auto's measured MSE over ``--app-runs`` runs is compared
with its formula.

Formulas, per report (divide by n), for true shares π:

* a support estimator (GRR/DE, SUE = basic RAPPOR, OUE, BLH, OLH, SS, THE, Hadamard
  response at ε ≤ 1): option v is counted in a report with probability p if it is the
  answer, q if not, so each count is Binomial(n, λ_v), λ_v = q + (p - q)π_v, and the
  estimate (count/n - q)/(p - q) has variance λ_v(1 - λ_v)/(p - q)² per report (the
  sampling of answers included). For local hashing q = 1/g, exact for a hash that is
  uniform and independent across users.
* summation with histogram encoding (SHE): π_v(1 - π_v) + 2(2/ε)² per option.
* Hadamard response at ε > 1 (pure-ldp's block construction): option v's estimate per
  report is c(2·[y ∈ S_v] - [y in v's block]) with c = (2B - 1 + e^ε)/(e^ε - 1), whose
  square is c²·[y in v's block], so its variance is c²(a/B + (1 - a)Π_v) - π_v², where
  a = 2B/(2B - 1 + e^ε) is the chance of a uniform output and Π_v the total true share of
  the options that share v's block (after the library's random permutation).

    .venv/bin/python benchmarks/bench_peers.py                  # ~15 min on 2 CPUs
    .venv/bin/python benchmarks/bench_peers.py --quick          # a few minutes
    .venv/bin/python benchmarks/bench_peers.py --markdown-only  # PEERS.md from the JSON

Needs the benchmark-only extra: ``pip install -e '.[peers]'`` (see PEERS.md).
"""

from __future__ import annotations

import argparse
import datetime
import functools
import json
import math
import random
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any, cast

import numpy as np
import numpy.typing as npt

if __package__ in (None, ""):  # run as a script: make ``benchmarks`` and ``survey_app`` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

HERE = Path(__file__).resolve().parent
REPO = HERE.parent

from benchmarks.loadlib import git_commit  # noqa: E402
from survey_app.privacy import choice_mechanism, simulate  # noqa: E402

KS = (2, 4, 8, 16, 20, 32, 64)
EPSILONS = ("0.5", "1", "2", "3", "4")
TRUTHS = ("uniform", "zipf")
ZIPF_S = 1.1
RESPONDENTS = 10_000
TARGET = 1.02
DEFAULT_SEED = 20261126
#: Where every library's randomizer is checked against its formula (Zipf truth); a
#: mechanism for two values only (diffprivlib's Binary) at k = 2, ε = 2.
VALIDATION_POINTS = ((8, "0.5"), (20, "1"), (64, "3"))
TWO_VALUE_POINT = (2, "2")

Shares = npt.NDArray[np.float64]


def true_shares(truth: str, k: int) -> Shares:
    """Uniform, or Zipf with exponent ZIPF_S (option j's share ∝ 1/(j + 1)^s)."""
    if truth == "uniform":
        return np.full(k, 1.0 / k)
    weights = 1.0 / np.arange(1, k + 1) ** ZIPF_S
    return weights / weights.sum()


# --------------------------------------------------------------------------- formulas


@dataclass(frozen=True)
class Support:
    """A report counts option v with probability p if v is the answer, q if not."""

    p: float
    q: float

    def mse(self, shares: Shares) -> float:
        """Summed over options, per report: Σ λ_v(1 - λ_v)/(p - q)², λ_v = q + (p - q)π_v."""
        rate = self.q + (self.p - self.q) * shares
        return float(np.sum(rate * (1 - rate)) / (self.p - self.q) ** 2)


@dataclass(frozen=True)
class NoisyHistogram:
    """Summation with histogram encoding: the one-hot answer plus Laplace(scale) noise on
    every coordinate, the estimate the mean report."""

    scale: float

    def mse(self, shares: Shares) -> float:
        return float(np.sum(shares * (1 - shares)) + len(shares) * 2 * self.scale**2)


@dataclass(frozen=True)
class HadamardBlocks:
    """Hadamard response for ε > 1 as pure-ldp builds it (Acharya, Sun and Zhang 2019):
    ``blocks`` blocks of ``block_size`` outputs; option i (after the permutation
    ``order``) sits at position i mod (b - 1) + 1 of block i // (b - 1)."""

    epsilon: float
    blocks: int
    block_size: int
    order: tuple[int, ...]

    def mse(self, shares: Shares) -> float:
        e = math.exp(self.epsilon)
        uniform = 2 * self.blocks / (2 * self.blocks - 1 + e)  # a: the output is uniform
        scale = (2 * self.blocks - 1 + e) / (e - 1)
        block_of = np.array(self.order) // (self.block_size - 1)
        block_share = np.bincount(block_of, weights=shares)[block_of]
        second = scale**2 * (uniform / self.blocks + (1 - uniform) * block_share)
        return float(np.sum(second - shares**2))


Design = Support | NoisyHistogram | HadamardBlocks


def grr(k: int, epsilon: float) -> Support:
    """Generalized randomized response (direct encoding, k-RR)."""
    p = math.exp(epsilon) / (math.exp(epsilon) + k - 1)
    return Support(p, (1 - p) / (k - 1))


def symmetric_unary(epsilon: float) -> Support:
    """SUE, basic one-hash RAPPOR: every bit kept with e^(ε/2)/(e^(ε/2) + 1)."""
    p = math.exp(epsilon / 2) / (math.exp(epsilon / 2) + 1)
    return Support(p, 1 - p)


def optimized_unary(epsilon: float) -> Support:
    """OUE (Wang et al. 2017): the answer's bit 1 with 1/2, every other with 1/(e^ε + 1)."""
    return Support(0.5, 1 / (math.exp(epsilon) + 1))


def olh_range(epsilon: float) -> int:
    """OLH's hash range as all three libraries round it: round(e^ε) + 1."""
    return int(round(math.exp(epsilon))) + 1


def local_hashing(epsilon: float, g: int) -> Support:
    """GRR on a hash into g values; another option is supported with 1/g."""
    return Support(math.exp(epsilon) / (math.exp(epsilon) + g - 1), 1 / g)


def subset_size(k: int, epsilon: float) -> int:
    """ω as multi-freq-ldpy and ldp-toolbox choose it: max(1, rint(k/(e^ε + 1)))."""
    return int(max(1, np.rint(k / (math.exp(epsilon) + 1))))


def subset_selection(k: int, epsilon: float, size: int) -> Support:
    """Subset selection with sets of ``size``: the answer in the set with ωe^ε/(ωe^ε + k - ω)."""
    e = math.exp(epsilon)
    p = size * e / (size * e + k - size)
    return Support(p, (size - p) / (k - 1))


def threshold_of(epsilon: float) -> float:
    """THE's threshold θ in [1/2, 1] as the libraries find it (minimize_scalar, bounded)."""
    from scipy.optimize import minimize_scalar

    result = minimize_scalar(
        lambda theta: thresholded_histogram(epsilon, theta).mse(np.zeros(1)),
        bounds=(0.5, 1.0),
        method="bounded",
    )
    return float(result.x)


def thresholded_histogram(epsilon: float, theta: float) -> Support:
    """THE: a coordinate of the noisy histogram above θ counts as support."""
    return Support(
        1 - 0.5 * math.exp(epsilon * (theta - 1) / 2), 0.5 * math.exp(-epsilon * theta / 2)
    )


def hadamard_response(k: int, epsilon: float, order: Sequence[int] | None = None) -> Design:
    """pure-ldp's Hadamard response: the high-privacy form at ε ≤ 1 (output in C_x with
    e^ε/(e^ε + 1), another option's set holds it with 1/2), the block form above."""
    if epsilon <= 1:
        return Support(math.exp(epsilon) / (math.exp(epsilon) + 1), 0.5)
    blocks = 2 ** int(math.floor(math.log2(min(2 * k, math.exp(epsilon)))))
    block_size = 2 ** int(math.ceil(math.log2(k / blocks + 1)))
    return HadamardBlocks(epsilon, blocks, block_size, tuple(order or range(k)))


@dataclass(frozen=True)
class PeerMechanism:
    """One frequency oracle as the libraries offer it, its exact design at (k, ε)."""

    key: str
    label: str
    libraries: tuple[str, ...]
    design: Callable[[int, float], Design]


PEER_MECHANISMS = (
    PeerMechanism(
        "grr",
        "GRR / DE",
        ("multi-freq-ldpy", "pure-ldp", "ldp-toolbox", "diffprivlib", "OpenDP"),
        grr,
    ),
    PeerMechanism(
        "sue",
        "SUE (basic RAPPOR)",
        ("multi-freq-ldpy", "pure-ldp", "ldp-toolbox", "OpenDP"),
        lambda k, e: symmetric_unary(e),
    ),
    PeerMechanism(
        "oue",
        "OUE",
        ("multi-freq-ldpy", "pure-ldp", "ldp-toolbox"),
        lambda k, e: optimized_unary(e),
    ),
    PeerMechanism(
        "blh",
        "BLH",
        ("multi-freq-ldpy", "pure-ldp", "ldp-toolbox"),
        lambda k, e: local_hashing(e, 2),
    ),
    PeerMechanism(
        "olh",
        "OLH",
        ("multi-freq-ldpy", "pure-ldp", "ldp-toolbox"),
        lambda k, e: local_hashing(e, olh_range(e)),
    ),
    PeerMechanism(
        "ss",
        "SS",
        ("multi-freq-ldpy", "ldp-toolbox"),
        lambda k, e: subset_selection(k, e, subset_size(k, e)),
    ),
    PeerMechanism(
        "she",
        "SHE",
        ("multi-freq-ldpy", "pure-ldp", "ldp-toolbox"),
        lambda k, e: NoisyHistogram(2 / e),
    ),
    PeerMechanism(
        "the",
        "THE",
        ("multi-freq-ldpy", "pure-ldp", "ldp-toolbox"),
        lambda k, e: thresholded_histogram(e, threshold_of(e)),
    ),
    PeerMechanism("hr", "Hadamard response", ("pure-ldp",), hadamard_response),
)
PEERS_BY_KEY = {peer.key: peer for peer in PEER_MECHANISMS}


def auto_design(k: int, epsilon: str) -> tuple[str, Support]:
    """auto's pick (subset selection weighed too) and its exact rates, as floats."""
    mechanism = choice_mechanism(k, Fraction(epsilon))
    p_true, p_false = mechanism.exact_rates  # type: ignore[attr-defined]
    name = mechanism.name
    if name == "subset_selection":
        name = f"subset_selection ω={mechanism.size}"  # type: ignore[attr-defined]
    return name, Support(float(p_true), float(p_false))


# --------------------------------------------------------------------------- libraries
#
# Each runner randomizes ``values`` with one library's own client code and returns the
# unbiased estimate of every option's share, with the design (exact parameters) the
# library actually used. Imports are inside: the formulas above need no library.

Runner = Callable[[int, float, npt.NDArray[np.int64]], tuple[Shares, Design]]


def _support_estimate(counts: npt.ArrayLike, n: int, design: Support) -> Shares:
    return (np.asarray(counts, dtype=np.float64) / n - design.q) / (design.p - design.q)


def _hash_support(reports: Sequence[tuple[int, int]], k: int, g: int) -> Shares:
    """Local hashing's counts, as the libraries' aggregators compute them: option v is
    supported by (y, seed) when xxh32(str(v), seed) mod g == y."""
    import xxhash

    counts = np.zeros(k)
    for value, seed in reports:
        for v in range(k):
            if xxhash.xxh32(str(v), seed=int(seed)).intdigest() % g == value:
                counts[v] += 1
    return counts


def _member_counts(reports: Sequence[Any], k: int) -> Shares:
    counts = np.zeros(k)
    for report in reports:
        counts[np.asarray(report, dtype=np.int64)] += 1
    return counts


def mf_grr(k: int, epsilon: float, values: npt.NDArray[np.int64]) -> tuple[Shares, Design]:
    from multi_freq_ldpy.pure_frequency_oracles.GRR import GRR_Client

    design = grr(k, epsilon)
    reports = [GRR_Client(int(x), k, epsilon) for x in values]
    return _support_estimate(np.bincount(reports, minlength=k), len(values), design), design


def mf_unary(optimal: bool) -> Runner:
    def run(k: int, epsilon: float, values: npt.NDArray[np.int64]) -> tuple[Shares, Design]:
        from multi_freq_ldpy.pure_frequency_oracles.UE import UE_Client

        design = optimized_unary(epsilon) if optimal else symmetric_unary(epsilon)
        counts = np.sum([UE_Client(int(x), k, epsilon, optimal) for x in values], axis=0)
        return _support_estimate(counts, len(values), design), design

    return run


def mf_hashing(optimal: bool) -> Runner:
    def run(k: int, epsilon: float, values: npt.NDArray[np.int64]) -> tuple[Shares, Design]:
        from multi_freq_ldpy.pure_frequency_oracles.LH import LH_Client

        g = olh_range(epsilon) if optimal else 2
        design = local_hashing(epsilon, g)
        reports = [LH_Client(int(x), k, epsilon, optimal) for x in values]
        return _support_estimate(_hash_support(reports, k, g), len(values), design), design

    return run


def mf_subset(k: int, epsilon: float, values: npt.NDArray[np.int64]) -> tuple[Shares, Design]:
    from multi_freq_ldpy.pure_frequency_oracles.SS import SS_Client

    design = subset_selection(k, epsilon, subset_size(k, epsilon))
    counts = _member_counts([SS_Client(int(x), k, epsilon) for x in values], k)
    return _support_estimate(counts, len(values), design), design


def mf_histogram(thresholded: bool) -> Runner:
    def run(k: int, epsilon: float, values: npt.NDArray[np.int64]) -> tuple[Shares, Design]:
        from multi_freq_ldpy.pure_frequency_oracles.HE import HE_Client, find_tresh
        from scipy.optimize import minimize_scalar

        reports = np.array([HE_Client(int(x), k, epsilon) for x in values])
        if not thresholded:
            return reports.mean(axis=0), NoisyHistogram(2 / epsilon)
        theta = minimize_scalar(find_tresh, bounds=[0.5, 1], method="bounded", args=(epsilon)).x
        design = thresholded_histogram(epsilon, float(theta))
        return _support_estimate((reports > theta).sum(axis=0), len(values), design), design

    return run


def _identity(x: int) -> int:
    return x


def pl_direct(k: int, epsilon: float, values: npt.NDArray[np.int64]) -> tuple[Shares, Design]:
    from pure_ldp.frequency_oracles.direct_encoding import DEClient

    client = DEClient(epsilon, k, index_mapper=_identity)
    design = Support(client.p, client.q)
    reports = [client.privatise(int(x)) for x in values]
    return _support_estimate(np.bincount(reports, minlength=k), len(values), design), design


def pl_unary(optimal: bool) -> Runner:
    def run(k: int, epsilon: float, values: npt.NDArray[np.int64]) -> tuple[Shares, Design]:
        from pure_ldp.frequency_oracles.unary_encoding import UEClient

        client = UEClient(epsilon, k, use_oue=optimal, index_mapper=_identity)
        design = Support(client.p, client.q)
        counts = np.sum([client.privatise(int(x)) for x in values], axis=0)
        return _support_estimate(counts, len(values), design), design

    return run


def pl_hashing(optimal: bool) -> Runner:
    def run(k: int, epsilon: float, values: npt.NDArray[np.int64]) -> tuple[Shares, Design]:
        from pure_ldp.frequency_oracles.local_hashing import LHClient

        client = LHClient(epsilon, k, g=2, use_olh=optimal, index_mapper=_identity)
        design = local_hashing(epsilon, client.g)
        reports = [client.privatise(int(x)) for x in values]
        return _support_estimate(_hash_support(reports, k, client.g), len(values), design), design

    return run


def pl_hadamard(k: int, epsilon: float, values: npt.NDArray[np.int64]) -> tuple[Shares, Design]:
    """The library's own decoder, without its clip-and-normalize (normalization=-1)."""
    from pure_ldp.frequency_oracles.hadamard_response import (
        HadamardResponseClient,
        HadamardResponseServer,
    )

    server = HadamardResponseServer(epsilon, k, index_mapper=_identity)
    client = HadamardResponseClient(epsilon, k, server.get_hash_funcs(), index_mapper=_identity)
    reports = [client.privatise(int(x)) for x in values]
    estimate = np.asarray(server.hr.decode_string(reports, iffast=0, normalization=-1))
    order = [int(server.hr.permute[x]) for x in range(k)] if epsilon > 1 else None
    return estimate, hadamard_response(k, epsilon, order)


def lt_grr(k: int, epsilon: float, values: npt.NDArray[np.int64]) -> tuple[Shares, Design]:
    from ldp_toolbox.protocols.frequency.grr import GeneralizedRandomizedResponse

    protocol = GeneralizedRandomizedResponse(k, epsilon)
    design = Support(protocol.p, protocol.q)
    reports = [protocol.obfuscate(int(x)) for x in values]
    return _support_estimate(np.bincount(reports, minlength=k), len(values), design), design


def lt_unary(optimal: bool) -> Runner:
    def run(k: int, epsilon: float, values: npt.NDArray[np.int64]) -> tuple[Shares, Design]:
        from ldp_toolbox.protocols.frequency.ue import UnaryEncoding

        protocol = UnaryEncoding(k, epsilon, optimal=optimal)
        design = Support(protocol.p, protocol.q)
        counts = np.sum([protocol.obfuscate(int(x)) for x in values], axis=0)
        return _support_estimate(counts, len(values), design), design

    return run


def lt_hashing(optimal: bool) -> Runner:
    def run(k: int, epsilon: float, values: npt.NDArray[np.int64]) -> tuple[Shares, Design]:
        from ldp_toolbox.protocols.frequency.lh import LocalHashing

        protocol = LocalHashing(k, epsilon, optimal=optimal)
        design = Support(protocol.p, protocol.q)
        reports = [protocol.obfuscate(int(x)) for x in values]
        counts = _hash_support(reports, k, protocol.g)
        return _support_estimate(counts, len(values), design), design

    return run


def lt_subset(k: int, epsilon: float, values: npt.NDArray[np.int64]) -> tuple[Shares, Design]:
    from ldp_toolbox.protocols.frequency.ss import SubsetSelection

    protocol = SubsetSelection(k, epsilon)
    design = Support(protocol.p, protocol.q)
    counts = _member_counts([protocol.obfuscate(int(x)) for x in values], k)
    return _support_estimate(counts, len(values), design), design


def dpl_categorical(k: int, epsilon: float, values: npt.NDArray[np.int64]) -> tuple[Shares, Design]:
    """diffprivlib's categorical exponential mechanism with every pair at utility 1: a
    balanced tree, so the answer with probability ∝ 1 and every other ∝ e^(-ε): GRR."""
    from diffprivlib.mechanisms import ExponentialCategorical

    pairs = [(str(i), str(j), 1) for i in range(k) for j in range(i + 1, k)]
    mechanism = ExponentialCategorical(epsilon=epsilon, utility_list=pairs, random_state=None)
    reports = [int(mechanism.randomise(str(int(x)))) for x in values]
    design = grr(k, epsilon)
    return _support_estimate(np.bincount(reports, minlength=k), len(values), design), design


def dpl_binary(k: int, epsilon: float, values: npt.NDArray[np.int64]) -> tuple[Shares, Design]:
    """diffprivlib's Binary mechanism (randomized response on two values): GRR at k = 2."""
    from diffprivlib.mechanisms import Binary

    mechanism = Binary(epsilon=epsilon, value0="0", value1="1")
    reports = [int(mechanism.randomise(str(int(x)))) for x in values]
    design = grr(2, epsilon)
    return _support_estimate(np.bincount(reports, minlength=2), len(values), design), design


def od_randomized_response(
    k: int, epsilon: float, values: npt.NDArray[np.int64]
) -> tuple[Shares, Design]:
    """OpenDP's make_randomized_response at GRR's p; its privacy map must give back ε."""
    import opendp.prelude as dp

    dp.enable_features("contrib")
    design = grr(k, epsilon)
    measurement = dp.m.make_randomized_response(list(range(k)), design.p)
    _check_opendp_epsilon(measurement, epsilon)
    reports = [measurement(int(x)) for x in values]
    return _support_estimate(np.bincount(reports, minlength=k), len(values), design), design


def od_bitvector(k: int, epsilon: float, values: npt.NDArray[np.int64]) -> tuple[Shares, Design]:
    """OpenDP's randomized response on a one-hot bit vector (RAPPOR's permanent step):
    each bit replaced by a fair coin with f; ε = 2 ln((2 - f)/f), so f = 2/(e^(ε/2) + 1)
    and the bits are SUE's."""
    import opendp.prelude as dp

    dp.enable_features("contrib")
    f = 2 / (math.exp(epsilon / 2) + 1)
    measurement = dp.m.make_randomized_response_bitvec(
        dp.bitvector_domain(max_weight=1), dp.discrete_distance(), f=f
    )
    _check_opendp_epsilon(measurement, epsilon)
    one_hot = np.eye(k, dtype=np.uint8)
    packed = [np.packbits(row).tobytes() for row in one_hot]
    counts = np.zeros(k)
    for x in values:
        counts += np.unpackbits(np.frombuffer(measurement(packed[int(x)]), dtype=np.uint8))[:k]
    design = Support(1 - f / 2, f / 2)
    return _support_estimate(counts, len(values), design), design


def _check_opendp_epsilon(measurement: Any, epsilon: float) -> None:
    spent = measurement.map(1)
    if not math.isclose(spent, epsilon, rel_tol=1e-9):
        raise AssertionError(f"OpenDP's privacy map gives {spent}, not ε = {epsilon}")


@dataclass(frozen=True)
class LibraryRunner:
    library: str
    mechanism: str  # a PEER_MECHANISMS key
    run: Runner
    runs: int  # validation runs per point, as its speed allows (n = 10,000 each)
    only_k: int | None = None  # a mechanism for two values only: checked at TWO_VALUE_POINT
    seedable: bool = True  # OpenDP draws from the OS: its runs cannot be replayed


RUNNERS = (
    LibraryRunner("multi-freq-ldpy", "grr", mf_grr, 100),
    LibraryRunner("multi-freq-ldpy", "sue", mf_unary(optimal=False), 100),
    LibraryRunner("multi-freq-ldpy", "oue", mf_unary(optimal=True), 100),
    LibraryRunner("multi-freq-ldpy", "blh", mf_hashing(optimal=False), 20),
    LibraryRunner("multi-freq-ldpy", "olh", mf_hashing(optimal=True), 20),
    LibraryRunner("multi-freq-ldpy", "ss", mf_subset, 100),
    LibraryRunner("multi-freq-ldpy", "she", mf_histogram(thresholded=False), 100),
    LibraryRunner("multi-freq-ldpy", "the", mf_histogram(thresholded=True), 100),
    LibraryRunner("pure-ldp", "grr", pl_direct, 40),
    LibraryRunner("pure-ldp", "sue", pl_unary(optimal=False), 40),
    LibraryRunner("pure-ldp", "oue", pl_unary(optimal=True), 40),
    LibraryRunner("pure-ldp", "blh", pl_hashing(optimal=False), 20),
    LibraryRunner("pure-ldp", "olh", pl_hashing(optimal=True), 20),
    LibraryRunner("pure-ldp", "hr", pl_hadamard, 40),
    LibraryRunner("ldp-toolbox", "grr", lt_grr, 100),
    LibraryRunner("ldp-toolbox", "sue", lt_unary(optimal=False), 100),
    LibraryRunner("ldp-toolbox", "oue", lt_unary(optimal=True), 100),
    LibraryRunner("ldp-toolbox", "blh", lt_hashing(optimal=False), 20),
    LibraryRunner("ldp-toolbox", "olh", lt_hashing(optimal=True), 20),
    LibraryRunner("ldp-toolbox", "ss", lt_subset, 100),
    LibraryRunner("diffprivlib", "grr", dpl_categorical, 30),
    LibraryRunner("diffprivlib", "grr", dpl_binary, 200, only_k=2),
    LibraryRunner("OpenDP", "grr", od_randomized_response, 15, seedable=False),
    LibraryRunner("OpenDP", "sue", od_bitvector, 15, seedable=False),
)
#: The runner used for a mechanism's measured ratio on the grid: the fastest library.
GRID_RUNNER = {
    "grr": RUNNERS[0],
    "sue": RUNNERS[1],
    "oue": RUNNERS[2],
    "blh": RUNNERS[3],
    "olh": RUNNERS[4],
    "ss": RUNNERS[5],
    "she": RUNNERS[6],
    "the": RUNNERS[7],
    "hr": RUNNERS[13],
}


def seed_libraries(seed: int) -> None:
    """Seed every generator the libraries draw from: Python's, NumPy's global one and
    Numba's own (jitted code keeps a separate state, seeded only from inside)."""
    random.seed(seed)
    np.random.seed(seed % 2**32)
    _numba_seeder()(seed % 2**32)


@functools.cache
def _numba_seeder() -> Callable[[int], None]:
    from numba import njit

    @njit
    def seed_numba(value: int) -> None:
        np.random.seed(value)

    return cast(Callable[[int], None], seed_numba)


# --------------------------------------------------------------------------- measuring


@dataclass
class Measured:
    """Per-run summed squared errors; their mean and its standard error."""

    errors: list[float]

    @property
    def mse(self) -> float:
        return float(np.mean(self.errors))

    @property
    def se(self) -> float:
        return float(np.std(self.errors, ddof=1) / math.sqrt(len(self.errors)))


def draw_values(shares: Shares, n: int, seed: int) -> npt.NDArray[np.int64]:
    """The run's true answers: n draws from the truth, the same for every mechanism."""
    return np.random.default_rng(seed).choice(len(shares), size=n, p=shares).astype(np.int64)


def run_seeds(point_seed: int, runs: int) -> list[int]:
    return [int(s.generate_state(1)[0]) for s in np.random.SeedSequence(point_seed).spawn(runs)]


def measure_library(
    runner: LibraryRunner, k: int, epsilon: str, shares: Shares, seeds: Sequence[int], n: int
) -> tuple[Measured, Design]:
    errors = []
    design: Design | None = None
    for seed in seeds:
        values = draw_values(shares, n, seed)
        seed_libraries(seed + 1)
        estimate, design = runner.run(k, float(epsilon), values)
        errors.append(float(np.sum((estimate - shares) ** 2)))
    assert design is not None
    return Measured(errors), design


def measure_app(
    k: int, epsilon: str, shares: Shares, seeds: Sequence[int], n: int
) -> tuple[Measured, Support]:
    """auto through the app's vectorized simulator on the same data."""
    mechanism = choice_mechanism(k, Fraction(epsilon))
    design = auto_design(k, epsilon)[1]
    errors = []
    for seed in seeds:
        values = draw_values(shares, n, seed)
        reports = np.asarray(simulate(mechanism, values, np.random.default_rng(seed + 2)))
        if reports.ndim == 1:  # one option per report (GRR)
            counts = np.bincount(reports, minlength=k)
        elif mechanism.name == "subset_selection":
            counts = np.bincount(reports.ravel(), minlength=k)
        else:  # unary encoding: one bit per option
            counts = reports.sum(axis=0)
        estimate = _support_estimate(counts, n, design)
        errors.append(float(np.sum((estimate - shares) ** 2)))
    return Measured(errors), design


def z_score(measured: Measured, formula: float) -> float:
    return (measured.mse - formula) / measured.se


# --------------------------------------------------------------------------- the grid


def app_best(k: int, epsilon: str, shares: Shares) -> tuple[str, float]:
    """The app's best mechanism for this truth's summed MSE (GRR, OUE, subset selection
    at every ω), per report. For support estimators the summed MSE is
    k·q(1 - q)/(p - q)² + (1 - 2q)/(p - q) - Σπ²: the truth enters only through Σπ²,
    the same for all, so this is also the pick by the variance at the uniform share 1/k."""
    from survey_app.privacy import GeneralizedRandomizedResponse, OptimizedUnaryEncoding
    from survey_app.privacy.mechanisms.subset_selection import SubsetSelection

    eps = Fraction(epsilon)
    candidates: dict[str, Any] = {
        "generalized_randomized_response": GeneralizedRandomizedResponse.from_epsilon(k, eps),
        "optimized_unary_encoding": OptimizedUnaryEncoding.from_epsilon(k, eps),
    }
    for size in range(2, k):
        candidates[f"subset_selection ω={size}"] = SubsetSelection.from_epsilon(k, eps, size)
    errors = {
        name: Support(*map(float, mechanism.exact_rates)).mse(shares)
        for name, mechanism in candidates.items()
    }
    best = min(errors, key=errors.__getitem__)
    return best, errors[best]


def analytic_point(k: int, epsilon: str, truth: str, n: int) -> dict[str, Any]:
    """auto's exact MSE over every peer mechanism's, and the best of them."""
    shares = true_shares(truth, k)
    auto_name, auto = auto_design(k, epsilon)
    peers = {peer.key: peer.design(k, float(epsilon)).mse(shares) / n for peer in PEER_MECHANISMS}
    best = min(peers, key=peers.__getitem__)
    app_name, app_mse = app_best(k, epsilon, shares)
    return {
        "k": k,
        "epsilon": epsilon,
        "truth": truth,
        "auto": auto_name,
        "auto_mse": auto.mse(shares) / n,
        "peer_mse": peers,
        "best_peer": best,
        "ratio": auto.mse(shares) / n / peers[best],
        "app_best": app_name,
        "app_best_ratio": app_mse / n / peers[best],
    }


def measure_point(point: dict[str, Any], runs: int, app_runs: int, seed: int, n: int) -> None:
    """The measured ratio: auto (app) and the best peer (its library) on the same runs;
    and auto alone over ``app_runs`` runs against its formula."""
    k, epsilon = point["k"], point["epsilon"]
    shares = true_shares(point["truth"], k)
    seeds = run_seeds(seed, max(runs, app_runs))
    runner = GRID_RUNNER[point["best_peer"]]
    peer, design = measure_library(runner, k, epsilon, shares, seeds[:runs], n)
    paired, _ = measure_app(k, epsilon, shares, seeds[:runs], n)
    app, _ = measure_app(k, epsilon, shares, seeds[:app_runs], n)
    peer_formula = design.mse(shares) / n
    point["measured"] = {
        "runs": runs,
        "peer_library": runner.library,
        "peer_mse": peer.mse,
        "peer_se": peer.se,
        "peer_z": z_score(peer, peer_formula),
        "auto_mse_same_runs": paired.mse,
        "ratio": paired.mse / peer.mse,
        "app_runs": app_runs,
        "app_mse": app.mse,
        "app_se": app.se,
        "app_over_formula": app.mse / point["auto_mse"],
        "app_z": z_score(app, point["auto_mse"]),
    }


def validate(scale: float, seed: int, n: int) -> list[dict[str, Any]]:
    """Every library's randomizer at VALIDATION_POINTS (Zipf truth) against its formula."""
    rows = []
    for index, runner in enumerate(RUNNERS):
        for k, epsilon in (TWO_VALUE_POINT,) if runner.only_k == 2 else VALIDATION_POINTS:
            shares = true_shares("zipf", k)
            count = max(5, round(runner.runs * scale))
            started = time.perf_counter()
            point_seed = seed + 7919 * index + k * 131 + int(float(epsilon) * 1000)
            measured, design = measure_library(
                runner, k, epsilon, shares, run_seeds(point_seed, count), n
            )
            formula = design.mse(shares) / n
            rows.append(
                {
                    "library": runner.library,
                    "mechanism": runner.mechanism,
                    "k": k,
                    "epsilon": epsilon,
                    "runs": count,
                    "seeded": runner.seedable,
                    "measured_mse": measured.mse,
                    "se": measured.se,
                    "formula_mse": formula,
                    "ratio": measured.mse / formula,
                    "z": z_score(measured, formula),
                    "seconds": time.perf_counter() - started,
                }
            )
            print(
                f"  {runner.library} {runner.mechanism} k={k} ε={epsilon}: "
                f"measured/formula {measured.mse / formula:.3f} "
                f"(z {rows[-1]['z']:+.1f}, {rows[-1]['seconds']:.0f} s)",
                file=sys.stderr,
            )
    return rows


# --------------------------------------------------------------------------- report

LIBRARIES = {
    "multi-freq-ldpy": "multi-freq-ldpy",
    "pure-ldp": "pure-ldp",
    "ldp-toolbox": "ldp-toolbox",
    "diffprivlib": "diffprivlib",
    "OpenDP": "opendp",
}


def library_versions() -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    found = {}
    for library, distribution in {**LIBRARIES, "xxhash": "xxhash", "numba": "numba"}.items():
        try:
            found[library] = version(distribution)
        except PackageNotFoundError:
            found[library] = "not installed"
    return found


def summarize(results: dict[str, Any]) -> dict[str, Any]:
    grid, checks = results["grid"], results["validation"]
    worst = max(grid, key=lambda point: point["ratio"])
    over = [p for p in grid if p["ratio"] > TARGET]
    measured = [p["measured"]["ratio"] for p in grid]
    peer_z = [p["measured"]["peer_z"] for p in grid] + [row["z"] for row in checks]
    app_z = [p["measured"]["app_z"] for p in grid]
    return {
        "points": len(grid),
        "ratio_max": worst["ratio"],
        "ratio_max_at": f"k={worst['k']} ε={worst['epsilon']} {worst['truth']}",
        "points_over_target": [
            f"k={p['k']} ε={p['epsilon']} {p['truth']}: {p['ratio']:.3f} "
            f"(auto {_auto_label(p['auto'])}, best "
            f"{_peer_label(p['best_peer'], p['k'], p['epsilon'])})"
            for p in over
        ],
        "app_best_ratio_max": max(p["app_best_ratio"] for p in grid),
        "measured_ratio_min": min(measured),
        "measured_ratio_max": max(measured),
        "library_checks": len(peer_z),
        "library_max_abs_z": max(abs(z) for z in peer_z),
        "library_outside_5se": sum(abs(z) > 5 for z in peer_z),
        "library_outside_2se": sum(abs(z) > 2 for z in peer_z),
        "app_max_abs_z": max(abs(z) for z in app_z),
        "app_outside_5se": sum(abs(z) > 5 for z in app_z),
    }


def _auto_label(name: str) -> str:
    return (
        name.replace("generalized_randomized_response", "GRR")
        .replace("optimized_unary_encoding", "OUE")
        .replace("subset_selection", "SS")
    )


def _peer_label(key: str, k: int, epsilon: str) -> str:
    eps = float(epsilon)
    detail = {"ss": f" ω={subset_size(k, eps)}", "olh": f" g={olh_range(eps)}"}.get(key, "")
    return PEERS_BY_KEY[key].label + detail


def markdown(results: dict[str, Any]) -> str:
    s, prm = results["summary"], results["parameters"]
    versions = ", ".join(f"{name} {v}" for name, v in results["versions"].items())
    spreads = [_spread(p) for p in results["grid"]]
    close = sum(
        abs(p["measured"]["ratio"] / p["ratio"] - 1) <= spread
        for p, spread in zip(results["grid"], spreads, strict=True)
    )
    lines = [
        "# Peers: auto against the best frequency oracle of five LDP libraries",
        "",
        f"Generated by `benchmarks/bench_peers.py` ({results['finished_at']}, "
        f"{results['seconds'] / 60:.1f} min, commit `{results['commit']}`; {versions}). "
        f"n = {prm['respondents']:,} respondents, seed {prm['seed']}. MSE = the squared "
        "error of the unbiased (debiased, unclipped) shares summed over the k options; "
        "ratio = auto's MSE ÷ the smallest MSE of any mechanism the libraries offer, at "
        "their own parameters. auto is `choice_mechanism(k, ε)`, what a survey gets: GRR, "
        "OUE or subset selection by the shares' summed variance.",
        "",
        "## Summary",
        "",
        f"* auto ÷ best peer (exact formulas), {s['points']} points: at most "
        f"**{s['ratio_max']:.3f}** ({s['ratio_max_at']}); above the target {TARGET} at "
        f"{len(s['points_over_target'])} points"
        + (": " + "; ".join(s["points_over_target"]) if s["points_over_target"] else "")
        + ".",
        f"* The app's best mechanism for the summed MSE (GRR, OUE or subset selection at any "
        f"ω) ÷ best peer: at most {s['app_best_ratio_max']:.3f}.",
        f"* Measured auto ÷ best peer (the best peer run through its library, auto through "
        f"`simulate`, same data, {prm['grid_runs']} runs): {s['measured_ratio_min']:.3f} to "
        f"{s['measured_ratio_max']:.3f}; two standard errors are ±{min(spreads):.0%} to "
        f"±{max(spreads):.0%} (median ±{float(np.median(spreads)):.0%}), and the measured "
        f"ratio is within them of the exact one at {close} of {len(spreads)} points: too "
        "coarse to judge 1.02, as expected, which is why the exact ratio is the measure.",
        f"* Libraries against their formulas, {s['library_checks']} checks (every library "
        f"mechanism at the validation points, and the best peer at every grid point): "
        f"largest |z| {s['library_max_abs_z']:.1f}, {s['library_outside_5se']} outside 5 "
        f"standard errors, {s['library_outside_2se']} outside 2 (about 5% expected).",
        f"* auto through the app's simulator against its formula ({prm['app_runs']} runs a "
        f"point): largest |z| {s['app_max_abs_z']:.1f}, {s['app_outside_5se']} outside 5 "
        "standard errors.",
        "",
    ]
    lines += _grid_tables(results)
    lines += findings(results)
    lines += _validation_table(results)
    lines += NOTES
    return "\n".join(lines) + "\n"


def _spread(point: dict[str, Any]) -> float:
    """Two standard errors of the measured ratio, relative: the peer's and auto's (auto's
    standard error from its ``app_runs`` runs, scaled to the ratio's ``runs``)."""
    m = point["measured"]
    app = m["app_se"] * math.sqrt(m["app_runs"] / m["runs"]) / m["app_mse"]
    return 2 * math.hypot(m["peer_se"] / m["peer_mse"], app)


def _grid_tables(results: dict[str, Any]) -> list[str]:
    lines = []
    for truth in TRUTHS:
        title = "uniform" if truth == "uniform" else f"Zipf, s = {ZIPF_S}"
        lines += [
            f"## Grid: {title} truth",
            "",
            "auto/best: exact (measured, ± two standard errors); app best: the app's best "
            "mechanism for this MSE ÷ best peer; app sim/formula: auto's measured MSE "
            "through `simulate` ÷ its formula.",
            "",
            "| k | ε | auto | best peer | auto/best exact | measured | app best | "
            "app sim/formula |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for p in (p for p in results["grid"] if p["truth"] == truth):
            m = p["measured"]
            flag = " **over**" if p["ratio"] > TARGET else ""
            spread = m["ratio"] * _spread(p)
            lines.append(
                f"| {p['k']} | {p['epsilon']} | {_auto_label(p['auto'])} | "
                f"{_peer_label(p['best_peer'], p['k'], p['epsilon'])} | "
                f"{p['ratio']:.3f}{flag} | {m['ratio']:.3f} ± {spread:.3f} | "
                f"{p['app_best_ratio']:.3f} ({_auto_label(p['app_best'])}) | "
                f"{m['app_over_formula']:.3f} |"
            )
        lines.append("")
    return lines


def _validation_table(results: dict[str, Any]) -> list[str]:
    points = ", ".join(f"k={k} ε={e}" for k, e in VALIDATION_POINTS)
    lines = [
        "## Each library's randomizer against its formula",
        "",
        f"Zipf truth at {points} (diffprivlib's Binary at k = 2, ε = 2). z = (measured - "
        "formula) ÷ the standard error of the measured mean over runs. Runs per point as "
        "each library's speed allows; OpenDP samples from the operating system, so its runs "
        "are not replayable from the seed.",
        "",
        "| library | mechanism | k | ε | runs | measured/formula | z |",
        "|---|---|---|---|---|---|---|",
    ]
    for row in results["validation"]:
        lines.append(
            f"| {row['library']} | {PEERS_BY_KEY[row['mechanism']].label} | {row['k']} | "
            f"{row['epsilon']} | {row['runs']} | {row['ratio']:.3f} | {row['z']:+.1f} |"
        )
    return [*lines, ""]


def _rare(design: Design) -> float:
    """One report's variance of a rare option's share (π = 0): auto's criterion."""
    return design.mse(np.zeros(1))


def findings(results: dict[str, Any]) -> list[str]:
    """What the numbers say, with the numbers worked out from the formulas."""
    grid = results["grid"]
    over = [p for p in grid if p["ratio"] > TARGET and p["truth"] == "uniform"]
    lines = ["## What the grid says", ""]
    for p in over:
        k, eps = p["k"], float(p["epsilon"])
        auto = auto_design(k, p["epsilon"])[1]
        peer = PEERS_BY_KEY[p["best_peer"]].design(k, eps)
        assert isinstance(peer, Support)
        lines.append(
            f"* **k = {k}, ε = {p['epsilon']}: {p['ratio']:.3f}** (both truths). auto "
            f"takes {_auto_label(p['auto'])}; the libraries' "
            f"{_peer_label(p['best_peer'], k, p['epsilon'])} has "
            f"{_rare(peer) / _rare(auto):.3f}× auto's variance for a rare option (π = 0), "
            f"auto's criterion, but its variance grows less with the share: per report "
            f"(1 - 2q)/(p - q) = {(1 - 2 * peer.q) / (peer.p - peer.q):.2f} against "
            f"{(1 - 2 * auto.q) / (auto.p - auto.q):.2f}, and summed over the options "
            "that outweighs it."
        )
    olh_over_oue = [p["peer_mse"]["olh"] / p["peer_mse"]["oue"] for p in grid]
    omegas = [
        p
        for p in grid
        if p["truth"] == "uniform"
        and p["auto"].startswith("subset_selection")
        and p["auto"] != f"subset_selection ω={subset_size(p['k'], float(p['epsilon']))}"
    ]
    lines += [
        "",
        "Summed over the options, a support estimator's MSE per report is "
        "k·q(1 - q)/(p - q)² + (1 - 2q)/(p - q) - Σπ²: the truth enters only through Σπ², "
        "the same for every mechanism, so the ranking is the same for the uniform and the "
        "Zipf truth (their ratios differ only in the fourth digit), and the mechanism with "
        "the smallest summed MSE for every truth is the one with the smallest variance at "
        "the uniform share 1/k: auto's score (`_shares.summed_share_variance`). The column "
        f'"app best" is at most {max(p["app_best_ratio"] for p in grid):.3f}: the app\'s '
        "own mechanisms (GRR, OUE, subset selection at every ω) match or beat every library "
        "mechanism at every point. (auto's score before, a rare option's variance (π = 0), "
        "took GRR at k = 4, ε = 0.5 and k = 32, ε = 3, 1.027 and 1.026 times the best: the "
        "libraries' subset selection with ω = 2 grows less with the share.)",
        "",
        "* **OLH ties OUE, as it should**: with g = e^ε + 1 exactly its p and q are OUE's "
        "(1/2 and 1/(e^ε + 1)); the libraries round g to round(e^ε) + 1, which moves its "
        f"summed MSE to between {min(olh_over_oue):.4f}× and {max(olh_over_oue):.4f}× "
        "OUE's over the grid: above it where g rounds up, slightly below it where g rounds "
        "down (ε = 2, 3: a smaller g costs a little for rare options but grows less with "
        "the share). It is the best library mechanism nowhere: where unary encoding and "
        "hashing are close to best (large k, small ε), subset selection with ω near "
        "k/(e^ε + 1) is better than both.",
        "* Subset selection's ω: the libraries take rint(k/(e^ε + 1)); the app takes the ω "
        "with the smallest summed variance. "
        + (
            "They differ at "
            + "; ".join(
                f"k = {p['k']}, ε = {p['epsilon']} ({p['auto'].rsplit('=', 1)[1]} against "
                f"{subset_size(p['k'], float(p['epsilon']))}: {p['ratio']:.4f})"
                for p in omegas
            )
            + "."
            if omegas
            else "They agree wherever auto takes subset selection."
        ),
        "* Hadamard response, SUE (basic RAPPOR, also OpenDP's bit-vector randomized "
        "response), BLH, SHE and THE are the best at no point: they trade accuracy for "
        "shorter reports or simpler servers.",
        "",
    ]
    return lines


NOTES = [
    "## How the libraries were used, and what was left out",
    "",
    "* Every library's own aggregator clips negative estimates to 0 and renormalizes. That "
    "estimator is biased and its error depends on the truth in other ways, so reports are "
    "counted here (with the library's own support rule: the reported value, the set bits, "
    "the members of the set, xxh32(str(v), seed) mod g = y for hashing, values above θ) "
    "and debiased with the library's own p and q; pure-ldp's Hadamard response through its "
    "own decoder with `normalization=-1` (no clipping).",
    '* Local hashing fails in all three libraries with xxhash ≥ 4.0 ("Strings must be '
    'encoded before hashing": they hash `str(v)`); the extra pins xxhash < 4. diffprivlib '
    "0.6.6 does not import with scikit-learn ≥ 1.8; pure-ldp imports statsmodels without "
    "declaring it. ldp-toolbox declares its GUI's ray and dash; its protocols need only "
    "NumPy, SciPy, Numba, xxhash and joblib, so "
    "`pip install --no-deps ldp-toolbox` after the other packages of the extra is enough.",
    "* multi-freq-ldpy and ldp-toolbox share their GRR, unary-encoding and subset-selection "
    "code: for the same Numba seed they give the same reports, so the validation seeds "
    "differ per library.",
    "* diffprivlib's frequency oracles: `Binary` (randomized response on two values) and "
    "`ExponentialCategorical` with every pair at utility 1, whose balanced tree makes it "
    "GRR. OpenDP's: `make_randomized_response` (GRR at the given p; its privacy map checked "
    "to give back ε) and `make_randomized_response_bitvec` on a one-hot vector (f = "
    "2/(e^(ε/2) + 1): SUE). OpenDP samples from the operating system: its runs cannot be "
    "replayed from the seed.",
    "* Not run: pure-ldp's RAPPOR (Bloom filters with a regression estimator, no closed "
    "form; with one hash and no collisions it is SUE, which is), its count-mean sketches, "
    "Hadamard mechanism and sketch response (sketches for large domains), its histogram "
    "encoding (the same SHE/THE as multi-freq-ldpy's, which is run), and multi-freq-ldpy's "
    "ADP (GRR or OUE by its own rule, both run) and its longitudinal and "
    "multidimensional protocols (other problems).",
    "* Hadamard response at ε > 1 puts the options in blocks after a random permutation; "
    "when the last block is not full, where the options land changes the summed MSE "
    "slightly. The grid uses the identity order, the validation the library's own.",
    "",
    "Reproduce: `pip install -e '.[peers]'`, then `.venv/bin/python benchmarks/bench_peers.py` "
    "(writes `results/peers.json` and this file; `--markdown-only` rewrites this file from "
    "the JSON).",
]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--respondents", type=int, default=RESPONDENTS)
    parser.add_argument("--grid-runs", type=int, default=100, help="runs per grid point")
    parser.add_argument("--app-runs", type=int, default=200, help="auto's runs per grid point")
    parser.add_argument(
        "--quick", action="store_true", help="a quarter of the runs everywhere (a smoke run)"
    )
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument("--results", default=str(HERE / "results" / "peers.json"))
    parser.add_argument("--markdown", default=str(HERE / "PEERS.md"))
    parser.add_argument(
        "--markdown-only", action="store_true", help="rewrite the markdown from --results"
    )
    args = parser.parse_args(argv)
    if args.markdown_only:
        Path(args.markdown).write_text(markdown(json.loads(Path(args.results).read_text())))
        return 0
    scale = 0.25 if args.quick else 1.0
    grid_runs = max(5, round(args.grid_runs * scale))
    app_runs = max(5, round(args.app_runs * scale))
    started = time.perf_counter()
    results: dict[str, Any] = {
        "benchmark": "peers",
        "parameters": {
            "respondents": args.respondents,
            "seed": args.seed,
            "grid_runs": grid_runs,
            "app_runs": app_runs,
            "zipf_s": ZIPF_S,
            "target": TARGET,
        },
        "versions": library_versions(),
        "commit": git_commit(),
        "grid": [],
    }
    print("validating every library against its formula", file=sys.stderr)
    results["validation"] = validate(scale, args.seed, args.respondents)
    points = [(t, k, e) for t in TRUTHS for k in KS for e in EPSILONS]
    for index, (truth, k, epsilon) in enumerate(points):
        point = analytic_point(k, epsilon, truth, args.respondents)
        measure_point(point, grid_runs, app_runs, args.seed + 100_003 * index, args.respondents)
        results["grid"].append(point)
        print(
            f"{truth} k={k} ε={epsilon}: auto/best {point['ratio']:.3f} exact, "
            f"{point['measured']['ratio']:.3f} measured "
            f"({time.perf_counter() - started:.0f} s)",
            file=sys.stderr,
        )
    results["summary"] = summarize(results)
    results["seconds"] = time.perf_counter() - started
    results["finished_at"] = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
    Path(args.results).parent.mkdir(parents=True, exist_ok=True)
    Path(args.results).write_text(json.dumps(results, indent=2, ensure_ascii=False) + "\n")
    Path(args.markdown).write_text(markdown(results))
    s = results["summary"]
    print(
        f"auto/best peer at most {s['ratio_max']:.3f} ({s['ratio_max_at']}); "
        f"{len(s['points_over_target'])} points over {TARGET}; library checks: max |z| "
        f"{s['library_max_abs_z']:.1f}; {results['seconds']:.0f} s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
