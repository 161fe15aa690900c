"""Who may answer and who may see: lifecycle, invitations, owners, rate limits, backups."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from itertools import product
from pathlib import Path

import pytest
import sqlite_utils
from flask import Flask
from flask.testing import FlaskClient, FlaskCliRunner
from werkzeug.routing import Rule
from werkzeug.test import TestResponse

from survey_app import create_app
from survey_app.storage import backends, postgresql_backup
from survey_app.storage.accounts import create_researcher
from survey_app.storage.backends import Database
from survey_app.web.database_session import get_db
from tests.support.examples import INVITE_ONLY, SLUG
from tests.support.invitations import start, start_page
from tests.support.researchers import PASSWORD, log_in
from tests.support.respondents import answers, fresh_form, hidden_fields
from tests.support.stored import count


def submit(client: FlaskClient, slug: str, fields: dict[str, str], **extra: str):
    return client.post(f"/s/{slug}", data={**fields, **extra})


@pytest.fixture
def invite_only(runner: FlaskCliRunner, tmp_path: Path) -> list[str]:
    """The invitation survey and five links to it, made through the CLI."""
    definition = tmp_path / "staff.yaml"
    definition.write_text(INVITE_ONLY)
    assert runner.invoke(args=["import-survey", str(definition)]).exit_code == 0
    links_file = tmp_path / "links.txt"
    result = runner.invoke(args=["invite", "staff-pulse", "--count", "5", "-o", str(links_file)])
    assert result.exit_code == 0, result.output
    assert "warning: only 5 links" in result.stderr  # fewer than FEW_LINKS: timing
    links = links_file.read_text().splitlines()
    assert len(links) == 5 and len(set(links)) == 5
    return [link.removeprefix("http://127.0.0.1:5000") for link in links]


def test_invitation_link_answers_once(
    app: Flask, invite_only: list[str], database: sqlite_utils.Database
) -> None:
    browser = app.test_client()
    start_fields = start_page(browser, invite_only[0])
    assert start_page(browser, invite_only[0]) == start_fields  # opening spends nothing
    fields = start(browser, invite_only[0])
    assert fields["invitation"] not in invite_only[0]  # the form carries a ticket
    # A reload shows the form again, with the same ticket: the link is spent already.
    assert (
        hidden_fields(browser.get("/s/staff-pulse").get_data(as_text=True))["invitation"]
        == (fields["invitation"])
    )
    assert submit(browser, "staff-pulse", fields, burnout="y").status_code == 200
    # The same link from another browser: refused, at the page and at the start.
    other = app.test_client()
    assert other.get(invite_only[0]).status_code == 403
    spent_again = browser.post("/s/staff-pulse/start", data=start_fields)
    assert spent_again.status_code == 403 and "answer-ticket" not in str(spent_again.headers)
    # The same ticket on another form: refused, nothing stored.
    replay = submit(
        other,
        "staff-pulse",
        {**start(other, invite_only[1]), "invitation": fields["invitation"]},
        burnout="n",
    )
    assert replay.status_code == 403
    assert "already been used" in replay.get_data(as_text=True)
    assert count(database, "responses") == 1
    # A different link still works, from the same browser: the ticket is the rule here.
    assert (
        submit(browser, "staff-pulse", start(browser, invite_only[2]), burnout="n").status_code
        == 200
    )
    assert count(database, "responses") == 2


def test_invitation_survey_refuses_without_a_valid_link(
    app: Flask, invite_only: list[str], database: sqlite_utils.Database
) -> None:
    browser = app.test_client()
    assert browser.get("/s/staff-pulse").status_code == 403
    assert browser.get("/s/staff-pulse?invitation=" + "A" * 22).status_code == 403
    fields = start(browser, invite_only[0])
    ticket = fields.pop("invitation")
    assert submit(browser, "staff-pulse", fields, burnout="y").status_code == 403
    value, mac = ticket.split(".")
    forged = f"{value[::-1]}.{mac}"
    assert submit(browser, "staff-pulse", fields, invitation=forged, burnout="y").status_code == 403
    assert count(database, "responses") == 0
    assert "staff-pulse" not in browser.get("/").get_data(as_text=True)  # not listed


def test_invitations_are_stored_as_hashes_without_a_link_to_responses(
    app: Flask, invite_only: list[str], database: sqlite_utils.Database
) -> None:
    browser = app.test_client()
    fields = start(browser, invite_only[0])
    submit(browser, "staff-pulse", fields, burnout="y")
    tokens = [link.split("invitation=")[1] for link in invite_only]
    tables = ("invitations", "spent_tickets", "responses", "surveys")
    dump = str([database.execute(f"SELECT * FROM {table}").fetchall() for table in tables])
    assert not any(token in dump for token in [*tokens, fields["invitation"]])
    assert columns(database, "invitations") == ["token_hash", "survey_id"]
    assert count(database, "invitations") == 4  # the spent link is deleted, not marked
    assert [row[0] for row in database.execute("SELECT ticket_hash FROM spent_tickets")] == [
        hashlib.sha256(fields["invitation"].encode()).hexdigest()
    ]
    assert "invitation" not in columns(database, "responses")


def columns(database: Database, table: str) -> list[str]:
    """The columns of a table that holds a row."""
    return list(next(iter(database.query(f"SELECT * FROM {table}"))))


def test_invite_refuses_an_open_survey(runner: FlaskCliRunner) -> None:
    result = runner.invoke(args=["invite", SLUG, "--count", "3"])
    assert result.exit_code == 1
    assert "access: invitation" in result.output


def test_lifecycle_draft_open_closed(
    app: Flask, runner: FlaskCliRunner, database: sqlite_utils.Database, tmp_path: Path
) -> None:
    definition = tmp_path / "later.yaml"
    definition.write_text(
        INVITE_ONLY.replace("staff-pulse", "later").replace("access: invitation\n", "")
    )
    assert runner.invoke(args=["import-survey", "--draft", str(definition)]).exit_code == 0
    browser = app.test_client()
    assert browser.get("/s/later").status_code == 404  # a draft: as if no survey were there
    assert "later" not in browser.get("/").get_data(as_text=True)
    assert runner.invoke(args=["open", "later"]).exit_code == 0
    fields = fresh_form(browser, "later")
    assert runner.invoke(args=["close", "later"]).exit_code == 0
    closed = submit(browser, "later", fields, burnout="y")
    assert closed.status_code == 403
    assert "closed" in closed.get_data(as_text=True)
    assert count(database, "responses") == 0


# Who may open the researcher's pages. Both tests below walk the app's URL map, not a list
# kept by hand, so a page added anywhere under /research/ is checked the day it is added.

# A value for each argument a research page's URL takes (a new argument needs one here).
SAMPLES = {"slug": (SLUG, "no-such-survey"), "action": ("open", "close")}
# The research blueprint's children: the URL map must show each, or the walk is too short.
CHILDREN = {"research.dashboard", "research.builder", "research.analysis", "research.publishing"}
# What a researcher a survey is shared with may read (or copy). Any other page naming a
# survey is its owner's alone (403 for a viewer), or in the builder its owner's draft (404).
VIEWER_PAGES = {
    "research.dashboard.copy",
    "research.dashboard.dashboard",
    "research.dashboard.plot_svg",
    "research.dashboard.export_csv",
    "research.dashboard.responses_download",
    "research.dashboard.estimates_download",
    "research.dashboard.codebook_json",
    "research.analysis.groups",
    "research.analysis.groups_csv",
    "research.analysis.regression",
    "research.analysis.regression_download",
    "research.downloads.responses_sav",
    "research.downloads.responses_dta",
}
DRAFT = "sketch"


def research_rules(app: Flask) -> list[Rule]:
    rules = [rule for rule in app.url_map.iter_rules() if rule.rule.startswith("/research")]
    assert CHILDREN <= {rule.endpoint.rpartition(".")[0] for rule in rules}
    return rules


def rule_paths(app: Flask, rule: Rule, samples: Mapping[str, Sequence[str]]) -> set[str]:
    """The rule's URL for every combination of sample arguments."""
    names = sorted(rule.arguments)
    assert set(names) <= samples.keys(), f"give {rule.rule}'s arguments sample values"
    adapter = app.url_map.bind("localhost")
    return {
        adapter.build(rule.endpoint, dict(zip(names, values, strict=True)))
        for values in product(*(samples[name] for name in names))
    }


