"""Page weight of a long survey in sections: the JavaScript page and each no-JS section page.

The survey (``sixty_questions``) is ``page_weight.TEN_QUESTIONS`` six times, one section
each (keys suffixed ``_1`` … ``_6``), so every question type and mechanism is in every
section: a plain rating scale (reversed for half the respondents) and a plain number (the
covariates), yes/no, tick all that apply and GRR, OUE and subset-selection choices (their
options in random order, "None of these" fixed), discrete-Laplace, Duchi and piecewise
numbers; the debt question of each section is shown only if a plain answer of section 1
allows it (``show_if``), and the questions of each section come in random order. 60
questions, with a consent step.

Weighed in English, Korean and Chinese with ``page_weight.weigh_page`` (HTML + every asset the
page references, as served and gzip-compressed; Flask test client):

(a) the JavaScript page, one document that ends up holding all six sections: the first
    section's page (``GET /s/<slug>``) with its scripts, and the other five sections that
    ``sections.js`` fetches from its ``data-sections`` address; its total, and the total / 6
    "per section";
(b) each section's page as a respondent without JavaScript gets it: section 1 is the
    same first page without its scripts (a browser without JavaScript fetches none),
    section k the reply to the (k-1)th Next POST: one section and the signed carried
    reports, no script.

The budget is 30 KiB per section. ``next_form`` (the fields a browser without JavaScript
sends from a page) is shared with ``section_round_trip.py``.

    .venv/bin/python benchmarks/section_weight.py
"""

from __future__ import annotations

import argparse
import copy
import datetime
import gzip
import html
import json
import re
import sys
from collections.abc import Sequence
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make ``benchmarks`` and ``survey_app`` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.page_weight import (  # noqa: E402
    BUDGET_BYTES,
    HERE,
    TEN_QUESTIONS,
    throwaway_app,
    weigh_page,
)
from survey_app.domain.definitions import parse_definition  # noqa: E402
from survey_app.domain.languages import LANGUAGES  # noqa: E402
from survey_app.storage.surveys import store_survey  # noqa: E402
from survey_app.web.database_session import get_db  # noqa: E402

SECTIONS = 6
#: Where the questions of ``TEN_QUESTIONS`` get their display mechanisms in every section.
OPTION_ORDERS: dict[str, dict[str, Any]] = {
    "satisfied": {"option_order": "reverse"},
    "lacked": {"option_order": "random"},
    "housing": {"option_order": "random"},
    "substance": {"option_order": "random", "fixed_options": [1]},
    "income": {"option_order": "random"},
}


def _condition(section: int) -> dict[str, Any]:
    """Section k's debt question: shown by a plain number, or by a plain scale, of section 1."""
    if section % 2:
        return {"question": "age_1", "min": 18}
    return {"question": "satisfied_1", "is": [3, 4, 5]}


def sixty_questions() -> dict[str, Any]:
    """``TEN_QUESTIONS`` in six sections, with show_if and random orders (module docstring)."""
    ten: dict[str, Any] = copy.deepcopy(TEN_QUESTIONS)
    survey = {k: v for k, v in ten.items() if k != "questions"}
    sections = []
    for section in range(1, SECTIONS + 1):
        questions = []
        for question in copy.deepcopy(ten["questions"]):
            question.update(OPTION_ORDERS.get(question["key"], {}))
            if question["key"] == "debt":
                question["show_if"] = _condition(section)
            question["key"] = f"{question['key']}_{section}"
            questions.append(question)
        sections.append(
            {
                "title": f"Part {section} of the student life survey",
                "description": "Ten questions; sensitive answers are randomized.",
                "questions": questions,
            }
        )
    survey.update(
        slug="sixty-questions",
        title="Student life and money (sixty questions in six sections)",
        question_order="random",
        sections=sections,
    )
    return survey


