"""Hostile raw requests, property-based: arbitrary bodies, content types, headers and
paths to every kind of route never cause a 500 and never store anything.
"""

from __future__ import annotations

import pytest
from flask import Flask
from flask.testing import FlaskClient
from hypothesis import example, given
from hypothesis import strategies as st
from werkzeug.urls import uri_to_iri

from tests.support.examples import SLUG
from tests.support.hostile import HUGE, hostile
from tests.support.researchers import log_in
from tests.support.stored import StoredState

# --------------------------------------------------------------------------------------
# Arbitrary raw bodies, content types and headers, to every kind of route: never a 500.

PATHS = [
    f"/s/{SLUG}",
    "/s/no-such-survey",
    "/s/%ZZ",
    "/s/%C0%AF",
    "/",
    "/login",
    "/logout",
    "/healthz",
    "/research/",
    f"/research/surveys/{SLUG}",
    f"/research/surveys/{SLUG}/export.csv",
    f"/research/surveys/{SLUG}/responses.csv",
]
CONTENT_TYPES = [
    "application/x-www-form-urlencoded",
    "application/x-www-form-urlencoded; charset=latin-1",
    "application/x-www-form-urlencoded; charset=utf-16",
    "application/x-www-form-urlencoded; charset=no-such-charset",
    "application/json",
    "multipart/form-data",
    "multipart/form-data; boundary=",
    "multipart/form-data; boundary=xyz",
    'multipart/form-data; boundary="',
    "text/plain",
    "application/octet-stream",
    "",
]
latin1 = st.text(st.characters(min_codepoint=32, max_codepoint=255), max_size=60)
raw_body = st.one_of(
    st.binary(max_size=300),
    st.text(max_size=200).map(lambda s: s.encode("utf-8")),
    st.sampled_from(
        [
            b"cheated=%ZZ&drugs=%&skipped_meals=%E2%82&csrf_token=%FF%FE",
            b"\xff\xfe\xfd=\xc3\x28&submission_id=\xe2\x28\xa1",
            b'{"cheated": "yes", "csrf_token": null}',
            b"[1, 2, 3]",
            b'--xyz\r\nContent-Disposition: form-data; name="cheated"\r\n\r\nyes\r\n--xyz--\r\n',
            b'--xyz\r\nContent-Disposition: form-data; name="f"; filename="../../x"\r\n\r\n',
            b"&&&===&&",
            b"a=" + b"b" * (HUGE),
        ]
    ),
)


_session_cookies: dict[str, str] = {}


def _logged_in_client(app: Flask, researcher: str) -> FlaskClient:
    """A client with a researcher's session, logging in (scrypt: slow) once per app."""
    client = app.test_client()
    key = app.config["DATABASE"]
    if key not in _session_cookies:
        assert log_in(client, researcher).status_code == 302
        cookie = client.get_cookie("session")
        assert cookie is not None
        _session_cookies[key] = cookie.value
    else:
        client.set_cookie("session", _session_cookies[key])
    return client


def _test_client_can_send(host: str) -> bool:
    """Werkzeug's test client itself chokes on some Host values (e.g. "xn--") while
    handling cookies, before the app sees the request; those say nothing about the app."""
    try:
        uri_to_iri(f"http://{host}/")
    except (UnicodeError, ValueError):
        return False
    return True


headers_strategy = st.fixed_dictionaries(
    {},
    optional={
        "Cookie": st.one_of(
            latin1,
            st.sampled_from(
                [
                    "session=garbage",
                    "session=.eJyrVkrOz0vLTC9VslIqS8wpTlWqBQBJUwcp.ZZZZZZ.ZZZZZZZZZZZZZZZZZZZZZZZZZZZ",
                    "session=" + "A" * 5000,
                    'session="',
                    'session="\\"\\x00"',
                    ";;;=;=",
                ]
            ),
        ),
        "Host": st.one_of(
            latin1,
            st.sampled_from(["", "[::1", "evil.example:99999", "a" * 64, "a..b", "x:y:z"]),
        ).filter(_test_client_can_send),
        "X-CSRFToken": latin1,
        "Accept-Language": latin1,
        "Referer": latin1,
        "X-Forwarded-For": latin1,
        "X-Big": st.just("h" * 20000),
        "Transfer-Encoding": st.sampled_from(["chunked", "gzip", "junk"]),
        "Content-Encoding": st.sampled_from(["gzip", "deflate", "br", "junk"]),
    },
)


@pytest.mark.slow
@hostile(max_examples=150)
@given(
    path=st.one_of(st.sampled_from(PATHS), st.text(max_size=30).map(lambda s: "/s/" + s)),
    method=st.sampled_from(["POST", "POST", "GET", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS"]),
    body=raw_body,
    content_type=st.one_of(st.sampled_from(CONTENT_TYPES), latin1),
    headers=headers_strategy,
    content_length=st.one_of(
        st.none(), st.integers(-5, 100_000).map(str), st.sampled_from(["", "abc", "1e3", " 12"])
    ),
    logged_in_first=st.booleans(),
)
# Regression (found by this property): a Host header Werkzeug cannot IDNA-encode (a label
# over 63 characters, an empty label as in "a..b") leaves the request without a URL
# adapter; error pages rendered error.html, whose url_for('static', ...) raised: a 500.
@example(
    path="/healthz",
    method="GET",
    body=b"",
    content_type="",
    headers={"Host": "a" * 64},
    content_length=None,
    logged_in_first=False,
)
def test_raw_requests_never_fail_with_a_server_error(
    app: Flask,
    stored: StoredState,
    researcher: str,
    path: str,
    method: str,
    body: bytes,
    content_type: str,
    headers: dict[str, str],
    content_length: str | None,
    logged_in_first: bool,
) -> None:
    stored.reset_responses()
    client = _logged_in_client(app, researcher) if logged_in_first else app.test_client()
    overrides = {} if content_length is None else {"CONTENT_LENGTH": content_length}
    response = client.open(
        path,
        method=method,
        data=body,
        content_type=content_type,
        headers=headers,
        environ_overrides=overrides,
    )
    response.get_data()  # streamed bodies fail while being read, not before
    assert response.status_code < 500, response.get_data(as_text=True)[-2000:]
    assert stored.counts()[0] == 0  # without a valid CSRF token nothing is ever stored
