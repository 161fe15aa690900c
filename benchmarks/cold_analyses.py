"""A respondent's page while researchers start cold analyses, against a real gunicorn
server (``loadlib.Server``, the 4 sync workers of docs/operating.md) and 1,000,000 responses.

The survey is ``load_synthetic.py``'s mixed one (plain covariates ``year`` and ``age``;
sensitive yes/no ``cheated``, ``skipped_meals``, ``stress``). Each round starts a fresh
server on a database without count snapshots, so every analysis starts cold, then:

* idle: one respondent (``GET /s/<slug>?agree=yes``, the survey's form) asks again and
  again for ``--idle-seconds``, nothing else running;
* under load: the same respondent while four logged-in researchers each open a regression
  page at the same moment: ``year, age`` and ``age, year`` for ``cheated`` (one set of
  questions in two orders), ``year`` for ``skipped_meals`` and ``age, year`` for
  ``stress`` (two other sets). A researcher who gets the "being prepared" page (503) comes
  back after its ``Retry-After``, as the page's ``Refresh`` makes a browser do; the phase
  ends when all four have their regression.

The respondent's median under load must stay within 2x of idle. Before the lease, the four
requests counted a million rows each at once, holding all four workers (the respondent's
page took 5.6 s). Checks: every analysis ends in 200 with its fit; exactly one snapshot
per set of questions (three) is stored; the server log is clean.

Results: ``results/cold-analyses-<time>.json`` and the section of ``ANALYSES.md`` between
the markers below.

    .venv/bin/python benchmarks/cold_analyses.py                      # 1M, 3 rounds
    .venv/bin/python benchmarks/cold_analyses.py --responses 100000   # quick
"""

from __future__ import annotations

import argparse
import datetime
import os
import shutil
import sqlite3
import statistics
import sys
import threading
import time
import urllib.parse
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make ``benchmarks`` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks import load_synthetic  # noqa: E402
from benchmarks.analysis import create_researcher, log_in, write_section  # noqa: E402
from benchmarks.loadlib import (  # noqa: E402
    RESULTS_DIR,
    Browser,
    Checks,
    CpuMeter,
    Server,
    ServerConfig,
    check_log,
    machine_info,
    new_secret_key,
    write_results,
)

HERE = Path(__file__).resolve().parent
SLUG = load_synthetic.SURVEYS["mixed"].slug
RESPONDENT_PAGE = f"/s/{SLUG}?agree=yes"
# (outcome, covariates in the order asked): two orders of one set, then two other sets.
ANALYSES = (
    ("cheated", ("year", "age")),
    ("cheated", ("age", "year")),
    ("skipped_meals", ("year",)),
    ("stress", ("age", "year")),
)
SETS_OF_QUESTIONS = len({(outcome, frozenset(keys)) for outcome, keys in ANALYSES})
TARGET_RATIO = 2.0
MARKER_START = "<!-- benchmarks/cold_analyses.py: start -->"
MARKER_END = "<!-- benchmarks/cold_analyses.py: end -->"


def regression_page(outcome: str, covariates: Sequence[str]) -> str:
    query = urllib.parse.urlencode(
        [("outcome", outcome), *(("covariates", key) for key in covariates)]
    )
    return f"/research/surveys/{SLUG}/regression?{query}"


@dataclass
class Analysis:
    """One researcher's regression, as the browser saw it: every attempt until a fit."""

    page: str
    seconds: float = 0.0
    statuses: list[int] = field(default_factory=list)


def run_analysis(browser: Browser, analysis: Analysis, start: threading.Barrier) -> None:
    """Open the page; on 503 wait ``Retry-After`` seconds and open it again."""
    start.wait()
    began = time.perf_counter()
    while True:
        status, body, reply = browser.fetch("GET", analysis.page)
        analysis.statuses.append(status)
        if status != 503:
            break
        time.sleep(float(reply.getheader("Retry-After") or 1))
    analysis.seconds = time.perf_counter() - began
    if status != 200 or b"responses used" not in body:
        raise RuntimeError(f"{analysis.page} answered {status}: {body[:300]!r}")