def form_token(client: FlaskClient) -> str:
    """A CSRF token for this client's session (the login form carries one), so that a POST
    refused below is refused by the guard or the owner check, not for want of a token."""
    page = client.get("/login").get_data(as_text=True)
    found = re.search(r'name="csrf_token" type="hidden" value="([^"]+)"', page)
    assert found, "the login form has a CSRF token"
    return found.group(1)


def visit(client: FlaskClient, method: str, path: str) -> TestResponse:
    data = {"csrf_token": form_token(client)} if method == "POST" else None
    return client.open(path, method=method, data=data)


def test_every_research_page_sends_anonymous_visitors_to_log_in(app: Flask) -> None:
    """GET and POST, on every rule under /research/, for a survey that exists and one that
    does not: a redirect to the login page, or 405 where the method has no page."""
    anonymous, adapter = app.test_client(), app.url_map.bind("localhost")
    wrong = []
    for path in set().union(*(rule_paths(app, r, SAMPLES) for r in research_rules(app))):
        for method in ("GET", "POST"):
            response = visit(anonymous, method, path)
            if method not in adapter.allowed_methods(path):
                refused = response.status_code == 405
            else:
                location = response.headers.get("Location", "")
                refused = response.status_code == 302 and location.startswith("/login?next=")
            if not refused:
                wrong.append((method, path, response.status_code))
    assert not wrong


