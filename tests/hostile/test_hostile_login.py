"""Hostile logins, property-based: arbitrary usernames, passwords, extra fields and
``next`` targets never cause a 500 and never redirect off the site.
"""

from __future__ import annotations

import re
from urllib.parse import urlencode, urlsplit

from flask import Flask
from hypothesis import given
from hypothesis import strategies as st
from werkzeug.datastructures import MultiDict

from tests.support.hostile import hostile
from tests.support.researchers import PASSWORD
from tests.support.stored import StoredState

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
    stored: StoredState,
    researcher: str,
    username: str,
    password: str,
    next_url: str | None,
    extra: list[tuple[str, str]],
) -> None:
    with stored.connect() as conn:
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
