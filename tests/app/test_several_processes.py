"""Two gunicorn servers on two ports, one database: they behave as one app, on a SQLite
file as on PostgreSQL (the module runs once per backend).

Each server is one worker process (its own memory), so whatever one of them keeps in
memory only, the other does not see. Every test acts on server A and looks on server B,
through real sockets, with one cookie jar for both (as behind a load balancer: cookies
are per host, not per port). Each test comes from an address of its own (the servers
trust one proxy's X-Forwarded-For), so their rate-limit windows never meet.
"""

from __future__ import annotations

import concurrent.futures
import http.cookiejar
import os
import re
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.support.examples import MIXED, MIXED_SLUG
from tests.support.paths import ROOT
from tests.support.postgresql import BACKENDS, Cluster
from tests.support.processes import run_survey_app
from tests.support.researchers import PASSWORD
from tests.support.respondents import hidden_fields
from tests.support.stored import opened

# Several servers on one database: the point of PostgreSQL, run on it too.
pytestmark = [pytest.mark.slow, pytest.mark.both_backends]

OWNER = "ada"
LOGIN_LIMIT = 6  # LOGIN_RATE_LIMIT per minute, per address, for both servers together
SUBMIT_LIMIT = 2  # SUBMIT_RATE_LIMIT per minute, per address, per server process
ANSWERS = {"year": "2", "cheated": "y", "skipped_meals": "n", "substance": "1", "drinks": "7"}
STARTUP_SECONDS = 60
GROUP_SHOWN = 30
GROUP = "3"  # the year ANSWERS give: options are sent by index, "2" is the third


@dataclass
class Browser:
    """One browser behind a load balancer: one cookie jar, whichever server answers."""

    address: str  # the client's address, as the proxy in front would tell it
    jar: http.cookiejar.CookieJar = field(default_factory=http.cookiejar.CookieJar)

    def request(self, url: str, data: dict[str, str] | None = None) -> tuple[int, str]:
        """GET (or POST ``data``) without following redirects: the status and the body."""
        body = None if data is None else urllib.parse.urlencode(data, doseq=True).encode()
        request = urllib.request.Request(url, data=body, headers={"X-Forwarded-For": self.address})
        opener = urllib.request.build_opener(
            urllib.request.HTTPCookieProcessor(self.jar), _NoRedirects()
        )
        try:
            with opener.open(request, timeout=60) as response:
                return response.status, response.read().decode()
        except urllib.error.HTTPError as err:
            return err.code, err.read().decode()


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: object, **kwargs: object) -> None:
        return None


def csrf(page: str) -> str:
    found = re.search(r'name="csrf_token"[^>]*? value="([^"]+)"', page)
    assert found, "the page has a CSRF token"
    return found.group(1)


@dataclass(frozen=True)
class Servers:
    a: str
    b: str
    database: str

    def count(self, sql: str) -> int:
        with opened(self.database) as db:
            return int(db.execute(sql).fetchone()[0])


def _environment(database: str) -> dict[str, str]:
    return {
        **os.environ,
        "SURVEY_APP_DATABASE": str(database),
        "SURVEY_APP_SECRET_KEY": "one key for every server",
        "SURVEY_APP_TRUSTED_PROXIES": "1",
        "SURVEY_APP_LOGIN_RATE_LIMIT": f"{LOGIN_LIMIT} per minute",
        "SURVEY_APP_SUBMIT_RATE_LIMIT": f"{SUBMIT_LIMIT} per minute",
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
    }


