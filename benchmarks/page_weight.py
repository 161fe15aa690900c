"""Page weight: what a respondent downloads to answer a survey, against a 30 KB budget.

The respondent page (``GET /s/<slug>``, after the consent step when the survey has one)
is rendered by the app's own Flask test client on a throwaway database; the assets the
page itself references (every ``<link href>``, stylesheet and icon, and every
``<script src>``) are fetched the same way. Weight = HTML + those assets, uncompressed
bytes as served (also reported gzip-compressed, which is what crosses the wire when a
proxy compresses). Surveys measured: a 10-question survey defined below that mixes every
question type and mechanism (yes/no with ε; a plain rating scale; GRR, OUE and, optional,
subset-selection choices; tick all that apply, four options; discrete-Laplace, Duchi,
piecewise and plain numbers; a consent step: its page loads every mechanism's browser
module, the heaviest case), and
``examples/campus-health.yaml`` (3 yes/no) and ``examples/mixed-survey.yaml``, each with
its page words in English, Korean and Chinese (``?lang=``; a Korean or Chinese character
is 3 bytes in UTF-8, so the catalogs weigh differently; the survey's own texts stay in
its language).

    .venv/bin/python benchmarks/page_weight.py
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import gzip
import itertools
import json
import re
import sys
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make ``benchmarks`` and ``survey_app`` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

HERE = Path(__file__).resolve().parent
REPO = HERE.parent

from survey_app import create_app  # noqa: E402
from survey_app.domain.definitions import load_definition, parse_definition  # noqa: E402
from survey_app.domain.languages import LANGUAGES  # noqa: E402
from survey_app.storage.surveys import store_survey  # noqa: E402
from survey_app.web.database_session import get_db  # noqa: E402

BUDGET_BYTES = 30 * 1024  # "≤ 30 KB", read as KiB (the lenient reading)
ASSET = re.compile(r'<(?:link\b[^>]*?\bhref|script\b[^>]*?\bsrc)="([^"]+)"')

TEN_QUESTIONS = {
    "slug": "ten-questions",
    "title": "Student life and money (ten questions)",
    "description": "An anonymous survey about study, money and health. Sensitive answers are "
    "randomized in your browser before they are sent, so nobody can know how you really "
    "answered.",
    "consent": "This survey is voluntary and anonymous. You may stop at any time and skip "
    "questions marked optional. Only aggregate results are published.",
    "contact": "Student Life Study, student-life@example.edu",
    "questions": [
        {
            "key": "satisfied",
            "text": "How satisfied are you with your course?",
            "type": "scale",
            "options": [
                "Very dissatisfied",
                "Dissatisfied",
                "Neutral",
                "Satisfied",
                "Very satisfied",
            ],
            "scores": [-2, -1, 0, 1, 2],
            "sensitive": False,
        },
        {
            "key": "age",
            "text": "How old are you?",
            "type": "number",
            "min": 16,
            "max": 80,
            "sensitive": False,
        },
        {
            "key": "cheated",
            "text": "Have you cheated on an exam in the past year?",
            "type": "yes_no",
            "epsilon": 0.5,
        },
        {
            "key": "lacked",
            "text": "Which of these have you gone without this term for lack of money?",
            "type": "multiple",
            "options": ["Meals", "Heating", "Textbooks", "Medicine"],
            "epsilon": 1,
        },
        {
            "key": "housing",
            "text": "Where have you slept most nights this term?",
            "type": "choice",
            "options": [
                "Own room",
                "Shared room",
                "Family home",
                "Friend's sofa",
                "Car or van",
                "Hostel",
                "Outdoors",
                "Somewhere else",
            ],
            "epsilon": 1,  # auto: subset selection, sets of 2
            "required": False,
        },
        {
            "key": "substance",
            "text": "Which of these have you used most often in the past month without a "
            "prescription?",
            "type": "choice",
            "options": [
                "None of these",
                "Cannabis",
                "Prescription stimulants",
                "Sleeping pills or sedatives",
                "Something else",
            ],
            "mechanism": "grr",
            "epsilon": 1,
        },
        {
            "key": "income",
            "text": "Where does most of your money come from?",
            "type": "choice",
            "options": [
                "Parents or family",
                "Student loan",
                "Grant or scholarship",
                "Part-time job",
                "Full-time job",
                "Savings",
                "Benefits",
                "Partner",
                "Gambling",
                "Selling things",
                "Cash-in-hand work",
                "Other",
            ],
            "mechanism": "oue",
            "epsilon": 2,
        },
        {
            "key": "drinks",
            "text": "How many alcoholic drinks did you have last week?",
            "type": "number",
            "min": 0,
            "max": 50,
            "mechanism": "duchi",
            "epsilon": 1,
        },
        {
            "key": "debt",
            "text": "How much do you owe on credit cards, in hundreds of euros?",
            "type": "number",
            "min": 0,
            "max": 100,
            "mechanism": "laplace",
            "epsilon": 4,
        },
        {
            "key": "sleep",
            "text": "How many hours did you sleep last night?",
            "type": "number",
            "min": 0,
            "max": 12,
            "epsilon": 2,
            "required": False,
        },
    ],
}


def weigh_page(
    client: Any, path: str, html: bytes | None = None, scripts: bool = True
) -> dict[str, Any]:
    """One page and the assets it references: bytes raw and gzip-compressed.

    ``html`` is a page already served (the reply to a POST, ``path`` naming it); None: GET
    ``path``. ``scripts`` False: without its scripts, as a browser without JavaScript
    loads it (it fetches no ``<script src>``)."""
    if html is None:
        response = client.get(path)
        if response.status_code != 200:
            raise RuntimeError(f"GET {path}: {response.status_code}")
        html = response.get_data()
    items: list[dict[str, Any]] = [
        {"url": path, "kind": "html", "bytes": len(html), "gzip": len(gzip.compress(html))}
    ]
    for url in dict.fromkeys(ASSET.findall(html.decode())):  # each once, in page order
        asset = client.get(url)
        body = asset.get_data()
        asset.close()
        if asset.status_code != 200:
            raise RuntimeError(f"GET {url}: {asset.status_code}")
        kind = url.rsplit(".", 1)[-1].split("?")[0]
        if kind == "js" and not scripts:
            continue
        items.append(
            {"url": url, "kind": kind, "bytes": len(body), "gzip": len(gzip.compress(body))}
        )
    total = sum(item["bytes"] for item in items)
    return {
        "path": path,
        "items": items,
        "total_bytes": total,
        "total_gzip_bytes": sum(item["gzip"] for item in items),
        "html_bytes": len(html),
        "budget_bytes": BUDGET_BYTES,
        "within_budget": total <= BUDGET_BYTES,
    }


@contextlib.contextmanager
def throwaway_app(name: str) -> Iterator[Any]:
    """The app on a database of its own in a temporary folder, gone afterwards."""
    with tempfile.TemporaryDirectory(prefix=f"{name}-") as tmp:
        yield create_app(
            {
                "TESTING": True,
                "DATABASE": str(Path(tmp) / "survey.db"),
                "SECRET_KEY": name,
                "RATE_LIMITS": False,
            }
        )


def measure(definitions: dict[str, Any]) -> dict[str, Any]:
    results: dict[str, Any] = {}
    with throwaway_app("page-weight") as app:
        with app.app_context():
            surveys = {name: store_survey(get_db(), d) for name, d in definitions.items()}
        for (name, survey), language in itertools.product(surveys.items(), LANGUAGES):
            client = app.test_client()
            path = f"/s/{survey.slug}?" + ("agree=yes&" if survey.consent else "")
            entry = weigh_page(client, f"{path}lang={language}")
            entry["slug"] = survey.slug
            entry["language"] = language
            entry["question_count"] = len(survey.questions)
            entry["types"] = sorted({f"{q.type}/{q.mechanism.name}" for q in survey.questions})
            if survey.consent:
                consent = f"/s/{survey.slug}?lang={language}"
                entry["consent_step"] = weigh_page(app.test_client(), consent)
            results[f"{name}, {language}"] = entry
    return results


def markdown(results: dict[str, Any], when: str) -> str:
    lines = [
        "| Survey | Questions | HTML | CSS | JS | other (icon) | Total | gzip | Budget 30 KiB |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for name, entry in results.items():
        by_kind: dict[str, int] = {}
        for item in entry["items"]:
            kind = item["kind"] if item["kind"] in ("html", "css", "js") else "other"
            by_kind[kind] = by_kind.get(kind, 0) + item["bytes"]
        lines.append(
            f"| {name} | {entry['question_count']} | {by_kind.get('html', 0):,} B | "
            f"{by_kind.get('css', 0):,} B | {by_kind.get('js', 0):,} B | "
            f"{by_kind.get('other', 0):,} B | **{entry['total_bytes'] / 1024:.1f} KiB** | "
            f"{entry['total_gzip_bytes'] / 1024:.1f} KiB | "
            f"{'yes' if entry['within_budget'] else '**no**'} |"
        )
    lines.append("")
    lines.append(f"Measured {when} with `benchmarks/page_weight.py`.")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--results", default=str(HERE / "results" / "page-weight.json"))
    args = parser.parse_args(argv)
    definitions = {
        "ten-questions (all types, in this script)": parse_definition(
            json.dumps(TEN_QUESTIONS), source="ten-questions.json", fmt="json"
        ),
        "examples/campus-health.yaml": load_definition(REPO / "examples" / "campus-health.yaml"),
        "examples/mixed-survey.yaml": load_definition(REPO / "examples" / "mixed-survey.yaml"),
    }
    when = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
    results = measure(definitions)
    Path(args.results).parent.mkdir(parents=True, exist_ok=True)
    Path(args.results).write_text(
        json.dumps(
            {"measured_at": when, "budget_bytes": BUDGET_BYTES, "surveys": results}, indent=2
        )
        + "\n"
    )
    print(markdown(results, when))
    for name, entry in results.items():
        print(f"{name}: " + ", ".join(f"{i['url']} {i['bytes']:,} B" for i in entry["items"]))
    return 0 if all(entry["within_budget"] for entry in results.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
