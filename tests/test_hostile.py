"""Hostile input, property-based: whatever arrives, the app answers without a 500, stores a
response whole or not at all, imports a survey file whole or not at all, and never lets
survey text run as a formula in a spreadsheet or as markup in a page.

Hypothesis generates the input; each property states what must hold for *any* input, so a
failure shows the smallest input that breaks it. Examples are few enough that the module
stays well under a minute.
"""

from __future__ import annotations

import csv
import io
import json
import re
import secrets
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlencode, urlsplit

import pytest
import yaml
from flask import Flask
from flask.testing import FlaskClient, FlaskCliRunner
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from markupsafe import escape
from werkzeug.datastructures import MultiDict
from werkzeug.urls import uri_to_iri

from .conftest import (
    KEYS,
    PASSWORD,
    SLUG,
    fresh_form,
    log_in,
    submit_client_randomized,
)
from .test_research import RESEARCH_ROUTES

SUBMISSION_ID = re.compile(r"[A-Za-z0-9_-]{16,64}")
CONTROL_FIELDS = ("csrf_token", "submission_id", "randomized", "design", "agreed")
ALLOWED_FIELDS = frozenset(KEYS) | frozenset(CONTROL_FIELDS)
MAX_BODY = 64 * 1024  # the default SURVEY_APP_MAX_CONTENT_LENGTH
HUGE = MAX_BODY + 5000  # comfortably over the limit whatever the encoding
FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")
NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")


def hostile(max_examples: int):
    """Hypothesis settings for these tests: function-scoped fixtures are reset by hand."""
    return settings(
        max_examples=max_examples,
        deadline=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    )


@contextmanager
def _connect(app: Flask) -> Iterator[sqlite3.Connection]:
    """The database file opened on its own, autocommit, as an auditor would."""
    conn = sqlite3.connect(app.config["DATABASE"], isolation_level=None)
    try:
        yield conn
    finally:
        conn.close()


def _counts(app: Flask) -> tuple[int, dict[str, tuple[int, int]]]:
    """(response rows, {question key: (n, reported_yes)}) for the example survey."""
    with _connect(app) as conn:
        rows = conn.execute("SELECT count(*) FROM responses").fetchone()[0]
        counters = dict.fromkeys(KEYS, (0, 0))
        for key, n, yes in conn.execute(
            "SELECT q.key, sum(t.value * (t.cell = 'n')), sum(t.value * (t.cell = 'yes')) "
            "FROM questions q JOIN surveys s ON q.survey_id = s.id "
            "JOIN tallies t ON t.question_id = q.id WHERE s.slug = ? GROUP BY q.key",
            [SLUG],
        ):
            counters[key] = (n, yes)
    return rows, counters


def _recounted(app: Flask) -> dict[str, tuple[int, int]]:
    """The counters rebuilt from the stored rows: what they must always equal."""
    counters = dict.fromkeys(KEYS, (0, 0))
    with _connect(app) as conn:
        for (answers,) in conn.execute("SELECT answers FROM responses"):
            for key, value in json.loads(answers).items():
                n, yes = counters[key]
                counters[key] = (n + 1, yes + value)
    return counters


def _reset_responses(app: Flask) -> None:
    """Back to no responses, in one transaction (each commit is an fsync: keep them few)."""
    with _connect(app) as conn:
        if conn.execute("SELECT count(*) FROM responses").fetchone()[0]:
            conn.executescript(
                "BEGIN; DELETE FROM responses; DELETE FROM tallies; "
                "UPDATE surveys SET responses = 0; COMMIT;"
            )


def _table_sizes(app: Flask) -> tuple[int, int]:
    with _connect(app) as conn:
        surveys = conn.execute("SELECT count(*) FROM surveys").fetchone()[0]
        questions = conn.execute("SELECT count(*) FROM questions").fetchone()[0]
    return surveys, questions


# --------------------------------------------------------------------------------------
# Arbitrary form bodies POSTed to /s/<slug>: a response is stored whole or not at all.

