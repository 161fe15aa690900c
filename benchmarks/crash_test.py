"""Crash test: SIGKILL the whole gunicorn process group in the middle of the load.

1. A fresh SQLite file with the example survey; gunicorn on 127.0.0.1 (rate limits off);
   the load of ``load_test.py`` (new browser per response, GET form, POST, ~5% retried).
2. Once ``--kill-after`` responses have been acknowledged (answered 200), ``killpg(SIGKILL)``:
   arbiter and workers die at once, mid-request, mid-transaction.
3. ``PRAGMA integrity_check`` on the file as the kill left it, then the server restarts
   on the same file and the checks run: integrity ``ok``; every response acknowledged
   before the kill is stored exactly once (and as its page said); nothing stored beyond the
   acknowledged ones and the POSTs that were in flight when the kill came; the counters
   equal the rows, and ``survey-app recount`` reports a match (the counters were
   consistent before it repaired anything).
4. The browsers whose POST got no reply send it again, byte for byte (same submission id,
   same cookie), to the restarted server: each must be answered 200 and stored exactly
   once. A short load on the restarted server follows; then every check again.

Exit status 1 if any check failed. Results go to benchmarks/results/crash-*.json.

    .venv/bin/python benchmarks/crash_test.py                    # kill after ~3,000
    .venv/bin/python benchmarks/crash_test.py --responses 600 --clients 10 --kill-after 100
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make ``benchmarks`` and ``survey_app`` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks import loadlib  # noqa: E402
from benchmarks.loadlib import DEFAULT_CONFIG, Checks, ServerConfig, Submission  # noqa: E402


def run_crash(
    config: ServerConfig = DEFAULT_CONFIG,
    responses: int = 10_000,
    clients: int = 50,
    kill_after: int = 3_000,
    after_restart: int = 200,
    retry_rate: float = 0.05,
    seed: int = 1,
    workdir: Path | None = None,
) -> dict[str, Any]:
    """Load, kill, restart, check; returns what happened and the checks."""
    if kill_after >= responses:
        raise ValueError("--kill-after must be below --responses: the kill must come mid-load")
    checks = Checks()
    with loadlib.temporary_directory("survey-crash-") as tmp:
        work = Path(workdir or tmp)
        database = work / "survey.db"
        slug = loadlib.prepare_database(database)
        secret_key = loadlib.new_secret_key()  # kept: the browsers' cookies outlive the crash
        log = work / "gunicorn.log"

        # 1-2. Load, then SIGKILL the process group mid-load.
        server = loadlib.Server(database, config, secret_key, log).start()
        try:
            load = loadlib.ResponseLoad(
                server.port, slug, clients, responses, retry_rate=retry_rate, seed=seed
            )
            load_thread = load.start_in_background()
            while load.acknowledged < kill_after and load_thread.is_alive():
                time.sleep(0.002)
            killed_early = not load_thread.is_alive()
            pids = server.group_pids()
            killed_at = time.monotonic()
            acknowledged_at_kill = load.acknowledged
            server.kill()
            load.stop.set()
            load_thread.join(timeout=120)
            log_problems_before = server.log_problems()
            tracebacks_before = server.log_tracebacks()
        finally:
            server.stop()  # a no-op unless something above failed before the kill
        checks.add(
            "the kill came mid-load",
            not killed_early and acknowledged_at_kill < responses,
            f"{acknowledged_at_kill} acknowledged of {responses} when killed "
            f"({len(pids)} processes)",
        )
        results: list[Submission] = list(load.results)
        acknowledged = [r for r in results if r.acknowledged]
        in_flight = [r for r in results if r.post_sent and r.post_status is None]  # no reply
        before_kill = [r for r in results if r.finished_at < killed_at]
        errors_before_kill = [r.error for r in before_kill if r.error]
        statuses_5xx = [
            s
            for r in results
            for s in (r.get_status, r.post_status, r.retry_status)
            if s is not None and s >= 500
        ]
        checks.add("zero 5xx", not statuses_5xx, len(statuses_5xx))
        checks.add(
            "no connection errors before the kill",
            not errors_before_kill,
            f"{len(errors_before_kill)} {errors_before_kill[:3]}",
        )
        checks.add(
            "server log clean before the kill",
            not log_problems_before,
            {"counts": log_problems_before, "first_tracebacks": tracebacks_before}
            if log_problems_before
            else "",
        )
        integrity_after_kill = loadlib.integrity_check(database)
        checks.add(
            "integrity_check right after the kill is ok",
            integrity_after_kill == "ok",
            integrity_after_kill,
        )

        # 3. Restart on the same database and check what survived.
        server = loadlib.Server(database, config, secret_key, log).start()
        try:
            integrity = loadlib.integrity_check(database)
            checks.add("integrity_check after the restart is ok", integrity == "ok", integrity)
            state = loadlib.database_state(database, slug)
            maybe = {r.submission_id for r in in_flight}
            loadlib.check_stored(checks, state, acknowledged, maybe_stored=maybe)
            loadlib.check_counters(checks, state)
            recount = loadlib.recount_cli(database, slug)
            checks.add(
                "survey-app recount reports a match after the crash",
                recount["matched"],
                recount["output"],
            )
            in_flight_stored = len(maybe & set(state["submission_ids"]))

            # 4. The lost replies: resend every unanswered POST; then more load.
            replayed = Counter[str]()
            for r in in_flight:
                status, page = loadlib.replay_post(server.port, slug, r)
                replayed[str(status)] += 1
                r.post_status = status
                r.stored_on_page = loadlib.stored_answers(page) if status == 200 else None
            checks.add(
                "every unanswered POST, resent after the restart, is answered 200",
                set(replayed) <= {"200"},
                dict(replayed),
            )
            more = loadlib.ResponseLoad(
                server.port, slug, clients, after_restart, retry_rate=retry_rate, seed=seed + 7
            ).run()
            more_summary = more.summary()
            checks.add(
                "the restarted server takes more load",
                more_summary["acknowledged"] == after_restart
                and more_summary["server_errors_5xx"] == 0
                and more_summary["connection_errors"] == 0,
                f"{more_summary['acknowledged']} of {after_restart} acknowledged, "
                f"statuses {more_summary['statuses']}",
            )
            loadlib.check_log(checks, server)
        finally:
            server.stop()
        final = loadlib.database_state(database, slug)
        final_checks = Checks()
        everything = (
            acknowledged
            + [r for r in in_flight if r.acknowledged]
            + [r for r in more.results if r.acknowledged]
        )
        loadlib.check_stored(final_checks, final, everything)
        loadlib.check_counters(final_checks, final)
        final_recount = loadlib.recount_cli(database, slug)
        final_checks.add("survey-app recount reports a match", final_recount["matched"])
        final_integrity = loadlib.integrity_check(database)
        final_checks.add("integrity_check is ok", final_integrity == "ok", final_integrity)
        for item in final_checks.items:
            checks.add(f"at the end: {item['check']}", item["ok"], item["detail"])

    return {
        "config": config.label,
        "clients": clients,
        "responses": responses,
        "kill_after": kill_after,
        "acknowledged_at_kill": acknowledged_at_kill,
        "acknowledged_before_kill": len(acknowledged),
        "in_flight_at_kill": len(in_flight),
        "in_flight_found_stored": in_flight_stored,
        "processes_killed": len(pids),
        "integrity_after_kill": integrity_after_kill,
        "integrity_after_restart": integrity,
        "stored_after_restart": len(state["submission_ids"]),
        "recount_after_restart": recount,
        "replayed": dict(replayed),
        "after_restart": more_summary,
        "stored_at_end": len(final["submission_ids"]),
        "load_before_kill": load.summary(),
        "checks": checks.items,
        "ok": checks.ok,
    }


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = loadlib.argument_parser(__doc__)
    parser.add_argument("--kill-after", type=int, default=3_000, help="acknowledged responses")
    parser.add_argument("--after-restart", type=int, default=200, help="responses after restart")
    parser.add_argument("--repeat", type=int, default=1, help="independent crash runs")
    return parser.parse_args(argv)


def print_run(run: dict[str, Any]) -> None:
    print(
        f"{run['config']}: killed {run['processes_killed']} processes with "
        f"{run['acknowledged_at_kill']} acknowledged; {run['in_flight_at_kill']} POSTs in "
        f"flight ({run['in_flight_found_stored']} of them stored); integrity "
        f"{run['integrity_after_kill']!r}/{run['integrity_after_restart']!r}; "
        f"{run['stored_after_restart']} stored after restart; recount: "
        f"{run['recount_after_restart']['output']!r}; replayed {run['replayed']}; "
        f"{run['stored_at_end']} stored at the end"
    )
    for line in Checks(run["checks"]).lines():
        print(line)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    config = ServerConfig(args.workers, args.threads, args.worker_class)
    machine = loadlib.machine_info()
    loadlib.print_machine(machine)
    started = time.time()
    runs = []
    for repetition in range(args.repeat):
        run = run_crash(
            config,
            responses=args.responses,
            clients=args.clients,
            kill_after=args.kill_after,
            after_restart=args.after_restart,
            retry_rate=args.retry_rate,
            seed=args.seed + repetition,
        )
        run["repetition"] = repetition + 1
        runs.append(run)
        print_run(run)
    results_dir = None if args.no_results else args.results_dir
    return loadlib.finish("crash", machine, started, runs, results_dir)


if __name__ == "__main__":
    sys.exit(main())
