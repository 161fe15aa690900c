"""A respondent through Flask's test client: the form's hidden fields, answers as sent on
the wire, and the thank-you page read back."""

from __future__ import annotations

import json
import re
from urllib.parse import urlencode

from flask import Flask
from flask.testing import FlaskClient

from .examples import KEYS, MIXED_SLUG, SLUG
from .stored import opened, rows


def hidden_fields(page: str) -> dict[str, str]:
    """The form's hidden inputs (CSRF token and submission id) from a rendered page."""
    return dict(re.findall(r'<input type="hidden" name="(\w+)" value="([^"]*)">', page))


def shown_answers(page: str) -> dict[str, str]:
    """The thank-you page's stored answers as the respondent sees them, by question key.

    Each cell holds every text it could show (so the page's size does not depend on the
    answers); the shown ones carry ``class="shown"``, the others ``hidden=hidden``.
    """
    cells = re.findall(r'<td data-key="(\w+)">(.*?)</td>', page, flags=re.S)
    return {
        key: " ".join(text.strip() for text in re.findall(r'class="shown">([^<]+)<', cell))
        for key, cell in cells
    }


def fresh_form(client: FlaskClient, slug: str = SLUG) -> dict[str, str]:
    response = client.get(f"/s/{slug}")
    assert response.status_code == 200
    return hidden_fields(response.get_data(as_text=True))


def answers(value: str = "y") -> dict[str, str]:
    """Every question of the example survey answered alike, with its wire value ("y"/"n")."""
    return dict.fromkeys(KEYS, value)


def mixed_form(client: FlaskClient) -> dict[str, str]:
    """The mixed survey's hidden fields, after agreeing to the consent text."""
    return fresh_form(client, f"{MIXED_SLUG}?agree=yes")


def submit_client_randomized(app: Flask, reported: dict[str, str]) -> None:
    """One respondent whose browser already randomized: the values are stored as sent."""
    respondent = app.test_client()
    response = respondent.post(
        f"/s/{SLUG}", data={**fresh_form(respondent), **reported, "randomized": "client"}
    )
    assert response.status_code == 200


def stored_answers(app: Flask) -> list[dict[str, object]]:
    """Every stored response's answers, in storage order, read from the app's database."""
    with opened(app.config["DATABASE"]) as database:
        return [json.loads(row["answers"]) for row in rows(database, "responses")]


def post_without_javascript(app: Flask, slug: str, data: dict[str, str]) -> tuple[int, str, int]:
    """One respondent's POST as a page without JavaScript sends it: the status, the page
    and the body's length in bytes."""
    client = app.test_client()
    sent = {**hidden_fields(client.get(f"/s/{slug}").get_data(as_text=True)), **data}
    response = client.post(f"/s/{slug}", data=sent)
    return response.status_code, response.get_data(as_text=True), len(urlencode(sent))
