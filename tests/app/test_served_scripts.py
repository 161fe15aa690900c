"""The respondent's scripts as served: minified, only the known ones, cached by version.

What a browser runs must be what the audit and the browser tests run:
``survey_app.served_scripts`` is the one source for all three.
"""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import pytest
from flask.testing import FlaskClient

from survey_app.cli.audit import browser_source
from survey_app.served_scripts import STATIC, script_names, script_version, served_script
from survey_app.served_stylesheet import served_stylesheet, stylesheet_version


def test_every_script_a_page_may_load_is_served_minified(client: FlaskClient) -> None:
    for name in script_names():
        response = client.get(f"/js/{name}")
        assert response.status_code == 200 and response.mimetype == "text/javascript"
        assert response.get_data(as_text=True) == served_script(name)
        source = (STATIC / name).read_text(encoding="utf-8")
        assert len(served_script(name)) < len(source), name
        assert "/*" not in served_script(name), name  # the comments went


def test_the_audit_samples_the_served_text() -> None:
    assert served_script("coins.js") in browser_source()
    assert served_script("mechanisms/subset_selection.js") in browser_source()
    assert served_script("randomize.js") not in browser_source()  # the form samples nothing


@pytest.mark.parametrize(
    "name", ["builder.js", "../config.py", "mechanisms/../coins.js", "style.css", "nothing.js"]
)
def test_nothing_else_is_served_as_a_script(client: FlaskClient, name: str) -> None:
    assert client.get(f"/js/{name}").status_code == 404


def test_a_versioned_address_is_kept_a_year_and_an_old_one_is_checked(client: FlaskClient) -> None:
    name = "mechanisms/grr.js"
    current = client.get(f"/js/{name}?v={script_version(name)}")
    assert current.cache_control.max_age == 31_536_000 and current.cache_control.immutable
    stale = client.get(f"/js/{name}?v=000000000000")
    assert stale.cache_control.max_age is None and not stale.cache_control.immutable
    again = client.get(f"/js/{name}", headers={"If-None-Match": stale.headers["ETag"]})
    assert again.status_code == 304


def test_the_page_names_each_script_by_its_version(client: FlaskClient) -> None:
    page = client.get("/s/campus-health?lang=ko").get_data(as_text=True)
    addresses = [part.split('"')[0] for part in page.split('<script src="')[1:]]
    assert addresses, page
    for address in addresses:
        parts = urlsplit(address)
        name = parts.path.removeprefix("/js/")
        assert parse_qs(parts.query) == {"v": [script_version(name)]}  # no lang: one per file


def test_the_stylesheet_is_served_minified_under_its_version(client: FlaskClient) -> None:
    page = client.get("/s/campus-health").get_data(as_text=True)
    [address] = [part.split('"')[0] for part in page.split('<link rel="stylesheet" href="')[1:]]
    assert address == f"/css/style.css?v={stylesheet_version()}"
    response = client.get(address)
    assert response.mimetype == "text/css" and response.cache_control.immutable
    assert response.get_data(as_text=True) == served_stylesheet()
    source = (STATIC / "style.css").read_text(encoding="utf-8")
    assert len(served_stylesheet()) < 0.85 * len(source) and "/*" not in served_stylesheet()
    assert served_stylesheet().count("{") == source.count("{")  # every rule kept
