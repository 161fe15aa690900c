"""The researcher's side: login, the guard on /research/, the dashboard and the exports."""

from __future__ import annotations

import json
import re

import pytest
from flask import Flask
from flask.testing import FlaskClient, FlaskCliRunner

from survey_app.storage import backends, tallies
from survey_app.storage.backends import Database
from survey_app.storage.responses import record_response
from survey_app.storage.surveys import get_survey
from survey_app.web.database_session import get_db
from tests.support.examples import KEYS, SLUG
from tests.support.researchers import log_in
from tests.support.respondents import submit_client_randomized

# Ten respondents whose browsers reported: cheated 6 yes, drugs 2 yes, skipped_meals 10 yes.
REPORTS = [
    {"cheated": "y" if i < 6 else "n", "drugs": "y" if i < 2 else "n", "skipped_meals": "y"}
    for i in range(10)
]

# Worked by hand from the design document's formulas, fair coins (t = f = 1/2), with the
# default Clopper-Pearson interval for the reported rate (beta quantiles):
# cheated: rate .6, estimate 2(.6) - .5 = .7, s.e. 2 sqrt(.6 .4 / 10) = .309839; the rate's
#   interval is [B(.025; 6, 5), B(.975; 7, 4)] = [.262378, .878448], mapped 2x - .5 to
#   [.024756, 1.256896], clipped.
# drugs: rate .2 < 1/4 so the estimate clips to 0 (unclipped -.1); the interval is [0, u]
#   with u the mapped upper bound at rate 1/4 (count 2.5): 2 B(.975; 3.5, 7.5) - .5 = .711637.
# skipped_meals: rate 1 > 3/4, the mirror image: [1 - .711637, 1].
# A yes/no question is one option, so its simultaneous interval is its interval, and its
# display estimate is its (clipped) estimate.
FAIR = (
    '"{""forced_yes_probability"":""1/2"",""mechanism"":""two_coin_randomized_response"",'
    '""truth_probability"":""1/2""}"'
)
EXPECTED_AGGREGATE_CSV = (
    "survey,question,category,question_text,mechanism,epsilon,n,reported,reported_rate,"
    "estimate,std_error,ci_low,ci_high,confidence,simultaneous_low,simultaneous_high,"
    "display_estimate,parameters\r\n"
    "campus-health,cheated,yes,Have you cheated on an exam in the past year?,"
    "two_coin_randomized_response,1.099,10,6,0.600000,0.700000,0.309839,0.024756,"
    f"1.000000,0.95,0.024756,1.000000,0.700000,{FAIR}\r\n"
    "campus-health,drugs,yes,Have you used a prescription stimulant without a prescription "
    "in the past year?,two_coin_randomized_response,1.099,10,2,0.200000,0.000000,"
    f"0.252982,0.000000,0.711637,0.95,0.000000,0.711637,0.000000,{FAIR}\r\n"
    "campus-health,skipped_meals,yes,Have you skipped meals because you could not afford "
    "food this term?,two_coin_randomized_response,1.099,10,10,1.000000,1.000000,"
    f"0.000000,0.288363,1.000000,0.95,0.288363,1.000000,1.000000,{FAIR}\r\n"
)


@pytest.fixture
def answered(app: Flask) -> Flask:
    for reported in REPORTS:
        submit_client_randomized(app, reported)
    return app


def test_login_then_dashboard(logged_in: FlaskClient) -> None:
    page = logged_in.get(f"/research/surveys/{SLUG}").get_data(as_text=True)
    assert "Campus health survey" in page
    assert "no responses yet" in page


def test_a_large_survey_warns_that_the_responses_csv_may_be_cut_short(
    logged_in: FlaskClient, database: Database
) -> None:
    """From a million responses the page says the per-response download can end at the
    server's time limit without an error, and names the command that has none."""
    page = logged_in.get(f"/research/surveys/{SLUG}").get_data(as_text=True)
    assert 'id="large-export"' not in page
    database.execute("UPDATE surveys SET responses = 1000000 WHERE slug = ?", [SLUG])
    page = logged_in.get(f"/research/surveys/{SLUG}").get_data(as_text=True)
    assert 'id="large-export"' in page and "With 1,000,000 responses" in page
    assert f"<code>survey-app export {SLUG} --responses -o FILE</code>" in page