def respondent_latencies(port: int, until: threading.Event | float) -> list[float]:
    """Seconds per ``GET`` of the respondent's page, one after another, until the event is
    set or for that many seconds."""
    browser = Browser(port)
    latencies = []
    deadline = time.perf_counter() + until if isinstance(until, float) else None
    try:
        while True:
            if isinstance(until, threading.Event) and until.is_set():
                break
            if deadline is not None and time.perf_counter() >= deadline:
                break
            began = time.perf_counter()
            status, _body, _reply = browser.fetch("GET", RESPONDENT_PAGE)
            latencies.append(time.perf_counter() - began)
            if status != 200:
                raise RuntimeError(f"the respondent's page answered {status}")
    finally:
        browser.close()
    return latencies


def summary(latencies: list[float]) -> dict[str, Any]:
    ordered = sorted(latencies)
    return {
        "requests": len(ordered),
        "median_ms": round(1000 * statistics.median(ordered), 1),
        "p90_ms": round(1000 * ordered[int(0.9 * (len(ordered) - 1))], 1),
        "slowest_ms": round(1000 * ordered[-1], 1),
    }


def timed(phase: Callable[[], list[float]], server: Server) -> tuple[list[float], dict[str, float]]:
    """A phase's latencies, and the CPU used meanwhile (``loadlib.CpuMeter``), with the
    share of the CPUs other processes took (1.0: one whole CPU)."""
    meter, began = CpuMeter(server), time.perf_counter()
    latencies = phase()
    cpu = meter.result()
    return latencies, cpu | {
        "other_share": round(cpu["other_cpu_seconds"] / (time.perf_counter() - began), 2)
    }


def logged_in_researchers(port: int) -> list[Browser]:
    researchers = [Browser(port, timeout=600) for _ in ANALYSES]
    for browser in researchers:
        log_in(browser)
    return researchers


def under_load(port: int, researchers: list[Browser], analyses: list[Analysis]) -> list[float]:
    """The respondent's latencies from the moment the four analyses start together until
    the last has its regression."""
    start = threading.Barrier(len(ANALYSES) + 1)
    threads = [
        threading.Thread(target=run_analysis, args=(browser, analysis, start))
        for browser, analysis in zip(researchers, analyses, strict=True)
    ]
    for thread in threads:
        thread.start()
    done = threading.Event()

    def wait_for_analyses() -> None:
        for thread in threads:
            thread.join()
        done.set()

    watcher = threading.Thread(target=wait_for_analyses)
    watcher.start()
    start.wait()
    latencies = respondent_latencies(port, done)
    watcher.join()
    return latencies


def forget_snapshots(database: Path) -> None:
    """Every analysis cold again: no snapshot (and a new server: no memory)."""
    with sqlite3.connect(database) as conn:
        conn.execute("DELETE FROM count_snapshots")
        conn.execute("DELETE FROM count_leases")


def snapshot_count(database: Path) -> int:
    with sqlite3.connect(database) as conn:
        return int(conn.execute("SELECT count(*) FROM count_snapshots").fetchone()[0])


def one_round(
    number: int, database: Path, secret_key: str, folder: Path, idle_seconds: float
) -> dict[str, Any]:
    forget_snapshots(database)
    checks = Checks()
    config = ServerConfig()
    with Server(database, config, secret_key, folder / f"gunicorn-{number}.log") as server:
        respondent_latencies(server.port, 1.0)  # every worker has served the page once
        # Idle before and after, so that a change in the machine's other work during the
        # round weighs on both sides alike.
        half = idle_seconds / 2
        idle, idle_cpu_before = timed(lambda: respondent_latencies(server.port, half), server)
        researchers = logged_in_researchers(server.port)
        analyses = [Analysis(regression_page(outcome, keys)) for outcome, keys in ANALYSES]
        loaded, load_cpu = timed(lambda: under_load(server.port, researchers, analyses), server)
        for browser in researchers:
            browser.close()
        idle_after, idle_cpu_after = timed(lambda: respondent_latencies(server.port, half), server)
        check_log(checks, server)
    stored = snapshot_count(database)
    checks.add("one snapshot per set of questions", stored == SETS_OF_QUESTIONS, stored)
    idle_summary, load_summary = summary(idle + idle_after), summary(loaded)
    ratio = load_summary["median_ms"] / idle_summary["median_ms"]
    checks.add(
        f"respondent median under load within {TARGET_RATIO}x of idle", ratio <= TARGET_RATIO, ratio
    )
    return {
        "round": number,
        "workers": config.label,
        "idle": idle_summary | {"cpu": [idle_cpu_before, idle_cpu_after]},
        "under_load": load_summary | {"cpu": load_cpu},
        "ratio": round(ratio, 2),
        "analyses": [asdict(a) | {"seconds": round(a.seconds, 2)} for a in analyses],
        "snapshots": stored,
        "load_average": os.getloadavg()[0],
        "checks": list(checks.lines()),
        "ok": checks.ok,
    }


