"""Mechanisms for choosing one of k options: generalized randomized response and OUE.

Both report something from which the count of each option is Binomial(n, λ_j) with
λ_j = p_false + (p_true - p_false)·π_j, so every option's share is estimated exactly like
a yes/no prevalence (``estimate.estimate_proportion``). GRR sends one option and is better
for few options; optimized unary encoding (Wang et al., USENIX Security 2017) sends one bit
per option and is better for many. ``choosing.choice_mechanism`` picks between them.

``report_range`` is what an honest device sends (an index below k; each unary bit 0 or 1),
all the server accepts; ``report_influence`` is how far one such report moves a share.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import ClassVar

from .coins import HALF, SECURE, RandomSource, bernoulli, uniform_below
from .rationals import (
    check_mechanism_name,
    checked_epsilon,
    epsilon_of_ratio,
    fraction_text,
    parse_fraction,
    parse_integer,
    private_probability,
    required_parameter,
)


def _check_k(k: object) -> int:
    k = parse_integer(k, "k (the number of options)")
    if k < 2:
        raise ValueError(f"a choice needs at least 2 options, got k = {k}")
    return k


def _option(value: object, k: int, what: str = "value") -> int:
    """An option index in 0..k-1, or a clear error."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < k:
        raise ValueError(f"{what} must be an option index in 0..{k - 1}, got {value!r}")
    return value


def share_influence(p_true: Fraction, p_false: Fraction, n: int) -> Fraction:
    """1/(n(p_true - p_false)): the most one report moves a share estimated from n reports.

    A report counts once or not at all in a category, so it moves the count by at most 1
    and the unbiased share (count/n - p_false)/(p_true - p_false) by this much.
    """
    if parse_integer(n, "n") < 1:
        raise ValueError(f"n must be at least 1, got {n}")
    return 1 / (n * (p_true - p_false))


def _small_share_variance(p_true: Fraction, p_false: Fraction) -> float:
    """One report's variance of the unbiased share estimate at π = 0 (λ = p_false)."""
    return float(p_false * (1 - p_false) / (p_true - p_false) ** 2)


@dataclass(frozen=True)
class GeneralizedRandomizedResponse:
    """k-ary randomized response: keep the true option with ``keep_probability`` p, else
    report one of the other k - 1 uniformly, each with q = (1 - p)/(k - 1). ε = ln(p/q).
    """

    k: int
    keep_probability: Fraction
    name: ClassVar[str] = "generalized_randomized_response"

    def __post_init__(self) -> None:
        _check_k(self.k)
        if not isinstance(self.keep_probability, Fraction):
            raise ValueError("keep_probability must be a Fraction")
        # p ≤ 1/k would make the true option no likelier than any other: nothing to estimate.
        if not Fraction(1, self.k) < self.keep_probability < 1:
            raise ValueError("keep_probability must lie strictly between 1/k and 1")

    @classmethod
    def from_epsilon(cls, k: int, epsilon: Fraction | float) -> GeneralizedRandomizedResponse:
        """p = e^ε/(e^ε + k - 1), the float rounded down until the realized ε ≤ requested."""
        k = _check_k(k)
        requested = checked_epsilon(epsilon)

        def worst_ratio(p: Fraction) -> Fraction | None:
            return p * (k - 1) / (1 - p) if Fraction(1, k) < p < 1 else None

        start = 1 / (1 + (k - 1) * math.exp(-float(requested)))
        return cls(k, private_probability(start, 0.0, worst_ratio, requested))

    @classmethod
    def from_parameters(cls, parameters: Mapping[str, object]) -> GeneralizedRandomizedResponse:
        check_mechanism_name(parameters, cls.name)
        return cls(
            k=_check_k(required_parameter(parameters, "k")),
            keep_probability=parse_fraction(
                required_parameter(parameters, "keep_probability"), "keep_probability"
            ),
        )

    def parameters(self) -> dict[str, object]:
        return {
            "mechanism": self.name,
            "k": self.k,
            "keep_probability": fraction_text(self.keep_probability),
        }

    @property
    def other_probability(self) -> Fraction:
        """q: the chance of reporting one particular other option."""
        return (1 - self.keep_probability) / (self.k - 1)

    @property
    def epsilon(self) -> float:
        return epsilon_of_ratio(self.keep_probability / self.other_probability)

    @property
    def p_true(self) -> float:
        return float(self.keep_probability)

    @property
    def p_false(self) -> float:
        return float(self.other_probability)

    @property
    def small_share_variance(self) -> float:
        return _small_share_variance(self.keep_probability, self.other_probability)

    def report_range(self) -> tuple[int, int]:
        """An option's index: 0 to k - 1."""
        return 0, self.k - 1

    def report_influence(self, n: int) -> Fraction:
        """1/(n(p - q)) on two options at once: the one reported and the one not."""
        return share_influence(self.keep_probability, self.other_probability, n)

    def randomize(self, value: int, source: RandomSource = SECURE) -> int:
        truth = _option(value, self.k)
        if bernoulli(self.keep_probability, source):
            return truth
        other = uniform_below(self.k - 1, source)  # skip the true index
        return other if other < truth else other + 1

    def probability(self, report: int, value: int) -> Fraction:
        same = _option(report, self.k, "report") == _option(value, self.k)
        return self.keep_probability if same else self.other_probability