def test_wrong_password_fails(client: FlaskClient, researcher: str) -> None:
    response = log_in(client, researcher, "wrong password!")
    assert response.status_code == 401
    assert "Wrong username or password" in response.get_data(as_text=True)
    assert client.get("/research/").status_code == 302


def test_unknown_user_fails_alike(client: FlaskClient, researcher: str) -> None:
    response = log_in(client, "nobody")
    assert response.status_code == 401
    assert "Wrong username or password" in response.get_data(as_text=True)


def test_login_requires_csrf(client: FlaskClient, researcher: str) -> None:
    response = client.post("/login", data={"username": researcher, "password": "x" * 12})
    assert response.status_code == 400
    assert client.get("/research/").status_code == 302


def test_repeated_failures_are_slowed_down(client: FlaskClient, researcher: str) -> None:
    statuses = [log_in(client, researcher, "wrong password!").status_code for _ in range(5)]
    assert statuses[:4] == [401, 401, 401, 401]
    assert statuses[4] == 429
    # Even the right password waits out the delay: guessing faster gains nothing.
    throttled = log_in(client, researcher)
    assert throttled.status_code == 429
    page = throttled.get_data(as_text=True)
    # One sentence, said once (it used to read "Too many failed logins: too many failed
    # logins; try again in …").
    assert re.search(r"Too many failed logins\. Try again in \d+ seconds?\.", page)
    assert page.lower().count("too many failed logins") == 1


@pytest.mark.parametrize(
    ("next_url", "expected"),
    [
        (f"/research/surveys/{SLUG}", f"/research/surveys/{SLUG}"),
        ("https://evil.example/", "/research/"),
        ("//evil.example/", "/research/"),
        ("/\\evil.example/", "/research/"),
        ("javascript:alert(1)", "/research/"),
    ],
)
def test_login_next_goes_to_local_paths_only(
    client: FlaskClient, researcher: str, next_url: str, expected: str
) -> None:
    response = log_in(client, researcher, next_url=next_url)
    assert response.status_code == 302
    assert response.headers["Location"] == expected


def test_logout_needs_a_post(logged_in: FlaskClient) -> None:
    assert logged_in.get("/logout").status_code == 200
    assert logged_in.get("/research/").status_code == 200  # a GET alone does not log out
    page = logged_in.get("/logout").get_data(as_text=True)
    found = re.search(r'name="csrf_token" value="([^"]+)"', page)
    assert found is not None
    token = found.group(1)
    assert logged_in.post("/logout", data={"csrf_token": token}).status_code == 302
    assert logged_in.get("/research/").status_code == 302


def test_session_cookie_flags(client: FlaskClient, researcher: str) -> None:
    response = log_in(client, researcher)
    [cookie] = [c for c in response.headers.getlist("Set-Cookie") if c.startswith("session=")]
    assert "HttpOnly" in cookie and "SameSite=Lax" in cookie


def test_aggregate_csv_literal(answered: Flask, logged_in: FlaskClient) -> None:
    response = logged_in.get(f"/research/surveys/{SLUG}/export.csv")
    assert response.status_code == 200
    assert response.mimetype == "text/csv"
    assert response.get_data(as_text=True) == EXPECTED_AGGREGATE_CSV
    assert 'rel="describedby"' in response.headers["Link"]


def test_cli_export_is_byte_identical(
    answered: Flask, logged_in: FlaskClient, runner: FlaskCliRunner, tmp_path
) -> None:
    for flag, route in [([], "export.csv"), (["--responses"], "responses.csv")]:
        output = tmp_path / f"{route}"
        assert runner.invoke(args=["export", SLUG, *flag, "-o", str(output)]).exit_code == 0
        over_http = logged_in.get(f"/research/surveys/{SLUG}/{route}").get_data()
        assert output.read_bytes() == over_http
        book = json.loads(output.with_suffix(".codebook.json").read_text())
        [cheated, *_] = book["questions"]
        assert cheated["parameters"]["truth_probability"] == "1/2"
        assert cheated["r_rr_package"] == {
            "design": "forced-known",
            "p": 0.5,
            "p1": 0.25,
            "p0": 0.25,
        }
        assert "exported_at" in book and "app_version" in book


