"""The browser's scripts on their own, in real Chromium: exact distributions and form wiring.

Each mechanism's module (static/mechanisms/, with static/coins.js) is sampled in the
browser through ``window.surveyRandomizer.randomize`` and compared with the exact report
distribution written out from the SPEC's formulas (every cell within 5 binomial standard
errors, and a chi-square test at alpha = 1e-6), so a biased coin, a truncated Laplace tail
or a GRR that keeps the truth too often fails; ``below``, the uniform draw under every
coin, is checked byte by byte at every length the app draws. The form tests serve a
hand-written survey page and static/randomize.js from a routed origin (no server needed)
and read what the page POSTs: with crypto only randomized reports and plain answers leave;
without crypto, or without the module of a mechanism the survey uses, the form is left
alone for the server to randomize.
"""

from __future__ import annotations

import html
import json
import math
import re
from collections.abc import Callable, Iterator, Mapping
from fractions import Fraction
from typing import Any
from urllib.parse import urlsplit

import numpy as np
import pytest

from survey_app.privacy import MECHANISMS
from survey_app.privacy.audit import browser_value, chi_square_fit, mechanism_name, shipped_cases
from survey_app.privacy.mechanisms.piecewise import DiscretePiecewise
from survey_app.privacy.mechanisms.sampled_option import SampledOption
from survey_app.served_scripts import served_script
from tests.support.browser import one_post, watch
from tests.support.samplers import (
    ALPHA,
    COINS,
    DRAWS,
    STATIC,
    check_cells,
    load_samplers,
    sample,
)

FORM = STATIC / "randomize.js"


def rational(value: Fraction | float) -> str:
    """The SPEC's "a/b" string; a float is taken at its exact dyadic value."""
    fraction = Fraction(value)
    return f"{fraction.numerator}/{fraction.denominator}"


# --- exact distributions ---------------------------------------------------------------


def two_coin(t: Fraction, f: Fraction) -> dict[str, object]:
    return {
        "mechanism": "two_coin_randomized_response",
        "truth_probability": rational(t),
        "forced_yes_probability": rational(f),
    }


def grr(k: int, p: Fraction) -> dict[str, object]:
    return {"mechanism": "generalized_randomized_response", "k": k, "keep_probability": rational(p)}


def oue(k: int, q: Fraction) -> dict[str, object]:
    return {
        "mechanism": "optimized_unary_encoding",
        "k": k,
        "one_probability": "1/2",
        "flip_to_one_probability": rational(q),
    }


def subsets(k: int, size: int, p: Fraction) -> dict[str, object]:
    return {
        "mechanism": "subset_selection",
        "k": k,
        "size": size,
        "include_probability": rational(p),
    }


def laplace(low: int, high: int, gamma: Fraction) -> dict[str, object]:
    return {"mechanism": "discrete_laplace", "min": low, "max": high, "gamma": rational(gamma)}


def duchi(low: int, high: int, lean: Fraction) -> dict[str, object]:
    return {"mechanism": "duchi_binary", "min": low, "max": high, "lean": rational(lean)}


def exact_distribution(params: Mapping[str, Any], value: Any) -> dict[str, float]:
    """P(report | value) for every report of a finite mechanism, keyed as sample() keys."""
    name = params["mechanism"]
    if name == "two_coin_randomized_response":
        t = Fraction(params["truth_probability"])
        f = Fraction(params["forced_yes_probability"])
        yes = t * (value == "yes") + (1 - t) * f
        return {"yes": float(yes), "no": float(1 - yes)}
    if name == "generalized_randomized_response":
        k, p = params["k"], Fraction(params["keep_probability"])
        q = (1 - p) / (k - 1)
        return {str(j): float(p if j == value else q) for j in range(k)}
    if name == "optimized_unary_encoding":
        k, q = params["k"], Fraction(params["flip_to_one_probability"])
        one = [Fraction(params["one_probability"]) if j == value else q for j in range(k)]
        cells = {}
        for code in range(2**k):
            bits = format(code, f"0{k}b")
            probability = Fraction(1)
            for j, bit in enumerate(bits):
                probability *= one[j] if bit == "1" else 1 - one[j]
            cells[bits] = float(probability)
        return cells
    if name == "duchi_binary":
        low, high, r = params["min"], params["max"], Fraction(params["lean"])
        delta = high - low
        up = (delta + r * (2 * value - low - high)) / (2 * delta)
        return {"1": float(up), "0": float(1 - up)}
    raise AssertionError(name)


