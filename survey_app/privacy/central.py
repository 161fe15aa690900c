"""Central-model releases: noisy counts of plain answers, Report Noisy Max, by-group estimates
with noisy sizes, and the budget ledger that charges them.

The coins protect sensitive answers; whatever is computed from the randomized reports
alone is post-processing and free to publish. Counts of *plain* answers (a plain
question's histogram, group sizes, counts by group) are exact facts about who took part,
so a public page releases them only with noise added here, by the curator. Neighbouring
data sets: one respondent added or removed. Each release states its ℓ1-sensitivity Δ:

- one count of respondents: Δ = 1;
- the histogram of one plain question (disjoint cells, one respondent in one cell): Δ = 1
  for the whole histogram;
- by-group tallies of a sensitive question, the pairs (n_g, reported_g) over the groups of
  a plain covariate: one respondent moves n_g by 1 and reported_g by at most 1, Δ = 2;
- Report Noisy Max over a histogram: one count moves by 1 (Δ = 1).

Noise is discrete Laplace with γ = ε/Δ, P(Z = z) = (1 - α)/(1 + α)·α^|z|, α = e^-γ, from
``coins.discrete_laplace`` (exact, integer arithmetic, the ``secrets`` source or an
injected one): ε-DP with ε = Δ·γ exactly, since a neighbour shifts the query by at most Δ
in ℓ1 and each unit of shift changes a probability by at most e^γ.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from fractions import Fraction
from statistics import NormalDist
from types import MappingProxyType

from .coins import SECURE, RandomSource, discrete_laplace, uniform_below
from .estimate import Estimate
from .groups import MIN_GROUP_SIZE, GroupCount
from .mechanism import ProportionMechanism
from .number import DiscreteLaplace
from .rationals import checked_epsilon

SENSITIVITY = MappingProxyType(
    {
        "count": 1,
        "histogram": 1,
        "group_tallies": 2,
        "noisy_max": 1,
    }
)
ACCURACY_CONFIDENCE = 0.95
NOISY_INTERVAL_METHOD = "score+noise"


class BudgetExceededError(ValueError):
    """A release would take the survey's central ε past its budget; nothing is charged."""


def central_epsilon(value: Fraction | float | str) -> Fraction:
    """A central ε as an exact rational; a string is read as a decimal ("0.1" is 1/10)."""
    if isinstance(value, str):
        try:
            value = Fraction(value.strip())
        except ValueError:
            raise ValueError(f"epsilon must be a positive number, got {value!r}") from None
    return checked_epsilon(value)


def noise_gamma(epsilon: Fraction | float | str, sensitivity: int) -> Fraction:
    """γ = ε/Δ: the discrete Laplace parameter that makes a Δ-sensitive query ε-DP."""
    if isinstance(sensitivity, bool) or not isinstance(sensitivity, int) or sensitivity < 1:
        raise ValueError("the sensitivity must be a positive integer")
    return central_epsilon(epsilon) / sensitivity


def tail_probability(gamma: Fraction, t: int) -> float:
    """P(|Z| ≥ t) for discrete Laplace noise, exactly: 1 for t ≤ 0, else 2α^t/(1 + α).

    (Σ_{z ≥ t} of the pmf is (1 - α)/(1 + α)·α^t/(1 - α) on each side.) The continuous
    Laplace's e^(-γt) is not this: at small t the discrete tail is lighter.
    """
    if t <= 0:
        return 1.0
    alpha = math.exp(-float(gamma))
    return 2 * math.exp(-float(gamma) * t) / (1 + alpha)


def accuracy_bound(gamma: Fraction, k: int = 1, confidence: float = ACCURACY_CONFIDENCE) -> int:
    """The smallest integer m with P(every one of k noisy counts is within ±m) ≥ ``confidence``.

    By the union bound it suffices that k·P(|Z| > m) = k·P(|Z| ≥ m + 1) ≤ 1 - confidence;
    with the exact tail, m + 1 ≥ ln(2/(β(1 + α)))/γ for β = (1 - confidence)/k.
    """
    if k < 1:
        raise ValueError("k must be at least 1")
    if not 0 < confidence < 1:
        raise ValueError("confidence must lie strictly between 0 and 1")
    beta = (1 - confidence) / k
    alpha = math.exp(-float(gamma))
    m = max(0, math.ceil(math.log(2 / (beta * (1 + alpha))) / float(gamma)) - 1)
    # The logarithm is rounded; settle the integer against the tail itself.
    while m > 0 and tail_probability(gamma, m) <= beta:
        m -= 1
    while tail_probability(gamma, m + 1) > beta:
        m += 1
    return m