def test_empty_survey_exports_empty_cells(logged_in: FlaskClient) -> None:
    lines = logged_in.get(f"/research/surveys/{SLUG}/export.csv").get_data(as_text=True)
    first_row = lines.splitlines()[1]
    assert ",1.099,0,0,,,,,,,,,," in first_row


def test_estimates_json_matches_the_csv(answered: Flask, logged_in: FlaskClient) -> None:
    data = logged_in.get(f"/research/surveys/{SLUG}/estimates.json").get_json()
    by_key = {row["question"]: row for row in data["rows"]}
    assert by_key["cheated"]["estimate"] == pytest.approx(0.7)
    assert by_key["drugs"]["unclipped_estimate"] == pytest.approx(-0.1)
    assert by_key["drugs"]["ci_high"] == pytest.approx(0.711637, abs=1e-6)


def test_dashboard_shows_estimates_and_unclipped(answered: Flask, logged_in: FlaskClient) -> None:
    page = logged_in.get(f"/research/surveys/{SLUG}").get_data(as_text=True)
    assert "70.0%" in page and "2.5% – 100.0%" in page
    assert "unclipped -10.0%" in page
    assert "ε = 3.296 per respondent" in page
    assert 'src="/research/surveys/campus-health/plot.svg' in page


@pytest.mark.parametrize("level", ["0.9", "0.99"])
def test_confidence_is_selectable(answered: Flask, logged_in: FlaskClient, level: str) -> None:
    csv_text = logged_in.get(
        f"/research/surveys/{SLUG}/export.csv?confidence={level}&method=clopper-pearson"
    ).get_data(as_text=True)
    assert f",{level}," in csv_text.splitlines()[1]
    assert csv_text != EXPECTED_AGGREGATE_CSV


def test_bad_options_are_400(logged_in: FlaskClient) -> None:
    base = f"/research/surveys/{SLUG}"
    assert logged_in.get(f"{base}?confidence=0.5").status_code == 400
    assert logged_in.get(f"{base}/export.csv?method=guess").status_code == 400
    assert logged_in.get(f"{base}?half_width=0").status_code == 400


def test_planner_on_dashboard(logged_in: FlaskClient) -> None:
    page = logged_in.get(f"/research/surveys/{SLUG}?half_width=0.05").get_data(as_text=True)
    assert "<strong>1,574</strong>" in page  # the locale's digit grouping


def test_plot_is_svg_and_changes_with_new_responses(
    answered: Flask, logged_in: FlaskClient
) -> None:
    first = logged_in.get(f"/research/surveys/{SLUG}/plot.svg")
    assert first.mimetype == "image/svg+xml" and b"<svg" in first.data
    assert logged_in.get(f"/research/surveys/{SLUG}/plot.svg").data == first.data  # cached
    submit_client_randomized(answered, dict.fromkeys(KEYS, "n"))
    assert logged_in.get(f"/research/surveys/{SLUG}/plot.svg").data != first.data


def test_responses_csv_has_one_row_per_response(answered: Flask, logged_in: FlaskClient) -> None:
    lines = logged_in.get(f"/research/surveys/{SLUG}/responses.csv").get_data(as_text=True)
    rows = lines.splitlines()
    assert len(rows) == 1 + len(REPORTS)
    assert rows[1].endswith(",1,1,1")


def test_counters_equal_a_recount_after_a_burst(
    answered: Flask, runner: FlaskCliRunner, database: Database
) -> None:
    result = runner.invoke(args=["recount", SLUG])
    assert result.exit_code == 0
    assert "matched" in result.output
    # Break a counter by hand: the recount notices and repairs it.
    database.execute(
        "UPDATE tallies SET value = value + 5 WHERE cell = 'n' AND question_id = "
        "(SELECT id FROM questions WHERE key = 'cheated')"
    )
    result = runner.invoke(args=["recount", SLUG])
    assert "did not match" in result.output and "cheated" in result.output
    assert "matched" in runner.invoke(args=["recount", SLUG]).output