def laplace_cells(params: Mapping[str, Any], value: int, n: int) -> dict[str, float]:
    """Single values of x + Z while each expects >= 50 reports, then the two tails."""
    alpha = math.exp(-float(Fraction(params["gamma"])))
    pmf = (1 - alpha) / (1 + alpha)
    reach = 0
    while n * pmf * alpha ** (reach + 1) >= 50:
        reach += 1
    cells = {str(value + z): pmf * alpha ** abs(z) for z in range(-reach, reach + 1)}
    tail = alpha ** (reach + 1) / (1 + alpha)  # P(Z >= reach + 1) = P(Z <= -reach - 1)
    cells[f"<{value - reach}"] = tail
    cells[f">{value + reach}"] = tail
    return cells


def laplace_cell(report: str, value: int, reach: int) -> str:
    z = int(report) - value
    if z < -reach:
        return f"<{value - reach}"
    if z > reach:
        return f">{value + reach}"
    return report


# --- the browser ------------------------------------------------------------------------


@pytest.fixture
def randomizer(page: Any) -> Any:
    """A blank page with every sampler loaded (no form on it, so only the API matters)."""
    page.goto("about:blank")
    load_samplers(page)
    return page


E1 = math.e  # e^ε at ε = 1


FINITE_CASES = [
    pytest.param(two_coin(Fraction(1, 2), Fraction(1, 2)), "yes", id="two-coin-fair-yes"),
    pytest.param(two_coin(Fraction(1, 2), Fraction(1, 2)), "no", id="two-coin-fair-no"),
    pytest.param(two_coin(Fraction(math.tanh(0.5)), Fraction(1, 2)), "no", id="two-coin-eps1-no"),
    pytest.param(grr(4, Fraction(E1 / (E1 + 3))), 0, id="grr-k4-first"),
    pytest.param(grr(4, Fraction(E1 / (E1 + 3))), 3, id="grr-k4-last"),
    pytest.param(grr(20, Fraction(math.exp(2) / (math.exp(2) + 19))), 7, id="grr-k20"),
    pytest.param(grr(2, Fraction(3, 4)), 1, id="grr-k2"),
    pytest.param(oue(3, Fraction(1 / (E1 + 1))), 1, id="oue-k3-joint"),
    pytest.param(duchi(0, 10, Fraction(math.tanh(0.5))), 0, id="duchi-min"),
    pytest.param(duchi(0, 10, Fraction(math.tanh(0.5))), 3, id="duchi-inside"),
    pytest.param(duchi(0, 10, Fraction(math.tanh(0.5))), 10, id="duchi-max"),
    pytest.param(duchi(-5, 5, Fraction(1, 3)), -2, id="duchi-negative"),
]


@pytest.mark.parametrize(("params", "value"), FINITE_CASES)
def test_finite_mechanisms_match_their_exact_distribution(
    randomizer: Any, params: dict[str, Any], value: Any
) -> None:
    check_cells(sample(randomizer, params, value), exact_distribution(params, value), DRAWS)


def test_oue_bits_have_the_exact_marginals(randomizer: Any) -> None:
    k, value, q = 8, 7, Fraction(1 / (math.exp(0.5) + 1))
    histogram = sample(randomizer, oue(k, q), value)
    assert all(len(bits) == k and set(bits) <= {"0", "1"} for bits in histogram)
    for j in range(k):
        ones = sum(count for bits, count in histogram.items() if bits[j] == "1")
        p = 0.5 if j == value else float(q)
        check_cells({"1": ones, "0": DRAWS - ones}, {"1": p, "0": 1 - p}, DRAWS)


