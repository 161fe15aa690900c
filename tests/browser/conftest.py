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

Every test in this folder is marked ``browser``. The plain helpers the tests import (the
server's handle, page logs, coin stubs, form filling, accessibility checks) are in
tests/support/browser.py; this file holds the fixtures.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from survey_app.cli.audit import CHROMIUM, CHROMIUM_ARGS
from tests.support.browser import SECRET_KEY, LiveServer
from tests.support.examples import EXAMPLE, SLUG
from tests.support.paths import ROOT
from tests.support.postgresql import BACKENDS, Cluster
from tests.support.processes import run_survey_app
from tests.support.samplers import load_samplers

SKIP_VARIABLE = "SURVEY_APP_SKIP_BROWSER"
SCREENSHOT_VARIABLE = "SURVEY_APP_SCREENSHOTS"
SCREENSHOTS = ROOT / "docs" / "screenshots"
STARTUP_SECONDS = 20.0
HERE = Path(__file__).resolve().parent


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark every test in this folder ``browser`` (before ``-m`` selects), so
    ``pytest -m "not browser"`` leaves out gunicorn and Chromium without a list to keep;
    and put them in one xdist group, so that ``pytest -n auto --dist loadgroup`` runs them
    all in one worker (one live server, one Chromium at a time) beside the other tests."""
    for item in items:
        if HERE in item.path.parents:
            item.add_marker(pytest.mark.browser)
            item.add_marker(pytest.mark.xdist_group("browser"))


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


def _server_environment(database: str) -> dict[str, str]:
    return {
        **os.environ,
        "SURVEY_APP_DATABASE": database,
        "SURVEY_APP_SECRET_KEY": SECRET_KEY,
        "SURVEY_APP_RATE_LIMITS": "off",
        # One PBKDF2 round instead of scrypt's 0.4 s per login and per account made, as in
        # tests/conftest.py; tests/app/test_sessions.py checks the production default.
        "SURVEY_APP_PASSWORD_HASH_METHOD": "pbkdf2:sha256:1",
        "PYTHONUNBUFFERED": "1",
        # The checkout under test, whether or not it was pip-installed.
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
    }


@contextmanager
def _served(workdir: Path, env: dict[str, str]) -> Iterator[LiveServer]:
    """gunicorn on a free port over ``env``'s database, until the block ends."""
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
                # As an operator who turns the access log on: what it keeps is checked
                # (tests/browser/test_panels.py reads it).
                "--access-logfile",
                str(workdir / "access.log"),
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
        database = env["SURVEY_APP_DATABASE"]
        yield LiveServer(base_url=base_url, database=database, workdir=workdir, env=env)
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Serve a test once per backend (tests/conftest.py leaves out the PostgreSQL runs of
    tests not marked ``both_backends``). The backend is a session parameter, so each
    backend's server starts once and the tests are grouped by it."""
    if {"live_server", "empty_server"} & set(metafunc.fixturenames):
        metafunc.parametrize("server_backend", BACKENDS, scope="session")


def _new_database(backend: str, workdir: Path, request: pytest.FixtureRequest) -> str:
    """A fresh database's setting for a server: a file in its folder, or a database of
    its own in the session's PostgreSQL cluster."""
    if backend == "postgresql":
        cluster: Cluster = request.getfixturevalue("postgresql_cluster")
        return cluster.new_database()
    return str(workdir / "survey.db")


@pytest.fixture(scope="session")
def live_server(
    tmp_path_factory: pytest.TempPathFactory, server_backend: str, request: pytest.FixtureRequest
) -> Iterator[LiveServer]:
    """gunicorn with the example survey (listed on the front page) on a fresh database, for
    the whole session (once per backend)."""
    workdir = tmp_path_factory.mktemp("live-server")
    env = _server_environment(_new_database(server_backend, workdir, request))
    imported = run_survey_app(("import-survey", "--listed", str(EXAMPLE)), cwd=workdir, env=env)
    assert imported.strip() == SLUG
    with _served(workdir, env) as server:
        yield server


@pytest.fixture(scope="module")
def empty_server(
    tmp_path_factory: pytest.TempPathFactory, server_backend: str, request: pytest.FixtureRequest
) -> Iterator[LiveServer]:
    """gunicorn on a database with nothing in it, no survey and no account, for one test
    module: a study from its very first step (the first account is the administrator)."""
    workdir = tmp_path_factory.mktemp("empty-server")
    env = _server_environment(_new_database(server_backend, workdir, request))
    with _served(workdir, env) as server:
        yield server


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


@pytest.fixture
def strict_randomizer(page: Any) -> Any:
    """A blank page with every sampler loaded as served, where Math.random throws."""
    page.goto("about:blank")
    page.evaluate("() => { Math.random = () => { throw new Error('Math.random'); }; }")
    load_samplers(page)
    return page
