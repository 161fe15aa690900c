"""The browser tests' plain helpers: the live server's handle, what a page did, coins
stubbed in the page, answering and submitting forms, and the accessibility checks.

The fixtures that start gunicorn and Chromium are in tests/browser/conftest.py.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl

from survey_app.storage.backends import is_postgresql

SECRET_KEY = "browser-tests-fixed-secret-key"


#: The width (and a height) every layout check starts from.
DESKTOP = {"width": 1280, "height": 900}


@dataclass(frozen=True)
class LiveServer:
    base_url: str
    database: str  # the server's DATABASE setting: a SQLite file or a PostgreSQL address
    workdir: Path
    env: dict[str, str] = field(repr=False, compare=False)

    def url(self, path: str) -> str:
        return self.base_url + path

    @property
    def db_path(self) -> Path:
        """The SQLite file, for the tests that run on SQLite alone and read its files."""
        assert not is_postgresql(self.database), "a PostgreSQL server has no database file"
        return Path(self.database)

    def import_survey(self, definition: str, *options: str) -> str:
        """Import the survey file text ``definition`` with ``survey-app import-survey``
        (``options`` such as ``--owner NAME`` first); its slug."""
        path = self.workdir / f"survey-{abs(hash(definition))}.yaml"
        path.write_text(definition, encoding="utf-8")
        return self.cli("import-survey", *options, str(path)).strip()

    def cli(self, *args: str, stdin: str | None = None, **extra_env: str) -> str:
        """Run ``survey-app ARGS`` against this server's database; its standard output.

        The console script's own click group, which builds the app from the ``SURVEY_APP_*``
        variables exactly as ``survey-app`` does, invoked in this process with those
        variables (and ``extra_env``) set for the call only.
        """
        from click.testing import CliRunner

        from survey_app.cli.commands import main

        env = {
            name: value
            for name, value in {**self.env, **extra_env}.items()
            if name.startswith("SURVEY_APP_")
        }
        result = CliRunner().invoke(main, list(args), input=stdin, env=env)
        assert result.exit_code == 0, (
            f"survey-app {' '.join(args)} exited with {result.exit_code}:\n{result.output}"
        ) + (f"\n{result.exception!r}" if result.exception else "")
        return result.stdout


@dataclass
class PageLog:
    """What a page did: console messages, uncaught errors and every request it made."""

    console: list[tuple[str, str, str]] = field(default_factory=list)  # type, text, source
    page_errors: list[str] = field(default_factory=list)
    requests: list[tuple[str, str, str]] = field(default_factory=list)  # method, url, body

    @property
    def console_errors(self) -> list[str]:
        return [text for kind, text, _source in self.console if kind == "error"]

    def posts(self) -> list[tuple[str, str]]:
        return [(url, body) for method, url, body in self.requests if method == "POST"]


def watch(page: Any) -> PageLog:
    """Record a page's console, errors and requests from now on."""
    log = PageLog()
    page.on(
        "console",
        lambda message: log.console.append(
            (message.type, message.text, message.location.get("url", ""))
        ),
    )
    page.on("pageerror", lambda error: log.page_errors.append(str(error)))
    page.on(
        "request",
        lambda request: log.requests.append((request.method, request.url, request.post_data or "")),
    )
    return log


def coin_stub(*sequence: int) -> str:
    """Script that makes ``crypto.getRandomValues`` fill arrays from ``sequence`` in turn.

    coins.js flips a coin of probability a/b as "a random integer below b is below a",
    drawing just enough bits; a fair coin (1/2) takes the low bit of one byte and comes up
    true on 0. So with fair coins 0x00 is "keep the truth" for the first coin and "yes"
    for the second; 0x01 is "randomize" for the first and "no" for the second. Calls are
    counted in the tab's sessionStorage, which outlives the navigation, so a test can tell
    the stub was used.
    """
    return f"""
    (() => {{
      const sequence = {json.dumps(list(sequence))};
      let next = 0;
      Crypto.prototype.getRandomValues = function (array) {{
        const calls = Number(sessionStorage.getItem("coinCalls") || 0);
        sessionStorage.setItem("coinCalls", String(calls + 1));
        for (let i = 0; i < array.length; i++) {{
          array[i] = sequence[next % sequence.length];
          next += 1;
        }}
        return array;
      }};
    }})();
    """