LAPLACE_CASES = [
    pytest.param(laplace(0, 10, Fraction(1, 2)), 3, id="gamma-1/2"),
    pytest.param(laplace(-5, 5, Fraction(7, 3)), -5, id="gamma-7/3-at-min"),
    pytest.param(laplace(0, 1000, Fraction(3, 50)), 1000, id="gamma-3/50-at-max"),
]


@pytest.mark.parametrize(("params", "value"), LAPLACE_CASES)
def test_discrete_laplace_matches_its_exact_distribution(
    randomizer: Any, params: dict[str, Any], value: int
) -> None:
    histogram = sample(randomizer, params, value)
    expected = laplace_cells(params, value, DRAWS)
    reach = (len(expected) - 3) // 2
    observed: dict[str, int] = {}
    for report, count in histogram.items():
        cell = laplace_cell(report, value, reach)
        observed[cell] = observed.get(cell, 0) + count
    check_cells(observed, expected, DRAWS)

    # The far tail: |Z| >= t has probability 2 α^t / (1 + α); t chosen so that about
    # 40 reports land there, which a truncated or thinned tail cannot produce.
    alpha = math.exp(-float(Fraction(params["gamma"])))
    far = math.ceil(math.log(40 / DRAWS * (1 + alpha) / 2) / math.log(alpha))
    assert far > reach
    p_far = 2 * alpha**far / (1 + alpha)
    beyond = sum(count for report, count in histogram.items() if abs(int(report) - value) >= far)
    check_cells({"far": beyond, "near": DRAWS - beyond}, {"far": p_far, "near": 1 - p_far}, DRAWS)


#: Every length in bytes of a bound the browser draws below, at the parameters the app
#: accepts: 1 to 11 (Duchi's 2·b·Δ; privacy/audit.py, ``shipped_cases``).
BYTE_LENGTHS = range(1, 12)


def shipped_function(name: str) -> str:
    """One function of coins.js as written there, to run on its own in a page."""
    source = COINS.read_text(encoding="utf-8")
    found = re.search(rf"^  function {name}\(.*?^  }}$", source, re.MULTILINE | re.DOTALL)
    assert found, f"coins.js no longer has a function {name}(): update this test"
    return found[0]


def byte_probabilities(n: int, position: int) -> np.ndarray:
    """P(byte ``position`` of a uniform integer below n = j) for j = 0..255, exactly: every
    full block of 256^(position + 1) integers gives each j 256^position, the rest what it
    reaches."""
    size = 256**position
    full, rest = divmod(n, 256 * size)
    return np.array([full * size + min(max(rest - j * size, 0), size) for j in range(256)]) / n


def test_below_is_uniform_in_every_byte_at_every_length(page: Any) -> None:
    # below(n) itself, for an n of each length the app draws: 8·length - 3 bits, so the
    # mask keeps 5 bits of the first byte; on any other byte it would leave 224 of that
    # byte's 256 values impossible, 17,500 reports expected where none come (a fit
    # statistic above 100,000, against a threshold near 400). 20,000 draws per length give
    # every possible byte value ≈ 78 expected reports; each byte's fit is Pearson's, at
    # 1e-6 over all of them.
    page.goto("about:blank")
    draws = 20_000
    lengths = {length: 5 * 2 ** (8 * length - 6) + 3 for length in BYTE_LENGTHS}
    counts = page.evaluate(
        """([source, bounds, draws]) => {
             const below = new Function(`${source}; return below;`)();
             return bounds.map(([length, bound]) => {
               const n = BigInt(bound);
               const counts = Array.from({ length }, () => new Array(256).fill(0));
               for (let i = 0; i < draws; i++) {
                 const v = below(n);
                 for (let b = 0; b < length; b++) counts[b][Number((v >> BigInt(8 * b)) & 255n)]++;
               }
               return counts;
             });
           }""",
        [shipped_function("below"), [[k, str(n)] for k, n in lengths.items()], draws],
    )
    level = ALPHA / sum(BYTE_LENGTHS)
    for (length, n), by_position in zip(lengths.items(), counts, strict=True):
        for position, row in enumerate(by_position):
            fit = chi_square_fit(np.array(row), byte_probabilities(n, position))
            assert not fit.rejects(level), f"below(n), n of {length} bytes, byte {position}: {fit}"


