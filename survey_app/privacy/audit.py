"""Statistics for auditing a mechanism's privacy claim from its own samples.

A mechanism claims two things: its reports follow an exact distribution
(``probability(report, value)``), and that distribution is ε-locally private. An audit
draws many reports from a real implementation (the server's Python or the browser's
script) for two answers and checks both claims against what came out:

* a goodness-of-fit test of each histogram against the exact distribution; a correct
  sampler passes it except with a tiny, fixed probability, a biased coin fails it;
* a lower confidence bound on the privacy loss: for a fixed family of report sets S,
  ln(P(report in S | x) / P(report in S | y)) is at most ε for an ε-private mechanism, and
  one-sided Clopper-Pearson bounds on both probabilities bound the ratio from below. A
  bound above the claimed ε means, with confidence at least 1 - α, that the
  implementation leaks more than it claims (the approach of Ding et al., "Detecting
  Violations of Differential Privacy", CCS 2018, with exact binomial bounds).

Every report set and every pooling of cells is chosen from the exact distributions,
before any sample is looked at, so a Bonferroni correction over the family keeps the
familywise error at the stated α: a correct implementation fails an audit about once in
1/α runs, however many cases it has.

Reports are handled as the browser writes them (``report_key``): "yes"/"no", an option
index or an integer in decimal, or an OUE bit string like "01001". Pure Python, NumPy and
SciPy: no Flask, no database, no browser.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np

# scipy.special, not scipy.stats: the command group is imported by every web worker, and
# scipy.stats would cost each ~50 MB (see estimate.py).
from scipy.special import betaincinv, chdtrc

from .mechanisms import (
    MECHANISMS,
    UNWIRED,
    DiscreteLaplace,
    DiscretePiecewise,
    DuchiBinary,
    GeneralizedRandomizedResponse,
    Mechanism,
    OptimizedUnaryEncoding,
    SampledOption,
    SubsetSelection,
)
from .wire import ReportFormat

#: The chance that an audit of correct implementations fails anyway, over all its tests.
FAMILYWISE_ALPHA = 1e-6
#: Cells whose expected count is below this are pooled: the chi-square approximation to
#: the statistic's distribution needs about five expected reports per cell.
MIN_EXPECTED = 5.0
#: Where an unbounded distribution's tails are summed to: pmf terms below this are dropped.
_TAIL_TERM = 1e-18
_MAX_TAIL_TERMS = 10_000_000


# ---- reports as the browser writes them ----


def mechanism_name(mechanism: Mechanism) -> str:
    return str(mechanism.parameters()["mechanism"])


def _report_format(name: str) -> ReportFormat:
    """How the browser writes the reports of the mechanism stored as ``name`` (an unwired
    one's too, so its case can be audited before it is offered)."""
    known = MECHANISMS + UNWIRED
    return next(mechanism.report_format for mechanism in known if mechanism.name == name)


def report_key(name: str, report: Any) -> str:
    """A Python report in the browser's encoding, so both paths share one histogram."""
    return _report_format(name).audit_key(report)


def report_from_key(name: str, key: str) -> Any:
    """The Python report that ``probability`` expects, from its browser encoding."""
    return _report_format(name).from_audit_key(key)


def browser_value(name: str, value: Any) -> Any:
    """A true answer in the form's encoding: "yes"/"no" for yes/no, else the number."""
    return _report_format(name).audit_value(value)


# ---- a fixed partition of the reports ----


@dataclass(frozen=True)
class Cells:
    """A partition of all possible reports into finitely many cells.

    Either the finite support, one report per cell (``support``), or, for integer reports
    on an unbounded line, one cell per integer in [``low``, ``high``] plus the two tails
    (< low and > high). Chosen from the exact distributions only, never from samples.
    """

    support: tuple[str, ...] | None = None
    low: int = 0
    high: int = 0

    @property
    def labels(self) -> tuple[str, ...]:
        if self.support is not None:
            return self.support
        middle = tuple(str(r) for r in range(self.low, self.high + 1))
        return (f"<{self.low}", *middle, f">{self.high}")

    @property
    def ordered(self) -> bool:
        """Whether the cells run along the integers, so tail sets {≤ c}, {≥ c} mean something."""
        return self.support is None

    def __len__(self) -> int:
        # Counted, not built: ``index`` asks for every report, and the labels of a wide
        # Laplace case are thousands of strings.
        if self.support is not None:
            return len(self.support)
        return self.high - self.low + 3

    def index(self, key: str) -> int | None:
        """The cell of a report, or None for a report the mechanism can never produce."""
        if self.support is not None:
            try:
                return self.support.index(key)
            except ValueError:
                return None
        try:
            report = int(key)
        except ValueError:
            return None
        if report < self.low:
            return 0
        if report > self.high:
            return len(self) - 1
        return report - self.low + 1

    def counts(self, histogram: Mapping[str, int]) -> tuple[np.ndarray, dict[str, int]]:
        """Reports per cell, and the impossible reports (none, for a correct sampler)."""
        counts = np.zeros(len(self), dtype=np.int64)
        impossible: dict[str, int] = {}
        for key, count in histogram.items():
            cell = self.index(key)
            if cell is None:
                impossible[key] = impossible.get(key, 0) + count
            else:
                counts[cell] += count
        return counts, impossible

    def probabilities(self, mechanism: Mechanism, value: Any) -> np.ndarray:
        """The exact chance of each cell for answer ``value``; checks they sum to 1."""
        name = mechanism_name(mechanism)

        def pmf(key: str) -> float:
            return float(mechanism.probability(report_from_key(name, key), value))

        if self.support is not None:
            exact = [
                mechanism.probability(report_from_key(name, key), value) for key in self.support
            ]
            if all(isinstance(p, Fraction) for p in exact) and sum(exact) != 1:
                raise ValueError(f"{name}: the exact probabilities for {value!r} do not sum to 1")
            probabilities = np.array([float(p) for p in exact])
        else:
            middle = [pmf(str(r)) for r in range(self.low, self.high + 1)]
            below = _tail_sum(lambda r: pmf(str(r)), self.low - 1, -1)
            above = _tail_sum(lambda r: pmf(str(r)), self.high + 1, 1)
            probabilities = np.array([below, *middle, above])
        if abs(probabilities.sum() - 1) > 1e-9 or (probabilities < 0).any():
            raise ValueError(f"{name}: the probabilities for {value!r} are not a distribution")
        return probabilities


def _tail_sum(pmf: Callable[[int], float], start: int, step: int) -> float:
    """Σ pmf(start + i·step) over i ≥ 0, for a pmf that decays away from the cells.

    Summed until the terms fall below 1e-18: the remainder of a geometric tail is at most
    the last term over (1 - ratio), negligible against any expected count.
    """
    total = 0.0
    report = start
    for _ in range(_MAX_TAIL_TERMS):
        term = pmf(report)
        total += term
        if term < _TAIL_TERM:
            return total
        report += step
    raise ValueError("the distribution's tail does not decay")


def integer_cells(mechanism: Mechanism, values: Sequence[int], samples: int) -> Cells:
    """Cells for integer reports: every integer expected at least ``MIN_EXPECTED`` times
    in ``samples`` reports for one of ``values``, and the two tails beyond them.

    Walks outwards from the answers while the expected count is large enough; the
    distributions audited here (discrete Laplace) are unimodal around the answer.
    """
    name = mechanism_name(mechanism)
    low, high = min(values), max(values)
    threshold = MIN_EXPECTED / samples

    def expected_enough(report: int) -> bool:
        return any(
            float(mechanism.probability(report_from_key(name, str(report)), v)) >= threshold
            for v in values
        )

    while expected_enough(low - 1):
        low -= 1
    while expected_enough(high + 1):
        high += 1
    return Cells(low=low, high=high)


def cells_for(mechanism: Mechanism, values: Sequence[Any], samples: int) -> Cells:
    support = mechanism.finite_support()
    if support is not None:
        return Cells(support=support)
    return integer_cells(mechanism, [int(v) for v in values], samples)


# ---- goodness of fit ----


@dataclass(frozen=True)
class FitTest:
    """Pearson's chi-square test of one histogram against the exact distribution."""

    statistic: float
    degrees_of_freedom: int
    p_value: float
    impossible: Mapping[str, int] = field(default_factory=dict)

    def rejects(self, level: float) -> bool:
        return bool(self.impossible) or self.p_value < level


def pooled(expected: np.ndarray) -> np.ndarray:
    """A cell → group map that pools every cell expected fewer than ``MIN_EXPECTED`` times.

    The small cells form one group; if even that group is too small, it joins the
    smallest of the others. Cells that cannot occur at all (expected 0) stay in a group of
    their own, so a report in one of them is never diluted away.
    """
    groups = np.arange(len(expected))
    small = (expected < MIN_EXPECTED) & (expected > 0)
    if small.any():
        pool = int(np.flatnonzero(small)[0])
        groups[small] = pool
        large = np.flatnonzero(~small & (expected > 0))
        if expected[small].sum() < MIN_EXPECTED and len(large) > 0:
            groups[groups == pool] = int(large[np.argmin(expected[large])])
    return groups


def chi_square_fit(
    counts: np.ndarray, probabilities: np.ndarray, impossible: Mapping[str, int] | None = None
) -> FitTest:
    """Chi-square goodness of fit with pooling of sparse cells.

    A report the mechanism can never produce (listed in ``impossible``, or counted in a
    cell of probability 0) rejects outright: no distributional argument is needed.
    """
    counts = np.asarray(counts, dtype=float)
    total = counts.sum()
    expected = total * np.asarray(probabilities, dtype=float)
    groups = pooled(expected)
    names = np.unique(groups)
    observed = np.array([counts[groups == g].sum() for g in names])
    expect = np.array([expected[groups == g].sum() for g in names])
    impossible = dict(impossible or {})
    zero = expect == 0
    if (observed[zero] > 0).any():
        impossible["(probability 0)"] = int(observed[zero].sum())
    observed, expect = observed[~zero], expect[~zero]
    degrees = len(expect) - 1
    if impossible:
        return FitTest(math.inf, degrees, 0.0, impossible)
    if degrees < 1:
        return FitTest(0.0, 0, 1.0)
    statistic = float(((observed - expect) ** 2 / expect).sum())
    return FitTest(statistic, degrees, float(chdtrc(degrees, statistic)))


# ---- exact binomial bounds and the privacy-loss bound ----


def clopper_pearson_lower(successes: int, trials: int, alpha: float) -> float:
    """One-sided lower bound for a binomial proportion, exceeded with chance ≤ ``alpha``."""
    if successes <= 0:
        return 0.0
    return float(betaincinv(successes, trials - successes + 1, alpha))


def clopper_pearson_upper(successes: int, trials: int, alpha: float) -> float:
    """One-sided upper bound for a binomial proportion, undercut with chance ≤ ``alpha``."""
    if successes >= trials:
        return 1.0
    return float(betaincinv(successes + 1, trials - successes, 1 - alpha))


@dataclass(frozen=True)
class ReportSet:
    """A set of reports S, as a union of cells, with a name for the report."""

    label: str
    members: np.ndarray  # boolean, one entry per cell


def report_sets(cells: Cells, first: np.ndarray, second: np.ndarray) -> list[ReportSet]:
    """The fixed family of report sets S whose probability ratios bound the privacy loss.

    * each single cell;
    * the likelihood-ratio sets: cells ordered by their exact ratio P(·|x)/P(·|y), and
      every union of the top ones (and of the bottom ones). By the Neyman-Pearson lemma
      these are the sets where a true ratio of e^ε shows with the most reports, so the
      bound is tightest there;
    * for integer reports, every tail {≤ c} and {≥ c}: where a truncated or too light
      tail breaks the claim, whatever the exact ratios say.
    """
    size = len(cells)
    labels = cells.labels
    sets: dict[bytes, ReportSet] = {}

    def add(label: str, members: np.ndarray) -> None:
        if members.any() and not members.all():
            sets.setdefault(members.tobytes(), ReportSet(label, members))

    for i in range(size):
        members = np.zeros(size, dtype=bool)
        members[i] = True
        add(f"{{{labels[i]}}}", members)
    if cells.ordered:
        for i in range(1, size):
            members = np.zeros(size, dtype=bool)
            members[:i] = True
            add(f"{{≤ {cells.low + i - 2}}}", members)
            add(f"{{≥ {cells.low + i - 1}}}", ~members)
    with np.errstate(divide="ignore", invalid="ignore"):
        log_ratio = np.log(first) - np.log(second)
    log_ratio = np.nan_to_num(log_ratio, nan=0.0)
    levels = np.unique(np.round(log_ratio, 12))
    for level in levels:
        add(f"{{ln ratio ≥ {level:.3g}}}", np.round(log_ratio, 12) >= level)
        add(f"{{ln ratio ≤ {level:.3g}}}", np.round(log_ratio, 12) <= level)
    return list(sets.values())


@dataclass(frozen=True)
class PrivacyLossBound:
    """A lower confidence bound on ε from two histograms: the true ε of the sampler that
    drew them is at least ``epsilon`` with chance ≥ 1 - ``alpha``."""

    epsilon: float
    report_set: str
    inputs: tuple[Any, Any]  # (x, y): the bound is on ln P(S | x) / P(S | y)
    counts: tuple[int, int]
    samples: tuple[int, int]
    alpha: float
    set_count: int


def privacy_loss_bound(
    cells: Cells,
    counts: Mapping[Any, np.ndarray],
    probabilities: Mapping[Any, np.ndarray],
    pair: tuple[Any, Any],
    alpha: float,
) -> PrivacyLossBound:
    """max over the report sets S and both orders of ln(lower P(S|x) / upper P(S|y)).

    Each of the 2·|family| probabilities gets a lower and an upper one-sided
    Clopper-Pearson bound at level alpha / (4·|family|), so with chance ≥ 1 - alpha every
    bound holds at once and every ratio of bounds undercuts its true ratio.
    """
    x, y = pair
    sets = report_sets(cells, probabilities[x], probabilities[y])
    level = alpha / (4 * len(sets))
    best = PrivacyLossBound(-math.inf, "", pair, (0, 0), (0, 0), alpha, len(sets))
    for a, b in ((x, y), (y, x)):
        n_a, n_b = int(counts[a].sum()), int(counts[b].sum())
        for report_set in sets:
            k_a = int(counts[a][report_set.members].sum())
            k_b = int(counts[b][report_set.members].sum())
            lower = clopper_pearson_lower(k_a, n_a, level)
            if lower <= 0:
                continue
            upper = clopper_pearson_upper(k_b, n_b, level)
            bound = math.log(lower / upper)
            if bound > best.epsilon:
                best = PrivacyLossBound(
                    bound, report_set.label, (a, b), (k_a, k_b), (n_a, n_b), alpha, len(sets)
                )
    return best


# ---- one audit case ----


@dataclass(frozen=True)
class AuditCase:
    """One mechanism at representative parameters and the answers to compare.

    In the local model every two answers are neighbours; the extreme ones (yes and no,
    the first and last option, min and max) are where a leak shows first.
    """

    label: str
    mechanism: Mechanism
    values: tuple[Any, ...]

    @property
    def pairs(self) -> list[tuple[Any, Any]]:
        return list(itertools.combinations(self.values, 2))

    @property
    def test_count(self) -> int:
        """Tests this case adds to one path's family: a fit per answer, a bound per pair."""
        return len(self.values) + len(self.pairs)


@dataclass(frozen=True)
class CaseResult:
    """The audit of one case along one path (the server's Python or the browser's)."""

    case: str
    path: str
    claimed_epsilon: float
    samples: int
    fits: Mapping[Any, FitTest]
    bounds: tuple[PrivacyLossBound, ...]
    level: float  # the per-test significance level after the Bonferroni split
    problems: tuple[str, ...] = ()  # failures outside the statistics (e.g. Math.random)

    @property
    def epsilon_lower_bound(self) -> float:
        return max((b.epsilon for b in self.bounds), default=-math.inf)

    @property
    def worst_fit(self) -> FitTest | None:
        return min(self.fits.values(), key=lambda fit: fit.p_value, default=None)

    @property
    def fit_rejected(self) -> bool:
        return any(fit.rejects(self.level) for fit in self.fits.values())

    @property
    def epsilon_exceeded(self) -> bool:
        # A hair of tolerance: the claimed ε is a float computed from exact ratios.
        return self.epsilon_lower_bound > self.claimed_epsilon * (1 + 1e-12)

    @property
    def passed(self) -> bool:
        return not (self.problems or self.fit_rejected or self.epsilon_exceeded)


def _untested(case: AuditCase, path: str, level: float, problems: tuple[str, ...]) -> CaseResult:
    """A failed case with no statistics: the reasons are in ``problems``."""
    epsilon = float(case.mechanism.epsilon)
    return CaseResult(case.label, path, epsilon, 0, {}, (), level, problems)


def evaluate_case(
    case: AuditCase,
    path: str,
    histograms: Mapping[Any, Mapping[str, int]],
    level: float,
    problems: Iterable[str] = (),
) -> CaseResult:
    """Test one case's histograms (one per answer in ``case.values``) at level ``level``.

    ``level`` is each test's share of the familywise α: the fits reject below it and the
    privacy-loss bounds hold with chance ≥ 1 - level each.
    """
    samples = {value: sum(histograms[value].values()) for value in case.values}
    problems = tuple(problems)
    if not all(samples.values()):
        # Nothing to test (the sampler failed, and ``problems`` says how): fail the case.
        return _untested(case, path, level, problems or ("no reports were drawn",))
    cells = cells_for(case.mechanism, case.values, min(samples.values()))
    try:
        probabilities = {v: cells.probabilities(case.mechanism, v) for v in case.values}
    except ValueError as err:
        # The claim itself is broken: there is no distribution to test the reports against.
        return _untested(
            case, path, level, (*problems, f"the stated distribution is invalid: {err}")
        )
    counts: dict[Any, np.ndarray] = {}
    fits: dict[Any, FitTest] = {}
    for value in case.values:
        counts[value], impossible = cells.counts(histograms[value])
        fits[value] = chi_square_fit(counts[value], probabilities[value], impossible)
    bounds = tuple(
        privacy_loss_bound(cells, counts, probabilities, pair, level) for pair in case.pairs
    )
    return CaseResult(
        case=case.label,
        path=path,
        claimed_epsilon=float(case.mechanism.epsilon),
        samples=min(samples.values()),
        fits=fits,
        bounds=bounds,
        level=level,
        problems=problems,
    )


def shipped_cases() -> list[AuditCase]:
    """Every mechanism the app ships, on its extreme answers, at parameters that make
    its samplers draw every size of random integer the app ever asks for.

    Representative cases: yes/no at fair coins and at a small and a large ε; GRR and OUE
    with five options (OUE forced: ``auto`` picks GRR there); discrete Laplace on a short
    range (its tails matter most relative to Δ) and on 0/1 with γ > 1 (the sampler's other
    branch); Duchi on the example survey's range. Plain questions have no ε to audit.

    Every coin is a uniform integer below a bound n (``below(n)`` in coins.js,
    ``randbelow(n)`` in Python), drawn from ⌈log2 n / 8⌉ random bytes, and a fault at one
    byte length is seen only by a case that draws bounds of that length (coins.js's
    mask on the wrong byte leaves a 10-bit bound 16 values, the reports 31 residues of
    1000, and no case used to draw one). The bounds, with Δ = max - min ≤ 10⁶, ε in
    thousandths in [0.01, 10] and k ≤ 20:

    * rational coins a/b (yes/no, GRR's keep, OUE, Duchi): b is the power of two of a
      float, 2^35 to 2^67 (5-9 bytes) as its trailing zeros fall; Duchi's coin is
      (Δ + lean·(2x - min - max))/(2Δ), unreduced in mechanisms/duchi.js (2·b·Δ, up to
      2^61·10⁶: 11 bytes, the largest), reduced in Python (2·b at min and max, up to 2·b·Δ
      inside);
    * GRR's other option: k - 1 (1 byte); fair coins and signs: 2;
    * discrete Laplace with γ = s/t: t ≤ 1000·Δ, then in the exp-coin t·k for k = 1, 2, ...
      (mechanisms/discrete_laplace.js) or the reduced denominators of u/(t·k) (Python): 1
      to 4 bytes, 5 at t near 10⁹ with k ≥ 5 (noise too wide for unit cells; GRR's keep
      covers 5 bytes).

    The lengths these cases draw, in both paths unless marked:

    ====  ==================================================================
    1     fair coins, k - 1, small Laplace bounds (every case has some)
    2     Laplace 0-1000, ε = 1: t = 1000, s = 1, so u shows in the report
    3, 4  Laplace 0-10000, ε = 9.999: t = 10⁷ and 2t (one answer: two far
          answers would need 13,000 cells; the fit is the check)
    5     GRR k = 2, ε = 1.04: keep = a/2^37
    6     GRR k = 13, ε = 1: keep = a/2^45
    7     yes/no at ε = 0.5 and 2, GRR k = 5 and OUE at ε = 1; Duchi 0-50 (Python);
          subset selection k = 8, ε = 1 (the truth kept with p = a/2^m, then
          partial Fisher-Yates draws below 7, 6); piecewise 0-10, ε = 1; tick all
          that apply k = 5, ε = 1 (p = a/2^m; the option below 5: 1 byte)
    8     Duchi 0-50 (browser); Duchi 1-800000 at min and max (Python)
    9     OUE, ε = 9: q = a/2^65
    10    Duchi 0-1000000, ε = 1: 2^55·10⁶ (answer 1 in Python)
    11    Duchi 1-800000, ε = 0.015: 2^61·799999, the app's largest (answer 2
          in Python; Δ odd and prime to the lean's numerator, so nothing reduces)
    ====  ==================================================================

    A power of two's trailing zeros come from the float a formula gives, so another
    platform's libm may move a length: ``tests/privacy/test_audit.py`` and
    ``tests/browser/test_randomizer.py`` record the lengths actually drawn. A power of two
    also hides a fault in the low bits (it moves a coin a/2^m by at most 2^(8-m)): only
    a Laplace case with s = 1 shows one in its reports, and the browser tests check
    ``below`` itself at every length.

    The two cases with the longest bounds come last: a fault that slows long draws (the
    misplaced mask redraws 127 of 128 times below 2^65) ends a path as hung, and the
    other cases' statistics are in by then.
    """
    from .choosing import yes_no_mechanism

    one = Fraction(1)
    grr, oue = GeneralizedRandomizedResponse.from_epsilon, OptimizedUnaryEncoding.from_epsilon
    laplace, duchi = DiscreteLaplace.from_epsilon, DuchiBinary.from_epsilon
    subsets, piecewise = SubsetSelection.best_for, DiscretePiecewise.best_for
    return [
        AuditCase("yes/no, fair coins (ε = ln 3)", yes_no_mechanism(None), (True, False)),
        AuditCase("yes/no, ε = 0.5", yes_no_mechanism(Fraction("0.5")), (True, False)),
        AuditCase("yes/no, ε = 2", yes_no_mechanism(Fraction(2)), (True, False)),
        AuditCase("GRR, k = 5, ε = 1", grr(5, one), (0, 4)),
        AuditCase("GRR, k = 13, ε = 1", grr(13, one), (0, 12)),
        AuditCase("GRR, k = 2, ε = 1.04", grr(2, Fraction("1.04")), (0, 1)),
        AuditCase("OUE, k = 5, ε = 1", oue(5, one), (0, 4)),
        AuditCase("subset selection, k = 8, ε = 1", subsets(8, one), (0, 7)),
        AuditCase("discrete Laplace, 0-10, ε = 1", laplace(0, 10, one), (0, 10)),
        AuditCase("discrete Laplace, 0-1, ε = 3", laplace(0, 1, Fraction(3)), (0, 1)),
        AuditCase(
            "discrete Laplace, 0-1000, ε = 1",
            laplace(0, 1000, one),
            (0, 1000),
        ),
        AuditCase(
            "discrete Laplace, 0-10000, ε = 9.999",
            laplace(0, 10_000, Fraction("9.999")),
            (0,),
        ),
        AuditCase("Duchi, 0-50, ε = 1", duchi(0, 50, one), (0, 50)),
        AuditCase("piecewise, 0-10, ε = 1", piecewise(0, 10, one), (0, 10)),
        *tick_all_cases(),
        AuditCase(
            "Duchi, 0-1000000, ε = 1",
            duchi(0, 1_000_000, one),
            (0, 1, 1_000_000),
        ),
        # The longest bounds last (see above).
        AuditCase("OUE, k = 5, ε = 9", oue(5, Fraction(9)), (0, 4)),
        AuditCase(
            "Duchi, 1-800000, ε = 0.015",
            duchi(1, 800_000, Fraction("0.015")),
            (1, 2, 800_000),
        ),
    ]


def tick_all_cases() -> list[AuditCase]:
    """Tick all that apply, one sampled option (part of ``shipped_cases``).

    Its answers are sets, and a leak would show between sets of different sizes: none
    ticked, one, and all five. The report's chance differs only through p (a rational
    a/2^m, 7 bytes at ε = 1) and the drawn option (below 5, one byte).
    """
    answers = ((0, 0, 0, 0, 0), (1, 0, 0, 0, 0), (1, 1, 1, 1, 1))
    sampled = SampledOption.from_epsilon(5, Fraction(1))
    return [AuditCase("tick all that apply, sampled option, k = 5, ε = 1", sampled, answers)]
