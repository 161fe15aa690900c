"""Exact coins from a secure source of random integers.

Every random choice a mechanism makes is reduced to ``randbelow(n)``: a coin with rational
probability a/b is "randbelow(b) < a", which is exactly a/b, with no floating-point
rounding to shift it (Mironov 2012 shows how float-based noise leaks). The discrete
Laplace sampler follows Canonne, Kamath & Steinke 2020, "The Discrete Gaussian for
Differential Privacy" (Algorithms 1 and 2): integer arithmetic and rational coins only.
"""

from __future__ import annotations

import secrets
from fractions import Fraction
from typing import Protocol

HALF = Fraction(1, 2)
ONE = Fraction(1)


class RandomSource(Protocol):
    """Where random integers come from: uniform on {0, ..., n - 1}.

    Real answers use ``SECURE``; tests pass scripted sources to pin a path through a sampler.
    """

    def randbelow(self, n: int, /) -> int: ...


class _SecretsSource:
    """The operating system's CSPRNG through ``secrets`` (looked up at each call)."""

    def randbelow(self, n: int, /) -> int:
        return secrets.randbelow(n)

    def __repr__(self) -> str:
        return "SECURE"


SECURE: RandomSource = _SecretsSource()


def uniform_below(n: int, source: RandomSource = SECURE) -> int:
    """A uniform integer in {0, ..., n - 1}; ``secrets.randbelow`` rejects, never takes a modulo."""
    if n < 1:
        raise ValueError("n must be at least 1")
    return source.randbelow(n)


def uniform_subset(n: int, size: int, source: RandomSource = SECURE) -> tuple[int, ...]:
    """``size`` distinct integers of {0, ..., n - 1}, every such set equally likely, sorted.

    A partial Fisher–Yates shuffle: the i-th draw is uniform on the n - i integers not yet
    drawn, so every ordered draw of ``size`` has chance 1/(n(n - 1)…(n - size + 1)) and
    every set, drawn in any of its size! orders, 1/C(n, size). Only ``uniform_below``.
    """
    if not 0 <= size <= n:
        raise ValueError(f"cannot draw {size} distinct integers below {n}")
    pool = list(range(n))
    for i in range(size):
        j = i + uniform_below(n - i, source)
        pool[i], pool[j] = pool[j], pool[i]
    return tuple(sorted(pool[:size]))


def bernoulli(probability: Fraction, source: RandomSource = SECURE) -> bool:
    """True with exactly ``probability``: one of b equally likely outcomes, a of them true."""
    numerator, denominator = probability.numerator, probability.denominator
    if not 0 <= numerator <= denominator:
        raise ValueError("probability must lie in [0, 1]")
    return source.randbelow(denominator) < numerator


def bernoulli_exp_minus(gamma: Fraction, source: RandomSource = SECURE) -> bool:
    """True with probability exactly e^(-γ) for a rational γ ≥ 0 (CKS 2020, Algorithm 1).

    For γ ≤ 1: draw Bernoulli(γ/1), Bernoulli(γ/2), ... until one fails; the number K of the
    failing draw is odd with probability Σ (-γ)^j / j! = e^(-γ). Larger γ splits into
    ⌊γ⌋ factors e^(-1) and one e^(-(γ - ⌊γ⌋)).
    """
    if gamma < 0:
        raise ValueError("gamma must not be negative")
    whole = gamma.numerator // gamma.denominator
    for _ in range(whole):
        if not _bernoulli_exp_minus_at_most_one(ONE, source):
            return False
    return _bernoulli_exp_minus_at_most_one(gamma - whole, source)


def _bernoulli_exp_minus_at_most_one(gamma: Fraction, source: RandomSource) -> bool:
    k = 1
    while bernoulli(gamma / k, source):
        k += 1
    return k % 2 == 1


def discrete_laplace(gamma: Fraction, source: RandomSource = SECURE) -> int:
    """An integer Z with P(Z = z) = (1 - α)/(1 + α) · α^|z|, α = e^(-γ) (CKS 2020, Algorithm 2).

    With γ = s/t: U uniform below t, kept with probability e^(-U/t), plus t times a
    Geometric(1 - e^(-1)) count gives X with P(X = x) ∝ e^(-x/t); ⌊X/s⌋ is then geometric
    with ratio e^(-s/t) = α. A random sign, rejecting "-0" so zero is not counted twice,
    makes it two-sided. Every step is a rational coin or a uniform integer.
    """
    if gamma <= 0:
        raise ValueError("gamma must be positive")
    s, t = gamma.numerator, gamma.denominator
    while True:
        u = source.randbelow(t)
        if not bernoulli_exp_minus(Fraction(u, t), source):
            continue
        v = 0
        while bernoulli_exp_minus(ONE, source):
            v += 1
        y = (u + t * v) // s
        negative = bernoulli(HALF, source)
        if negative and y == 0:
            continue
        return -y if negative else y