@dataclass(frozen=True)
class NoisyCounts:
    """Counts released with discrete Laplace noise, and how far off they can be.

    ``accuracy``: each count is within ±accuracy of the truth with probability ≥ 95%.
    ``joint_accuracy``: all of them at once, with probability ≥ 95% (union bound).
    """

    values: tuple[int, ...]
    epsilon: Fraction
    sensitivity: int
    accuracy: int
    joint_accuracy: int


def noisy_counts(
    counts: Sequence[int],
    epsilon: Fraction | float | str,
    sensitivity: int = 1,
    source: RandomSource = SECURE,
) -> NoisyCounts:
    """Each count plus independent discrete Laplace noise with γ = ε/Δ: ε-DP for the whole
    vector when one respondent moves it by at most Δ in ℓ1 (see ``SENSITIVITY``).

    Zero counts are released too: leaving out empty cells would reveal them exactly.
    """
    if not counts:
        raise ValueError("nothing to release")
    gamma = noise_gamma(epsilon, sensitivity)
    return NoisyCounts(
        values=tuple(_count(c) + discrete_laplace(gamma, source) for c in counts),
        epsilon=gamma * sensitivity,
        sensitivity=sensitivity,
        accuracy=accuracy_bound(gamma),
        joint_accuracy=accuracy_bound(gamma, len(counts)),
    )


def _count(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"a count must be a whole number ≥ 0, got {value!r}")
    return value


def report_noisy_max(
    counts: Sequence[int], epsilon: Fraction | float | str, source: RandomSource = SECURE
) -> int:
    """The index of the largest count after discrete Laplace noise with γ = ε; only that index.

    ε-DP (Dwork & Roth, Claim 3.9, redone for integer noise). Ties among the noisy maxima
    go to one of them uniformly at random, which is the same as a random priority order
    drawn independently of the data; fix that order. Fix also every noise value but
    option i's, r_{-i}. Then i wins exactly when r_i ≥ r*, for an integer threshold r*
    set by r_{-i}, the counts and the order. A neighbour (one respondent added or
    removed) moves one count by one, so r* moves by at most one: P(r_i ≥ r* - 1) ≤
    e^γ·P(r_i ≥ r*), because every tail of the discrete Laplace satisfies
    P(Z ≥ m - 1) ≤ e^γ·P(Z ≥ m) (the pmf ratio between neighbours is at most e^γ).
    Averaging over r_{-i} and the order keeps the factor: ε = γ.

    Why not the exponential-mechanism form: it needs coins with probabilities
    proportional to e^(ε·c/2) (irrational, sampled exactly only with more machinery) and
    spends ε/2 per unit of count; the discrete Laplace sampler already exists and is exact.
    """
    if len(counts) < 2:
        raise ValueError("Report Noisy Max needs at least two counts")
    gamma = noise_gamma(epsilon, SENSITIVITY["noisy_max"])
    noisy = [_count(c) + discrete_laplace(gamma, source) for c in counts]
    best = max(noisy)
    tied = [i for i, value in enumerate(noisy) if value == best]
    return tied[uniform_below(len(tied), source)]


@dataclass(frozen=True)
class NoisyGroup:
    """One group's released tallies and the estimate computed from them alone.

    ``noisy_n`` and ``noisy_reported`` carry discrete Laplace noise (Δ = 2 for the pair over
    all groups); ``estimate`` is None when ``noisy_n`` is below the minimum group size.
    """

    group: str
    noisy_n: int
    noisy_reported: int
    estimate: Estimate | None


