"""Every researcher page in Chromium, in English, Korean and Chinese: axe-core finds no
WCAG 2.1 A/AA violation, nothing scrolls sideways on a 320 px phone or at 200% zoom, and
the plots' text stays legible where they are shown. Then the study controls are used as a
researcher would: open, close, share and invite from the browser, without JavaScript.

Pages: login (and a failed login), the survey list, the dashboards of a yes/no survey and
of the mixed survey (examples/mixed-survey.yaml) with responses, the study controls with
an error, every confirmation page, the invitation links page, logout and a 404.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.support.browser import LiveServer, axe_violations, sideways_overflow
from tests.support.examples import EXAMPLE
from tests.support.paths import ROOT

USERNAME = "hopper"
PASSWORD = "a fourth horse battery"
VIEWER = "lovelace"
YES_NO = "access-campus"
MIXED = "access-mixed"
STAFF = "access-staff"
LANGUAGES = ("en", "ko", "zh")
DESKTOP = {"width": 1280, "height": 900}
PHONE = {"width": 320, "height": 640}
ZOOMED = {"width": 640, "height": 450}  # a 1280 × 900 window at 200% zoom
STAFF_SURVEY = f"""\
slug: {STAFF}
title: Staff pulse, a survey by invitation with a rather long title to wrap on phones
access: invitation
questions:
  - key: burnout
    text: Have you felt burnt out this month?
