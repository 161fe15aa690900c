"""Hostile respondent POSTs to /s/<slug>, property-based: whatever the form holds, the
app answers without a 500 and stores a response whole or not at all, and a refused form
never echoes a submitted value.

Hypothesis generates the input; each property states what must hold for *any* input, so a
failure shows the smallest input that breaks it.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Callable

import pytest
from flask import Flask
from flask.testing import FlaskClient
from hypothesis import given
from hypothesis import strategies as st
from markupsafe import escape
from werkzeug.datastructures import MultiDict

from survey_app.web.form_tokens import issue_form_token
from tests.support.examples import KEYS, SLUG
from tests.support.hostile import HUGE, MAX_BODY, hostile
from tests.support.respondents import fresh_form
from tests.support.stored import StoredState

# The old shape of a submission id, which a client could make up; now only the server's
# form tokens (survey_app/web/form_tokens.py) are accepted.
SELF_MADE_ID = re.compile(r"[A-Za-z0-9_-]{16,64}")
CONTROL_FIELDS = ("csrf_token", "submission_id", "randomized", "design", "agreed")
ALLOWED_FIELDS = frozenset(KEYS) | frozenset(CONTROL_FIELDS)


# --------------------------------------------------------------------------------------
# Arbitrary form bodies POSTed to /s/<slug>: a response is stored whole or not at all.

junk_text = st.text(max_size=40)
# Unique markers let the test check that refused values are never echoed into the page.
marker = st.text("0123456789abcdef", min_size=12, max_size=12).map(lambda s: "zq" + s)
junk_value = st.one_of(
    junk_text,
    marker,
    # The old wire values ("yes"/"no") are junk now, as are near misses of "y"/"n".
    st.sampled_from(["yes", "no", "Y", " y", "y\n", "yn", "client", "", "1"]),
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
        how = draw(st.sampled_from(["y", "n", "y", "n", "missing", "junk", "twice"]))
        if how in ("y", "n"):
            plan.append((key, how))
        elif how == "junk":
            plan.append((key, draw(junk_value)))
        elif how == "twice":
            plan += [(key, draw(st.sampled_from(["y", "n"]))), (key, draw(junk_value))]
    return plan


post_plan = st.fixed_dictionaries(
    {
        "csrf": st.sampled_from(
            ["valid", "valid", "valid", "other", "forged", "missing", "empty", "twice", "header"]
        ),
        # "fresh": a form token the server just issued for this survey; the rest are
        # replays, tokens for another survey, altered or made-up ids.
        "submission_id": st.one_of(
            st.sampled_from(
                ["fresh", "fresh", "fresh", "previous", "missing", "twice"]
                + ["self-made", "tampered", "other survey"]
            ),
            st.tuples(st.just("suffix"), st.sampled_from(["\n", " ", "\t", "\r\n", "\x00", "é"])),
            st.tuples(st.just("text"), junk_text),
            st.tuples(st.just("text"), st.from_regex(SELF_MADE_ID, fullmatch=True)),
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


def _build_body(
    plan: dict,
    token: str,
    other_token: str,
    sent_ids: list[str],
    design: str,
    new_form: Callable[[str], str],
):
    """The POST's fields in order, plus extra headers. ``new_form(slug)`` is a form token
    the server issued for that survey."""
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
        fields.append(("submission_id", new_form(SLUG)))
    if sid == "twice":
        fields.append(("submission_id", new_form(SLUG)))
    elif sid == "previous":
        fields.append(("submission_id", sent_ids[-1] if sent_ids else new_form(SLUG)))
    elif sid == "self-made":
        fields.append(("submission_id", secrets.token_urlsafe(16)))
    elif sid == "tampered":
        # A new random part under the old time and signature: what a stuffer would want.
        fields.append(("submission_id", secrets.token_urlsafe(16) + new_form(SLUG)[22:]))
    elif sid == "other survey":
        fields.append(("submission_id", new_form("other-survey")))
    elif isinstance(sid, tuple) and sid[0] == "suffix":
        fields.append(("submission_id", new_form(SLUG) + sid[1]))
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
    issued: set[str],
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
    if any(form.get(key) not in ("y", "n") for key in KEYS):  # the wire values
        return 400, False
    sid = form.get("submission_id")
    if sid not in issued:
        return 400, False  # only a form token this server issued for this survey
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


@pytest.mark.slow
@hostile(max_examples=120)
@given(plans=st.lists(post_plan, min_size=1, max_size=3), same_client=st.booleans())
def test_arbitrary_form_posts_store_a_whole_response_or_nothing(
    app: Flask, stored: StoredState, plans: list[dict], same_client: bool
) -> None:
    stored.reset_responses()
    other = app.test_client()
    other_token = fresh_form(other)["csrf_token"]
    client = app.test_client()
    form = fresh_form(client)
    token, design = form["csrf_token"], form["design"]
    sent_ids: list[str] = []
    stored_ids: set[str] = set()
    issued: set[str] = set()  # form tokens the server issued for this survey
    answered = False

    def new_form(slug: str) -> str:
        if slug != SLUG:
            return issue_form_token([app.config["SECRET_KEY"]], slug)
        form_token = fresh_form(other)["submission_id"]  # `other` never answers
        issued.add(form_token)
        return form_token

    for plan in plans:
        if not same_client:
            client = app.test_client()
            token = fresh_form(client)["csrf_token"]
            answered = False
        fields, headers = _build_body(plan, token, other_token, sent_ids, design, new_form)
        want_status, want_new_row = _expected(
            fields, headers, design, token, plan["slug"], issued, stored_ids, answered
        )
        rows_before, _ = stored.counts()
        response = client.post(f"/s/{plan['slug']}", data=MultiDict(fields), headers=headers)
        page = response.get_data(as_text=True)
        rows_after, counters = stored.counts()

        assert response.status_code < 500, page
        # Counters always equal the rows: never a partial write.
        assert counters == stored.recounted()
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
            assert sid is not None
            stored_ids.add(sid)
            answered = True


def test_submission_id_with_a_trailing_newline_is_refused(
    client: FlaskClient, app: Flask, stored: StoredState
) -> None:
    """Regression (found by the property above): a pattern ending in "$" also matched before
    a final newline, so "<id>\n" was stored as a submission id. Now a 400, nothing stored."""
    fields = fresh_form(client)
    response = client.post(
        f"/s/{SLUG}",
        data={
            **fields,
            "submission_id": fields["submission_id"] + "\n",
            **dict.fromkeys(KEYS, "y"),
        },
    )
    assert response.status_code == 400
    assert stored.counts()[0] == 0


@pytest.mark.parametrize("where", ["value", "name", "query"])
def test_a_nul_character_anywhere_is_refused_and_stores_nothing(
    client: FlaskClient, stored: StoredState, where: str
) -> None:
    """PostgreSQL stores no NUL in text (SQLite would): refused alike on both, 400, before
    any route reads the form; nothing stored, and a login is refused the same way."""
    fields = {**fresh_form(client), **dict.fromkeys(KEYS, "y")}
    if where == "value":
        fields[KEYS[0]] = "y\x00"
    elif where == "name":
        fields["x\x00"] = "y"
    query = "?lang=e\x00n" if where == "query" else ""
    assert client.post(f"/s/{SLUG}{query}", data=fields).status_code == 400
    assert stored.counts()[0] == 0
    assert client.post("/login", data={"username": "a\x00", "password": "p"}).status_code == 400


def test_a_too_large_field_sent_where_no_route_is_gets_404(client: FlaskClient) -> None:
    """The NUL check reads no form of a request no route takes: a field larger than forms
    hold, sent to a wrong address (a trailing slash), is the 404 it would be without it,
    not the 400 reading it gives (found by the property test above)."""
    fields = {**fresh_form(client), KEYS[0]: "y" * HUGE}
    assert client.post(f"/s/{SLUG}/", data=fields).status_code == 404


def test_field_names_are_escaped_in_the_refusal(client: FlaskClient) -> None:
    """form_problems() quotes the unexpected field's name back: it must arrive as text."""
    name = "<script>alert(1)</script>"
    response = client.post(
        f"/s/{SLUG}", data={**fresh_form(client), **dict.fromkeys(KEYS, "y"), name: "x"}
    )
    page = response.get_data(as_text=True)
    assert response.status_code == 400
    assert name not in page
    assert str(escape(name)) in page