def _start(name: str, workdir: Path, env: dict[str, str]) -> tuple[subprocess.Popen[bytes], str]:
    """One gunicorn server (one worker process) on a port the OS picks, and its address."""
    log = workdir / f"{name}.log"
    with open(log, "wb") as log_file:
        server = subprocess.Popen(
            [
                *(sys.executable, "-m", "gunicorn", "--bind", "127.0.0.1:0"),
                *("--workers", "1", "--threads", "4", "--graceful-timeout", "3"),
                *("--control-socket", str(workdir / f"{name}.ctl")),
                "survey_app:create_app()",
            ],
            cwd=workdir,
            env=env,
            stdout=log_file,
            stderr=subprocess.STDOUT,
        )
    deadline = time.monotonic() + STARTUP_SECONDS
    while time.monotonic() < deadline:
        found = re.search(r"Listening at: http://127\.0\.0\.1:(\d+)", log.read_text())
        if found and "Booting worker" in log.read_text():
            return server, f"http://127.0.0.1:{found.group(1)}"
        assert server.poll() is None, log.read_text()
        time.sleep(0.1)
    server.kill()
    pytest.fail(f"{name} did not start:\n{log.read_text()}")


@pytest.fixture(scope="module", params=BACKENDS)
def server_backend(request: pytest.FixtureRequest) -> str:
    """Which storage backend both servers share."""
    return str(request.param)


@pytest.fixture(scope="module")
def servers(
    tmp_path_factory: pytest.TempPathFactory, server_backend: str, request: pytest.FixtureRequest
) -> Iterator[Servers]:
    workdir = tmp_path_factory.mktemp("two-servers")
    if server_backend == "postgresql":
        cluster: Cluster = request.getfixturevalue("postgresql_cluster")
        database = cluster.new_database()
    else:
        database = str(workdir / "survey.db")
    env = _environment(database)
    for args, stdin in [
        (("create-researcher", OWNER, "--password-stdin"), PASSWORD + "\n"),
        (("import-survey", "--owner", OWNER, str(MIXED)), None),
        (("budget", MIXED_SLUG, "1.5"), None),
    ]:
        run_survey_app(args, cwd=workdir, env=env, stdin=stdin)
    started = [_start(name, workdir, env) for name in ("a", "b")]
    try:
        yield Servers(started[0][1], started[1][1], database)
    finally:
        for server, _address in started:
            server.terminate()
            server.wait(timeout=30)


def log_in(browser: Browser, server: str, username: str = OWNER) -> int:
    page = browser.request(server + "/login")[1]
    data = {"csrf_token": csrf(page), "username": username, "password": PASSWORD}
    return browser.request(server + "/login", data)[0]


def answer(browser: Browser, server: str) -> tuple[dict[str, str], int]:
    """Fetch the survey's form from ``server`` and answer it there: the form sent, the status."""
    page = browser.request(f"{server}/s/{MIXED_SLUG}?agree=yes")[1]
    form = {**hidden_fields(page), **ANSWERS}
    return form, browser.request(f"{server}/s/{MIXED_SLUG}", form)[0]


def test_a_session_ended_on_one_server_is_refused_on_the_other(servers: Servers) -> None:
    ada = Browser("192.0.2.1")
    assert log_in(ada, servers.a) == 302
    assert ada.request(servers.b + "/research/")[0] == 200  # one session, both servers
    copied = list(ada.jar)  # the cookie as a thief would keep it
    logout_page = ada.request(servers.a + "/logout")[1]
    assert ada.request(servers.a + "/logout", {"csrf_token": csrf(logout_page)})[0] == 302
    for cookie in copied:
        ada.jar.set_cookie(cookie)
    status, _page = ada.request(servers.b + "/research/")
    assert status == 302  # to /login: server B no longer knows the session


def test_a_form_used_on_one_server_stores_nothing_more_on_the_other(servers: Servers) -> None:
    before = servers.count("SELECT count(*) FROM responses")
    respondent = Browser("192.0.2.2")
    form, status = answer(respondent, servers.a)
    assert status == 200
    for cookie in [c for c in respondent.jar if c.name != "session"]:
        respondent.jar.clear(cookie.domain, cookie.path, cookie.name)  # the answered cookie
    assert respondent.request(f"{servers.b}/s/{MIXED_SLUG}", form)[0] == 200  # the retry page
    assert servers.count("SELECT count(*) FROM responses") == before + 1


