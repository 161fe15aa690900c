"""``survey-app audit``: test every shipped mechanism's privacy claim on its real code.

Each audit case (``privacy.audit.shipped_cases``) is run through both places that
randomize answers: the server's Python (the mechanism's own ``randomize`` with the
``secrets`` coins) and the browser's modules (``static/coins.js`` and each mechanism's
``static/mechanisms/*.js``, minified as the app serves them: ``served_scripts``),
executed in Chromium with ``crypto.getRandomValues`` as in a respondent's browser. Each
histogram is tested against the exact distribution the mechanism states, and a lower
confidence bound on the privacy loss is compared with the claimed ε (statistics in
``privacy/audit.py``). In the browser, ``Math.random`` is replaced before the modules load
by a tripwire that counts calls: any call fails the audit, as does a script that never
asks ``crypto.getRandomValues``.

The statistics never need a seed: the family of tests is fixed in advance and corrected
for its size, so correct code fails only with the stated small probability.

A sampler that loops forever must fail the audit, not stall it (a broken exp-coin once
held CI for 50 minutes): each case has a deadline in each path, from its report count
(``case_time_limit``). Past it, the Python path is interrupted by a signal and the
browser's Chromium is killed; the case fails as hung and the rest of that path is not
sampled, so a run ends at most one deadline per path after its normal time.
"""

from __future__ import annotations

import math
import queue
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import click

from survey_app.privacy.audit import (
    FAMILYWISE_ALPHA,
    AuditCase,
    CaseResult,
    browser_value,
    evaluate_case,
    mechanism_name,
    report_key,
    shipped_cases,
)
from survey_app.privacy.mechanisms import Mechanism
from survey_app.served_scripts import FORM, SECTIONS, script_names, served_script

PYTHON = "python"
BROWSER = "browser"
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
#: Reports per answer, per case and per path by default: the whole audit (30 case-paths,
#: 3.1 million reports) used 30-39 s of CPU (17-21 s with the 16 case-paths it had before
#: it drew every byte length), 54-90 s on two cores busy with other work; CI's budget for
#: it is two minutes.
DEFAULT_SAMPLES = 50_000
#: Reports drawn per call into the page, so one call never runs for long.
_BROWSER_BATCH = 50_000
#: What the browser worker puts on its queue once the script is in the page.
_LOADED = "loaded"
#: How long Chromium may take to start, and the page to load the script.
_STARTUP_SECONDS = 20.0
#: How long one case may sample in one path before it counts as hung: a base, plus about
#: seven times the slowest pace seen per report (discrete Laplace on 0/1 at ε = 3 in
#: Python, 75 µs with both cores busy). 60 s for a two-answer case at the default size.
_CASE_BASE_SECONDS = 10.0
_SECONDS_PER_REPORT = 0.0005


def case_time_limit(case: AuditCase, samples: int) -> float:
    """Seconds ``case`` may take to draw ``samples`` reports per answer in one path."""
    return _CASE_BASE_SECONDS + _SECONDS_PER_REPORT * samples * len(case.values)


def browser_modules() -> list[str]:
    """The browser's samplers as the app serves them (``served_scripts``): ``coins.js``
    (the exact coins and the registry), then every mechanism's module. All of them,
    whatever a page loads: each mechanism is audited on its own module. The form's
    scripts (``randomize.js``, ``sections.js``) sample nothing."""
    return [name for name in script_names() if name not in (FORM, SECTIONS)]


def browser_source() -> str:
    """The browser modules, minified as served, joined in load order into the one script
    the audit loads (``--script`` takes the same): classic scripts run one after another
    as if they were one."""
    return "\n".join(served_script(name) for name in browser_modules())


class BrowserUnavailable(RuntimeError):
    """Chromium or Playwright is missing: the browser path cannot be audited here."""


# Installed before the browser modules run: Math.random still works (so a script that uses it
# produces its usual output) but every call is counted, as is every getRandomValues call.
_TRIPWIRES = """
() => {
  const calls = { mathRandom: 0, getRandomValues: 0 };
  const mathRandom = Math.random;
  Math.random = function random() {
    calls.mathRandom += 1;
    return mathRandom.call(Math);
  };
  const getRandomValues = Crypto.prototype.getRandomValues;
  Crypto.prototype.getRandomValues = function (array) {
    calls.getRandomValues += 1;
    return getRandomValues.call(this, array);
  };
  Object.defineProperty(window, "__auditCalls", { value: calls });
}
"""
_SAMPLE = """
([parameters, value, count]) => {
  const calls = window.__auditCalls;
  const [coins, mathRandom] = [calls.getRandomValues, calls.mathRandom];
  const histogram = {};
  for (let i = 0; i < count; i++) {
    const key = String(window.surveyRandomizer.randomize(parameters, value));
    histogram[key] = (histogram[key] || 0) + 1;
  }
  return {
    histogram,
    coins: calls.getRandomValues - coins,
    mathRandom: calls.mathRandom - mathRandom,
  };
}
"""


