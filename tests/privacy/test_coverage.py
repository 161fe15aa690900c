"""The exact-coverage computation of scripts/coverage_table.py, and docs/COVERAGE.md."""

from __future__ import annotations

import importlib.util
import sys

import numpy as np
import pytest
from scipy.stats import binom

from survey_app.privacy import TwoCoinDesign
from tests.support.paths import ROOT

SCRIPT = ROOT / "scripts" / "coverage_table.py"
DOC = ROOT / "docs" / "COVERAGE.md"

_spec = importlib.util.spec_from_file_location("coverage_table", SCRIPT)
assert _spec is not None and _spec.loader is not None
coverage_table = importlib.util.module_from_spec(_spec)
sys.modules["coverage_table"] = coverage_table  # dataclasses look their module up here
_spec.loader.exec_module(coverage_table)

FAIR = TwoCoinDesign(0.5, 0.5)
EPS_HALF = TwoCoinDesign.from_epsilon(0.5)


def test_wilson_minimum_at_n30_fair_coins_is_the_known_figure() -> None:
    result = coverage_table.min_coverage(30, FAIR, 0.95, "wilson")
    assert round(result.coverage, 3) == 0.934
    # Wilson is symmetric under fair coins: the dip is near 0.476 and, mirrored, 0.524.
    assert min(abs(result.prevalence - 0.476), abs(result.prevalence - 0.524)) < 0.005


@pytest.mark.slow
def test_minimum_is_the_infimum_of_a_brute_force_grid() -> None:
    """Independent check with scipy.stats.binom on a 200001-point grid.

    The endpoint limits reach at or below any grid value, and not by more than the
    grid misses near a jump.
    """
    n, method = 30, "wilson"
    low, high = coverage_table.interval_bounds(n, FAIR, 0.95, method)
    pis = np.linspace(0.0, 1.0, 200_001)
    pmf = binom.pmf(np.arange(n + 1)[:, None], n, 0.25 + 0.5 * pis[None, :])
    brute = (pmf * ((low[:, None] <= pis) & (pis <= high[:, None]))).sum(axis=0)
    result = coverage_table.min_coverage(n, FAIR, 0.95, method)
    assert result.coverage <= brute.min() + 1e-12
    assert brute.min() - result.coverage < 1e-6
    # The script's own pmf agrees with scipy's.
    mine = coverage_table.binomial_pmf(n, FAIR, pis[::1000])
    np.testing.assert_allclose(mine, pmf[:, ::1000], rtol=0, atol=1e-13)


@pytest.mark.parametrize("design", [FAIR, EPS_HALF], ids=["fair", "eps0.5"])
@pytest.mark.parametrize("n", [10, 30, 100])
def test_clopper_pearson_never_below_nominal(design: TwoCoinDesign, n: int) -> None:
    for confidence in (0.90, 0.95):
        result = coverage_table.min_coverage(n, design, confidence, "clopper-pearson")
        assert result.coverage >= confidence, (n, confidence, result)


@pytest.mark.slow
def test_coverage_doc_is_current() -> None:
    expected = coverage_table.render()
    assert DOC.read_text(encoding="utf-8") == expected, (
        "docs/COVERAGE.md is stale; regenerate with " + coverage_table.COMMAND
    )
