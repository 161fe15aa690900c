"""A researcher's first visit, in real Chromium against the real server.

The newcomer's path from the README: an operator creates the account with
``survey-app create-researcher``, respondents answer, the researcher logs in, finds the
survey, reads estimates with intervals and the plot, asks for 99% intervals, downloads
both CSVs and logs out. Everything under /research/ needs the login, and an anonymous
visitor sent to the login page comes back where they were going.

Responses are posted over plain HTTP as already-randomized answers (``randomized=client``,
as the browser's script sends them), so the stored counts, and with them every number
on the dashboard, are known in advance.
"""

from __future__ import annotations

import csv
import io
import re
import urllib.request
from dataclasses import dataclass
from html.parser import HTMLParser
from http.cookiejar import CookieJar
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest
from playwright.sync_api import expect

from tests.support.browser import LiveServer, PageLog, watch
from tests.support.examples import EXAMPLE, KEYS

USERNAME = "ada"
PASSWORD = "correct horse battery"
RESULTS_SLUG = "campus-health-autumn"
RESULTS_TITLE = "Campus health survey, autumn term"
RESPONSES = 40
# Reported (already randomized) "yes" counts: with fair coins the estimate is
# 2 × rate − ½, so 80%, 5% and 45%; the 5% one's interval reaches below 0 and is clipped.
REPORTED_YES = {"cheated": 26, "drugs": 11, "skipped_meals": 19}
AGGREGATE_HEADER = (
    "survey,question,category,question_text,mechanism,epsilon,n,reported,reported_rate,"
    "estimate,std_error,ci_low,ci_high,confidence,simultaneous_low,simultaneous_high,"
    "display_estimate,parameters"
)
RESPONSES_HEADER = "survey,answered_on,design," + ",".join(KEYS)


class _HiddenInputs(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.fields: dict[str, str] = {}

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        if tag == "input" and values.get("type") == "hidden" and values.get("name"):
            self.fields[str(values["name"])] = values.get("value") or ""


def post_randomized_answers(server: LiveServer, slug: str, reported: dict[str, str]) -> None:
    """One respondent with a cookie jar of their own: the form, then the POST the
    browser's script would send."""
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(CookieJar()))
    with opener.open(server.url(f"/s/{slug}"), timeout=10) as response:
        parser = _HiddenInputs()
        parser.feed(response.read().decode())
    assert {"csrf_token", "submission_id"} <= set(parser.fields)
    body = urlencode({**parser.fields, **reported, "randomized": "client"}).encode()
    with opener.open(server.url(f"/s/{slug}"), data=body, timeout=10) as response:
        assert response.status == 200


@pytest.fixture(scope="module")
def results_survey(live_server: LiveServer) -> str:
    """A survey owned by a researcher made with the CLI, with RESPONSES known answers."""
    out = live_server.cli("create-researcher", USERNAME, "--password-stdin", stdin=PASSWORD + "\n")
    assert USERNAME in out
    definition = EXAMPLE.read_text(encoding="utf-8")
    for old, new in [
        ("slug: campus-health\n", f"slug: {RESULTS_SLUG}\n"),
        ("title: Campus health survey\n", f"title: {RESULTS_TITLE}\n"),
    ]:
        assert old in definition
        definition = definition.replace(old, new)
    path = live_server.workdir / f"{RESULTS_SLUG}.yaml"
    path.write_text(definition, encoding="utf-8")
    slug = live_server.cli("import-survey", "--owner", USERNAME, str(path)).strip()
    assert slug == RESULTS_SLUG

    for reported in respondents():
        post_randomized_answers(live_server, slug, reported)
    return slug


def respondents() -> list[dict[str, str]]:
    """RESPONSES answer sets with exactly REPORTED_YES "yes" per question, mixed so that
    the questions do not all say yes to the same people (3, 7, 11 are prime to 40)."""
    answers = [
        {
            key: "y" if (i * step) % RESPONSES < REPORTED_YES[key] else "n"  # on the wire
            for key, step in zip(KEYS, (3, 7, 11), strict=True)
        }
        for i in range(RESPONSES)
    ]
    for key, yes in REPORTED_YES.items():
        assert sum(a[key] == "y" for a in answers) == yes
    return answers


@dataclass(frozen=True)
class ShownEstimate:
    n: int
    reported: str
    estimate: str
    low: float  # percent, as shown
    high: float

    @property
    def width(self) -> float:
        return self.high - self.low