def test_the_audit_cases_draw_every_byte_length(page: Any) -> None:
    # The browser's half of tests/privacy/test_audit.py's check: the lengths of the arrays
    # the samplers fill, over 200 reports per answer of every audit case.
    page.goto("about:blank")
    page.evaluate(
        """() => {
             window.drawnLengths = new Set();
             const original = Crypto.prototype.getRandomValues;
             Crypto.prototype.getRandomValues = function (array) {
               window.drawnLengths.add(array.byteLength);
               return original.call(this, array);
             };
           }"""
    )
    load_samplers(page)
    for audit_case in shipped_cases():
        name = mechanism_name(audit_case.mechanism)
        for value in audit_case.values:
            parameters = audit_case.mechanism.parameters()
            sample(page, parameters, browser_value(name, value), 200)
    assert set(page.evaluate("() => [...window.drawnLengths]")) == set(BYTE_LENGTHS)


def test_randomize_returns_the_spec_encodings(randomizer: Any) -> None:
    cases = [
        (two_coin(Fraction(1, 2), Fraction(1, 2)), "yes", "string"),
        (grr(4, Fraction(1, 2)), 2, "number"),
        (grr(4, Fraction(1, 2)), "2", "number"),  # a form field's value
        (oue(5, Fraction(1, 4)), 4, "string"),
        (laplace(-3, 3, Fraction(1, 1)), -3, "number"),
        (duchi(0, 10, Fraction(1, 2)), "7", "number"),
    ]
    for params, value, kind in cases:
        report = randomizer.evaluate(
            "([p, v]) => window.surveyRandomizer.randomize(p, v)", [params, value]
        )
        assert type(report).__name__ == {"string": "str", "number": "int"}[kind], (params, report)
        name = params["mechanism"]
        if name == "two_coin_randomized_response":
            assert report in {"yes", "no"}
        elif name == "generalized_randomized_response":
            assert 0 <= report < 4
        elif name == "optimized_unary_encoding":
            assert len(report) == 5 and set(report) <= {"0", "1"}
        elif name == "duchi_binary":
            assert report in {0, 1}

    # Values outside the question's range, malformed rationals and unknown mechanisms throw
    # rather than produce a report with no privacy guarantee.
    bad: list[tuple[object, object]] = [
        (grr(4, Fraction(1, 2)), 4),
        (grr(4, Fraction(1, 2)), -1),
        (laplace(0, 10, Fraction(1, 2)), 11),
        (laplace(0, 10, Fraction(1, 2)), "2.5"),
        (duchi(0, 10, Fraction(1, 2)), -1),
        (two_coin(Fraction(1, 2), Fraction(1, 2)), "maybe"),
        ({**grr(4, Fraction(1, 2)), "keep_probability": "0.5"}, 1),
        ({**grr(4, Fraction(1, 2)), "keep_probability": "3/2"}, 1),
        ({"mechanism": "gaussian"}, 1),
    ]
    for bad_params, value in bad:
        threw = randomizer.evaluate(
            """([p, v]) => {
                 try { window.surveyRandomizer.randomize(p, v); return false; }
                 catch (error) { return true; }
               }""",
            [bad_params, value],
        )
        assert threw, f"randomize({bad_params}, {value!r}) did not throw"


def test_only_crypto_randomness_is_used(page: Any) -> None:
    page.goto("about:blank")
    page.evaluate(
        """() => {
             window.mathRandomCalls = 0;
             Math.random = () => { window.mathRandomCalls += 1; return 0.5; };
             window.cryptoCalls = 0;
             const original = Crypto.prototype.getRandomValues;
             Crypto.prototype.getRandomValues = function (array) {
               window.cryptoCalls += 1;
               return original.call(this, array);
             };
           }"""
    )
    load_samplers(page)
    every_mechanism = [
        (two_coin(Fraction(math.tanh(0.5)), Fraction(1, 2)), "no"),
        (grr(5, Fraction(1, 3)), 2),
        (oue(5, Fraction(1, 4)), 0),
        (laplace(0, 100, Fraction(1, 30)), 50),
        (laplace(0, 1, Fraction(9, 2)), 0),
        (duchi(0, 10, Fraction(1, 2)), 4),
    ]
    for params, value in every_mechanism:
        histogram = sample(page, params, value, 500)
        assert sum(histogram.values()) == 500
    assert page.evaluate("window.mathRandomCalls") == 0, "a sampler called Math.random"
    assert page.evaluate("window.cryptoCalls") >= 6 * 500