@dataclass(frozen=True)
class OptimizedUnaryEncoding:
    """Optimized unary encoding: k bits; the true option's bit is 1 with ``one_probability``
    (1/2), every other bit is 1 with ``flip_to_one_probability`` q = 1/(e^ε + 1).

    The worst ratio is ((1/2)/q)·((1 - q)/(1/2)) = (1 - q)/q: two answers differ in two bits.
    """

    k: int
    flip_to_one_probability: Fraction
    one_probability: Fraction = HALF
    name: ClassVar[str] = "optimized_unary_encoding"

    def __post_init__(self) -> None:
        _check_k(self.k)
        if not isinstance(self.flip_to_one_probability, Fraction) or not isinstance(
            self.one_probability, Fraction
        ):
            raise ValueError("OUE probabilities must be Fractions")
        if not 0 < self.flip_to_one_probability < self.one_probability < 1:
            raise ValueError(
                "need 0 < flip_to_one_probability < one_probability < 1 "
                "(a true option's bit must be likelier to be 1 than another's)"
            )

    @classmethod
    def from_epsilon(cls, k: int, epsilon: Fraction | float) -> OptimizedUnaryEncoding:
        """q = 1/(e^ε + 1), the float rounded up (towards 1/2) until the realized ε ≤ requested."""
        k = _check_k(k)
        requested = checked_epsilon(epsilon)

        def worst_ratio(q: Fraction) -> Fraction | None:
            return (1 - q) / q if 0 < q < HALF else None

        start = 1 / (math.exp(float(requested)) + 1)
        return cls(k, private_probability(start, 0.5, worst_ratio, requested))

    @classmethod
    def from_parameters(cls, parameters: Mapping[str, object]) -> OptimizedUnaryEncoding:
        check_mechanism_name(parameters, cls.name)
        return cls(
            k=_check_k(required_parameter(parameters, "k")),
            flip_to_one_probability=parse_fraction(
                required_parameter(parameters, "flip_to_one_probability"),
                "flip_to_one_probability",
            ),
            one_probability=parse_fraction(
                required_parameter(parameters, "one_probability"), "one_probability"
            ),
        )

    def parameters(self) -> dict[str, object]:
        return {
            "mechanism": self.name,
            "k": self.k,
            "one_probability": fraction_text(self.one_probability),
            "flip_to_one_probability": fraction_text(self.flip_to_one_probability),
        }

    @property
    def epsilon(self) -> float:
        p, q = self.one_probability, self.flip_to_one_probability
        return epsilon_of_ratio(p * (1 - q) / (q * (1 - p)))

    @property
    def p_true(self) -> float:
        return float(self.one_probability)

    @property
    def p_false(self) -> float:
        return float(self.flip_to_one_probability)

    @property
    def small_share_variance(self) -> float:
        return _small_share_variance(self.one_probability, self.flip_to_one_probability)

    def report_range(self) -> tuple[int, int]:
        """Each of the k bits is 0 or 1 (an honest device can set all of them)."""
        return 0, 1

    def report_influence(self, n: int) -> Fraction:
        """1/(n(1/2 - q)) on every option at once: a report may set all k bits."""
        return share_influence(self.one_probability, self.flip_to_one_probability, n)

    def randomize(self, value: int, source: RandomSource = SECURE) -> tuple[int, ...]:
        truth = _option(value, self.k)
        return tuple(
            int(
                bernoulli(
                    self.one_probability if j == truth else self.flip_to_one_probability, source
                )
            )
            for j in range(self.k)
        )

    def probability(self, report: Sequence[int], value: int) -> Fraction:
        truth = _option(value, self.k)
        bits = tuple(report)
        if len(bits) != self.k or any(isinstance(bit, bool) or bit not in (0, 1) for bit in bits):
            raise ValueError(f"report must be {self.k} bits (0 or 1), got {report!r}")
        chance = Fraction(1)
        for j, bit in enumerate(bits):
            one = self.one_probability if j == truth else self.flip_to_one_probability
            chance *= one if bit else 1 - one
        return chance


@dataclass(frozen=True)
class PlainChoice:
    """A plain (not sensitive) choice: stored as given. No protection, so ε is infinite."""

    k: int
    name: ClassVar[str] = "none"

    def __post_init__(self) -> None:
        _check_k(self.k)

    @classmethod
    def from_parameters(cls, parameters: Mapping[str, object]) -> PlainChoice:
        check_mechanism_name(parameters, cls.name)
        return cls(k=_check_k(required_parameter(parameters, "k")))

    def parameters(self) -> dict[str, object]:
        return {"mechanism": self.name, "k": self.k}

    @property
    def epsilon(self) -> float:
        return math.inf

    p_true: ClassVar[float] = 1.0
    p_false: ClassVar[float] = 0.0
    small_share_variance: ClassVar[float] = 0.0

    def report_range(self) -> tuple[int, int]:
        """The option's index itself: 0 to k - 1."""
        return 0, self.k - 1

    def report_influence(self, n: int) -> Fraction:
        """1/n: the answer itself."""
        return share_influence(Fraction(1), Fraction(0), n)

    def randomize(self, value: int, source: RandomSource = SECURE) -> int:
        return _option(value, self.k)

    def probability(self, report: int, value: int) -> Fraction:
        return Fraction(int(_option(report, self.k, "report") == _option(value, self.k)))