class _FormReader(HTMLParser):
    """The fields a browser without JavaScript sends from ``#survey-form``: hidden inputs,
    the first choice of each radio group and list, every field that is not disabled (a
    disabled input, or any inside a disabled fieldset, is not sent)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.action = ""
        self.fields: dict[str, str] = {}
        self._in_form = False
        self._fieldsets: list[bool] = []  # disabled, per open fieldset
        self._select: str | None = None
        self._option_text: bool = False

    def _sent(self, attrs: dict[str, str | None]) -> bool:
        return self._in_form and "disabled" not in attrs and not any(self._fieldsets)

    def handle_starttag(self, tag: str, attr_list: list[tuple[str, str | None]]) -> None:
        attrs = dict(attr_list)
        if tag == "form" and attrs.get("id") == "survey-form":
            self._in_form, self.action = True, attrs.get("action") or ""
        elif tag == "fieldset" and self._in_form:
            self._fieldsets.append("disabled" in attrs)
        elif tag == "input" and self._sent(attrs):
            name, kind = attrs.get("name") or "", attrs.get("type")
            if kind == "hidden" or (kind == "radio" and name not in self.fields):
                self.fields[name] = attrs.get("value") or ""
            elif kind == "text":  # a wide number typed at its fixed width: the lowest value
                self.fields[name] = "0" * int(attrs.get("maxlength") or 1)
        elif tag == "select" and self._sent(attrs):
            self._select = attrs.get("name")
        elif tag == "option" and self._select and self._select not in self.fields:
            if attrs.get("value") is None:
                self._option_text = True  # its value is its text
            elif attrs["value"]:
                self.fields[self._select] = attrs["value"] or ""

    def handle_data(self, data: str) -> None:
        if self._option_text and self._select:
            self.fields[self._select] = data.strip()
            self._option_text = False

    def handle_endtag(self, tag: str) -> None:
        if tag == "form":
            self._in_form = False
        elif tag == "fieldset" and self._fieldsets:
            self._fieldsets.pop()
        elif tag == "select":
            self._select = None


def next_form(html: str) -> tuple[str, dict[str, str]]:
    """The form's action and the fields Next (or Send) posts from this page without
    JavaScript: every shown question answered with its first option (or lowest value)."""
    reader = _FormReader()
    reader.feed(html)
    fields = dict(reader.fields)
    if "sections-carried" in fields:
        fields["sections-go"] = "next"
    return reader.action, fields


def measure(definition: Any) -> dict[str, Any]:
    """Weigh the JavaScript page and the six no-JS section pages in every language."""
    results: dict[str, Any] = {}
    with throwaway_app("section-weight") as app:
        with app.app_context():
            survey = store_survey(get_db(), definition)
        for language in LANGUAGES:
            client = app.test_client()
            path = f"/s/{survey.slug}?agree=yes&lang={language}"
            first = client.get(path)
            page = _with_other_sections(client, weigh_page(client, path, first.get_data()))
            entry: dict[str, Any] = {
                "javascript_page": page,
                "per_section_bytes": round(page["total_bytes"] / SECTIONS),
                "per_section_gzip_bytes": round(page["total_gzip_bytes"] / SECTIONS),
                "no_js_sections": [weigh_page(client, path, first.get_data(), scripts=False)],
            }
            html = first.get_data(as_text=True)
            for section in range(2, SECTIONS + 1):
                action, fields = next_form(html)
                reply = client.post(action, data=fields)
                if reply.status_code != 200 or "sections-carried" not in reply.get_data(True):
                    raise RuntimeError(f"Next to section {section}: {reply.status_code}")
                weighed = weigh_page(client, f"Next to section {section}", reply.get_data())
                entry["no_js_sections"].append(weighed)
                html = reply.get_data(as_text=True)
            results[language] = entry
    return results


def _with_other_sections(client: Any, page: dict[str, Any]) -> dict[str, Any]:
    """``page`` with the other sections its script fetches, as one more item."""
    first_html = client.get(page["path"]).get_data(as_text=True)
    found = re.search(r'data-sections="([^"]+)"', first_html)
    if found is None:
        raise RuntimeError("the first page names no other sections")
    address = html.unescape(found[1])
    body = client.get(address).get_data()
    fetched = {"url": address, "kind": "html", "bytes": len(body), "gzip": len(gzip.compress(body))}
    total = page["total_bytes"] + fetched["bytes"]
    return {
        **page,
        "items": [*page["items"], fetched],
        "total_bytes": total,
        "total_gzip_bytes": page["total_gzip_bytes"] + fetched["gzip"],
        "within_budget": total <= BUDGET_BYTES,
    }


def markdown(results: dict[str, Any]) -> str:
    """The table of SECTIONS.md: KiB as served (gzip) per page and language."""
    kib = "{:.1f}".format

    def cell(page: dict[str, Any]) -> str:
        return f"{kib(page['total_bytes'] / 1024)} ({kib(page['total_gzip_bytes'] / 1024)})"

    head = " | ".join(LANGUAGES)
    lines = [f"| Page | {head} | ≤ 30 KiB |", "|---|" + "---|" * (len(LANGUAGES) + 1)]
    first = results[LANGUAGES[0]]
    js = [results[lang]["javascript_page"] for lang in LANGUAGES]
    lines.append(
        f"| JavaScript page, all 6 sections (section 1's page, its scripts, "
        f"sections 2–6 fetched) | {' | '.join(map(cell, js))} | — |"
    )
    per = [
        f"{kib(results[lang]['per_section_bytes'] / 1024)} "
        f"({kib(results[lang]['per_section_gzip_bytes'] / 1024)})"
        for lang in LANGUAGES
    ]
    fits = all(results[lang]["per_section_bytes"] <= BUDGET_BYTES for lang in LANGUAGES)
    lines.append(f"| the same ÷ 6, per section | {' | '.join(per)} | {_yes(fits)} |")
    for index in range(len(first["no_js_sections"])):
        pages = [results[lang]["no_js_sections"][index] for lang in LANGUAGES]
        what = "the first page, no scripts" if index == 0 else "after Next"
        fits = all(page["within_budget"] for page in pages)
        row = " | ".join(map(cell, pages))
        lines.append(f"| no-JS section {index + 1} ({what}) | {row} | {_yes(fits)} |")
    return "\n".join(lines)


def _yes(ok: bool) -> str:
    return "yes" if ok else "**no**"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--results", default=str(HERE / "results" / "section-weight.json"))
    args = parser.parse_args(argv)
    definition = parse_definition(json.dumps(sixty_questions()), "sixty.json", fmt="json")
    when = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
    results = measure(definition)
    Path(args.results).write_text(
        json.dumps({"measured_at": when, "budget_bytes": BUDGET_BYTES, "languages": results}) + "\n"
    )
    print(markdown(results))
    print(f"\nMeasured {when} with `benchmarks/section_weight.py`; KiB as served (gzip).")
    fits = [page["within_budget"] for r in results.values() for page in r["no_js_sections"][1:]]
    per_section = [r["per_section_bytes"] <= BUDGET_BYTES for r in results.values()]
    return 0 if all(fits + per_section) else 1


if __name__ == "__main__":
    sys.exit(main())