junk_text = st.text(max_size=40)
# Unique markers let the test check that refused values are never echoed into the page.
marker = st.text("0123456789abcdef", min_size=12, max_size=12).map(lambda s: "zq" + s)
junk_value = st.one_of(
    junk_text, marker, st.sampled_from(["yes", "no", "YES", " yes", "yes\n", "client", "", "1"])
)
field_name = st.one_of(
    st.sampled_from([*KEYS, *CONTROL_FIELDS, "csrf_token ", "x_csrf_token", "Cheated", "data"]),
    st.text(max_size=20),
)


@st.composite
def answer_plan(draw: st.DrawFn) -> list[tuple[str, object]]:
    """How each question's field is sent: missing, once (valid or junk) or twice."""
    plan: list[tuple[str, object]] = []
    for key in KEYS:
        how = draw(st.sampled_from(["yes", "no", "yes", "no", "missing", "junk", "twice"]))
        if how in ("yes", "no"):
            plan.append((key, how))
        elif how == "junk":
            plan.append((key, draw(junk_value)))
        elif how == "twice":
            plan += [(key, draw(st.sampled_from(["yes", "no"]))), (key, draw(junk_value))]
    return plan


post_plan = st.fixed_dictionaries(
    {
        "csrf": st.sampled_from(
            ["valid", "valid", "valid", "other", "forged", "missing", "empty", "twice", "header"]
        ),
        "submission_id": st.one_of(
            st.sampled_from(["fresh", "fresh", "fresh", "previous", "missing", "twice"]),
            st.tuples(st.just("suffix"), st.sampled_from(["\n", " ", "\t", "\r\n", "\x00", "é"])),
            st.tuples(st.just("text"), junk_text),
            st.tuples(st.just("text"), st.from_regex(SUBMISSION_ID, fullmatch=True)),
        ),
        "randomized": st.one_of(
            st.sampled_from(["absent", "absent", "client", "client", "twice"]),
            st.tuples(st.just("text"), junk_value),
        ),
        "design": st.sampled_from(["current", "current", "current", "missing", "stale"]),
        "answers": answer_plan(),
        "extra": st.lists(st.tuples(field_name, junk_value), max_size=3),
        "huge": st.sampled_from([None] * 8 + ["answer", "extra", "submission_id"]),
        "slug": st.sampled_from([SLUG] * 6 + ["no-such-survey", "campus-health/", "Campus-Health"]),
        "shuffle": st.randoms(use_true_random=False),
    }
)


def _build_body(plan: dict, token: str, other_token: str, sent_ids: list[str], design: str):
    """The POST's fields in order, plus extra headers."""
    fields: list[tuple[str, str]] = []
    if plan["design"] == "current":
        fields.append(("design", design))
    elif plan["design"] == "stale":
        fields.append(("design", "0" * len(design)))
    headers: dict[str, str] = {}
    csrf = plan["csrf"]
    if csrf in ("valid", "twice"):
        fields.append(("csrf_token", token))
    if csrf == "twice":
        fields.append(("csrf_token", token))
    elif csrf == "other":
        fields.append(("csrf_token", other_token))
    elif csrf == "forged":
        fields.append(("csrf_token", token[:-6] + "AAAAAA"))
    elif csrf == "empty":
        fields.append(("csrf_token", ""))
    elif csrf == "header":
        headers["X-CSRFToken"] = token

    sid = plan["submission_id"]
    if sid in ("fresh", "twice"):
        fields.append(("submission_id", secrets.token_urlsafe(16)))
    if sid == "twice":
        fields.append(("submission_id", secrets.token_urlsafe(16)))
    elif sid == "previous":
        fields.append(("submission_id", sent_ids[-1] if sent_ids else secrets.token_urlsafe(16)))
    elif isinstance(sid, tuple) and sid[0] == "suffix":
        fields.append(("submission_id", secrets.token_urlsafe(16) + sid[1]))
    elif isinstance(sid, tuple):
        fields.append(("submission_id", sid[1]))

    randomized = plan["randomized"]
    if randomized in ("client", "twice"):
        fields.append(("randomized", "client"))
    if randomized == "twice":
        fields.append(("randomized", "client"))
    elif isinstance(randomized, tuple):
        fields.append(("randomized", randomized[1]))

    fields += [(k, str(v)) for k, v in plan["answers"]]
    fields += plan["extra"]
    plan["shuffle"].shuffle(fields)
    huge = "y" * HUGE
    if plan["huge"] == "answer":
        fields.append((KEYS[0], huge))
    elif plan["huge"] == "extra":
        fields.append(("padding", huge))
    elif plan["huge"] == "submission_id":
        fields.append(("submission_id", huge))
    return fields, headers


