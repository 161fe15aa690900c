"""Privacy invariant 1: with every logger at DEBUG, no true answer reaches a log line.

The app is served for real by Werkzeug's server in a thread, so its request log is on,
and the respondent's answers are sent through the server path (no JavaScript): these are
the true answers, the ones that must never be written anywhere.
"""

from __future__ import annotations

import http.cookiejar
import logging
import threading
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator

import pytest
from werkzeug.serving import make_server

from tests.support.examples import KEYS, MIXED_SLUG, SLUG
from tests.support.respondents import hidden_fields

# The true answers are one character on the wire ("y"), so the check looks for the
# URL-encoded body and each "key=value" pair (and the word "yes" in any form).
LOGGERS = ("", "werkzeug", "flask.app", "survey_app", "sqlite_utils", "flask_wtf.csrf")


@pytest.fixture
def served(app) -> Iterator[str]:
    server = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()


@pytest.fixture
def debug_logs(caplog: pytest.LogCaptureFixture) -> pytest.LogCaptureFixture:
    for name in LOGGERS:
        caplog.set_level(logging.DEBUG, logger=name)
    return caplog


def _post(opener: urllib.request.OpenerDirector, url: str, body: str) -> int:
    try:
        return opener.open(url, data=body.encode()).status
    except urllib.error.HTTPError as err:
        return err.code


@pytest.mark.slow
@pytest.mark.parametrize(
    "extra",
    [{}, {"cheated": "maybe"}, {"padding": "x" * 100_000}],
    ids=["accepted", "invalid answer", "oversized"],
)
def test_true_answers_never_reach_a_log(served: str, debug_logs, extra: dict) -> None:
    opener = urllib.request.build_opener(
        urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar())
    )
    form = hidden_fields(opener.open(f"{served}/s/{SLUG}").read().decode())
    true_answers = dict.fromkeys(KEYS, "y")
    body = urllib.parse.urlencode({**form, **true_answers, **extra})
    status = _post(opener, f"{served}/s/{SLUG}", body)
    assert status in {200, 400}

    logged = "\n".join(record.getMessage() for record in debug_logs.records)
    assert "POST /s/campus-health" in logged  # the request log really was captured
    assert body not in logged
    for key, value in true_answers.items():
        assert f"{key}={value}" not in logged
        assert f"'{key}': '{value}'" not in logged
    assert "yes" not in logged.lower()


def test_true_answers_of_every_type_never_reach_a_log(mixed_app, served: str, debug_logs) -> None:
    """A choice and a number with values no log line has by chance (index 3, 43 drinks)."""
    opener = urllib.request.build_opener(
        urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar())
    )
    page = opener.open(f"{served}/s/{MIXED_SLUG}?agree=yes").read().decode()
    true_answers = {
        "year": "2",
        "cheated": "y",
        "skipped_meals": "y",
        "substance": "3",
        "drinks": "43",
    }
    body = urllib.parse.urlencode({**hidden_fields(page), **true_answers})
    assert _post(opener, f"{served}/s/{MIXED_SLUG}", body) == 200
    logged = "\n".join(record.getMessage() for record in debug_logs.records)
    assert f"POST /s/{MIXED_SLUG}" in logged
    assert body not in logged
    for key, value in true_answers.items():
        assert f"{key}={value}" not in logged
        assert f"'{key}': '{value}'" not in logged