def test_recount_counts_responses_that_arrive_during_its_scan(
    answered: Flask, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The scan holds no write lock, so answers keep arriving; the catch-up adds them."""
    scan = tallies._count_answers
    late = dict.fromkeys(KEYS, True)

    def scan_then_a_late_answer(db, survey, after_id):  # type: ignore[no-untyped-def]
        counted = scan(db, survey, after_id)
        if after_id == 0:  # the long scan is done: another worker stores a response now
            other = backends.connect(answered.config["DATABASE"])
            record_response(other, survey, late, "late-submission-0000")
            other.conn.close()
        return counted

    monkeypatch.setattr(tallies, "_count_answers", scan_then_a_late_answer)
    with answered.app_context():
        survey = get_survey(get_db(), SLUG)
        assert survey is not None
        result = tallies.recount(get_db(), survey)
    assert result.matched  # the late response bumped the counters and was counted too
    assert result.after["cheated"] == {"n": len(REPORTS) + 1, "yes": 6 + 1}


def test_create_researcher_from_stdin(runner: FlaskCliRunner, client: FlaskClient) -> None:
    result = runner.invoke(
        args=["create-researcher", "grace", "--password-stdin"], input="a long passphrase\n"
    )
    assert result.exit_code == 0
    assert log_in(client, "grace", "a long passphrase").status_code == 302


def test_create_researcher_refuses_short_passwords(runner: FlaskCliRunner) -> None:
    result = runner.invoke(args=["create-researcher", "grace", "--password-stdin"], input="short\n")
    assert result.exit_code == 1
    assert "at least 10 characters" in result.output


def test_counts_and_methods_are_in_words(app: Flask, logged_in: FlaskClient) -> None:
    """ "1 answers" and "95.0% wilson interval" were what a newcomer read."""
    submit_client_randomized(app, dict.fromkeys(KEYS, "y"))
    page = logged_in.get(f"/research/surveys/{SLUG}?method=wilson").get_data(as_text=True)
    assert "<strong>1 response.</strong>" in page and "1 responses" not in page
    assert "Estimated prevalence (95% Wilson score interval)" in page
    assert "from 3 randomized questions" in page
    exact = logged_in.get(f"/research/surveys/{SLUG}").get_data(as_text=True)
    assert "Estimated prevalence (95% Clopper–Pearson exact interval)" in exact
    assert re.search(r"wilson|clopper-pearson|two_coin", re.sub(r'"[^"]*"', "", exact)) is None
    submit_client_randomized(app, dict.fromkeys(KEYS, "n"))
    again = logged_in.get(f"/research/surveys/{SLUG}").get_data(as_text=True)
    assert "<strong>2 responses.</strong>" in again


def test_numbers_follow_the_page_language(answered: Flask, logged_in: FlaskClient) -> None:
    from babel.numbers import format_percent

    for language in ("en", "ko", "zh"):
        page = logged_in.get(f"/research/surveys/{SLUG}?lang={language}").get_data(as_text=True)
        assert format_percent(0.7, "#,##0.0%", locale=language) in page
        assert f"lang={language}" in page  # links and the plot keep the language


@pytest.mark.parametrize("width", ["wide", "narrow"])
def test_the_plot_labels_are_question_texts_in_legible_text(
    answered: Flask, logged_in: FlaskClient, width: str
) -> None:
    """SVG text (not outlines, so any script shows), the whole question wrapped over
    lines, never a key; the font large enough at the narrowest width it is shown at."""
    from survey_app.web.research.plots import (
        FONT_POINTS,
        LEGIBLE_PX,
        PLOT_WIDTHS,
        SHOWN_AT_LEAST_PX,
    )

    svg = logged_in.get(f"/research/surveys/{SLUG}/plot.svg?width={width}").get_data(as_text=True)
    lines = [line.strip() for line in re.findall(r"<text[^>]*>([^<]*)</text>", svg)]
    text = " ".join(lines)
    survey = get_survey(backends.connect(answered.config["DATABASE"]), SLUG)
    assert survey is not None
    for question in survey.questions:
        assert question.text in text, question.text
        assert question.key not in lines
    natural_px = PLOT_WIDTHS[width] * 96
    sizes = {float(size) for size in re.findall(r"font-size: ([\d.]+)px", svg)}
    assert sizes == {FONT_POINTS}
    assert FONT_POINTS * 96 / 72 * SHOWN_AT_LEAST_PX[width] / natural_px >= LEGIBLE_PX
    assert "Estimated prevalence, with 95% confidence intervals" in text
    assert logged_in.get(f"/research/surveys/{SLUG}/plot.svg?width=huge").status_code == 400