def _csrf_token_sent(form: MultiDict, headers: dict[str, str]) -> str | None:
    """The token Flask-WTF checks: the field, else any field named *csrf_token, else the
    X-CSRFToken header (flask_wtf.csrf.CSRFProtect._get_csrf_token)."""
    if form.get("csrf_token"):
        return form.get("csrf_token")
    for name in form:
        if name.endswith("csrf_token") and form[name]:
            return form[name]
    return headers.get("X-CSRFToken") or None


def _expected(
    fields: list[tuple[str, str]],
    headers: dict[str, str],
    design: str,
    token: str,
    slug: str,
    stored_ids: set[str],
    answered: bool,
) -> tuple[int, bool]:
    """(status, stores a new row) for a POST, from the contract in DESIGN.md."""
    if slug.endswith("/"):
        return 404, False  # no route: nothing reads the body
    if sum(len(k) + len(v) for k, v in fields) > MAX_BODY:
        return 400, False
    form = MultiDict(fields)
    if _csrf_token_sent(form, headers) != token:
        return 400, False
    if slug != SLUG:
        return 404, False
    if any(name not in ALLOWED_FIELDS for name in form):
        return 400, False
    if any(len(form.getlist(name)) > 1 for name in form):
        return 400, False
    if any(form.get(key) not in ("yes", "no") for key in KEYS):
        return 400, False
    sid = form.get("submission_id")
    if sid is None or not SUBMISSION_ID.fullmatch(sid):
        return 400, False
    randomized = form.get("randomized")
    if randomized is not None and randomized.strip() and randomized != "client":
        return 400, False
    if randomized == "client" and form.get("design") != design:
        return 400, False  # the browser randomized with parameters not the survey's now
    agreed = form.get("agreed")
    if agreed is not None and agreed.strip() and agreed != "yes":
        return 400, False
    if sid in stored_ids:
        return 200, False  # a retried POST: answered alike, stored once
    if answered:
        return 409, False
    return 200, True


@hostile(max_examples=120)
@given(plans=st.lists(post_plan, min_size=1, max_size=3), same_client=st.booleans())
def test_arbitrary_form_posts_store_a_whole_response_or_nothing(
    app: Flask, plans: list[dict], same_client: bool
) -> None:
    _reset_responses(app)
    other = app.test_client()
    other_token = fresh_form(other)["csrf_token"]
    client = app.test_client()
    form = fresh_form(client)
    token, design = form["csrf_token"], form["design"]
    sent_ids: list[str] = []
    stored_ids: set[str] = set()
    answered = False
    for plan in plans:
        if not same_client:
            client = app.test_client()
            token = fresh_form(client)["csrf_token"]
            answered = False
        fields, headers = _build_body(plan, token, other_token, sent_ids, design)
        want_status, want_new_row = _expected(
            fields, headers, design, token, plan["slug"], stored_ids, answered
        )
        rows_before, _ = _counts(app)
        response = client.post(f"/s/{plan['slug']}", data=MultiDict(fields), headers=headers)
        page = response.get_data(as_text=True)
        rows_after, counters = _counts(app)

        assert response.status_code < 500, page
        # Counters always equal the rows: never a partial write.
        assert counters == _recounted(app)
        assert response.status_code == want_status, (fields, page[-2000:])
        assert rows_after - rows_before == (1 if want_new_row else 0)
        if response.status_code != 200:
            # A refused form is shown again empty: no submitted value comes back.
            for _name, value in fields:
                if value.startswith("zq"):
                    assert value not in page
        sid = MultiDict(fields).get("submission_id")
        if sid is not None:
            sent_ids.append(sid)
        if want_new_row:
            stored_ids.add(sid)
            answered = True


def test_submission_id_with_a_trailing_newline_is_refused(client: FlaskClient, app: Flask) -> None:
    """Regression (found by the property above): a pattern ending in "$" also matched before
    a final newline, so "<id>\n" was stored as a submission id. Now a 400, nothing stored."""
    fields = fresh_form(client)
    response = client.post(
        f"/s/{SLUG}",
        data={**fields, "submission_id": "A" * 16 + "\n", **dict.fromkeys(KEYS, "yes")},
    )
    assert response.status_code == 400
    assert _counts(app)[0] == 0


