"""The browser's samplers measured in a page: draw many reports through
``window.surveyRandomizer.randomize`` and hold the counts to the exact distribution.

Shared by tests/browser/test_randomizer.py and the per-mechanism sampler tests
(test_subset_sampler.py, test_sampled_option_sampler.py, test_piecewise_sampler.py): every
cell within SIGMAS binomial standard errors and a chi-square p-value above ALPHA, the
shipped modules loaded as served, or one of them with a statement broken on purpose.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from scipy.stats import chi2

from survey_app.cli.audit import browser_modules
from survey_app.served_scripts import served_script
from tests.support.paths import ROOT

STATIC = ROOT / "survey_app" / "static"
COINS = STATIC / "coins.js"
DRAWS = 40_000
SIGMAS = 5.0
ALPHA = 1e-6


def check_cells(observed: Mapping[str, int], expected: Mapping[str, float], n: int) -> None:
    """Every cell within SIGMAS standard errors, and the chi-square p-value above ALPHA."""
    assert sum(observed.values()) == n
    unexpected = set(observed) - set(expected)
    assert not unexpected, f"reports outside the mechanism's range: {sorted(unexpected)[:10]}"
    assert math.isclose(sum(expected.values()), 1.0, abs_tol=1e-9)
    statistic, cells = 0.0, 0
    for cell, probability in expected.items():
        count = observed.get(cell, 0)
        if probability == 0:
            assert count == 0, f"cell {cell}: {count} reports of an impossible report"
            continue
        mean = n * probability
        sd = math.sqrt(n * probability * (1 - probability))
        assert abs(count - mean) <= SIGMAS * sd + 1e-9, (
            f"cell {cell}: {count} reports, expected {mean:.1f} ± {SIGMAS} × {sd:.1f}"
        )
        statistic += (count - mean) ** 2 / mean
        cells += 1
    if cells > 1:
        p_value = chi2.sf(statistic, cells - 1)
        assert p_value > ALPHA, f"chi-square {statistic:.1f} on {cells - 1} df, p = {p_value:.2e}"


def load_samplers(page: Any) -> None:
    """The coins and every mechanism's module, as the app serves them and the audit loads them."""
    for name in browser_modules():
        page.add_script_tag(content=served_script(name))


def assert_each_throws(page: Any, bad: Sequence[tuple[Mapping[str, Any], object]]) -> None:
    """``randomize`` refuses each (parameters, answer) pair by throwing."""
    for parameters, value in bad:
        threw = page.evaluate(
            """([p, v]) => {
                 try { window.surveyRandomizer.randomize(p, v); return false; }
                 catch (error) { return true; }
               }""",
            [parameters, value],
        )
        assert threw, f"randomize({parameters}, {value!r}) did not throw"


def load_broken_module(page: Any, module: Path, shipped: str, broken: str) -> None:
    """A blank page with the coins and ``module``, its one ``shipped`` statement made
    ``broken`` (to see a sampler's test catch a bias)."""
    source = module.read_text(encoding="utf-8")
    assert source.count(shipped) == 1, "the module changed: update this break"
    page.goto("about:blank")
    page.add_script_tag(path=str(COINS))
    page.add_script_tag(content=source.replace(shipped, broken))


def sample(page: Any, params: Mapping[str, Any], value: Any, count: int = DRAWS) -> dict[str, int]:
    histogram = page.evaluate(
        """([p, v, n]) => {
             const histogram = {};
             for (let i = 0; i < n; i++) {
               const key = String(window.surveyRandomizer.randomize(p, v));
               histogram[key] = (histogram[key] || 0) + 1;
             }
             return histogram;
           }""",
        [params, value, count],
    )
    return {str(key): int(number) for key, number in histogram.items()}