@pytest.fixture
def researchers(app: Flask, runner: FlaskCliRunner, tmp_path: Path) -> dict[str, FlaskClient]:
    """Logged-in browsers of the owner of "private" and of the draft DRAFT, of a viewer
    "private" is shared with, and of a stranger."""
    names = ("owner", "viewer", "stranger")
    with app.app_context():
        for name in names:
            create_researcher(get_db(), name, PASSWORD)
    for slug, stage in (("private", []), (DRAFT, ["--draft"])):
        definition = tmp_path / f"{slug}.yaml"
        definition.write_text(INVITE_ONLY.replace("staff-pulse", slug))
        result = runner.invoke(args=["import-survey", *stage, "--owner", "owner", str(definition)])
        assert result.exit_code == 0, result.output
    assert runner.invoke(args=["share", "private", "viewer"]).exit_code == 0
    clients = {}
    for name in names:
        clients[name] = app.test_client()
        assert log_in(clients[name], name).status_code == 302
    return clients


def statuses(
    researchers: dict[str, FlaskClient], method: str, path: str, viewer_reads: bool
) -> dict[str, int]:
    """Each researcher's answer to this request; the owner's for a GET, or on a page a
    viewer may use, only (another POST would change the survey under the others)."""
    return {
        name: visit(client, method, path).status_code
        for name, client in researchers.items()
        if method == "GET" or viewer_reads or name != "owner"
    }


