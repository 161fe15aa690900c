"""Scale benchmark: dashboard latency, CSV exports and worker memory at N responses.

Loads N synthetic responses (``load_synthetic``) into one database and 1,000 into a
second, serves each in turn with loadlib's gunicorn harness (``Server``: 127.0.0.1, the
recommended 4 sync workers of docs/operating.md unless ``--workers/--threads/--worker-class`` say
otherwise), logs in as a researcher and measures, with loadlib's ``Browser``:

* the dashboard (``/research/surveys/<slug>``): median and p90 of ``--requests`` GETs
  after a warm-up, at N and at 1,000 responses, and their ratio (target ≤ 1.2);
* the plots: ``plot.svg`` (yes/no questions) and ``plot.svg?question=KEY`` for every
  choice question;
* the aggregate CSV (``export.csv``): median of ``--aggregate-runs`` GETs;
* the per-response CSV (``responses.csv``), streamed and counted (N + 1 lines), with the
  peak RSS (``VmHWM``) of the gunicorn workers read before and after;
* ``survey-app export SLUG --responses -o FILE``: wall time and peak RSS.

``--survey mixed`` (default) has every question type and mechanism (examples/mixed-survey
.yaml plus an OUE choice, a Laplace number and a plain number); ``--survey yes-no`` is the
20 yes/no questions of the earlier runs. Checks: the HTTP and CLI CSVs are identical, the
tallies rebuilt from the CSV equal the stored ones, every estimate is within 5 standard
errors of the drawn truth (plain questions: exact), and ``recount`` matches.

Everything generated stays under ``--data-dir`` (default ``benchmarks/data/``,
gitignored); results go to ``benchmarks/results/dashboard-<survey>-<N>.json``
(``dashboard-<N>.json`` for yes-no), with the headline numbers of the last
``dashboard-<N>.json`` under ``previous`` for comparison.

    .venv/bin/python benchmarks/bench_dashboard.py --responses 20000     # quick
    .venv/bin/python benchmarks/bench_dashboard.py                       # 1,000,000
"""

from __future__ import annotations

import argparse
import csv
import datetime
import hashlib
import json
import os
import re
import secrets
import shutil
import statistics
import subprocess
import sys
import time
import urllib.parse
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make ``benchmarks`` and ``survey_app`` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks import load_synthetic  # noqa: E402
from benchmarks.loadlib import (  # noqa: E402
    DEFAULT_CONFIG,
    Browser,
    Server,
    ServerConfig,
    machine_info,
    server_env,
    survey_app_command,
)
from survey_app.storage.database import connect  # noqa: E402
from survey_app.storage.surveys import get_survey  # noqa: E402

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
USERNAME = "bench"
PASSWORD = "bench-" + secrets.token_hex(8)  # throwaway account in a throwaway database
TARGETS = {
    "load_seconds_max": 120.0,
    "dashboard_median_ms_max": 100.0,
    "dashboard_ratio_max": 1.2,  # median at N within 1.2x of the median at 1,000
    "worker_peak_rss_mib_max": 150.0,  # VmHWM of the worker that streamed the CSV
}


# --------------------------------------------------------------------------- processes


def create_researcher(env: dict[str, str]) -> None:
    subprocess.run(
        [*survey_app_command(), "create-researcher", USERNAME, "--password-stdin"],
        input=PASSWORD + "\n",
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )


def memory_kb(pid: int) -> dict[str, int]:
    """VmRSS and VmHWM (peak RSS since the process started), in KiB as /proc gives them."""
    values = {}
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(("VmHWM:", "VmRSS:")):
                name, amount, _unit = line.split()
                values[name.rstrip(":")] = int(amount)
    except OSError:
        pass
    return values


def reset_peak_rss(pid: int) -> bool:
    """Set VmHWM back to the current RSS (Linux >= 4.0), so the next peak is the export's."""
    try:
        Path(f"/proc/{pid}/clear_refs").write_text("5")
    except OSError:
        return False
    return True


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far (noise-robust on a shared machine)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def worker_memory(server: Server) -> dict[int, dict[str, int]]:
    return {pid: memory_kb(pid) for pid in server.worker_pids()}


