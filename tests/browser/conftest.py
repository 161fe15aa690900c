"""The real thing for browser tests: gunicorn serving the app, Debian's Chromium driving it.

The server runs exactly as in production (``gunicorn "survey_app:create_app()"``, settings
from ``SURVEY_APP_*`` variables) on a throwaway SQLite file that the tests then open on
their own, as an auditor would. Chromium is the system's (``/usr/bin/chromium``, from
Debian's ``chromium`` package; ``.ci/run`` installs it): Playwright's own browser downloads
are not used. A missing Chromium fails the tests loudly; ``SURVEY_APP_SKIP_BROWSER=1`` is
the one deliberate way to skip them.

The operator's side (researchers, more surveys, invitation links) goes through the
``survey-app`` command against the server's database file, as an operator would do it: the
server opens the database per request, so what the command writes shows up at once. The
first import runs the console script's entry point in a process of its own; later commands
run the same command group in this process (``LiveServer.cli``), because each new process
spends 1.5-4 s importing SciPy and Matplotlib and the suite has a time budget.

Screenshots for the README are taken on every run (so the code that takes them cannot rot)
but written to ``docs/screenshots/`` only with ``SURVEY_APP_SCREENSHOTS=1``: they show
today's date, and rewriting them on every run would dirty the work tree daily.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl

import pytest

from survey_app.cli.audit import CHROMIUM, CHROMIUM_ARGS

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "campus-health.yaml"
SLUG = "campus-health"
KEYS = ("cheated", "drugs", "skipped_meals")

SKIP_VARIABLE = "SURVEY_APP_SKIP_BROWSER"
SCREENSHOT_VARIABLE = "SURVEY_APP_SCREENSHOTS"
SCREENSHOTS = ROOT / "docs" / "screenshots"
SECRET_KEY = "browser-tests-fixed-secret-key"
STARTUP_SECONDS = 20.0


@dataclass(frozen=True)
class LiveServer:
    base_url: str
    db_path: Path
    workdir: Path
    env: dict[str, str] = field(repr=False, compare=False)

    def url(self, path: str) -> str:
        return self.base_url + path

    def cli(self, *args: str, stdin: str | None = None, **extra_env: str) -> str:
        """Run ``survey-app ARGS`` against this server's database; its standard output.

        The console script's own click group, which builds the app from the ``SURVEY_APP_*``
        variables exactly as ``survey-app`` does, invoked in this process with those
        variables (and ``extra_env``) set for the call only.
        """
        from click.testing import CliRunner

        from survey_app.cli.commands import main

        env = {
            name: value
            for name, value in {**self.env, **extra_env}.items()
            if name.startswith("SURVEY_APP_")
        }
        result = CliRunner().invoke(main, list(args), input=stdin, env=env)
        assert result.exit_code == 0, (
            f"survey-app {' '.join(args)} exited with {result.exit_code}:\n{result.output}"
        ) + (f"\n{result.exception!r}" if result.exception else "")
        return result.stdout


@dataclass
class PageLog:
    """What a page did: console messages, uncaught errors and every request it made."""

    console: list[tuple[str, str, str]] = field(default_factory=list)  # type, text, source
    page_errors: list[str] = field(default_factory=list)
    requests: list[tuple[str, str, str]] = field(default_factory=list)  # method, url, body

    @property
    def console_errors(self) -> list[str]:
        return [text for kind, text, _source in self.console if kind == "error"]

    def posts(self) -> list[tuple[str, str]]:
        return [(url, body) for method, url, body in self.requests if method == "POST"]


def _skipping_browser_tests() -> bool:
    return os.environ.get(SKIP_VARIABLE, "") == "1"


@pytest.fixture(scope="session", autouse=True)
def _browser_prerequisites() -> None:
    """Fail, not skip, without Chromium: a silently skipped privacy test is a missing one."""
    if _skipping_browser_tests():
        pytest.skip(f"browser tests skipped on request ({SKIP_VARIABLE}=1)")
    if not CHROMIUM.exists():
        pytest.fail(
            f"{CHROMIUM} not found: the browser tests need Debian's chromium package "
            f"(`apt-get install chromium`, as .ci/run does). Set {SKIP_VARIABLE}=1 to skip "
            "them on purpose.",
            pytrace=False,
        )
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError as err:
        pytest.fail(
            f"the Playwright package is missing ({err}): pip install -e '.[test]'",
            pytrace=False,
        )


def _run_cli(
    args: tuple[str, ...], *, cwd: Path, env: dict[str, str], stdin: str | None = None
) -> str:
    """The ``survey-app`` console script's entry point, in a process of its own."""
    completed = subprocess.run(
        [sys.executable, "-c", "from survey_app.cli.commands import main; main()", *args],
        cwd=cwd,
        env=env,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert completed.returncode == 0, (
        f"survey-app {' '.join(args)} exited with {completed.returncode}:\n{completed.stderr}"
    )
    return completed.stdout


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _wait_until_healthy(url: str, server: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + STARTUP_SECONDS
    while time.monotonic() < deadline:
        if server.poll() is not None:
            pytest.fail(f"gunicorn exited with {server.returncode}:\n{log.read_text()}")
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                if response.status == 200 and response.read() == b"ok":
                    return
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            pass
        time.sleep(0.1)
    pytest.fail(f"{url} did not answer within {STARTUP_SECONDS} s:\n{log.read_text()}")


@pytest.fixture(scope="session")
def live_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """gunicorn with the example survey on a fresh database, for the whole session."""
    workdir = tmp_path_factory.mktemp("live-server")
    db_path = workdir / "survey.db"
    env = {
        **os.environ,
        "SURVEY_APP_DATABASE": str(db_path),
        "SURVEY_APP_SECRET_KEY": SECRET_KEY,
        "SURVEY_APP_RATE_LIMITS": "off",
        "PYTHONUNBUFFERED": "1",
        # The checkout under test, whether or not it was pip-installed.
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
    }
    imported = _run_cli(("import-survey", str(EXAMPLE)), cwd=workdir, env=env)
    assert imported.strip() == SLUG

    port = _free_port()
    log = workdir / "gunicorn.log"
    with open(log, "wb") as log_file:
        server = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "gunicorn",
                "--bind",
                f"127.0.0.1:{port}",
                "--workers",
                "1",
                "--threads",
                "4",
                "--graceful-timeout",
                "3",
                "survey_app:create_app()",
            ],
            cwd=workdir,
            env=env,
            stdout=log_file,
            stderr=subprocess.STDOUT,
        )
    base_url = f"http://127.0.0.1:{port}"
    try:
        _wait_until_healthy(base_url + "/healthz", server, log)
        yield LiveServer(base_url=base_url, db_path=db_path, workdir=workdir, env=env)
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    """One headless Debian Chromium for the session; each test gets its own context."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(
            executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True
        )
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture
def new_context(browser: Any) -> Iterator[Callable[..., Any]]:
    """Make fresh browser contexts (own cookies, own storage); all closed after the test."""
    contexts: list[Any] = []

    def make(**options: Any) -> Any:
        options.setdefault("viewport", {"width": 1000, "height": 800})
        context = browser.new_context(**options)
        context.set_default_timeout(10_000)
        contexts.append(context)
        return context

    yield make
    for context in contexts:
        context.close()


def watch(page: Any) -> PageLog:
    """Record a page's console, errors and requests from now on."""
    log = PageLog()
    page.on(
        "console",
        lambda message: log.console.append(
            (message.type, message.text, message.location.get("url", ""))
        ),
    )
    page.on("pageerror", lambda error: log.page_errors.append(str(error)))
    page.on(
        "request",
        lambda request: log.requests.append((request.method, request.url, request.post_data or "")),
    )
    return log