class BrowserSampler:
    """``surveyRandomizer.randomize`` in a Chromium page that has loaded one script.

    Collects what the statistics cannot see as ``problems``: a call of Math.random, a
    script that never asks crypto.getRandomValues, a sample that throws or miscounts.
    """

    def __init__(self, page: Any, error: type[Exception]) -> None:
        self._page = page
        self._error = error
        self.problems: list[str] = []

    def load(self, script: str) -> bool:
        """Tripwires first, then the script; False (with the reason noted) if it fails."""
        errors: list[str] = []
        self._page.on("pageerror", lambda error: errors.append(_first_line(error)))
        self._page.evaluate(_TRIPWIRES)
        try:
            self._page.add_script_tag(content=script)
            defined = self._page.evaluate("() => typeof window.surveyRandomizer === 'object'")
        except self._error as err:
            errors.append(_first_line(err))
            defined = False
        if not defined:
            reason = f": {errors[0]}" if errors else ""
            self.problems.append(f"the browser script did not define surveyRandomizer{reason}")
            return False
        if self._page.evaluate("() => window.__auditCalls.mathRandom"):
            self.problems.append("the browser script called Math.random while loading")
        return True

    def histogram(self, parameters: Mapping[str, Any], value: Any, count: int) -> Counter[str]:
        histogram: Counter[str] = Counter()
        remaining = count
        while remaining > 0:
            batch = min(remaining, _BROWSER_BATCH)
            try:
                result = self._page.evaluate(_SAMPLE, [dict(parameters), value, batch])
            except self._error as err:
                self.problems.append(f"surveyRandomizer.randomize threw: {_first_line(err)}")
                return Counter()
            if result["coins"] <= 0:
                self.problems.append("the browser script never called crypto.getRandomValues")
            if result["mathRandom"] > 0:
                self.problems.append(
                    f"the browser script called Math.random ({result['mathRandom']} times "
                    f"in {batch} reports)"
                )
            histogram.update({str(k): int(v) for k, v in result["histogram"].items()})
            remaining -= batch
        drawn = sum(histogram.values())
        if drawn != count:
            self.problems.append(f"the browser drew {drawn} reports, not {count}")
        return histogram

    def take_problems(self) -> list[str]:
        # One line per kind of problem (batches repeat them), the first of each kind.
        kinds: dict[str, str] = {}
        for problem in self.problems:
            kinds.setdefault(problem.split(" (")[0], problem)
        self.problems.clear()
        return list(kinds.values())


def _first_line(error: Exception) -> str:
    return str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__


@contextmanager
def _chromium_process(chromium: Path) -> Iterator[tuple[subprocess.Popen[bytes], str]]:
    """Headless Chromium with a DevTools endpoint, in a profile of its own; killed after.

    The audit starts the process itself (rather than through Playwright's launch) so it
    holds the process and can kill it when a script loops forever: a hung audit must
    fail, not stall CI.
    """
    with tempfile.TemporaryDirectory(
        prefix="survey-app-audit-", ignore_cleanup_errors=True
    ) as workdir:
        log_path = Path(workdir) / "chromium.log"
        with open(log_path, "wb") as log:
            # The executable is the operator's own --chromium path; no shell is involved.
            process = subprocess.Popen(  # noqa: S603
                [
                    str(chromium),
                    "--headless",
                    *CHROMIUM_ARGS,
                    "--remote-debugging-port=0",
                    f"--user-data-dir={Path(workdir) / 'profile'}",
                    "about:blank",
                ],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=log,
            )
        try:
            yield process, _devtools_endpoint(process, log_path)
        finally:
            process.terminate()
            try:
                process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def _devtools_endpoint(process: subprocess.Popen[bytes], log_path: Path) -> str:
    """The ws:// address Chromium prints once it listens for DevTools connections."""
    deadline = time.monotonic() + _STARTUP_SECONDS
    while time.monotonic() < deadline:
        text = log_path.read_text(encoding="utf-8", errors="replace")
        found = re.search(r"DevTools listening on (ws://\S+)", text)
        if found:
            return found[1]
        if process.poll() is not None:
            last = text.strip().splitlines()[-1:] or ["no output"]
            raise BrowserUnavailable(f"Chromium exited with {process.returncode}: {last[0]}")
        time.sleep(0.05)
    raise BrowserUnavailable(f"Chromium did not start within {_STARTUP_SECONDS:.0f} s")