def test_the_module_a_page_loads_for_a_mechanism_is_the_one_that_samples_it(page: Any) -> None:
    # A page loads the coins and each of its mechanisms' ``browser_script``
    # (web/respond/scripts.py); the audit samples every module. On its own, each module
    # must register its mechanism, or a page would post its form for the server to randomize.
    for audit_case in shipped_cases():
        module = audit_case.mechanism.browser_script
        assert module is not None, audit_case.label
        page.goto("about:blank")
        page.add_script_tag(content=served_script(COINS.name))
        page.add_script_tag(content=served_script(module))
        name = mechanism_name(audit_case.mechanism)
        assert page.evaluate("(name) => window.surveyRandomizer.has(name)", name), module


# --- the form ---------------------------------------------------------------------------

ORIGIN = "http://survey.test"
HIDDEN = {"csrf_token": "token-1", "submission_id": "sub-1", "design": "d0e5", "agreed": "yes"}
# Parameters that make each report certain and different from the true answer, so the
# test can tell the design's parameters were used (and the truth was not just copied).
DESIGN = {
    "cheated": two_coin(Fraction(0), Fraction(1)),  # always "yes"
    "drug": grr(2, Fraction(0)),  # always the other option
    "colour": {**oue(4, Fraction(1)), "one_probability": "0/1"},  # true bit 0, others 1
    "tool": subsets(12, 11, Fraction(0)),  # every option but the true one
    "drinks": laplace(0, 30, Fraction(1, 50)),
    "income": duchi(0, 100, Fraction(1)),  # max → always 1
    "score": DiscretePiecewise.best_for(0, 10, Fraction(1)).parameters(),
    "skipped": two_coin(Fraction(1, 2), Fraction(1, 2)),  # optional, left unanswered
    "used": SampledOption(3, Fraction(99, 100)).parameters(),  # tick all: a pair per option
}


#: The page's questions in the order written, as survey.html lists them for randomize.js.
QUESTION_KEYS = [
    "cheated", "drug", "colour", "tool", "drinks", "income", "score",
    "year", "age", "skipped", "used", "height",
]  # fmt: skip


def survey_html(design: Mapping[str, Any] | None, scripts: list[str]) -> str:
    tags = "".join(f'<script src="/{script}" defer></script>' for script in scripts)
    hidden = "".join(
        f'<input type="hidden" name="{name}" value="{value}">' for name, value in HIDDEN.items()
    )
    design_attribute = (
        f' data-design="{html.escape(json.dumps(design), quote=True)}"' if design else ""
    )

    def radios(name: str, values: list[str], required: bool = True) -> str:
        flag = " required" if required else ""
        return "".join(
            f'<label><input type="radio" name="{name}" value="{v}"{flag}>{v}</label>'
            for v in values
        )

    return f"""<!doctype html>
<html><head><meta charset="utf-8">{tags}</head>
<body><p class="js-only" hidden>Your browser flips the coins.</p>
<form method="post" action="/s/test" data-randomize="survey"{design_attribute}
 data-questions='{json.dumps(QUESTION_KEYS)}'>{hidden}
{radios("cheated", ["y", "n"])}
{radios("drug", ["0", "1"])}
{radios("colour", ["0", "1", "2", "3"])}
{radios("tool", [str(option) for option in range(12)])}
<div class="js-swap"><input name="drinks" required></div>
<div class="js-swap" hidden><input type="number" name="drinks" min="0" max="30" step="1"
 disabled required></div>
<input type="number" name="income" min="0" max="100" step="1" required>
<input type="number" name="score" min="0" max="10" step="1" required>
{radios("year", ["0", "1", "2"])}
<input type="number" name="age" min="16" max="99" step="1" required>
{radios("skipped", ["y", "n"], required=False)}
{"".join(radios(f"used.{option}", ["y", "n"]) for option in range(3))}
<input type="number" name="height" min="100" max="250" step="1">
<button type="submit">Randomize and send my answers</button>
</form></body></html>"""