@pytest.mark.slow
def test_every_page_naming_a_survey_is_for_its_owner_and_viewers_only(
    app: Flask, researchers: dict[str, FlaskClient]
) -> None:
    """Every rule with a ``<slug>``, by each method it takes: a stranger gets 404 (as if the
    survey did not exist); a viewer gets what the owner gets on VIEWER_PAGES and 403 on the
    rest (404 in the builder, where a draft is its owner's alone); the owner is let in: the
    page, or 400 for one asked without its query (tried by GET, and by POST where a viewer
    may act too: the other POSTs would change the survey)."""
    wrong = []
    for rule in research_rules(app):
        if "slug" not in rule.arguments:
            continue
        in_builder = rule.endpoint.startswith("research.builder.")
        samples = {**SAMPLES, "slug": (DRAFT if in_builder else "private",)}
        viewer_reads = rule.endpoint in VIEWER_PAGES
        for path in rule_paths(app, rule, samples):
            for method in sorted((rule.methods or set()) - {"HEAD", "OPTIONS"}):
                got = statuses(researchers, method, path, viewer_reads)
                viewer = got.get("owner") if viewer_reads else 404 if in_builder else 403
                owner_let_in = got.get("owner", 200) in (200, 302, 400)
                if (got["viewer"], got["stranger"]) != (viewer, 404) or not owner_let_in:
                    wrong.append((method, path, got))
    assert not wrong
    listing = {name: c.get("/research/").get_data(as_text=True) for name, c in researchers.items()}
    assert "Staff pulse" in listing["viewer"] and "Staff pulse" not in listing["stranger"]


def test_import_with_an_unknown_owner_fails(runner: FlaskCliRunner, tmp_path: Path) -> None:
    definition = tmp_path / "x.yaml"
    definition.write_text(INVITE_ONLY)
    result = runner.invoke(args=["import-survey", "--owner", "ghost", str(definition)])
    assert result.exit_code == 1 and "no researcher named 'ghost'" in result.output


def test_submissions_are_rate_limited(tmp_path: Path) -> None:
    from survey_app.domain.definitions import load_definition
    from survey_app.storage.surveys import store_survey
    from tests.support.examples import EXAMPLE

    app = create_app(
        {
            "DATABASE": str(tmp_path / "s.db"),
            "SECRET_KEY": "k",
            "RATE_LIMITS": True,
            "SUBMIT_RATE_LIMIT": "2 per minute",
        }
    )
    with app.app_context():
        store_survey(get_db(), load_definition(EXAMPLE))
    statuses = []
    for _ in range(3):
        browser = app.test_client()
        statuses.append(submit(browser, SLUG, fresh_form(browser), **answers()).status_code)
    assert statuses == [200, 200, 429]
    assert sqlite_utils.Database(tmp_path / "s.db")["responses"].count == 2


def test_backup_copies_a_consistent_database(
    app: Flask, runner: FlaskCliRunner, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """SQLite's online backup (checked for integrity) or PostgreSQL's pg_dump (restored
    with the pg_restore the message names): either way the copy holds the response."""
    browser = app.test_client()
    submit(browser, SLUG, fresh_form(browser), **answers())
    target = tmp_path / "backup.db"
    result = runner.invoke(args=["backup", str(target)])
    assert result.exit_code == 0, result.output
    if backends.is_postgresql(app.config["DATABASE"]):
        assert "pg_restore" in result.output
        copy_url = request.getfixturevalue("postgresql_cluster").new_database()
        postgresql_backup.restore(target, copy_url)
        copy = backends.connect(copy_url)
    else:
        assert "integrity check ok" in result.output
        copy = backends.connect(str(target))
    assert copy.execute("SELECT count(*) FROM responses").fetchone()[0] == 1
    copy.conn.close()
    assert runner.invoke(args=["backup", str(target)]).exit_code == 1  # never overwrites


def test_a_failed_migration_changes_nothing(tmp_path: Path, monkeypatch) -> None:
    from survey_app.storage import database as db_module

    def broken(db: sqlite_utils.Database) -> None:
        db.execute("CREATE TABLE half_done (x)")
        raise RuntimeError("migration failed half-way")

    monkeypatch.setattr(db_module, "MIGRATIONS", (*db_module.MIGRATIONS, broken))
    database = db_module.connect(tmp_path / "m.db")
    with pytest.raises(RuntimeError):
        db_module.migrate(database)
    assert db_module.schema_version(database) == len(db_module.MIGRATIONS) - 1
    assert "half_done" not in database.table_names()