# Yes/no on the wire: one character each, so a POST's size shows no answer.
WIRE = {"yes": "y", "no": "n"}
WORDS = {wire: word for word, wire in WIRE.items()}


def answer(page: Any, answers: dict[str, str]) -> None:
    """Check each answer's radio button: "yes"/"no" in words, options by their value."""
    for key, value in answers.items():
        page.check(f'input[name="{key}"][value="{WIRE.get(value, value)}"]')


def submit(page: Any) -> Any:
    """Press the form's button; the response of the POST the page then navigates with."""
    with page.expect_navigation() as navigation:
        page.click('button[type="submit"]')
    response = navigation.value
    assert response.request.method == "POST"
    return response


def posted_fields(body: str) -> dict[str, str]:
    """A form body as a dict, refusing repeated names (the server refuses them too)."""
    pairs = parse_qsl(body, keep_blank_values=True, strict_parsing=True)
    names = [name for name, _ in pairs]
    assert len(names) == len(set(names)), f"repeated field names in {names}"
    return dict(pairs)


def one_post(log: PageLog) -> tuple[str, dict[str, str]]:
    posts = log.posts()
    assert len(posts) == 1, f"expected exactly one POST, the page sent {len(posts)}"
    url, body = posts[0]
    return url, posted_fields(body)


def shown_answers(page: Any) -> dict[str, str]:
    """The thank-you page's table of what was stored, by question key: folded away until
    the respondent asks for it."""
    from playwright.sync_api import expect

    expect(page.locator("h1")).to_have_text("Thank you")
    stored = page.locator("details.stored")
    expect(stored).not_to_have_attribute("open", "")  # not on screen until asked for
    expect(page.locator("table.stored")).to_be_hidden()
    stored.locator("summary").click()
    cells = page.locator("table.stored td[data-key]")
    return {
        cells.nth(i).get_attribute("data-key"): cells.nth(i).inner_text().strip()
        for i in range(cells.count())
    }


WCAG_21_AA = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]
#: Only the violations are gathered: the passes' nodes, which axe would otherwise serialize
#: for every rule, tripled the time of each run without being read.
AXE_OPTIONS = {"runOnly": {"type": "tag", "values": WCAG_21_AA}, "resultTypes": ["violations"]}
# Each violated rule's id and the nodes it names, as the page sends them back.
AXE_RUN = """options => axe.run(document, options).then((results) =>
  results.violations.map((rule) => [rule.id, rule.nodes.map((node) => node.target)]))"""


def axe_violations(page: Any) -> list[str]:
    """axe-core's WCAG 2.1 A/AA violations on the page as it is now, one line each.

    axe-core (axe-playwright-python's copy) is injected once per document: a page checked
    again at another width keeps it, a page navigated to gets it anew.
    """
    from axe_playwright_python.base import AXE_SCRIPT

    if not page.evaluate("() => typeof window.axe === 'object'"):
        page.evaluate(AXE_SCRIPT)
    return [f"{rule}: {targets}" for rule, targets in page.evaluate(AXE_RUN, AXE_OPTIONS)]


def layout_problems(page: Any, phone: dict[str, int]) -> list[object]:
    """axe's violations at a desktop's width and at ``phone``'s, and any sideways
    scrolling at either; the page is left at the desktop's width."""
    found: list[object] = []
    for viewport in (DESKTOP, phone):
        page.set_viewport_size(viewport)
        found += axe_violations(page)
        if sideways_overflow(page):
            found.append(("scrolls sideways", viewport["width"]))
    page.set_viewport_size(DESKTOP)
    return found


def sideways_overflow(page: Any) -> int:
    """How far the page is wider than the screen, in CSS pixels (0: no sideways scrolling)."""
    return int(
        page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
    )