TRUE_ANSWERS = {"cheated": "n", "drug": "0", "colour": "2", "tool": "3", "year": "1"}
#: The tick-all question's pairs: options 0 and 2 ticked. Never posted with a report.
TRUE_TICKS = {"used.0": "y", "used.1": "n", "used.2": "y"}
TRUE_NUMBERS = {"drinks": "12", "income": "100", "score": "4", "age": "33"}


#: The modules of the mechanisms in DESIGN, as static/ names: every registered mechanism's.
MODULES = sorted({m.browser_script for m in MECHANISMS if m.browser_script is not None})


@pytest.fixture
def survey_page(page: Any) -> Iterator[Callable[..., Any]]:
    """Serve the hand-written survey (with ``design``) from ORIGIN, with the coins, the
    mechanism ``modules`` (default: all) and the form's script, in the page's order."""

    def open_page(design: Mapping[str, Any] | None, modules: list[str] = MODULES) -> Any:
        scripts = [COINS.name, *modules, FORM.name]

        def handle(route: Any) -> None:
            request = route.request
            path = urlsplit(request.url).path.lstrip("/")
            if path in scripts:
                body = served_script(path)
                route.fulfill(body=body, content_type="text/javascript")
            elif request.method == "POST":
                route.fulfill(body="<p id=done>stored</p>", content_type="text/html")
            else:
                route.fulfill(body=survey_html(design, scripts), content_type="text/html")

        page.route(f"{ORIGIN}/**", handle)
        return page

    yield open_page


def fill_and_send(page: Any) -> None:
    page.goto(f"{ORIGIN}/s/test")
    fill_and_send_open(page)


def fill_and_send_open(page: Any) -> None:
    for name, value in {**TRUE_ANSWERS, **TRUE_TICKS}.items():
        page.check(f'input[name="{name}"][value="{value}"]')
    for name, value in TRUE_NUMBERS.items():
        page.fill(f'input[name="{name}"]:enabled', value)
    with page.expect_navigation():
        page.click('button[type="submit"]')
    page.wait_for_selector("#done")


def test_the_form_sends_only_reports_and_plain_answers(survey_page: Any) -> None:
    page = survey_page(DESIGN)
    log = watch(page)
    page.goto(f"{ORIGIN}/s/test")
    assert page.locator(".js-only").is_visible()
    fill_and_send_open(page)

    url, fields = one_post(log)  # the respondent's own form was never submitted
    assert urlsplit(url).path == "/s/test"
    posted = set(HIDDEN) | {"randomized", "used"} | set(TRUE_ANSWERS) | set(TRUE_NUMBERS)
    assert set(fields) == posted  # the tick-all pairs joined into one report, never sent
    assert {name: fields[name] for name in HIDDEN} == HIDDEN
    assert fields["randomized"] == "client"
    # Sensitive questions: the design's reports, never the truth.
    # Every value at one length per question whatever the answer: yes/no as "y"/"n",
    # numbers (reports and plain) as 17 characters, "-" or "0" then 16 digits.
    assert fields["cheated"] == "y"
    assert fields["drug"] == "1"
    assert fields["colour"] == "1101"
    assert fields["tool"] == ",".join(f"{option:02}" for option in range(12) if option != 3)
    assert fields["income"] == "1"
    option, bit = map(int, fields["used"].split(":"))  # "j:b", j one digit for 3 options
    assert SampledOption(3, Fraction(99, 100)).probability((option, bit), (1, 0, 1)) > 0
    score = DiscretePiecewise.best_for(0, 10, Fraction(1))
    assert re.fullmatch(r"[0-9]{17}", fields["score"]) and score.probability(
        int(fields["score"]), 4
    )
    assert re.fullmatch(r"-[0-9]{16}|[0-9]{17}", fields["drinks"]), fields["drinks"]
    # Plain questions as entered (numbers padded); skipped optional ones not at all.
    assert fields["year"] == "1" and fields["age"] == "00000000000000033"
    assert "skipped" not in fields and "height" not in fields
    assert not log.page_errors and not log.console_errors