def _sample_in_browser(
    cases: Sequence[AuditCase],
    samples: int,
    script: str,
    endpoint: str,
    say: Callable[[str], None],
    finished: queue.Queue[Any],
    stopped: threading.Event,
) -> None:
    """The browser path's sampling: one page, the script behind tripwires, every case in
    turn. Puts ``_LOADED`` on ``finished`` once the script is in the page, then each case's
    (histograms, problems) as soon as they are drawn.

    Uses Playwright's synchronous API start to finish in the calling thread; stops at the
    next case once ``stopped`` is set.
    """
    from playwright.sync_api import Error as PlaywrightError
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        try:
            browser = playwright.chromium.connect_over_cdp(endpoint)
        except PlaywrightError as err:
            raise BrowserUnavailable(f"cannot connect to Chromium: {_first_line(err)}") from err
        try:
            sampler = BrowserSampler(browser.new_context().new_page(), PlaywrightError)
            loaded = sampler.load(script)
            finished.put(_LOADED)
            for case in cases:
                if stopped.is_set():
                    return
                say(f"browser {case.label}")
                parameters = case.mechanism.parameters()
                name = mechanism_name(case.mechanism)
                histograms = {
                    value: sampler.histogram(parameters, browser_value(name, value), samples)
                    if loaded
                    else Counter()
                    for value in case.values
                }
                problems = sampler.take_problems() if loaded else list(sampler.problems)
                finished.put((histograms, problems))
        finally:
            with suppress(PlaywrightError):
                browser.close()


def _check_browser_path(chromium: Path) -> None:
    """Fail fast, before the Python path's minute of sampling, when the browser path can't run."""
    if not chromium.exists():
        raise BrowserUnavailable(f"{chromium} not found (Debian: apt-get install chromium)")
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError as err:
        raise BrowserUnavailable(f"Playwright is not installed ({err})") from err


def _run_browser_path(
    cases: Sequence[AuditCase],
    samples: int,
    script: str,
    chromium: Path,
    level: float,
    say: Callable[[str], None],
    limit: Callable[[AuditCase], float],
) -> list[CaseResult]:
    """The browser path, each case under its deadline: past it, Chromium is killed (which
    makes the pending ``page.evaluate`` fail) and the path stops, the case failing as hung.

    Sampling runs in a thread of its own, for two reasons: the caller must keep the clock
    while a script loops, and Playwright's synchronous API refuses to start in a thread
    whose event loop is already running (e.g. in a test session that drives a browser of
    its own). The statistics run here, while the page draws the next case.
    """
    finished: queue.Queue[Any] = queue.Queue()
    stopped = threading.Event()

    def work() -> None:
        try:
            _sample_in_browser(cases, samples, script, endpoint, say, finished, stopped)
        except BaseException as err:  # handed to the caller's thread
            finished.put(err)

    with _chromium_process(chromium) as (process, endpoint):
        worker = threading.Thread(target=work, name="survey-app-audit-browser", daemon=True)
        worker.start()
        try:
            results, late = _collect_browser_results(cases, finished, level, limit)
            if late is not None:
                stopped.set()
                process.kill()
                results.extend(_stopped_at(cases, *late, BROWSER, level))
        finally:
            stopped.set()
            worker.join(_STARTUP_SECONDS)
    return results


def _collect_browser_results(
    cases: Sequence[AuditCase],
    finished: queue.Queue[Any],
    level: float,
    limit: Callable[[AuditCase], float],
) -> tuple[list[CaseResult], tuple[int, str] | None]:
    """Each case's result as the worker hands its reports over, and, if the worker misses
    a deadline, the index of the case it is stuck on and why."""
    results: list[CaseResult] = []
    if _next_from(finished, _STARTUP_SECONDS) is None:
        return results, (0, f"the browser script did not load within {_STARTUP_SECONDS:.0f} s")
    for index, case in enumerate(cases):
        seconds = limit(case)
        outcome = _next_from(finished, seconds)
        if outcome is None:
            return results, (index, f"the browser script did not finish within {seconds:.0f} s")
        histograms, problems = outcome
        results.append(evaluate_case(case, BROWSER, histograms, level, problems))
    return results, None