def test_field_names_are_escaped_in_the_refusal(client: FlaskClient) -> None:
    """form_problems() quotes the unexpected field's name back: it must arrive as text."""
    name = "<script>alert(1)</script>"
    response = client.post(
        f"/s/{SLUG}", data={**fresh_form(client), **dict.fromkeys(KEYS, "yes"), name: "x"}
    )
    page = response.get_data(as_text=True)
    assert response.status_code == 400
    assert name not in page
    assert str(escape(name)) in page


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
    researcher: str,
    path: str,
    method: str,
    body: bytes,
    content_type: str,
    headers: dict[str, str],
    content_length: str | None,
    logged_in_first: bool,
) -> None:
    _reset_responses(app)
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
    assert _counts(app)[0] == 0  # without a valid CSRF token nothing is ever stored


next_target = st.one_of(
    st.text(max_size=30),
    st.text(max_size=30).map(lambda s: "/" + s),
    st.sampled_from(
        [
            "/research/",
            "//evil.example",
            "/\\evil.example",
            "/\t/evil.example",
            "/\n/evil",
            "https://evil.example/",
            "http:/evil.example",
            "/%2F/evil.example",
            "/\u3000/x",
            "/research/surveys/x?y=1&z=%ZZ",
            "/\r\nSet-Cookie: x=1",
            "javascript:alert(1)",
        ]
    ),
)


@hostile(max_examples=25)
@given(
    username=st.one_of(st.just("ada"), st.text(max_size=80)),
    password=st.one_of(st.just(PASSWORD), st.text(max_size=80), st.just("p" * 20000)),
    next_url=st.one_of(st.none(), next_target),
    extra=st.lists(st.tuples(st.text(max_size=10), st.text(max_size=10)), max_size=2),
)
def test_login_with_arbitrary_fields_never_fails_or_leaves_the_site(
    app: Flask,
    researcher: str,
    username: str,
    password: str,
    next_url: str | None,
    extra: list[tuple[str, str]],
) -> None:
    with _connect(app) as conn:
        conn.execute("DELETE FROM login_failures")  # every example starts unthrottled
    client = app.test_client()
    page = client.get("/login").get_data(as_text=True)
    token = re.search(r'name="csrf_token" type="hidden" value="([^"]+)"', page)
    assert token
    query = "" if next_url is None else "?" + urlencode({"next": next_url})
    fields = MultiDict(
        [("csrf_token", token.group(1)), ("username", username), ("password", password), *extra]
    )
    response = client.post(f"/login{query}", data=fields)
    assert response.status_code in (302, 400, 401, 413, 429), response.status_code
    if response.status_code == 302:
        location = response.headers["Location"]
        # As a browser reads it: tabs and newlines dropped, backslashes as slashes.
        seen = re.sub(r"[\t\n\r]", "", location).replace("\\", "/")
        assert seen.startswith("/") and not seen.startswith("//"), location
        assert not urlsplit(seen).scheme and not urlsplit(seen).netloc, location


# --------------------------------------------------------------------------------------
# Arbitrary query strings to the research routes, logged in: never a 500.

# The research routes that exist (the last entry of that list is a missing survey).
RESEARCH_PATHS = RESEARCH_ROUTES[:-1]
number_text = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.floats(min_value=1e-320, max_value=1e-3).map(repr),
    st.integers(-(10**30), 10**30).map(str),
    st.sampled_from(
        [
            "0.9",
            "0.95",
            "0.99",
            "9.5e-1",
            " 0.95",
            "0.95 ",
            "0,95",
            "nan",
            "-inf",
            "1e-200",
            "5e-324",
            "1e308",
            "0",
            "-0",
            "1",
            "0x1p-3",
            "95%",
            "",
            "٠.٩٥",
            "0.9" + "0" * 400,
        ]
    ),
)
param_value = st.one_of(
    number_text,
    st.sampled_from(["wilson", "clopper-pearson", "aggregate", "responses", "WILSON", "exact"]),
    st.text(max_size=30),
)
param_name = st.one_of(
    st.sampled_from(["confidence", "method", "half_width", "kind", "next"]), st.text(max_size=10)
)