def test_the_drinks_report_is_randomized_not_copied(survey_page: Any) -> None:
    """Discrete Laplace cannot be made certain, so send a few times and see it move."""
    page = survey_page(DESIGN)
    reports = set()
    for _ in range(4):
        log = watch(page)
        fill_and_send(page)
        _, fields = one_post(log)
        reports.add(int(fields["drinks"]))
    # At γ = 1/50 every P(Z = z) <= (1 - α)/(1 + α) < 0.01: four equal reports have
    # probability sum_z P(z)^4 < 1e-6.
    assert len(reports) > 1


def test_without_crypto_the_form_is_left_to_the_server(survey_page: Any) -> None:
    page = survey_page(DESIGN)
    page.add_init_script(
        "Object.defineProperty(window, 'crypto', {value: undefined, configurable: true});"
    )
    log = watch(page)
    page.goto(f"{ORIGIN}/s/test")
    assert page.evaluate("window.crypto") is None
    assert page.locator(".js-only").is_hidden()
    # Nothing intercepted, but the number inputs are enabled: the person can still answer.
    assert page.locator('input[type="number"][name="drinks"]').is_visible()
    assert page.locator('input[type="number"][name="drinks"]').is_enabled()
    assert page.locator('input:not([type])[name="drinks"]').is_disabled()
    fill_and_send_open(page)

    _, fields = one_post(log)
    assert "randomized" not in fields
    assert {name: fields[name] for name in TRUE_ANSWERS} == TRUE_ANSWERS
    assert {name: fields[name] for name in TRUE_TICKS} == TRUE_TICKS
    assert {name: fields[name] for name in TRUE_NUMBERS} == TRUE_NUMBERS


@pytest.mark.parametrize(
    "design",
    [
        pytest.param({**DESIGN, "drug": {"mechanism": "gaussian"}}, id="unknown-mechanism"),
        pytest.param(None, id="no-design-attribute"),
    ],
)
def test_an_unusable_design_leaves_the_form_to_the_server(
    survey_page: Any, design: Mapping[str, Any] | None
) -> None:
    page = survey_page(design)
    log = watch(page)
    page.goto(f"{ORIGIN}/s/test")
    assert page.locator(".js-only").is_hidden()
    fill_and_send_open(page)
    _, fields = one_post(log)
    assert "randomized" not in fields
    assert {name: fields[name] for name in TRUE_ANSWERS} == TRUE_ANSWERS
    assert {name: fields[name] for name in TRUE_TICKS} == TRUE_TICKS


@pytest.mark.parametrize("missing", MODULES)
def test_without_a_mechanism_s_module_the_form_is_left_to_the_server(
    survey_page: Any, missing: str
) -> None:
    # DESIGN uses every mechanism: without one's module the page randomizes nothing and
    # claims nothing, and posts the form as it is for the server to randomize, rather than
    # send that question's true answer among reports.
    page = survey_page(DESIGN, [module for module in MODULES if module != missing])
    log = watch(page)
    page.goto(f"{ORIGIN}/s/test")
    assert page.locator(".js-only").is_hidden()
    fill_and_send_open(page)

    _, fields = one_post(log)
    assert "randomized" not in fields
    assert {name: fields[name] for name in TRUE_ANSWERS} == TRUE_ANSWERS
    assert {name: fields[name] for name in TRUE_TICKS} == TRUE_TICKS
    assert {name: fields[name] for name in TRUE_NUMBERS} == TRUE_NUMBERS
    assert not log.page_errors


def test_the_scripts_of_a_page_with_every_mechanism_stay_small() -> None:
    # As served (minified): the page with every question type has 30 KiB in all.
    scripts = [COINS.name, *MODULES, FORM.name]
    assert sum(len(served_script(name).encode()) for name in scripts) <= 9 * 1024