"""


def import_owned(server: LiveServer, text: str, name: str, *args: str) -> str:
    path = server.workdir / f"{name}.yaml"
    path.write_text(text, encoding="utf-8")
    return server.cli("import-survey", "--owner", USERNAME, *args, str(path)).strip()


def post_reports(
    new_context: Callable[..., Any], server: LiveServer, path: str, reports: list[dict[str, str]]
) -> None:
    """Respondents, each in a browser context of their own (its cookies), sending reports
    the way the page's script does (already randomized), through the form's hidden fields:
    the form is fetched, not rendered (these respondents only make data for the pages)."""
    for report in reports:
        context = new_context()
        form = context.request.get(server.url(path)).text()
        fields = dict(re.findall(r'<input type="hidden" name="([\w-]+)" value="([^"]*)">', form))
        slug = path.split("?")[0]
        answered = context.request.post(
            server.url(slug), form={**fields, **report, "randomized": "client"}
        )
        assert answered.status == 200, answered.text()[:500]
        context.close()


@pytest.fixture(scope="module")
def surveys(live_server: LiveServer, browser: Any) -> Iterator[None]:
    """hopper owns a yes/no survey and the mixed one, both answered, and a draft survey
    by invitation; lovelace is another researcher."""
    live_server.cli("create-researcher", USERNAME, "--password-stdin", stdin=PASSWORD + "\n")
    live_server.cli("create-researcher", VIEWER, "--password-stdin", stdin=PASSWORD + "\n")
    yes_no = EXAMPLE.read_text(encoding="utf-8").replace(
        "slug: campus-health\n", f"slug: {YES_NO}\n"
    )
    assert import_owned(live_server, yes_no, YES_NO) == YES_NO
    mixed = (ROOT / "examples" / "mixed-survey.yaml").read_text(encoding="utf-8")
    assert (
        import_owned(live_server, mixed.replace("slug: student-life\n", f"slug: {MIXED}\n"), MIXED)
        == MIXED
    )
    assert import_owned(live_server, STAFF_SURVEY, STAFF, "--draft") == STAFF
    contexts: list[Any] = []

    def new_context() -> Any:
        context = browser.new_context()
        contexts.append(context)
        return context

    post_reports(
        new_context,
        live_server,
        f"/s/{YES_NO}",
        [{"cheated": "y", "drugs": "n", "skipped_meals": "y" if i % 2 else "n"} for i in range(6)],
    )
    post_reports(
        new_context,
        live_server,
        f"/s/{MIXED}?agree=yes",
        [
            {
                "year": str(i % 4),
                "cheated": "y" if i < 3 else "n",
                "skipped_meals": "n",
                "substance": str(i % 5),
                "drinks": "1" if i < 4 else "0",
                "stress": "y",
            }
            for i in range(6)
        ],
    )
    yield None


def logged_in_page(
    new_context: Callable[..., Any], server: LiveServer, username: str = USERNAME
) -> Any:
    page = new_context().new_page()
    page.goto(server.url("/login"))
    page.fill("#username", username)
    page.fill("#password", PASSWORD)
    with page.expect_navigation():
        page.click("button[type=submit]")
    assert page.url.endswith("/research/"), page.url
    return page


def problems_here(page: Any, name: str, problems: dict[tuple[str, int], Any]) -> None:
    """axe on a desktop and a phone; sideways scrolling on a phone and at 200% zoom."""
    for viewport in (DESKTOP, PHONE, ZOOMED):
        page.set_viewport_size(viewport)
        violations = axe_violations(page) if viewport is not ZOOMED else []
        overflow = sideways_overflow(page)
        squeezed = narrowest_caption(page) < viewport["width"] / 2
        if violations or overflow or squeezed:
            problems[name, viewport["width"]] = (violations, overflow, squeezed)
    page.set_viewport_size(DESKTOP)


def narrowest_caption(page: Any) -> float:
    """The width of the narrowest table caption, in CSS pixels (a caption squeezed into a
    column a few characters wide cannot be read); infinite when there is none."""
    widths = page.eval_on_selector_all(
        "caption", "els => els.map((e) => e.getBoundingClientRect().width)"
    )
    return min(widths, default=float("inf"))


def press(page: Any, name: str) -> None:
    with page.expect_navigation():
        page.get_by_role("button", name=name).click()


@pytest.mark.parametrize("language", LANGUAGES)
def test_every_researcher_page_passes_axe_and_fits_a_phone(
    live_server: LiveServer, surveys: None, new_context: Callable[..., Any], language: str
) -> None:
    problems: dict[tuple[str, int], Any] = {}
    lang = f"?lang={language}"

    anonymous = new_context().new_page()
    anonymous.goto(live_server.url(f"/login{lang}"))
    problems_here(anonymous, "login", problems)
    anonymous.fill("#username", USERNAME)
    anonymous.fill("#password", "not the password")
    with anonymous.expect_navigation():
        anonymous.click("button[type=submit]")
    expect(anonymous.locator(".errors")).to_be_visible()
    problems_here(anonymous, "failed login", problems)

    page = logged_in_page(new_context, live_server)
    study = f"/research/surveys/{STAFF}"
    for name, path in {
        "survey list": "/research/",
        "yes/no dashboard": f"/research/surveys/{YES_NO}",
        "mixed dashboard": f"/research/surveys/{MIXED}",
        "study controls": f"{study}/study",
        "open study's address": f"/research/surveys/{YES_NO}/study",
        "open?": f"{study}/open",
        "close?": f"/research/surveys/{YES_NO}/close",
        "invite?": f"{study}/invite?count=3&lang={language}",
        "groups": f"/research/surveys/{MIXED}/groups?question=cheated&by=year&lang={language}",
        "regression (too few)": (
            f"/research/surveys/{MIXED}/regression?outcome=cheated&covariates=year&lang={language}"
        ),
        "publish": f"/research/surveys/{YES_NO}/publish",
        "publish?": (
            f"/research/surveys/{YES_NO}/publish/release?figure=exact-estimates&lang={language}"
        ),
        "404": "/research/surveys/no-such-survey",
        "logout": "/logout",
    }.items():
        response = page.goto(live_server.url(path if "?" in path else path + lang))
        assert response is not None
        expected = {"404": 404, "regression (too few)": 400}.get(name, 200)
        assert response.status == expected, name
        shown_lang = page.evaluate("document.documentElement.lang")
        assert shown_lang in {"en", language, "zh-Hans"}, (name, page.content()[:300])
        problems_here(page, name, problems)

    # Sharing asks by POST (its answer says whether a username exists): from the form.
    for name, username, expected in [("share?", VIEWER, 200), ("share error", "nobody", 400)]:
        page.goto(live_server.url(f"{study}/study{lang}"))
        page.fill("#username", username)
        with page.expect_navigation() as shared:
            page.locator("form[action*='/share'] button").click()
        assert shared.value.status == expected, name
        problems_here(page, name, problems)

    page.goto(live_server.url(f"{study}/invite?count=3&lang={language}"))
    press(page, page.locator("form[method=post] button").inner_text())
    expect(page.locator("textarea#links")).to_be_visible()
    problems_here(page, "links", problems)

    page.goto(
        live_server.url(
            f"/research/surveys/{YES_NO}/publish/release?figure=exact-estimates&lang={language}"
        )
    )
    press(page, page.locator("form[method=post] button").inner_text())
    public = new_context().new_page()
    assert public.goto(live_server.url(f"/results/{YES_NO}{lang}")).status == 200  # type: ignore[union-attr]
    problems_here(public, "public results", problems)
    assert not problems, problems


@pytest.mark.parametrize(("viewport", "plot_width"), [(PHONE, "narrow"), (ZOOMED, "wide")])
def test_the_plots_fit_and_their_text_is_legible(
    live_server: LiveServer,
    surveys: None,
    new_context: Callable[..., Any],
    viewport: dict[str, int],
    plot_width: str,
) -> None:
    """Each plot is drawn at a size whose 12 pt text shows at ≥ 12 CSS px once scaled to
    the screen, and carries the questions' text, not their keys."""
    page = logged_in_page(new_context, live_server)
    page.set_viewport_size(viewport)
    for slug in (YES_NO, MIXED):
        page.goto(live_server.url(f"/research/surveys/{slug}"))
        images = page.locator("figure.plot img")
        assert images.count() >= 1
        for i in range(images.count()):
            image = images.nth(i)
            image.scroll_into_view_if_needed()
            page.wait_for_function(
                "img => img.complete && img.naturalWidth > 0", arg=image.element_handle()
            )
            source, shown, natural = image.evaluate(
                "img => [img.currentSrc, img.getBoundingClientRect().width, img.naturalWidth]"
            )
            assert f"width={plot_width}" in source or (
                plot_width == "wide" and "width=" not in source
            )
            svg = page.request.get(source).text()
            sizes = {float(size) for size in re.findall(r"font-size: ([\d.]+)px", svg)}
            view_width = float(re.search(r'viewBox="0 0 ([\d.]+) ', svg).group(1))  # type: ignore[union-attr]
            smallest_px = min(sizes) * shown / view_width
            assert smallest_px >= 12, (slug, source, smallest_px)
            assert shown <= viewport["width"]
            texts = " ".join(re.findall(r"<text[^>]*>([^<]*)</text>", svg))
            assert any(label in texts for label in ("Have you", "None of these", "4+")), texts