@pytest.fixture
def context(new_context: Callable[..., Any]) -> Any:
    return new_context()


@pytest.fixture
def page(context: Any) -> Any:
    return context.new_page()


@pytest.fixture
def screenshots(tmp_path: Path) -> Path:
    """Where to write screenshots: docs/screenshots/ with SURVEY_APP_SCREENSHOTS=1, else a
    temporary directory (the pictures are still taken and checked, just not kept)."""
    if os.environ.get(SCREENSHOT_VARIABLE, "") == "1":
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        return SCREENSHOTS
    return tmp_path


def coin_stub(*sequence: int) -> str:
    """Script that makes ``crypto.getRandomValues`` fill arrays from ``sequence`` in turn.

    randomize.js flips a coin of probability a/b as "a random integer below b is below a",
    drawing just enough bits; a fair coin (1/2) takes the low bit of one byte and comes up
    true on 0. So with fair coins 0x00 is "keep the truth" for the first coin and "yes"
    for the second; 0x01 is "randomize" for the first and "no" for the second. Calls are
    counted in the tab's sessionStorage, which outlives the navigation, so a test can tell
    the stub was used.
    """
    return f"""
    (() => {{
      const sequence = {json.dumps(list(sequence))};
      let next = 0;
      Crypto.prototype.getRandomValues = function (array) {{
        const calls = Number(sessionStorage.getItem("coinCalls") || 0);
        sessionStorage.setItem("coinCalls", String(calls + 1));
        for (let i = 0; i < array.length; i++) {{
          array[i] = sequence[next % sequence.length];
          next += 1;
        }}
        return array;
      }};
    }})();
    """