def percent(text: str) -> float:
    assert text.endswith("%"), text
    return float(text.removesuffix("%"))


def shown_estimates(page: Any) -> dict[str, ShownEstimate]:
    """The dashboard's yes/no questions, each in its section, by question key."""
    sections = page.locator("section.question.yes-no")
    result = {}
    for i in range(sections.count()):
        section = sections.nth(i)
        key = section.locator("h2").get_attribute("id").removeprefix("q-")
        n = re.search(r"n = ([\d,]+)", section.locator("p.note").first.inner_text())
        assert n, key
        reported, estimate, interval, _std_error = (
            cell.inner_text().strip()
            for cell in section.locator("table.estimates tbody tr td").all()
        )
        low, high = (part.strip() for part in interval.split("–"))
        result[key] = ShownEstimate(
            n=int(n.group(1).replace(",", "")),
            reported=reported,
            estimate=estimate.splitlines()[0].strip(),
            low=percent(low),
            high=percent(high),
        )
    return result


def expected_estimate(key: str) -> float:
    return min(1.0, max(0.0, 2 * REPORTED_YES[key] / RESPONSES - 0.5))


def plot_width(page: Any) -> int:
    """The plot's natural width once the browser is done with it: 0 for a broken image."""
    image = page.locator("figure.plot img")
    page.wait_for_function("img => img.complete", arg=image.element_handle())
    return int(image.evaluate("img => img.naturalWidth"))


def log_in(page: Any) -> Any:
    """Fill in and send the login form on the current page; the response it leads to."""
    expect(page.locator("h1")).to_have_text("Researcher login")
    page.get_by_label("Username").fill(USERNAME)
    page.get_by_label("Password").fill(PASSWORD)
    with page.expect_navigation() as navigation:
        page.get_by_role("button", name="Log in").click()
    return navigation.value


def download(page: Any, link_name: str) -> tuple[str, list[list[str]]]:
    """Click a download link; the file's suggested name and its CSV rows."""
    with page.expect_download() as info:
        page.get_by_role("link", name=link_name, exact=True).click()
    downloaded = info.value
    assert downloaded.failure() is None
    text = Path(downloaded.path()).read_text(encoding="utf-8")
    return downloaded.suggested_filename, list(csv.reader(io.StringIO(text)))


def assert_quiet(log: PageLog) -> None:
    assert log.console_errors == [], log.console_errors
    assert log.page_errors == [], log.page_errors


