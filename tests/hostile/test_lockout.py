"""Slowing down password guessing without locking the owner out (issue 9, item 4).

Failures count per (account, address), per address and leniently per account; a browser
that logged in before counts on its own. Counts decay, and every attempt reserves its
failure before the password is checked, so parallel guesses get no further than serial
ones and the expensive hash runs only for attempts the counts let through.
"""

from __future__ import annotations

import re
import threading

import pytest
import werkzeug.security
from flask import Flask
from flask.testing import FlaskClient
from werkzeug.test import TestResponse

from survey_app.storage import accounts
from tests.support.researchers import PASSWORD, Clock

WRONG = "wrong password!"
OWNER = "198.51.100.7"
ATTACKER = "203.0.113.9"


def login_token(client: FlaskClient) -> str:
    page = client.get("/login").get_data(as_text=True)
    token = re.search(r'name="csrf_token" type="hidden" value="([^"]+)"', page)
    assert token
    return token.group(1)


def attempt(
    client: FlaskClient, username: str, password: str, address: str, token: str | None = None
) -> TestResponse:
    """One login POST from ``address``, as the proxy-less server would see it."""
    return client.post(
        "/login",
        data={
            "csrf_token": token or login_token(client),
            "username": username,
            "password": password,
        },
        environ_overrides={"REMOTE_ADDR": address},
    )


def statuses(app: Flask, username: str, address: str, count: int) -> list[int]:
    client = app.test_client()
    return [attempt(client, username, WRONG, address).status_code for _ in range(count)]


def test_an_attackers_failures_do_not_block_the_owner(
    app: Flask, clock: Clock, researcher: str
) -> None:
    """Before: four wrong passwords from anywhere blocked the account for everyone."""
    assert statuses(app, researcher, ATTACKER, 6)[-1] == 429  # the attacker is slowed
    owner = app.test_client()
    assert attempt(owner, researcher, PASSWORD, OWNER).status_code == 302


def test_a_slow_attacker_never_blocks_the_owner(app: Flask, clock: Clock, researcher: str) -> None:
    """Before: one guess every 15 minutes kept the account blocked for good."""
    attacker = app.test_client()
    for _ in range(16):  # four hours
        attempt(attacker, researcher, WRONG, ATTACKER)
        clock.advance(15 * 60)
    owner = app.test_client()
    assert attempt(owner, researcher, PASSWORD, OWNER).status_code == 302


@pytest.mark.slow
def test_many_addresses_cannot_lock_the_owners_browser(
    app: Flask, clock: Clock, researcher: str
) -> None:
    owner = app.test_client()
    assert attempt(owner, researcher, PASSWORD, OWNER).status_code == 302
    assert owner.get_cookie("login_device", path="/login") is not None
    for i in range(60):  # a botnet: each address a few guesses
        statuses(app, researcher, f"192.0.2.{i}", 2)
    stranger = app.test_client()
    # A browser that never logged in shares the account's count with the botnet ...
    assert attempt(stranger, researcher, PASSWORD, "192.0.2.250").status_code == 429
    # ... the owner's browser has its own, wherever it is.
    assert attempt(owner, researcher, PASSWORD, "100.64.0.1").status_code == 302


def test_a_device_cookie_counts_for_its_own_account_only(
    app: Flask, clock: Clock, researcher: str
) -> None:
    from survey_app.storage.accounts import create_researcher
    from survey_app.web.database_session import get_db

    with app.app_context():
        create_researcher(get_db(), "grace", PASSWORD)
    browser = app.test_client()
    assert attempt(browser, "grace", PASSWORD, OWNER).status_code == 302
    # Grace's device cookie does not lift the counts for guessing Ada's password.
    assert [attempt(browser, researcher, WRONG, OWNER).status_code for _ in range(5)][-1] == 429
    assert attempt(browser, "grace", PASSWORD, OWNER).status_code == 302


def test_failure_counts_decay(app: Flask, clock: Clock, researcher: str) -> None:
    client = app.test_client()
    assert statuses(app, researcher, OWNER, 5) == [401, 401, 401, 401, 429]
    clock.advance(2)
    assert attempt(client, researcher, WRONG, OWNER).status_code == 401  # after the wait
    assert attempt(client, researcher, WRONG, OWNER).status_code == 429  # the wait grew
    clock.advance(75 * 60)  # one failure forgotten every 15 minutes: all five gone
    assert statuses(app, researcher, OWNER, 3) == [401, 401, 401]  # typos are free again
    clock.advance(16 * 60)
    assert attempt(client, researcher, PASSWORD, OWNER).status_code == 302


def test_the_wait_is_capped(app: Flask, clock: Clock, researcher: str) -> None:
    client = app.test_client()
    for _ in range(30):
        if attempt(client, researcher, WRONG, OWNER).status_code == 429:
            clock.advance(60)
    response = attempt(client, researcher, PASSWORD, OWNER)
    assert response.status_code == 429
    waited = re.search(r"Try again in (\d+) seconds", response.get_data(as_text=True))
    assert waited is not None
    retry = int(waited[1])
    assert retry <= 15 * 60
    clock.advance(retry)
    assert attempt(client, researcher, PASSWORD, OWNER).status_code == 302


def test_one_address_guessing_many_accounts_is_slowed(
    app: Flask, clock: Clock, researcher: str
) -> None:
    client = app.test_client()
    codes = [attempt(client, f"user{i}", WRONG, ATTACKER).status_code for i in range(12)]
    assert codes[:11] == [401] * 11
    assert codes[11] == 429


def test_a_correct_login_resets_its_own_count(app: Flask, clock: Clock, researcher: str) -> None:
    client = app.test_client()
    assert statuses(app, researcher, OWNER, 3) == [401, 401, 401]
    assert attempt(client, researcher, PASSWORD, OWNER).status_code == 302
    assert statuses(app, researcher, OWNER, 3) == [401, 401, 401]


def test_parallel_guesses_reach_the_password_check_as_often_as_serial_ones(
    app: Flask, clock: Clock, researcher: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """16 threads, each its own connection to the real database file, guess at once.

    Serially, 4 wrong passwords reach the check (3 free, the 4th sets a wait). Before,
    every parallel attempt read the count before any had written it, and all of them paid
    for a hash. The check is slowed a little, as scrypt is, to hold the race open.
    """
    calls = []
    lock = threading.Lock()
    real_check = werkzeug.security.check_password_hash

    def slow_check(stored: str, password: str) -> bool:
        with lock:
            calls.append(password)
        threading.Event().wait(0.05)
        return real_check(stored, password)

    monkeypatch.setattr(accounts, "check_password_hash", slow_check)
    clients = [app.test_client() for _ in range(16)]
    tokens = [login_token(client) for client in clients]
    start = threading.Barrier(len(clients))
    codes: list[int] = []

    def guess(client: FlaskClient, token: str) -> None:
        start.wait()
        code = attempt(client, researcher, WRONG, ATTACKER, token).status_code
        with lock:
            codes.append(code)

    threads = [
        threading.Thread(target=guess, args=pair) for pair in zip(clients, tokens, strict=True)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(codes) == [401] * 4 + [429] * 12
    assert len(calls) == 4