# Yes/no on the wire: one character each, so a POST's size shows no answer.
WIRE = {"yes": "y", "no": "n"}
WORDS = {wire: word for word, wire in WIRE.items()}


def answer(page: Any, answers: dict[str, str]) -> None:
    """Check each answer's radio button: "yes"/"no" in words, options by their value."""
    for key, value in answers.items():
        page.check(f'input[name="{key}"][value="{WIRE.get(value, value)}"]')


def submit(page: Any) -> Any:
    """Press the form's button; the response of the POST the page then navigates with."""
    with page.expect_navigation() as navigation:
        page.click('button[type="submit"]')
    response = navigation.value
    assert response.request.method == "POST"
    return response


def posted_fields(body: str) -> dict[str, str]:
    """A form body as a dict, refusing repeated names (the server refuses them too)."""
    pairs = parse_qsl(body, keep_blank_values=True, strict_parsing=True)
    names = [name for name, _ in pairs]
    assert len(names) == len(set(names)), f"repeated field names in {names}"
    return dict(pairs)


def one_post(log: PageLog) -> tuple[str, dict[str, str]]:
    posts = log.posts()
    assert len(posts) == 1, f"expected exactly one POST, the page sent {len(posts)}"
    url, body = posts[0]
    return url, posted_fields(body)


def shown_answers(page: Any) -> dict[str, str]:
    """The thank-you page's table of what was stored, by question key: folded away until
    the respondent asks for it."""
    from playwright.sync_api import expect

    expect(page.locator("h1")).to_have_text("Thank you")
    stored = page.locator("details.stored")
    expect(stored).not_to_have_attribute("open", "")  # not on screen until asked for
    expect(page.locator("table.stored")).to_be_hidden()
    stored.locator("summary").click()
    cells = page.locator("table.stored td[data-key]")
    return {
        cells.nth(i).get_attribute("data-key"): cells.nth(i).inner_text().strip()
        for i in range(cells.count())
    }


WCAG_21_AA = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]


def axe_violations(page: Any) -> list[str]:
    """axe-core's WCAG 2.1 A/AA violations on the page as it is now, one line each."""
    from axe_playwright_python.sync_playwright import Axe

    results = Axe().run(page, options={"runOnly": {"type": "tag", "values": WCAG_21_AA}})
    return [
        f"{rule['id']}: {[node['target'] for node in rule['nodes']]}"
        for rule in results.response["violations"]
    ]


def sideways_overflow(page: Any) -> int:
    """How far the page is wider than the screen, in CSS pixels (0: no sideways scrolling)."""
    return int(
        page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
    )