@dataclass(frozen=True)
class NoisyGroupRelease:
    """By-group estimates for a public page; ``accuracy`` and ``joint_accuracy`` are of the
    noisy tallies, one at a time and all 2·groups at once (95%)."""

    groups: tuple[NoisyGroup, ...]
    epsilon: Fraction
    sensitivity: int
    accuracy: int
    joint_accuracy: int


def release_group_estimates(
    counts: Mapping[str, GroupCount],
    mechanism: ProportionMechanism,
    epsilon: Fraction | float | str,
    confidence: float = 0.95,
    min_size: int = MIN_GROUP_SIZE,
    source: RandomSource = SECURE,
) -> NoisyGroupRelease:
    """Noise every group's (n_g, reported_g) with Δ = 2, then estimate from the noisy pair only.

    ``counts`` must hold every group the covariate has (its options), empty ones too:
    which groups appear must not depend on the data. Whether a group's estimate is shown
    is decided on its *noisy* size, since a decision on the true size would leak it. The
    interval accounts for the noise (``noisy_share_interval``).
    """
    if min_size < 1:
        raise ValueError("the minimum group size must be at least 1")
    sensitivity = SENSITIVITY["group_tallies"]
    gamma = noise_gamma(epsilon, sensitivity)
    # The noise's variance 2α/(1 - α)²: the same noise DiscreteLaplace adds at this γ.
    variance = DiscreteLaplace(0, 1, gamma).noise_variance
    groups = []
    for group, tally in counts.items():
        if not 0 <= tally.reported <= tally.n:
            raise ValueError(f"group {group!r}: the count must lie between 0 and n")
        noisy_n = tally.n + discrete_laplace(gamma, source)
        noisy_reported = tally.reported + discrete_laplace(gamma, source)
        estimate = None
        if noisy_n >= min_size:
            estimate = noisy_share_interval(
                noisy_reported, noisy_n, variance, mechanism.p_true, mechanism.p_false, confidence
            )
        groups.append(NoisyGroup(group, noisy_n, noisy_reported, estimate))
    return NoisyGroupRelease(
        groups=tuple(groups),
        epsilon=gamma * sensitivity,
        sensitivity=sensitivity,
        accuracy=accuracy_bound(gamma),
        joint_accuracy=accuracy_bound(gamma, 2 * len(groups)),
    )


def noisy_share_interval(
    noisy_reported: int,
    noisy_n: int,
    noise_variance: float,
    p_true: float,
    p_false: float,
    confidence: float = 0.95,
) -> Estimate:
    """A share estimate and interval from a noisy count ỹ among a noisy total ñ.

    With ỹ = y + Z₁, ñ = n + Z₂, y ~ Binomial(n, λ) and V the noise variance,
    Var(ỹ - λñ) = nλ(1 - λ) + V(1 + λ²) exactly: the sampling variance and the added noise,
    summed. The interval for λ is every λ the score test keeps,
    (ỹ - λñ)² ≤ z²(ñλ(1 - λ) + V(1 + λ²)), a quadratic inequality; with V = 0 it is Wilson's
    interval. It maps to π through the design's affine map, like ``estimate_proportion``,
    with the same boundary rule: a rate beyond [p_false, p_true] is evaluated at that end,
    which only widens. If the noise swamps the count (the quadratic opens downward) the
    interval is all of [0, 1]. Coverage is checked by a seeded simulation in
    ``tests/test_central.py``.
    """
    if noisy_n < 1:
        raise ValueError("the noisy total must be at least 1 to estimate a share")
    if not 0 <= p_false < p_true <= 1:
        raise ValueError("need 0 <= p_false < p_true <= 1: a report must carry some signal")
    slope = p_true - p_false
    n = float(noisy_n)
    rate = noisy_reported / n
    boundary_rate = min(max(rate, p_false), p_true)
    y = boundary_rate * n
    z = NormalDist().inv_cdf(0.5 + confidence / 2)
    a = n * n + z * z * n - z * z * noise_variance
    b = -(2 * y * n + z * z * n)
    c = y * y - z * z * noise_variance
    if a <= 0:
        low_rate, high_rate = 0.0, 1.0
    else:
        half = math.sqrt(max(b * b - 4 * a * c, 0.0)) / (2 * a)
        low_rate, high_rate = -b / (2 * a) - half, -b / (2 * a) + half
    variance_rate = min(max(rate, 0.0), 1.0)
    std_error = math.sqrt(
        variance_rate * (1 - variance_rate) / n + noise_variance * (1 + variance_rate**2) / n**2
    )
    unclipped = (rate - p_false) / slope
    return Estimate(
        point=min(max(unclipped, 0.0), 1.0),
        unclipped=unclipped,
        std_error=std_error / slope,
        low=max((low_rate - p_false) / slope, 0.0),
        high=min((high_rate - p_false) / slope, 1.0),
        confidence=confidence,
        method=NOISY_INTERVAL_METHOD,
    )