@hostile(max_examples=150)
@given(
    path=st.sampled_from(RESEARCH_PATHS),
    params=st.lists(st.tuples(param_name, param_value), max_size=4),
    raw_suffix=st.sampled_from(["", "&%ZZ=%", "&confidence=%FF", "&&=&", "&half_width"]),
)
# Regression (found by this property): a half_width that passed a (0, 1] check but was so
# small that required_sample_size() squared it to 0.0 (ZeroDivisionError) or to a
# subnormal whose quotient is inf (OverflowError). Now bounded below by MIN_HALF_WIDTH.
@example(path=f"/research/surveys/{SLUG}", params=[("half_width", "1e-200")], raw_suffix="")
@example(path=f"/research/surveys/{SLUG}", params=[("half_width", "1e-160")], raw_suffix="")
def test_research_query_strings_never_fail_with_a_server_error(
    app: Flask,
    logged_in: FlaskClient,
    path: str,
    params: list[tuple[str, str]],
    raw_suffix: str,
) -> None:
    if _counts(app)[0] == 0:
        for reported in ({"cheated": "yes", "drugs": "no", "skipped_meals": "yes"},) * 3:
            submit_client_randomized(app, reported)
    query = urlencode(params) + raw_suffix
    response = logged_in.get(f"{path}?{query}")
    body = response.get_data(as_text=True)  # streamed CSVs fail while being read
    assert response.status_code < 500, (query, body[-2000:])
    assert response.status_code in (200, 400), (query, response.status_code)


# --------------------------------------------------------------------------------------
# Arbitrary survey definition files through `survey-app import-survey`: exit 0 or 1,
# never a traceback, and nothing stored on exit 1.

# Strings a survey might hold, including the ones that sink storage or rendering:
# lone surrogates (valid in JSON and YAML escapes, not in UTF-8), NULs, markup, formulas.
nasty_text = st.one_of(
    st.text(max_size=30),
    st.text(st.characters(codec=None, categories=None), max_size=10),
    st.sampled_from(
        [
            "\ud800",
            "a\udfffb",
            "\x00",
            "<script>alert(1)</script>",
            "=1+1",
            "yes",
            "",
            " ",
            "\u2028",
            "\ufeff",
            "x" * 1001,
            "campus-health",
        ]
    ),
)
scalar = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), nasty_text)
structure = st.recursive(
    scalar,
    lambda children: st.one_of(
        st.lists(children, max_size=4),
        st.dictionaries(
            st.one_of(nasty_text, st.sampled_from(["slug", "key", "text"])), children, max_size=4
        ),
    ),
    max_leaves=20,
)


@st.composite
def near_valid_definition(draw: st.DrawFn) -> dict:
    """A valid definition with a few of its parts replaced by anything at all."""
    slug = draw(
        st.one_of(st.from_regex(r"[a-z0-9]{1,8}(-[a-z0-9]{1,8}){0,2}", fullmatch=True), nasty_text)
    )
    questions = [
        {
            "key": draw(st.sampled_from(["q1", "q2", "a_b", "z9"])) + str(i),
            "text": draw(nasty_text) or "A question?",
            "type": "yes_no",
        }
        for i in range(draw(st.integers(1, 4)))
    ]
    definition: dict = {
        "slug": slug,
        "title": draw(nasty_text) or "A title",
        "description": draw(nasty_text),
        "questions": questions,
    }
    for _ in range(draw(st.integers(0, 2))):
        target = draw(st.sampled_from(["survey", "question"]))
        holder = (
            definition if target == "survey" or not questions else draw(st.sampled_from(questions))
        )
        key = draw(st.one_of(st.sampled_from(sorted(holder)), nasty_text))
        if draw(st.booleans()):
            holder.pop(key, None)
        else:
            holder[key] = draw(structure)
    return definition


def _dump(value: object, fmt: str) -> str:
    if fmt == "json":
        return json.dumps(value, ensure_ascii=True)
    if fmt == "json-utf8":
        return json.dumps(value, ensure_ascii=False)
    return yaml.safe_dump(value, allow_unicode=fmt == "yaml-utf8")