def _next_from(finished: queue.Queue[Any], seconds: float) -> Any:
    """The browser worker's next item, or None if it takes longer than ``seconds``; an
    exception the worker raised is raised here."""
    try:
        item = finished.get(timeout=seconds)
    except queue.Empty:
        return None
    if isinstance(item, BaseException):
        raise item
    return item


def _stopped_at(
    cases: Sequence[AuditCase], index: int, reason: str, path: str, level: float
) -> list[CaseResult]:
    """Failed results for a path stopped at ``cases[index]`` (for ``reason``) and for the
    cases after it, which were never sampled."""
    hung, rest = cases[index], cases[index + 1 :]
    skipped = f"not sampled: the {path} path stopped at “{hung.label}”"

    def unsampled(case: AuditCase, problem: str) -> CaseResult:
        return evaluate_case(case, path, dict.fromkeys(case.values, Counter()), level, [problem])

    return [unsampled(hung, reason)] + [unsampled(case, skipped) for case in rest]


class _Overdue(Exception):
    """Raised in the main thread by ``_deadline``'s signal."""


@contextmanager
def _deadline(seconds: float) -> Iterator[None]:
    """Raise ``_Overdue`` in the body once ``seconds`` have passed.

    A sampler stuck in a loop never returns to check a clock, and a Python thread cannot
    be stopped from outside; a SIGALRM handler runs between any two bytecodes of the
    main thread (and interrupts a blocking system call), wherever the loop is. Unix only,
    main thread only, like every Python signal handler.
    """

    def overdue(_signal: int, _frame: object) -> None:
        raise _Overdue

    previous = signal.signal(signal.SIGALRM, overdue)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        try:
            signal.setitimer(signal.ITIMER_REAL, 0)
        finally:
            # None: a handler set outside Python, which cannot be put back; the default.
            signal.signal(signal.SIGALRM, signal.SIG_DFL if previous is None else previous)


def _run_python_path(
    cases: Sequence[AuditCase],
    samples: int,
    level: float,
    say: Callable[[str], None],
    limit: Callable[[AuditCase], float],
) -> list[CaseResult]:
    """The Python path, each case's sampling under its deadline; a hung case stops the
    path, as in the browser, so a run ends at most one deadline late."""
    results: list[CaseResult] = []
    for index, case in enumerate(cases):
        say(f"python  {case.label}")
        seconds = limit(case)
        try:
            with _deadline(seconds):
                histograms = {v: python_histogram(case.mechanism, v, samples) for v in case.values}
        except _Overdue:
            hung = f"the server's sampler did not finish within {seconds:.0f} s"
            results.extend(_stopped_at(cases, index, hung, PYTHON, level))
            break
        results.append(evaluate_case(case, PYTHON, histograms, level))
    return results


def python_histogram(mechanism: Mechanism, value: Any, count: int) -> Counter[str]:
    """``count`` reports from the mechanism's own ``randomize`` and its secure coins."""
    name = mechanism_name(mechanism)
    return Counter(report_key(name, mechanism.randomize(value)) for _ in range(count))


@dataclass
class AuditReport:
    """Everything one audit run found, for the table and the exit status."""

    results: list[CaseResult] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # paths not audited, and why
    alpha: float = FAMILYWISE_ALPHA
    seconds: float = 0.0

    @property
    def passed(self) -> bool:
        return all(result.passed for result in self.results)


def run_audit(
    cases: Sequence[AuditCase] | None = None,
    samples: int = DEFAULT_SAMPLES,
    *,
    python: bool = True,
    browser: bool = True,
    script: str | None = None,
    chromium: Path = CHROMIUM,
    alpha: float = FAMILYWISE_ALPHA,
    progress: Callable[[str], None] | None = None,
    case_timeout: float | None = None,
) -> AuditReport:
    """Audit ``cases`` (default: every shipped mechanism) along the chosen paths.

    The familywise α is split evenly over every fit and every privacy-loss bound of the
    run (Bonferroni), so a run of correct code fails with chance at most ``alpha``.
    Each case may sample for ``case_timeout`` seconds per path (default:
    ``case_time_limit``). Must run in the main thread when ``python`` is set (its
    deadline is a signal). Raises ``BrowserUnavailable`` when the browser path is asked
    for and cannot run.
    """
    started = time.monotonic()
    cases = list(shipped_cases() if cases is None else cases)
    paths = [path for path, wanted in ((PYTHON, python), (BROWSER, browser)) if wanted]
    tests = len(paths) * sum(case.test_count for case in cases)
    level = alpha / max(tests, 1)
    report = AuditReport(alpha=alpha)
    say = progress or (lambda _message: None)

    def limit(case: AuditCase) -> float:
        return case_time_limit(case, samples) if case_timeout is None else case_timeout

    if browser:
        _check_browser_path(chromium)
    if python:
        report.results.extend(_run_python_path(cases, samples, level, say, limit))
    if browser:
        source = browser_source() if script is None else script
        report.results.extend(
            _run_browser_path(cases, samples, source, chromium, level, say, limit)
        )
    report.seconds = time.monotonic() - started
    return report