def test_failed_logins_on_both_servers_add_up_to_one_lock_out(servers: Servers) -> None:
    guesser = Browser("192.0.2.3")
    page = guesser.request(servers.a + "/login")[1]
    wrong = {"csrf_token": csrf(page), "username": OWNER, "password": "not the password"}
    # Three failures are free (typos); after the fourth, whichever server saw them, the
    # next attempt waits two seconds.
    for server in (servers.a, servers.b, servers.a, servers.b):
        assert guesser.request(server + "/login", wrong)[0] == 401
    status, refusal = guesser.request(servers.a + "/login", wrong)
    assert status == 429 and "Too many failed logins" in refusal


def test_the_login_rate_limit_counts_attempts_on_both_servers(servers: Servers) -> None:
    sprayer = Browser("192.0.2.4")
    token = csrf(sprayer.request(servers.a + "/login")[1])
    statuses = []
    for attempt in range(LOGIN_LIMIT + 1):
        server = (servers.a, servers.b)[attempt % 2]
        data = {"csrf_token": token, "username": f"nobody{attempt}", "password": "x"}
        statuses.append(sprayer.request(server + "/login", data))
    assert [status for status, _page in statuses] == [401] * LOGIN_LIMIT + [429]
    assert "Too many login attempts from your network" in statuses[-1][1]


def test_submissions_are_counted_per_server_and_never_in_the_database(servers: Servers) -> None:
    """By design (privacy invariant 6): see survey_app/web/limits.py."""
    counted = servers.count("SELECT count(*) FROM rate_counts")
    respondent = Browser("192.0.2.5")
    statuses = []
    for server in (servers.a, servers.a, servers.a, servers.b):
        respondent.jar.clear()
        statuses.append(answer(respondent, server)[1])
    assert statuses == [200] * SUBMIT_LIMIT + [429, 200]
    assert servers.count("SELECT count(*) FROM rate_counts") == counted


def test_a_response_stored_through_one_server_counts_at_once_on_the_other(
    servers: Servers,
) -> None:
    for i in range(GROUP_SHOWN):  # a group of 30 is shown, a smaller one withheld
        assert answer(Browser(f"198.51.100.{i}"), servers.a)[1] == 200
    ada = Browser("192.0.2.6")
    assert log_in(ada, servers.b) == 302
    groups = f"{servers.b}/research/surveys/{MIXED_SLUG}/groups.csv?question=cheated&by=year"
    status, before = ada.request(groups)  # B now holds these counts in its memory
    assert status == 200
    assert answer(Browser("192.0.2.7"), servers.a)[1] == 200
    after = ada.request(groups)[1]
    assert _group_sizes(after)[GROUP] == _group_sizes(before)[GROUP] + 1


def _group_sizes(table: str) -> dict[str, int]:
    """Respondents per group (the ``year`` value) in a groups CSV."""
    header, *rows = [line.split(",") for line in table.strip().splitlines()]
    group, size = header.index("group"), header.index("n")
    return {row[group]: int(row[size]) for row in rows if row[size]}


def test_two_servers_publishing_at_once_never_overspend_the_budget(servers: Servers) -> None:
    """Budget 1.5; two releases of different figures at ε = 1 each, confirmed on A and on
    B at the same moment: one is published, the other refused."""
    ada = Browser("192.0.2.8")
    assert log_in(ada, servers.a) == 302
    release = f"/research/surveys/{MIXED_SLUG}/publish/release"
    confirmations = []
    for server, figure in ((servers.a, "histogram:year"), (servers.b, "groups:cheated:year")):
        query = {"figure": figure, "epsilon": "1"}
        page = ada.request(f"{server}{release}?{urllib.parse.urlencode(query)}")[1]
        confirmations.append((server + release, {"csrf_token": csrf(page), **query}))
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        done = list(pool.map(lambda args: ada.request(*args)[0], confirmations))
    assert sorted(done) == [302, 400]  # one redirect after publishing, one refusal page
    assert servers.count("SELECT count(*) FROM releases") == 1