def test_a_newcomer_logs_in_reads_the_dashboard_downloads_and_logs_out(
    page: Any, live_server: LiveServer, results_survey: str
) -> None:
    log = watch(page)
    dashboard_path = f"/research/surveys/{results_survey}"

    response = page.goto(live_server.url("/login"))
    assert response is not None and response.status == 200
    landed = log_in(page)
    assert landed.status == 200
    assert urlsplit(page.url).path == "/research/"
    expect(page.locator("h1")).to_have_text("Surveys")

    with page.expect_response(lambda r: urlsplit(r.url).path.endswith("/plot.svg")) as plot:
        page.get_by_role("link", name=RESULTS_TITLE, exact=True).click()
    page.wait_for_load_state()
    assert urlsplit(page.url).path == dashboard_path
    expect(page.locator("h1")).to_have_text(RESULTS_TITLE)
    expect(page.locator("main")).to_contain_text(f"{RESPONSES} responses")
    assert plot.value.status == 200
    assert plot.value.headers["content-type"].startswith("image/svg+xml")
    assert plot_width(page) > 0, "the plot did not load (broken image)"

    at_95 = shown_estimates(page)
    assert set(at_95) == set(KEYS)
    for key, shown in at_95.items():
        assert shown.n == RESPONSES
        assert shown.reported == f"{100 * REPORTED_YES[key] / RESPONSES:.1f}%"
        assert shown.estimate == f"{100 * expected_estimate(key):.1f}%"
        assert 0 <= shown.low < percent(shown.estimate) < shown.high <= 100, (key, shown)
    expect(page.locator("table.estimates caption").first).to_contain_text("95% Clopper–Pearson")

    page.get_by_label("Confidence").select_option(label="99%")
    with page.expect_navigation():
        page.get_by_role("button", name="Update").click()
    assert parse_qs(urlsplit(page.url).query)["confidence"] == ["0.99"]
    expect(page.locator("table.estimates caption").first).to_contain_text("99% Clopper–Pearson")
    assert "confidence=0.99" in str(page.locator("figure.plot img").get_attribute("src"))
    assert plot_width(page) > 0, "the 99% plot did not load (broken image)"
    at_99 = shown_estimates(page)
    for key in KEYS:
        assert at_99[key].estimate == at_95[key].estimate
        assert at_99[key].low <= at_95[key].low and at_99[key].high >= at_95[key].high, key
        assert at_99[key].width > at_95[key].width, (key, at_95[key], at_99[key])

    # The aggregate CSV, at the confidence the dashboard now shows.
    name, rows = download(page, "Aggregate CSV")
    assert name == f"{results_survey}.csv"
    assert ",".join(rows[0]) == AGGREGATE_HEADER
    assert len(rows) == 1 + len(KEYS)
    records = [dict(zip(rows[0], row, strict=True)) for row in rows[1:]]
    by_key = {record["question"]: record for record in records}
    assert set(by_key) == set(KEYS)
    for key, row in by_key.items():
        assert row["survey"] == results_survey
        assert int(row["n"]) == RESPONSES
        assert int(row["reported"]) == REPORTED_YES[key]
        assert row["confidence"] == "0.99"
        assert float(row["estimate"]) == pytest.approx(expected_estimate(key), abs=1e-6)
        # The table shows the same interval, rounded to 0.1 points.
        assert abs(100 * float(row["ci_low"]) - at_99[key].low) <= 0.05 + 1e-9, key
        assert abs(100 * float(row["ci_high"]) - at_99[key].high) <= 0.05 + 1e-9, key

    # The randomized per-response CSV: one row a response, 1/0 per question.
    name, rows = download(page, "Randomized responses CSV")
    assert name == f"{results_survey}-responses.csv"
    assert ",".join(rows[0]) == RESPONSES_HEADER
    assert len(rows) == 1 + RESPONSES
    for j, key in enumerate(KEYS, start=len(rows[0]) - len(KEYS)):
        assert {row[j] for row in rows[1:]} <= {"0", "1"}
        assert sum(int(row[j]) for row in rows[1:]) == REPORTED_YES[key], key
    assert {row[0] for row in rows[1:]} == {results_survey}

    assert_quiet(log)

    # Log out: the nav link asks, the button does it.
    page.get_by_role("link", name="Log out").click()
    expect(page.locator("h1")).to_have_text("Log out")
    with page.expect_navigation():
        page.get_by_role("button", name="Log out now").click()
    assert urlsplit(page.url).path == "/login"

    for path in ("/research/", dashboard_path):
        response = page.goto(live_server.url(path))
        assert response is not None and response.status == 200
        assert response.request.redirected_from is not None, f"{path} was not redirected"
        assert urlsplit(page.url).path == "/login", f"{path} ended at {page.url}"
        assert parse_qs(urlsplit(page.url).query)["next"] == [path]
        expect(page.locator("h1")).to_have_text("Researcher login")


def test_an_anonymous_visitor_is_sent_to_log_in_and_comes_back(
    page: Any, live_server: LiveServer, results_survey: str
) -> None:
    wanted = f"/research/surveys/{results_survey}?confidence=0.9"
    response = page.goto(live_server.url(wanted))
    assert response is not None and response.request.redirected_from is not None
    assert urlsplit(page.url).path == "/login"
    assert parse_qs(urlsplit(page.url).query)["next"] == [wanted]

    log_in(page)
    parts = urlsplit(page.url)
    assert f"{parts.path}?{parts.query}" == wanted
    expect(page.locator("h1")).to_have_text(RESULTS_TITLE)
    expect(page.locator("table.estimates caption").first).to_contain_text("90% Clopper–Pearson")


def test_dashboard_screenshot_for_the_readme(
    page: Any, live_server: LiveServer, results_survey: str, screenshots: Path
) -> None:
    page.goto(live_server.url(f"/research/surveys/{results_survey}"))
    log_in(page)
    expect(page.locator("h1")).to_have_text(RESULTS_TITLE)
    assert plot_width(page) > 0
    page.screenshot(path=str(screenshots / "dashboard.png"), full_page=True)
    assert (screenshots / "dashboard.png").stat().st_size > 10_000
