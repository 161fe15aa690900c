"""Load test: many browsers answer the survey at once against a real gunicorn server.

For each gunicorn setting (workers x threads) and each repetition: a fresh SQLite file with
the example survey, a fresh ``gunicorn "survey_app:create_app()"`` on 127.0.0.1 (rate
limits off), then, with the same client threads,

1. GET /healthz as fast as they can (the cheapest request: the yardstick), then
2. the responses: each one a new browser (own cookie jar) that GETs the form and POSTs
   answers; about 5% of the POSTs are sent twice (the first reply "lost").

Then the checks: every acknowledged (200) response stored exactly once and as the page
said, nothing else stored, zero 5xx, zero connection errors, retries answered alike,
counters equal to a recount (``survey-app recount``), a clean server log.

The throughput guard: before the app, the same responses run against the floor app
(``floor_app.py``: the same pages from trivial Flask views) on the same gunicorn setting,
and the app's responses/s must be at least ``--min-ratio`` (0.25) of the floor's. The
floor measures what gunicorn, Flask and the client cost on this machine at this moment,
so the ratio tracks the app's own cost, not how busy a shared machine happens to be
(about 0.35 on 2 shared cores in November 2026). Exit status 1 if any check failed.

    .venv/bin/python benchmarks/load_test.py                      # 10,000 responses, 4x1:sync
    .venv/bin/python benchmarks/load_test.py --configs 4x1:sync,2x4,4x4 --repeat 3
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make ``benchmarks`` and ``survey_app`` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks import loadlib  # noqa: E402
from benchmarks.loadlib import DEFAULT_CONFIG, Checks, ServerConfig  # noqa: E402

FLOOR_APP = "benchmarks.floor_app:create_app()"
MIN_FLOOR_RATIO = 0.25  # the app's responses/s over the floor app's; about 0.35 today


def floor_run(
    config: ServerConfig,
    responses: int,
    clients: int,
    retry_rate: float,
    seed: int,
) -> dict[str, Any]:
    """The floor app's responses/s with the same setting, clients and responses.

    Nothing is stored (the floor has no database), so only the throughput is kept.
    """
    with loadlib.temporary_directory("survey-floor-") as tmp:
        work = Path(tmp)
        server = loadlib.Server(
            work / "unused.db",
            config,
            loadlib.new_secret_key(),
            work / "gunicorn.log",
            app=FLOOR_APP,
        )
        server.start()
        try:
            loadlib.healthz_load(server.port, clients, clients * 4)  # warm up connections
            meter = loadlib.CpuMeter(server)
            load = loadlib.ResponseLoad(
                server.port, "floor", clients, responses, retry_rate=retry_rate, seed=seed
            ).run()
            summary = load.summary()
            summary.update(meter.result())
        finally:
            server.stop()
    return summary


def run_once(
    config: ServerConfig = DEFAULT_CONFIG,
    responses: int = 10_000,
    clients: int = 50,
    healthz_requests: int | None = None,
    retry_rate: float = 0.05,
    min_ratio: float = MIN_FLOOR_RATIO,
    seed: int = 1,
    workdir: Path | None = None,
    app: str = loadlib.APP,
) -> dict[str, Any]:
    """One full run on a fresh database and server; returns numbers and checks.

    ``min_ratio``: the least responses/s allowed, as a share of the floor app's measured
    just before on the same setting; 0 skips the floor run and the check.
    """
    healthz_requests = healthz_requests or responses
    loadavg_before = [round(x, 2) for x in os.getloadavg()]
    floor = floor_run(config, responses, clients, retry_rate, seed) if min_ratio else None
    with loadlib.temporary_directory("survey-load-") as tmp:
        work = Path(workdir or tmp)
        database = work / "survey.db"
        slug = loadlib.prepare_database(database)
        server = loadlib.Server(
            database, config, loadlib.new_secret_key(), work / "gunicorn.log", app=app
        )
        server.start()
        try:
            loadlib.healthz_load(server.port, clients, clients * 4)  # warm up connections
            meter = loadlib.CpuMeter(server)
            health = loadlib.healthz_load(server.port, clients, healthz_requests)
            health.update(meter.result())
            meter = loadlib.CpuMeter(server)
            load = loadlib.ResponseLoad(
                server.port, slug, clients, responses, retry_rate=retry_rate, seed=seed
            ).run()
            summary = load.summary()
            summary.update(meter.result())
            checks = Checks()
            loadlib.check_log(checks, server)
        finally:
            server.stop()
        state = loadlib.database_state(database, slug)
        recount = loadlib.recount_cli(database, slug)

    ratio = summary["responses_per_second"] / health["per_second"] if health["per_second"] else 0
    floor_rate = floor["responses_per_second"] if floor else 0
    floor_ratio = summary["responses_per_second"] / floor_rate if floor_rate else 0
    checks.add("zero 5xx", summary["server_errors_5xx"] == 0, summary["server_errors_5xx"])
    checks.add(
        "no connection errors",
        summary["connection_errors"] == 0 and health["errors"] == 0,
        f"responses {summary['connection_errors']}, healthz {health['errors']} "
        f"{summary['error_samples'] + health['error_samples']}",
    )
    unexpected = {k: v for k, v in summary["statuses"].items() if not k.endswith(" 200")}
    checks.add("every GET and POST answered 200", not unexpected, unexpected or "")
    checks.add(
        "every /healthz answered 200 ok",
        health["statuses"] == {"200": healthz_requests},
        health["statuses"],
    )
    checks.add(
        "all responses acknowledged",
        summary["acknowledged"] == responses,
        f"{summary['acknowledged']} of {responses}",
    )
    acknowledged = [r for r in load.results if r.acknowledged]
    loadlib.check_stored(checks, state, acknowledged)
    loadlib.check_retries(checks, load.results)
    loadlib.check_counters(checks, state)
    checks.add("survey-app recount reports a match", recount["matched"], recount["output"])
    if floor is not None:
        checks.add(
            f"responses/s >= {min_ratio} x the floor app's",
            floor_ratio >= min_ratio,
            f"{summary['responses_per_second']} / {floor_rate} = {floor_ratio:.3f}",
        )
    return {
        "config": config.label,
        "workers": config.workers,
        "threads": config.threads,
        "worker_class": config.worker_class,
        "clients": clients,
        "responses": responses,
        "retry_rate": retry_rate,
        "loadavg_before": loadavg_before,
        "healthz": health,
        "load": summary,
        "responses_per_second": summary["responses_per_second"],
        "healthz_per_second": health["per_second"],
        "ratio": round(ratio, 3),
        "floor": floor,
        "floor_responses_per_second": floor_rate or None,
        "floor_ratio": round(floor_ratio, 3) if floor else None,
        "stored": len(state["submission_ids"]),
        "counters": state["counters"],
        "checks": checks.items,
        "ok": checks.ok,
    }


def print_run(run: dict[str, Any]) -> None:
    load, health = run["load"], run["healthz"]
    print(
        f"{run['config']}: {run['responses_per_second']:.1f} responses/s "
        f"({load['acknowledged']} in {load['seconds']:.1f} s, {load['retried']} retried, "
        f"GET+POST p50 {load['latency_get_post'].get('p50_ms')} ms, "
        f"p99 {load['latency_get_post'].get('p99_ms')} ms); "
        f"healthz {run['healthz_per_second']:.1f}/s (p50 {health['latency'].get('p50_ms')} ms); "
        f"healthz ratio {run['ratio']:.3f}; "
        + (
            f"floor app {run['floor_responses_per_second']:.1f} responses/s, "
            f"ratio to floor {run['floor_ratio']:.3f}; "
            if run["floor"]
            else ""
        )
        + "CPU s server/client/other: responses "
        f"{load['server_cpu_seconds']}/{load['client_cpu_seconds']}/{load['other_cpu_seconds']}, "
        f"healthz {health['server_cpu_seconds']}/{health['client_cpu_seconds']}/"
        f"{health['other_cpu_seconds']}"
    )
    for line in Checks(run["checks"]).lines():
        print(line)


def summarize(runs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Median of the runs per setting, best responses/s first."""
    by_config: dict[str, list[dict[str, Any]]] = {}
    for run in runs:
        by_config.setdefault(run["config"], []).append(run)
    rows = [
        {
            "config": config,
            "runs": len(group),
            "median_responses_per_second": loadlib.median(r["responses_per_second"] for r in group),
            "median_healthz_per_second": loadlib.median(r["healthz_per_second"] for r in group),
            "median_ratio": loadlib.median(r["ratio"] for r in group),
            "median_floor_ratio": loadlib.median(r["floor_ratio"] for r in group)
            if all(r["floor"] for r in group)
            else None,
            "responses_per_second_runs": [r["responses_per_second"] for r in group],
            "healthz_per_second_runs": [r["healthz_per_second"] for r in group],
            "median_p99_ms": loadlib.median(
                r["load"]["latency_get_post"].get("p99_ms", 0) for r in group
            ),
            "all_checks_ok": all(r["ok"] for r in group),
        }
        for config, group in by_config.items()
    ]
    return sorted(rows, key=lambda row: -row["median_responses_per_second"])


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = loadlib.argument_parser(__doc__)
    parser.add_argument(
        "--configs",
        help="several settings to compare, e.g. 2x4,3x8,4x4 or 5x1:sync (overrides "
        "--workers/--threads)",
    )
    parser.add_argument("--repeat", type=int, default=1, help="runs per setting (median)")
    parser.add_argument("--healthz-requests", type=int, help="default: as many as --responses")
    parser.add_argument(
        "--min-ratio",
        type=float,
        default=MIN_FLOOR_RATIO,
        help="least responses/s as a share of the floor app's, measured in the same run on "
        "the same setting; 0 skips the floor run and the check",
    )
    parser.add_argument(
        "--app", default=loadlib.APP, help="gunicorn app spec (to measure a patched variant)"
    )
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.configs:
        configs = [ServerConfig.parse(text) for text in args.configs.split(",")]
    else:
        configs = [ServerConfig(args.workers, args.threads, args.worker_class)]
    machine = loadlib.machine_info()
    loadlib.print_machine(machine)
    print(
        f"{args.responses} responses, {args.clients} clients, settings: "
        f"{', '.join(c.label for c in configs)}, {args.repeat} run(s) each"
    )
    runs = []
    started = time.time()
    # Interleave the settings (round-robin) so a slow patch of the machine hits them all.
    for repetition in range(args.repeat):
        for config in configs:
            run = run_once(
                config,
                responses=args.responses,
                clients=args.clients,
                healthz_requests=args.healthz_requests,
                retry_rate=args.retry_rate,
                min_ratio=args.min_ratio,
                seed=args.seed + repetition,
                app=args.app,
            )
            run["repetition"] = repetition + 1
            runs.append(run)
            print_run(run)
    table = summarize(runs)
    print("\nmedians (best first):")
    for row in table:
        print(
            f"  {row['config']:>14}: {row['median_responses_per_second']:8.1f} responses/s, "
            f"healthz {row['median_healthz_per_second']:8.1f}/s, ratio "
            f"{row['median_ratio']:.3f}, to floor {row['median_floor_ratio']}, "
            f"p99 {row['median_p99_ms']} ms over {row['runs']} run(s)"
            f"{'' if row['all_checks_ok'] else '  CHECKS FAILED'}"
        )
    results_dir = None if args.no_results else args.results_dir
    return loadlib.finish("load", machine, started, runs, results_dir, app=args.app, summary=table)


if __name__ == "__main__":
    sys.exit(main())