def section(result: dict[str, Any]) -> str:
    """The measured section of ``ANALYSES.md``, between this script's markers."""
    machine = result["machine"]
    lines = [
        MARKER_START,
        "## Measured",
        "",
        f"{result['started']}, {result['responses']:,} responses (mixed survey, "
        f"`load_synthetic.py`, loaded in {result['load_seconds']:.0f} s). Machine: "
        f"{machine['nproc']} CPUs ({machine['cpu_model']}), Python {machine['python']}, "
        f"SQLite {machine['sqlite']}, gunicorn {machine['gunicorn']}, 4 sync workers; "
        f"idle {result['idle_seconds']:.0f} s per round, half before and half after the "
        "analyses. Other work shares this machine: its share of the CPUs is in the table "
        "(1.0 is one whole CPU of the two).",
        "",
        "| round | respondent median idle | under load | **ratio** | slowest idle / under "
        "load | requests idle / under load | analyses done after (503s) | snapshots | "
        "other work's CPUs idle / under load |",
        "|---:|---:|---:|---:|---:|---:|---|---:|---:|",
    ]
    for r in result["rounds"]:
        idle, loaded = r["idle"], r["under_load"]
        other_idle = statistics.mean(cpu["other_share"] for cpu in idle["cpu"])
        done = ", ".join(
            f"{a['seconds']:.1f} s ({a['statuses'].count(503)})" for a in r["analyses"]
        )
        lines.append(
            f"| {r['round']} | {idle['median_ms']:.1f} ms | {loaded['median_ms']:.1f} ms "
            f"| **{r['ratio']:.2f}** | {idle['slowest_ms']:,.0f} / {loaded['slowest_ms']:,.0f} ms "
            f"| {idle['requests']} / {loaded['requests']} | {done} | {r['snapshots']} "
            f"| {other_idle:.2f} / {loaded['cpu']['other_share']:.2f} |"
        )
    worst = max(r["ratio"] for r in result["rounds"])
    met = "met" if worst <= TARGET_RATIO else "NOT met"
    lines += [
        "",
        f"**Worst ratio {worst:.2f}: target ≤ {TARGET_RATIO:.0f}× {met}.**",
        "",
        "Rerun: `.venv/bin/python benchmarks/cold_analyses.py` (rewrites this section; "
        "`--responses 100000` for a quick run).",
        MARKER_END,
        "",
    ]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--responses", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--idle-seconds", type=float, default=8.0)
    parser.add_argument("--data-dir", type=Path, default=HERE / "data")
    parser.add_argument("--markdown", type=Path, default=HERE / "ANALYSES.md")
    args = parser.parse_args(argv)
    started = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    folder = args.data_dir / f"cold-analyses-{args.responses}"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    database = folder / "survey.db"
    loaded = load_synthetic.load(
        database, args.responses, verify=False, log=False, joint_counts=False
    )
    secret_key = new_secret_key()
    create_researcher(database, secret_key)
    rounds = []
    for number in range(1, args.rounds + 1):
        rounds.append(one_round(number, database, secret_key, folder, args.idle_seconds))
        print(rounds[-1], flush=True)
    result = {
        "benchmark": "cold_analyses",
        "started": started,
        "machine": machine_info(),
        "responses": args.responses,
        "load_seconds": round(loaded.load_seconds, 1),
        "idle_seconds": args.idle_seconds,
        "rounds": rounds,
        "ok": all(r["ok"] for r in rounds),
    }
    write_results("cold-analyses", result, RESULTS_DIR)
    text = section(result)
    write_section(args.markdown, text, MARKER_START, MARKER_END)
    print(text)
    return 0 if result["ok"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