def test_the_owner_runs_the_study_from_the_browser(
    live_server: LiveServer, surveys: None, new_context: Callable[..., Any]
) -> None:
    """Open the draft, share it, make links, close it, without JavaScript; the viewer then
    sees the results but is refused the controls; the links work."""
    owner = logged_in_page(new_context, live_server)
    owner.context.set_extra_http_headers({})
    row = owner.locator(f"tr[data-slug={STAFF}]")
    expect(row).to_contain_text("draft")
    with owner.expect_navigation():
        row.get_by_role("link", name=re.compile("Run this study")).click()

    with owner.expect_navigation():
        owner.get_by_role("link", name="Open the survey…").click()
    press(owner, "Yes, open the survey")
    expect(owner.locator(".messages")).to_contain_text("The survey is open")

    owner.get_by_label("Username of the researcher").fill(VIEWER)
    press(owner, "Share…")
    expect(owner.locator("h1")).to_contain_text(f"with {VIEWER}?")
    press(owner, "Yes, share the results")
    expect(owner.locator("ul.viewers")).to_contain_text(VIEWER)

    owner.get_by_label("How many links").fill("2")
    press(owner, "Create links…")
    press(owner, "Yes, create the links")
    links = owner.locator("textarea#links").input_value().splitlines()
    assert len(links) == 2 and all(f"/s/{STAFF}?invitation=" in link for link in links)

    respondent = new_context().new_page()
    path = links[0][links[0].index("/s/") :]
    assert respondent.goto(live_server.url(path)).status == 200  # type: ignore[union-attr]

    viewer = logged_in_page(new_context, live_server, VIEWER)
    assert viewer.goto(live_server.url(f"/research/surveys/{STAFF}")).status == 200  # type: ignore[union-attr]
    expect(viewer.get_by_role("link", name=re.compile("Run this study"))).to_have_count(0)
    refused = viewer.goto(live_server.url(f"/research/surveys/{STAFF}/close"))
    assert refused is not None and refused.status == 403

    owner.goto(live_server.url(f"/research/surveys/{STAFF}/study"))
    with owner.expect_navigation():
        owner.get_by_role("link", name="Close the survey…").click()
    press(owner, "Yes, close the survey")
    expect(owner.locator("#status")).to_contain_text("closed")
    closed = respondent.goto(live_server.url(links[1][links[1].index("/s/") :]))
    assert closed is not None and closed.status != 200


def test_the_copy_button_puts_the_survey_address_on_the_clipboard(
    live_server: LiveServer, surveys: None, new_context: Callable[..., Any]
) -> None:
    page = logged_in_page(new_context, live_server)
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    page.goto(live_server.url(f"/research/surveys/{YES_NO}/study"))
    address = live_server.url(f"/s/{YES_NO}")
    expect(page.locator(".survey-address a.address")).to_have_text(address)
    page.get_by_role("button", name="Copy the address").click()
    expect(page.locator(".copied-status")).to_have_text("Copied")
    assert page.evaluate("navigator.clipboard.readText()") == address