def worker_cpu(server: Server) -> dict[int, float]:
    return {pid: cpu_seconds(pid) for pid in server.worker_pids()}


def timed_command(command: Sequence[str], env: dict[str, str]) -> dict[str, Any]:
    """Run a command; its wall time and peak RSS (GNU time, else getrusage in a wrapper)."""
    report = Path(env.get("TMPDIR", "/tmp")) / f"bench-time-{os.getpid()}-{time.time_ns()}"
    gnu_time = shutil.which("time") or ("/usr/bin/time" if Path("/usr/bin/time").exists() else "")
    if gnu_time:
        full = [gnu_time, "-f", "%M", "-o", str(report), *command]
        how = f"{gnu_time} -f %M"
    else:
        wrapper = (
            "import resource, subprocess, sys; "
            "code = subprocess.run(sys.argv[2:]).returncode; "
            "open(sys.argv[1], 'w').write(str(resource.getrusage("
            "resource.RUSAGE_CHILDREN).ru_maxrss)); sys.exit(code)"
        )
        full = [sys.executable, "-c", wrapper, str(report), *command]
        how = "getrusage(RUSAGE_CHILDREN).ru_maxrss"
    started = time.perf_counter()
    completed = subprocess.run(full, env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - started
    if completed.returncode != 0:
        raise RuntimeError(f"{command} failed: {completed.stderr}")
    try:
        peak_kb = int(report.read_text().strip().splitlines()[-1])
    finally:
        report.unlink(missing_ok=True)
    return {"seconds": seconds, "peak_rss_mib": peak_kb / 1024, "measured_with": how}


# --------------------------------------------------------------------------- HTTP


class Researcher:
    """A logged-in researcher: loadlib's ``Browser`` (cookie jar, keep-alive connection)."""

    def __init__(self, port: int) -> None:
        self.browser = Browser(port, timeout=600)

    def get(self, path: str) -> bytes:
        status, body, _ = self.browser.fetch("GET", path)
        if status != 200:
            raise RuntimeError(f"GET {path} answered {status}")
        return body

    def log_in(self, landing: str) -> None:
        page = self.get("/login").decode()
        match = re.search(r'name="csrf_token"[^>]*value="([^"]+)"', page)
        if match is None:
            raise RuntimeError("no csrf_token in the login page")
        query = urllib.parse.urlencode({"next": landing})
        status, _page, location = self.browser.post_form(
            f"/login?{query}",
            {"csrf_token": match.group(1), "username": USERNAME, "password": PASSWORD},
        )
        if status != 302 or urllib.parse.urlsplit(location).path != landing:
            raise RuntimeError(f"login failed: {status}, Location {location!r}")

    def timings(self, path: str, count: int, warmup: int) -> dict[str, Any]:
        for _ in range(warmup):
            self.get(path)
        samples = []
        size = 0
        for _ in range(count):
            started = time.perf_counter()
            size = len(self.get(path))
            samples.append((time.perf_counter() - started) * 1000)
        return summarize_ms(samples) | {"bytes": size}

    def download(self, path: str, target: Path) -> dict[str, Any]:
        """Stream a download to ``target``, counting lines; time to first byte and total."""
        started = time.perf_counter()
        client_cpu = time.process_time()
        lines = 0
        size = 0
        response = self.browser.open("GET", path)
        try:
            if response.status != 200:
                raise RuntimeError(f"GET {path} answered {response.status}")
            with open(target, "wb") as out:
                chunk = response.read1(1 << 16)  # whatever arrived first
                first_byte = time.perf_counter() - started
                while chunk:
                    lines += chunk.count(b"\n")
                    size += len(chunk)
                    out.write(chunk)
                    chunk = response.read(1 << 20)
            headers = dict(response.getheaders())
        finally:
            response.close()
            self.browser.close()
        return {
            "seconds": time.perf_counter() - started,
            "client_cpu_seconds": time.process_time() - client_cpu,
            "first_byte_seconds": first_byte,
            "lines": lines,
            "bytes": size,
            "transfer_encoding": headers.get("Transfer-Encoding", ""),
        }


def summarize_ms(samples: Sequence[float]) -> dict[str, Any]:
    ordered = sorted(samples)
    return {
        "n": len(samples),
        "median_ms": statistics.median(ordered),
        "p90_ms": statistics.quantiles(ordered, n=10, method="inclusive")[8]
        if len(ordered) > 1
        else ordered[0],
        "mean_ms": statistics.fmean(ordered),
        "min_ms": ordered[0],
        "max_ms": ordered[-1],
    }


# --------------------------------------------------------------------------- checks


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while block := handle.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


def _stored_value(question: Any, cell: str) -> int | float | None:
    """A per-response CSV cell back to the stored report (None: skipped)."""
    if cell == "":
        return None
    if question.type == "choice":
        return question.options.index(cell.removeprefix("'") if cell.startswith("'") else cell)
    if question.mechanism.name == "duchi_binary":
        mechanism = question.mechanism
        return round((float(cell) - mechanism.value_offset) / mechanism.value_scale)
    return int(cell)


def check_responses_csv(
    path: Path, survey: Any, counters: dict[str, dict[str, int]]
) -> dict[str, Any]:
    """Header, row count, and every question's tally cells rebuilt from the CSV's columns.

    Choice columns hold the option text (unary encoding: one 0/1 column per option), a
    Duchi column the report mapped to the answer's scale; both are mapped back here.
    """
    rebuilt: dict[str, dict[str, int]] = {q.key: {} for q in survey.questions}
    with open(path, newline="", encoding="utf-8") as handle:
        reader = csv.reader(handle)
        header = next(reader)
        slices = []
        for question in survey.questions:
            if question.mechanism.name == "optimized_unary_encoding":
                names = [f"{question.key}.{i}" for i in range(len(question.options))]
            else:
                names = [question.key]
            first = header.index(names[0])
            if header[first : first + len(names)] != names:
                raise AssertionError(f"unexpected header {header}")
            slices.append((question, first, first + len(names)))
        rows = 0
        for row in reader:
            rows += 1
            for question, first, last in slices:
                cells = rebuilt[question.key]
                if last - first > 1:  # unary bits
                    if row[first] == "":
                        continue
                    cells["n"] = cells.get("n", 0) + 1
                    for index, bit in enumerate(row[first:last]):
                        if bit == "1":
                            cells[str(index)] = cells.get(str(index), 0) + 1
                    continue
                value = _stored_value(question, row[first])
                if value is None:
                    continue
                cells["n"] = cells.get("n", 0) + 1
                if question.type == "yes_no":
                    cells["yes"] = cells.get("yes", 0) + int(value)
                elif question.type == "choice":
                    cells[str(value)] = cells.get(str(value), 0) + 1
                else:
                    cells["sum"] = cells.get("sum", 0) + int(value)
                    cells["sum_squares"] = cells.get("sum_squares", 0) + int(value) ** 2
    rebuilt = {key: {c: v for c, v in cells.items() if v} for key, cells in rebuilt.items()}
    return {
        "rows": rows,
        "tallies_rebuilt_from_csv_match": rebuilt == counters,
        "mismatched_questions": [k for k in counters if rebuilt.get(k) != counters[k]],
    }


def check_estimates(
    aggregate: bytes, true_values: dict[str, float], z: float = 5.0
) -> dict[str, Any]:
    """Each estimate (share or mean) within 5 standard errors of the drawn (sample) truth.

    Plain questions have no noise: their estimate equals the drawn share or mean, checked
    to 1e-6 (the CSV's 6 decimals).
    """
    rows = list(csv.DictReader(aggregate.decode().splitlines()))
    worst = 0.0
    exact_misses = []
    for row in rows:
        category = row["category"].removeprefix("'")
        truth = true_values[f"{row['question']}/{category}"]
        error = abs(float(row["estimate"]) - truth)
        if row["mechanism"] == "none":
            if error > 1e-6 * max(1.0, abs(truth)):
                exact_misses.append(f"{row['question']}/{category}")
            continue
        worst = max(worst, error / float(row["std_error"]))
    return {
        "rows": len(rows),
        "max_abs_error_in_std_errors": worst,
        "all_within_5_std_errors": worst <= z,
        "plain_estimates_exact": not exact_misses,
        "plain_misses": exact_misses,
    }


# --------------------------------------------------------------------------- benchmark


def bench_server(
    label: str,
    database: Path,
    slug: str,
    args: argparse.Namespace,
    data_dir: Path,
    secret_key: str,
    responses_csv: bool,
    choice_keys: Sequence[str] = (),
) -> dict[str, Any]:
    dashboard = f"/research/surveys/{slug}"
    result: dict[str, Any] = {"database": str(database)}
    log = data_dir / f"gunicorn-{label}.log"
    config = ServerConfig(args.workers, args.threads, args.worker_class)
    with Server(database, config, secret_key, log) as server:
        result["gunicorn_command"] = " ".join(server.command[2:])
        result["server_config"] = config.label
        client = Researcher(server.port)
        booted = worker_memory(server)
        client.log_in(dashboard)
        logged_in = worker_memory(server)
        result["worker_memory_after_boot_kib"] = booted
        result["worker_memory_after_login_kib"] = logged_in
        # Checking the password (scrypt, 32 MiB) raises the peak of whichever worker did it.
        jumps = {pid: logged_in[pid]["VmHWM"] - booted[pid]["VmHWM"] for pid in logged_in}
        login_worker = max(jumps, key=jumps.__getitem__)
        result["login_worker"] = login_worker if jumps[login_worker] > 16 * 1024 else None
        result["dashboard"] = client.timings(dashboard, args.requests, args.warmup)
        result["plot_svg"] = client.timings(f"{dashboard}/plot.svg", args.requests, args.warmup)
        # One choice question's options with simultaneous intervals, per choice question.
        result["plot_svg_choice"] = {
            key: client.timings(
                f"{dashboard}/plot.svg?question={urllib.parse.quote(key)}",
                args.requests,
                args.warmup,
            )
            for key in choice_keys
        }
        result["aggregate_csv"] = client.timings(
            f"{dashboard}/export.csv", args.aggregate_runs, args.warmup
        )
        result["aggregate_csv_body"] = client.get(f"{dashboard}/export.csv").decode()
        if responses_csv:
            runs = []
            target = data_dir / f"{label}-responses-http.csv"
            lifetime_peak_kib = {pid: m["VmHWM"] for pid, m in worker_memory(server).items()}
            for _ in range(args.export_runs):
                before, cpu_before = worker_memory(server), worker_cpu(server)
                for pid, memory in before.items():
                    lifetime_peak_kib[pid] = max(lifetime_peak_kib[pid], memory["VmHWM"])
                reset = all([reset_peak_rss(pid) for pid in before])
                run = client.download(f"{dashboard}/responses.csv", target)
                after = worker_memory(server)
                for pid, memory in after.items():
                    lifetime_peak_kib[pid] = max(lifetime_peak_kib[pid], memory["VmHWM"])
                cpu_used = {pid: cpu - cpu_before[pid] for pid, cpu in worker_cpu(server).items()}
                # The worker that streamed the CSV is the one that burned the CPU.
                worker = max(cpu_used, key=cpu_used.__getitem__)
                run.update(
                    worker=worker,
                    worker_handled_login=worker == result["login_worker"],
                    worker_cpu_seconds=cpu_used[worker],
                    worker_memory_before_kib=before,
                    worker_memory_after_kib=after,
                    worker_rss_before_mib=before[worker]["VmRSS"] / 1024,
                    # Since the worker started: the import baseline, any password check...
                    worker_peak_rss_mib=lifetime_peak_kib[worker] / 1024,
                    peak_reset_before_export=reset,
                    # ...and, with the peak reset to the RSS just before, the export's own.
                    export_peak_rss_mib=after[worker]["VmHWM"] / 1024 if reset else None,
                    export_peak_above_rss_before_mib=(
                        after[worker]["VmHWM"] - before[worker]["VmRSS"]
                    )
                    / 1024
                    if reset
                    else None,
                )
                runs.append(run)
            worst = max(runs, key=lambda run: run["worker_peak_rss_mib"])
            result["responses_csv"] = {
                "runs": runs,
                "median_seconds": statistics.median(r["seconds"] for r in runs),
                "lines": runs[-1]["lines"],
                "file": str(target),
                "serving_worker_peak_rss_mib": worst["worker_peak_rss_mib"],
                "serving_worker_handled_login": worst["worker_handled_login"],
                "serving_worker_rss_before_mib": worst["worker_rss_before_mib"],
                "export_peak_rss_mib": max(
                    (r["export_peak_rss_mib"] for r in runs if r["peak_reset_before_export"]),
                    default=None,
                ),
                "export_peak_above_rss_before_mib": max(
                    (
                        r["export_peak_above_rss_before_mib"]
                        for r in runs
                        if r["peak_reset_before_export"]
                    ),
                    default=None,
                ),
                "serving_worker_cpu_seconds": statistics.median(
                    r["worker_cpu_seconds"] for r in runs
                ),
                "client_cpu_seconds": statistics.median(r["client_cpu_seconds"] for r in runs),
                "max_worker_peak_rss_mib": max(lifetime_peak_kib.values()) / 1024,
                "worker_lifetime_peak_kib": lifetime_peak_kib,
            }
            # Still responsive to the dashboard right after a big export?
            result["dashboard_after_export"] = client.timings(dashboard, 10, 1)
    return result


def _shown(path: str) -> str:
    """A path relative to the checkout when it lies inside it (as typed in the README)."""
    absolute = Path(path).absolute()
    return str(absolute.relative_to(REPO)) if absolute.is_relative_to(REPO) else path


def run(args: argparse.Namespace) -> dict[str, Any]:
    data_dir = Path(args.data_dir).resolve() / f"bench-{args.survey}-{args.responses}"
    if data_dir.exists():
        shutil.rmtree(data_dir)  # a fresh load every run: the load time is a result
    data_dir.mkdir(parents=True)
    secret_key = secrets.token_hex(32)
    slug = load_synthetic.SURVEYS[args.survey].slug
    big_db = data_dir / "large.db"
    small_db = data_dir / "small.db"
    results: dict[str, Any] = {
        "started_at": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "machine": machine_info(),
        "parameters": {
            key: getattr(args, key)
            for key in (
                "survey",
                "responses",
                "small_responses",
                "requests",
                "warmup",
                "aggregate_runs",
                "export_runs",
                "workers",
                "threads",
                "worker_class",
                "seed",
                "batch_size",
                "journal_mode",
            )
        },
        "command": " ".join([_shown(sys.executable), *sys.argv]),
        # The machine may be shared: a high load average means noisy timings.
        "load_average_at_start": os.getloadavg(),
        "targets": TARGETS,
    }

    print(f"loading {args.responses:,} responses into {big_db} ...", file=sys.stderr)
    big = load_synthetic.load(
        big_db,
        args.responses,
        survey=args.survey,
        seed=args.seed,
        batch_size=args.batch_size,
        journal_mode=args.journal_mode,
    )
    print(
        f"  loaded in {big.load_seconds:.1f} s ({big.rows_per_second:,.0f} rows/s), "
        f"recount matched={big.recount_matched} ({big.recount_seconds:.1f} s)",
        file=sys.stderr,
    )
    small = load_synthetic.load(
        small_db,
        args.small_responses,
        survey=args.survey,
        seed=args.seed + 1,
        batch_size=args.batch_size,
        log=False,
    )
    database = connect(big_db)
    survey = get_survey(database, slug)
    database.conn.close()
    assert survey is not None
    choice_keys = [q.key for q in survey.questions if q.type == "choice"]
    results["survey_questions"] = {
        q.key: {"type": q.type, "mechanism": q.mechanism.name, "epsilon": q.epsilon}
        for q in survey.questions
    }
    results["load"] = {"large": asdict(big), "small": asdict(small)}
    for path in (big_db, small_db):
        create_researcher(server_env(path, secret_key))

    print("serving the small database ...", file=sys.stderr)
    results["small"] = bench_server(
        "small", small_db, slug, args, data_dir, secret_key, True, choice_keys
    )
    print("serving the large database ...", file=sys.stderr)
    results["large"] = bench_server(
        "large", big_db, slug, args, data_dir, secret_key, True, choice_keys
    )

    print("CLI export ...", file=sys.stderr)
    cli_file = data_dir / "large-responses-cli.csv"
    cli_command = [*survey_app_command(), "export", slug, "--responses", "-o", str(cli_file)]
    cli_runs = [
        timed_command(cli_command, server_env(big_db, secret_key)) for _ in range(args.export_runs)
    ]
    with open(cli_file, "rb") as handle:
        cli_lines = sum(block.count(b"\n") for block in iter(lambda: handle.read(1 << 20), b""))
    results["cli_export"] = {
        "command": "SURVEY_APP_DATABASE=... "
        + " ".join([Path(cli_command[0]).name, *cli_command[1:]]),
        "runs": cli_runs,
        "median_seconds": statistics.median(r["seconds"] for r in cli_runs),
        "peak_rss_mib": max(r["peak_rss_mib"] for r in cli_runs),
        "lines": cli_lines,
    }

    http_file = Path(results["large"]["responses_csv"]["file"])
    results["checks"] = {
        "http_csv_lines_expected": args.responses + 1,
        "http_csv_lines": results["large"]["responses_csv"]["lines"],
        "cli_csv_lines": cli_lines,
        "http_and_cli_csv_identical": sha256(http_file) == sha256(cli_file),
        "large_csv_vs_counters": check_responses_csv(http_file, survey, big.counters),
        "large_estimates": check_estimates(
            results["large"]["aggregate_csv_body"].encode(), big.true_values_drawn
        ),
        "small_estimates": check_estimates(
            results["small"]["aggregate_csv_body"].encode(), small.true_values_drawn
        ),
        "recount_matched": big.recount_matched and small.recount_matched,
    }
    for label in ("large", "small"):
        del results[label]["aggregate_csv_body"]
    if not args.keep_csv:
        for path in (http_file, cli_file, data_dir / "small-responses-http.csv"):
            path.unlink(missing_ok=True)

    large, small_ = results["large"], results["small"]
    ratio = large["dashboard"]["median_ms"] / small_["dashboard"]["median_ms"]
    export = large["responses_csv"]
    peak = export["serving_worker_peak_rss_mib"]
    results["summary"] = {
        "load_seconds": big.load_seconds,
        "load_rows_per_second": big.rows_per_second,
        "recount_seconds": big.recount_seconds,
        "dashboard_median_ms_large": large["dashboard"]["median_ms"],
        "dashboard_p90_ms_large": large["dashboard"]["p90_ms"],
        "dashboard_median_ms_small": small_["dashboard"]["median_ms"],
        "dashboard_p90_ms_small": small_["dashboard"]["p90_ms"],
        "dashboard_ratio": ratio,
        "aggregate_csv_median_ms_large": large["aggregate_csv"]["median_ms"],
        "aggregate_csv_median_ms_small": small_["aggregate_csv"]["median_ms"],
        "plot_svg_median_ms_large": large["plot_svg"]["median_ms"],
        "plot_svg_median_ms_small": small_["plot_svg"]["median_ms"],
        "plot_svg_choice_median_ms_large": {
            key: timing["median_ms"] for key, timing in large["plot_svg_choice"].items()
        },
        "plot_svg_choice_median_ms_small": {
            key: timing["median_ms"] for key, timing in small_["plot_svg_choice"].items()
        },
        "responses_csv_http_seconds": large["responses_csv"]["median_seconds"],
        "responses_csv_http_rows_per_second": args.responses
        / large["responses_csv"]["median_seconds"],
        "responses_csv_lines": large["responses_csv"]["lines"],
        "responses_csv_serving_worker_cpu_seconds": export["serving_worker_cpu_seconds"],
        "responses_csv_client_cpu_seconds": export["client_cpu_seconds"],
        "worker_rss_before_export_mib": export["serving_worker_rss_before_mib"],
        "worker_peak_rss_mib": peak,
        "export_peak_rss_mib": export["export_peak_rss_mib"],
        "export_peak_above_rss_before_mib": export["export_peak_above_rss_before_mib"],
        "serving_worker_handled_login": export["serving_worker_handled_login"],
        "max_worker_peak_rss_mib": export["max_worker_peak_rss_mib"],
        "cli_export_seconds": results["cli_export"]["median_seconds"],
        "cli_export_peak_rss_mib": results["cli_export"]["peak_rss_mib"],
        "targets_met": {
            "load_under_2_minutes": big.load_seconds < TARGETS["load_seconds_max"],
            "dashboard_median_under_100ms": large["dashboard"]["median_ms"]
            < TARGETS["dashboard_median_ms_max"],
            "dashboard_ratio_at_most_1_2x": ratio <= TARGETS["dashboard_ratio_max"],
            "worker_peak_rss_under_150mib": peak < TARGETS["worker_peak_rss_mib_max"],
            "responses_csv_has_n_plus_1_lines": large["responses_csv"]["lines"]
            == args.responses + 1,
        },
    }
    results["load_average_at_end"] = os.getloadavg()
    results["finished_at"] = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
    return results


def _mib(value: float | None, sign: str = "") -> str:
    return "n/a (no clear_refs)" if value is None else f"{value:{sign}.1f} MiB"


def print_summary(results: dict[str, Any], path: Path) -> None:
    s = results["summary"]
    m = results["machine"]
    n = results["parameters"]["responses"]
    small = results["parameters"]["small_responses"]
    ok = {True: "ok", False: "MISSED"}
    t = s["targets_met"]
    lines = [
        f"machine: {m['nproc']} CPUs ({m['cpu_model']}), {m['ram_gib']} GiB, "
        f"Python {m['python']}, SQLite {m['sqlite']}; load average at start/end "
        f"{results['load_average_at_start'][0]:.2f}/{results['load_average_at_end'][0]:.2f}",
        f"load {n:,} responses: {s['load_seconds']:.1f} s "
        f"({s['load_rows_per_second']:,.0f} rows/s) [{ok[t['load_under_2_minutes']]}]; "
        f"recount check {s['recount_seconds']:.1f} s",
        f"dashboard at {n:,}: median {s['dashboard_median_ms_large']:.1f} ms, "
        f"p90 {s['dashboard_p90_ms_large']:.1f} ms "
        f"[{ok[t['dashboard_median_under_100ms']]}]",
        f"dashboard at {small:,}: median {s['dashboard_median_ms_small']:.1f} ms, "
        f"p90 {s['dashboard_p90_ms_small']:.1f} ms",
        f"dashboard ratio: {s['dashboard_ratio']:.2f}x [{ok[t['dashboard_ratio_at_most_1_2x']]}]",
        f"aggregate CSV: median {s['aggregate_csv_median_ms_large']:.1f} ms at {n:,}, "
        f"{s['aggregate_csv_median_ms_small']:.1f} ms at {small:,}",
        f"plot.svg: median {s['plot_svg_median_ms_large']:.1f} ms at {n:,}, "
        f"{s['plot_svg_median_ms_small']:.1f} ms at {small:,}; per choice question at {n:,}: "
        + ", ".join(f"{k} {v:.1f} ms" for k, v in s["plot_svg_choice_median_ms_large"].items()),
        f"per-response CSV over HTTP: {s['responses_csv_http_seconds']:.1f} s "
        f"({s['responses_csv_http_rows_per_second']:,.0f} rows/s), "
        f"{s['responses_csv_lines']:,} lines [{ok[t['responses_csv_has_n_plus_1_lines']]}]",
        f"  worker CPU {s['responses_csv_serving_worker_cpu_seconds']:.1f} s, "
        f"client CPU {s['responses_csv_client_cpu_seconds']:.1f} s",
        f"serving worker peak RSS (VmHWM since start): {s['worker_peak_rss_mib']:.1f} MiB "
        f"[{ok[t['worker_peak_rss_under_150mib']]}] (it "
        f"{'did' if s['serving_worker_handled_login'] else 'did not'} check the login "
        f"password); highest worker peak {s['max_worker_peak_rss_mib']:.1f} MiB",
        f"  during the export alone (VmHWM reset first): peak {_mib(s['export_peak_rss_mib'])}, "
        f"RSS before {s['worker_rss_before_export_mib']:.1f} MiB, growth "
        f"{_mib(s['export_peak_above_rss_before_mib'], '+')}",
        f"survey-app export --responses: {s['cli_export_seconds']:.1f} s, "
        f"peak RSS {s['cli_export_peak_rss_mib']:.1f} MiB",
        "checks: " + ", ".join(f"{k}={v}" for k, v in results["checks"].items()),
        f"results: {path}",
    ]
    print("\n".join(lines))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--responses", type=int, default=1_000_000)
    parser.add_argument(
        "--survey",
        choices=sorted(load_synthetic.SURVEYS),
        default=load_synthetic.DEFAULT_SURVEY,
        help="mixed: every question type (examples/mixed-survey.yaml + 3); yes-no: 20 yes/no",
    )
    parser.add_argument("--small-responses", type=int, default=1_000)
    parser.add_argument("--requests", type=int, default=50, help="timed GETs per page")
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--aggregate-runs", type=int, default=20)
    parser.add_argument("--export-runs", type=int, default=1, help="per-response CSV runs")
    parser.add_argument("--workers", type=int, default=DEFAULT_CONFIG.workers)
    parser.add_argument("--threads", type=int, default=DEFAULT_CONFIG.threads)
    parser.add_argument("--worker-class", default=DEFAULT_CONFIG.worker_class)
    parser.add_argument("--seed", type=int, default=load_synthetic.DEFAULT_SEED)
    parser.add_argument("--batch-size", type=int, default=load_synthetic.DEFAULT_BATCH)
    parser.add_argument("--journal-mode", choices=["wal", "truncate"], default="wal")
    parser.add_argument("--data-dir", default=str(HERE / "data"))
    parser.add_argument("--results-dir", default=str(HERE / "results"))
    parser.add_argument("--keep-csv", action="store_true", help="keep the downloaded CSVs")
    args = parser.parse_args(argv)
    results_dir = Path(args.results_dir)
    results_dir.mkdir(parents=True, exist_ok=True)
    # yes-no keeps the earlier runs' file name (same survey, so a re-run replaces it).
    name = (
        f"dashboard-{args.responses}"
        if args.survey == "yes-no"
        else (f"dashboard-{args.survey}-{args.responses}")
    )
    path = results_dir / f"{name}.json"
    previous = previous_results(results_dir / f"dashboard-{args.responses}.json")
    results = run(args)
    results["previous"] = previous
    path.write_text(json.dumps(results, indent=2, default=str) + "\n")
    print_summary(results, path)
    if previous:
        print(
            f"previous ({previous['file']}, {previous['survey']}, {previous['commit']}): "
            + ", ".join(f"{k} {v}" for k, v in previous["summary"].items())
        )
    checks_ok = all(
        value for key, value in results["checks"].items() if isinstance(value, bool)
    ) and all(
        flag
        for check in results["checks"].values()
        if isinstance(check, dict)
        for key, flag in check.items()
        if isinstance(flag, bool)
    )
    return 0 if checks_ok and all(results["summary"]["targets_met"].values()) else 1


COMPARED = (
    "load_seconds",
    "dashboard_median_ms_large",
    "dashboard_median_ms_small",
    "dashboard_ratio",
    "aggregate_csv_median_ms_large",
    "plot_svg_median_ms_large",
    "responses_csv_http_seconds",
    "worker_peak_rss_mib",
    "export_peak_above_rss_before_mib",
    "cli_export_seconds",
    "cli_export_peak_rss_mib",
)


def previous_results(path: Path) -> dict[str, Any] | None:
    """The headline numbers of the last run written to ``path`` (read before overwriting)."""
    try:
        old = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return {
        "file": _shown(str(path)),
        "started_at": old.get("started_at"),
        "commit": old.get("machine", {}).get("commit"),
        "survey": old.get("parameters", {}).get("survey", "yes-no (20 questions)"),
        "summary": {key: old["summary"].get(key) for key in COMPARED if key in old["summary"]},
    }


if __name__ == "__main__":
    sys.exit(main())
