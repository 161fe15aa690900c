"""The no-JS section round trip against today's one-page submit, on one gunicorn server.

One ``loadlib.Server`` (4 sync workers, rate limits off) serves two surveys from one fresh
SQLite file: ``page_weight.TEN_QUESTIONS`` on one page, and ``section_weight``'s sixty
questions in six sections of ten. One client sends one request at a time (latency, not
throughput), the two kinds interleaved so both see the same machine at the same moment.
Each round:

- a sectioned respondent without JavaScript (a new browser) GETs the first page, then
  five times Next (the section's ten true answers are checked and randomized on the
  server, the reports so far signed and carried into the next section's page), each Next
  followed by
- a one-page respondent (a new browser): GET the form, POST ten true answers (randomized
  on the server, stored, the thank-you page);

and the round ends with the sectioned respondent's last Send (its ten answers randomized,
the carried reports checked, the whole response stored). Timed: each POST, from sending
the request to the last byte of its reply. Reported: median and p90, and the ratio of the
medians (target: a Next within 2x of a one-page submit); the last Send too. Checks: every
POST answered 200 with the page it should lead to, every response stored, a clean log.

    .venv/bin/python benchmarks/section_round_trip.py            # 80 rounds: 400 Next
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import statistics
import sys
import time
import urllib.parse
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make ``benchmarks`` and ``survey_app`` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks import loadlib  # noqa: E402
from benchmarks.loadlib import DEFAULT_CONFIG, Checks  # noqa: E402
from benchmarks.page_weight import TEN_QUESTIONS  # noqa: E402
from benchmarks.section_weight import SECTIONS, next_form, sixty_questions  # noqa: E402

TARGET_RATIO = 2.0  # a section's Next within 2x of today's one-page submit (issue 20)
THANKS = '<td data-key="'  # the thank-you page's table of what was stored


class Round:
    """What one round's requests took and how they went (module docstring)."""

    def __init__(self, port: int, slugs: dict[str, str]):
        self.port, self.slugs = port, slugs
        self.seconds: dict[str, list[float]] = {"one_page": [], "next": [], "last": []}
        self.next_by_section: dict[int, list[float]] = {}
        self.bytes_sent: dict[str, list[int]] = {"one_page": [], "next": [], "last": []}
        self.problems: Counter[str] = Counter()

    def _post(self, browser: loadlib.Browser, html: str, kind: str, expect: str) -> str:
        """POST the form of ``html`` as a browser without JavaScript; time it, check it."""
        action, fields = next_form(html)
        started = time.perf_counter()
        status, page, _ = browser.post_form(action, fields)
        self.seconds[kind].append(time.perf_counter() - started)
        self.bytes_sent[kind].append(len(urllib.parse.urlencode(fields)))
        if status != 200 or expect not in page:
            self.problems[f"{kind}: {status}"] += 1
        return page

    def _get(self, browser: loadlib.Browser, slug: str) -> str:
        status, page = browser.get(f"/s/{slug}?agree=yes")
        if status != 200:
            self.problems[f"GET {slug}: {status}"] += 1
        return page

    def one_page(self) -> None:
        browser = loadlib.Browser(self.port)
        try:
            self._post(browser, self._get(browser, self.slugs["one_page"]), "one_page", THANKS)
        finally:
            browser.close()

    def run(self) -> None:
        browser = loadlib.Browser(self.port)
        try:
            page = self._get(browser, self.slugs["sections"])
            for section in range(1, SECTIONS):
                page = self._post(browser, page, "next", f"Section {section + 1} of {SECTIONS}")
                self.next_by_section.setdefault(section, []).append(self.seconds["next"][-1])
                self.one_page()
            self._post(browser, page, "last", THANKS)
        finally:
            browser.close()

    def forget(self) -> None:
        """Drop what was timed so far (the warm-up rounds)."""
        fresh = Round(self.port, self.slugs)
        self.seconds, self.next_by_section = fresh.seconds, fresh.next_by_section
        self.bytes_sent = fresh.bytes_sent


def summary(seconds: Sequence[float]) -> dict[str, float]:
    """Count, median, p90, mean and slowest, in milliseconds."""
    ms = [s * 1000 for s in seconds]
    return {
        "count": len(ms),
        "median_ms": round(statistics.median(ms), 2),
        "p90_ms": round(statistics.quantiles(ms, n=10)[8], 2),
        "mean_ms": round(statistics.fmean(ms), 2),
        "max_ms": round(max(ms), 2),
    }