def _answer(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


def format_report(report: AuditReport) -> str:
    """The table the command prints: one row per case and path, then the verdict."""
    header = (
        f"{'case':<36} {'path':<8} {'N':>7} {'claimed ε':>9} {'ε ≥ (lower bound)':>17} "
        f"{'worst fit χ²/df':>15} {'p':>9}  verdict"
    )
    lines = [header, "-" * len(header)]
    for result in report.results:
        fit = result.worst_fit
        chi = "-" if fit is None else f"{fit.statistic:.1f}/{fit.degrees_of_freedom}"
        p_value = "-" if fit is None else f"{fit.p_value:.2g}"
        reasons = []
        if result.fit_rejected:
            reasons.append("distribution rejected")
        if result.epsilon_exceeded:
            worst = max(result.bounds, key=lambda b: b.epsilon)
            reasons.append(
                f"ε bound exceeds the claim (S = {worst.report_set}, "
                f"answer {_answer(worst.inputs[0])} vs {_answer(worst.inputs[1])}: "
                f"{worst.counts[0]} vs {worst.counts[1]} reports)"
            )
        reasons.extend(result.problems)
        verdict = "ok" if result.passed else "FAIL: " + "; ".join(reasons)
        bound = result.epsilon_lower_bound
        lines.append(
            f"{result.case:<36} {result.path:<8} {result.samples:>7} "
            f"{result.claimed_epsilon:>9.4f} "
            f"{f'{bound:.4f}' if math.isfinite(bound) else '-':>17} "
            f"{chi:>15} {p_value:>9}  {verdict}"
        )
    lines.append("")
    lines.append("ε ≥: a lower confidence bound on the true ε of the code that drew the reports;")
    lines.append("every bound and every fit holds together with probability 1 - α.")
    for skipped in report.skipped:
        lines.append(f"not audited: {skipped}")
    failures = sum(not result.passed for result in report.results)
    level = f"familywise α = {report.alpha:g}"
    if failures:
        lines.append(
            f"AUDIT FAILED: {failures} of {len(report.results)} checks failed "
            f"({level}; {report.seconds:.0f} s)."
        )
    else:
        lines.append(
            f"Audit passed: {len(report.results)} checks, every distribution fits and no "
            f"ε lower bound exceeds its claim ({level}; {report.seconds:.0f} s)."
        )
    return "\n".join(lines)


@click.command("audit")
@click.option(
    "--samples",
    default=DEFAULT_SAMPLES,
    show_default=True,
    type=click.IntRange(100, 10_000_000),
    help="Reports per answer, per mechanism, per path.",
)
@click.option(
    "--python-only", is_flag=True, help="Skip the browser path (reported as not audited)."
)
@click.option(
    "--script",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Audit this one script (coins.js, then every mechanisms/*.js) instead of the shipped.",
)
@click.option(
    "--chromium",
    type=click.Path(dir_okay=False, path_type=Path),
    default=CHROMIUM,
    show_default=True,
    help="The Chromium executable to run the browser script in.",
)
def audit_command(samples: int, python_only: bool, script: Path | None, chromium: Path) -> None:
    """Test every mechanism's privacy claim on the server's and the browser's real code.

    Draws reports for neighbouring answers, tests them against the exact distribution and
    bounds the privacy loss from below; exits 1 when a distribution test rejects or a
    bound exceeds the claimed ε, 2 when Chromium or Playwright is unavailable.
    """

    def progress(message: str) -> None:
        click.echo(f"  auditing {message}", err=True)

    source = None if script is None else script.read_text(encoding="utf-8")
    try:
        report = run_audit(
            samples=samples,
            browser=not python_only,
            script=source,
            chromium=chromium,
            progress=progress,
        )
    except BrowserUnavailable as err:
        click.echo(
            f"error: cannot audit the browser script: {err}\n"
            "Install Chromium and Playwright, or pass --python-only to audit the server alone.",
            err=True,
        )
        sys.exit(2)
    if python_only:
        report.skipped.append("the browser script (--python-only)")
    click.echo(format_report(report))
    sys.exit(0 if report.passed else 1)