definition_file = st.one_of(
    st.tuples(
        st.one_of(near_valid_definition(), structure),
        st.sampled_from(["json", "json-utf8", "yaml", "yaml-utf8"]),
        st.sampled_from([".json", ".yaml", ".yml", ".txt"]),
    ),
    st.tuples(
        st.one_of(st.text(max_size=200), st.binary(max_size=200)),
        st.just("raw"),
        st.sampled_from([".json", ".yaml"]),
    ),
)


@hostile(max_examples=200)
@given(spec=definition_file)
# Regression (found by this property): a string holding a surrogate code point passed
# validation, then sqlite3 could not encode it as UTF-8 and the command died with a
# traceback. Now pairs are joined and lone surrogates refused with the field and line.
# JSON allows a lone "\ud800" escape; and PyYAML decodes each half of an escaped pair
# separately, so an ordinary emoji written by json.dump (ensure_ascii) into a .yaml file
# ("\ud83d\ude00") turns into two lone surrogates.
@example(
    spec=(
        {"slug": "lone-surrogate", "title": "T", "questions": [{"key": "q", "text": "\ud800"}]},
        "json",
        ".json",
    )
)
@example(
    spec=(
        '{"slug": "emoji", "title": "Hi \\ud83d\\ude00", '
        '"questions": [{"key": "q", "text": "Ok?"}]}',
        "raw",
        ".yaml",
    )
)
def test_import_survey_exits_0_or_1_and_stores_all_or_nothing(
    app: Flask, runner: FlaskCliRunner, tmp_path: Path, spec: tuple
) -> None:
    value, fmt, suffix = spec
    path = tmp_path / f"definition{suffix}"
    if fmt == "raw":
        if isinstance(value, bytes):
            path.write_bytes(value)
        else:
            path.write_text(value, encoding="utf-8", errors="surrogatepass")
    else:
        try:
            text = _dump(value, fmt)
        except (UnicodeEncodeError, yaml.YAMLError):
            return  # the generator cannot write it; nothing to import
        path.write_text(text, encoding="utf-8", errors="surrogatepass")
    before = _table_sizes(app)
    result = runner.invoke(args=["import-survey", str(path)])
    after = _table_sizes(app)
    assert result.exception is None or isinstance(result.exception, SystemExit), (
        f"traceback on {path.read_bytes()[:300]!r}: {result.exception!r}"
    )
    assert result.exit_code in (0, 1), result.output
    if result.exit_code == 1:
        assert after == before, result.output
        assert "Error" in result.output
    else:
        surveys, questions = after
        assert surveys == before[0] + 1
        assert questions > before[1]


# --------------------------------------------------------------------------------------
# CSV injection and markup in survey text: exports neutralize, pages escape.

FORMULAS = [
    "=cmd|' /C calc'!A0",
    "+SUM(1)",
    "-2+3",
    "@SUM(A1)",
    '=HYPERLINK("http://evil.example","click")',
    "-",
    "=",
]


def _formula_cells(text: str) -> list[tuple[int, int, str]]:
    """Cells a spreadsheet would run: start with a formula prefix and are not numbers."""
    bad = []
    for r, row in enumerate(csv.reader(io.StringIO(text, newline=""))):
        for c, cell in enumerate(row):
            if cell.startswith(FORMULA_PREFIXES) and not NUMBER.fullmatch(cell):
                bad.append((r, c, cell))
    return bad


def _import(runner: FlaskCliRunner, tmp_path: Path, definition: dict) -> str:
    path = tmp_path / f"{definition['slug']}.json"
    path.write_text(json.dumps(definition), encoding="utf-8")
    result = runner.invoke(args=["import-survey", str(path)])
    assert result.exit_code == 0, result.output
    return definition["slug"]


def _respond(app: Flask, slug: str, keys: list[str], times: int = 3) -> None:
    for i in range(times):
        respondent = app.test_client()
        reported = {key: "yes" if i % 2 else "no" for key in keys}
        response = respondent.post(
            f"/s/{slug}",
            data={**fresh_form(respondent, slug), **reported, "randomized": "client"},
        )
        assert response.status_code == 200