def _import(database: Path, work: Path, name: str, definition: dict[str, Any]) -> str:
    path = work / f"{name}.json"
    path.write_text(json.dumps(definition))
    return loadlib.prepare_database(database, path)


def _stored(database: Path) -> dict[str, int]:
    conn = sqlite3.connect(database, timeout=30)
    try:
        rows = conn.execute(
            "SELECT s.slug, COUNT(r.id) FROM surveys s "
            "LEFT JOIN responses r ON r.survey_id = s.id GROUP BY s.slug"
        ).fetchall()
    finally:
        conn.close()
    return dict(rows)


def measure(rounds: int, warmup: int) -> dict[str, Any]:
    """Serve both surveys, run the rounds, check, and summarize."""
    checks = Checks()
    with loadlib.temporary_directory("section-round-trip-") as tmp:
        work = Path(tmp)
        database = work / "survey.db"
        slugs = {
            "one_page": _import(database, work, "one-page", TEN_QUESTIONS),
            "sections": _import(database, work, "sections", sixty_questions()),
        }
        server = loadlib.Server(database, DEFAULT_CONFIG, loadlib.new_secret_key(), work / "g.log")
        load_before = os.getloadavg()
        with server.start():
            timing = Round(server.port, slugs)
            for done in range(warmup + rounds):
                if done == warmup:
                    timing.forget()
                timing.run()
            loadlib.check_log(checks, server)
        stored = _stored(database)
    total = warmup + rounds
    checks.add("every POST 200 and led on", not timing.problems, dict(timing.problems))
    expected = {slugs["one_page"]: total * (SECTIONS - 1), slugs["sections"]: total}
    checks.add("every response stored once", stored == expected, stored)
    kinds = {kind: summary(values) for kind, values in timing.seconds.items()}
    ratio = kinds["next"]["median_ms"] / kinds["one_page"]["median_ms"]
    checks.add(f"Next median within {TARGET_RATIO}x of one-page", ratio <= TARGET_RATIO, ratio)
    return {
        "server": DEFAULT_CONFIG.label,
        "rounds": rounds,
        "warmup_rounds": warmup,
        "load_average_before": load_before,
        "load_average_after": os.getloadavg(),
        "requests": kinds,
        "next_by_section": {str(k): summary(v) for k, v in timing.next_by_section.items()},
        "bytes_sent_median": {k: statistics.median(v) for k, v in timing.bytes_sent.items()},
        "ratio_next_to_one_page": round(ratio, 2),
        "ratio_last_to_one_page": round(
            kinds["last"]["median_ms"] / kinds["one_page"]["median_ms"], 2
        ),
        "checks": list(checks.lines()),
        "ok": checks.ok,
    }


def markdown(result: dict[str, Any]) -> str:
    names = {
        "one_page": "one-page submit, 10 questions (stores)",
        "next": "section Next, 10 questions (carries)",
        "last": "last section's Send (stores 60)",
    }
    lines = ["| POST | n | median | p90 | bytes sent |", "|---|---|---|---|---|"]
    for kind, name in names.items():
        row = result["requests"][kind]
        sent = result["bytes_sent_median"][kind]
        lines.append(
            f"| {name} | {row['count']} | {row['median_ms']:.1f} ms | {row['p90_ms']:.1f} ms "
            f"| {sent:,.0f} B |"
        )
    lines.append(
        f"\nRatio of medians: Next / one-page **{result['ratio_next_to_one_page']}**, "
        f"last Send / one-page {result['ratio_last_to_one_page']}."
    )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=80, help="timed rounds (5 Next each)")
    parser.add_argument("--warmup", type=int, default=3, help="untimed rounds first")
    parser.add_argument("--results-dir", type=Path, default=loadlib.RESULTS_DIR)
    parser.add_argument("--no-results", action="store_true", help="write no JSON file")
    args = parser.parse_args(argv)
    machine = loadlib.machine_info()
    loadlib.print_machine(machine)
    started = time.time()
    result = measure(args.rounds, args.warmup)
    print(markdown(result))
    for line in result["checks"]:
        print(line)
    results_dir = None if args.no_results else args.results_dir
    return loadlib.finish("section-round-trip", machine, started, [result], results_dir)


if __name__ == "__main__":
    sys.exit(main())