def fingerprint(value: object) -> str:
    """16 hex digits of SHA-256 over canonical JSON: names a snapshot's data or choices."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


@dataclass(frozen=True)
class Release:
    """One entry of the ledger: what was published, when, at what ε, and what it cost.

    ``cost`` is ``epsilon`` for a new release and 0 for a re-publication of the same
    snapshot (the same ``data_fingerprint``, ``choices`` and ``epsilon``).
    """

    what: str
    epsilon: Fraction
    data_fingerprint: str
    choices: str
    at: datetime
    cost: Fraction


@dataclass(frozen=True)
class Ledger:
    """A survey's central budget and every release charged against it (basic composition).

    Re-publishing a snapshot is free only because its figures are the *stored* noisy
    values shown again, not fresh noise: fresh noise on the same data would be a new
    release, and the difference between two draws tells something. New data (another
    fingerprint) or other choices cost again.
    """

    budget: Fraction
    releases: tuple[Release, ...] = ()

    def __post_init__(self) -> None:
        if not isinstance(self.budget, Fraction) or self.budget <= 0:
            raise ValueError("the central budget must be a positive Fraction")

    @property
    def spent(self) -> Fraction:
        return sum((r.cost for r in self.releases), Fraction(0))

    @property
    def remaining(self) -> Fraction:
        return self.budget - self.spent

    def previous(self, data_fingerprint: str, choices: str, epsilon: Fraction) -> Release | None:
        """The first release of this snapshot (same data, choices and ε), if there was one."""
        for release in self.releases:
            if (release.data_fingerprint, release.choices, release.epsilon) == (
                data_fingerprint,
                choices,
                epsilon,
            ):
                return release
        return None

    def charge(
        self,
        what: str,
        epsilon: Fraction | float | str,
        data_fingerprint: str,
        choices: str,
        at: datetime,
    ) -> Ledger:
        """The ledger with this release added, or ``BudgetExceededError`` (the ledger unchanged).

        ``choices`` names what the release shows (e.g. ``fingerprint`` of the page's
        settings); the same data and choices at another ε are another release.
        """
        requested = central_epsilon(epsilon)
        earlier = self.previous(data_fingerprint, choices, requested)
        cost = Fraction(0) if earlier is not None else requested
        if cost > self.remaining:
            raise BudgetExceededError(
                f"this release needs ε = {_decimal(cost)}, but only {_decimal(self.remaining)} "
                f"of the survey's central budget of {_decimal(self.budget)} is left; "
                "nothing was published"
            )
        entry = Release(what, requested, data_fingerprint, choices, at, cost)
        return replace(self, releases=(*self.releases, entry))

    def with_budget(self, budget: Fraction | float | str) -> Ledger:
        """The same ledger under a new budget, which must cover what is already spent."""
        new = central_epsilon(budget)
        if new < self.spent:
            raise BudgetExceededError(
                f"releases have already spent ε = {_decimal(self.spent)}; "
                f"the budget cannot be set below that (asked: {_decimal(new)})"
            )
        return replace(self, budget=new)


def _decimal(value: Fraction) -> str:
    """A Fraction as a short decimal for messages (at most 4 places, trailing zeros cut)."""
    return f"{float(value):.4f}".rstrip("0").rstrip(".")