def _all_exports(client: FlaskClient, runner: FlaskCliRunner, slug: str) -> dict[str, str]:
    exports = {}
    for name in ("export.csv", "responses.csv"):
        response = client.get(f"/research/surveys/{slug}/{name}")
        assert response.status_code == 200
        exports[f"http {name}"] = response.get_data(as_text=True)
    for args in ([], ["--responses"]):
        result = runner.invoke(args=["export", slug, *args])
        assert result.exit_code == 0, result.output
        exports[f"cli export {' '.join(args)}"] = result.output
    return exports


@pytest.mark.parametrize("formula", FORMULAS)
def test_exports_never_hold_a_formula_cell(
    app: Flask, logged_in: FlaskClient, runner: FlaskCliRunner, tmp_path: Path, formula: str
) -> None:
    definition = {
        "slug": "formulas",
        "title": formula,
        "description": formula,
        "questions": [
            {"key": "q1", "text": formula},
            {"key": "q2", "text": f"  {formula}"},
            {"key": "q3", "text": "An ordinary question?"},
        ],
    }
    slug = _import(runner, tmp_path, definition)
    _respond(app, slug, ["q1", "q2", "q3"])
    for name, text in _all_exports(logged_in, runner, slug).items():
        assert _formula_cells(text) == [], name
        rows = list(csv.DictReader(io.StringIO(text, newline="")))
        if "question_text" in rows[0]:
            # Neutralized, not mangled: the text is there after one leading quote.
            assert [row["question_text"].removeprefix("'") for row in rows] == [
                formula.strip(),
                formula.strip(),
                "An ordinary question?",
            ]


@hostile(max_examples=40)
@given(
    prefix=st.sampled_from(["=", "+", "-", "@", " =", "\t=", "\r\n+", "\u00a0@", "'="]),
    rest=st.text(st.characters(blacklist_categories=["Cs"]), max_size=40),
)
def test_any_formula_like_question_text_is_neutralized(
    app: Flask,
    logged_in: FlaskClient,
    runner: FlaskCliRunner,
    tmp_path: Path,
    prefix: str,
    rest: str,
) -> None:
    text = (prefix + rest)[:1000]
    slug = "f-" + secrets.token_hex(4)
    definition = {"slug": slug, "title": text or "t", "questions": [{"key": "q", "text": text}]}
    path = tmp_path / f"{slug}.json"
    path.write_text(json.dumps(definition), encoding="utf-8")
    result = runner.invoke(args=["import-survey", str(path)])
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(
        result.exception
    )
    if result.exit_code != 0:
        return  # refused (e.g. empty after stripping): nothing to export
    _respond(app, slug, ["q"], times=1)
    for name, exported in _all_exports(logged_in, runner, slug).items():
        assert _formula_cells(exported) == [], (name, text)


MARKUP = [
    "<script>alert(1)</script>",
    '"><img src=x onerror=alert(1)>',
    "</legend><script>alert(1)</script>",
    "{{ 7*7 }}<b>bold</b>",
]


@pytest.mark.parametrize("markup", MARKUP)
def test_survey_text_is_escaped_on_every_page(
    app: Flask, logged_in: FlaskClient, runner: FlaskCliRunner, tmp_path: Path, markup: str
) -> None:
    definition = {
        "slug": "markup",
        "title": f"Title {markup}",
        "description": f"Description {markup}",
        "questions": [{"key": "q1", "text": f"Question {markup}"}],
    }
    slug = _import(runner, tmp_path, definition)
    respondent = app.test_client()
    pages = {
        "index": respondent.get("/"),
        "survey": respondent.get(f"/s/{slug}"),
    }
    pages["refused"] = respondent.post(f"/s/{slug}", data={"q1": "maybe"})
    pages["thanks"] = respondent.post(
        f"/s/{slug}",
        data={**fresh_form(respondent, slug), "q1": "yes", "randomized": "client"},
    )
    pages["already answered"] = respondent.get(f"/s/{slug}")
    pages["research index"] = logged_in.get("/research/")
    pages["dashboard"] = logged_in.get(f"/research/surveys/{slug}")
    for name, response in pages.items():
        page = response.get_data(as_text=True)
        assert response.status_code < 500, name
        assert markup not in page, name
    for name in ("survey", "dashboard"):
        page = pages[name].get_data(as_text=True)
        assert str(escape(f"Question {markup}")) in page, name
        assert str(escape(f"Title {markup}")) in page, name
