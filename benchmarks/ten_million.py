"""Ten million responses on PostgreSQL (issue 21, "Measured"): the dashboard, the first
by-group and regression requests, and the per-response export, against a real gunicorn
server (``loadlib.Server``, the 4 sync workers of docs/operating.md).

One throwaway PostgreSQL cluster of our own (``tests/support/postgresql.py``'s
``Cluster``: Debian's server, a Unix socket in its folder, no port) holds two databases
with the mixed survey of ``load_synthetic.py`` (every mechanism; ``year`` a plain choice
and ``age`` a plain number to group and regress by): ``large`` with ``--responses``
(10,000,000) and ``small`` with 1,000. Loaded once (``load``), kept for every
measurement (``measure``, ``explain``), removed with ``stop --remove``.

Loading is what an operator restoring a dump does: the survey is stored through the app
(``parse_definition`` + ``store_survey``), the rows are generated as ``load_synthetic``
generates them (true answers drawn from a seeded generator, randomized by each
mechanism's vectorized simulator, ``answers`` in ``record_response``'s exact JSON) and
go in with ``COPY``; then the storage's own ``tallies.recount`` rebuilds the tallies, and
its result is checked against the totals the generator kept.

``measure`` serves each database in turn and times, through loadlib's ``Browser``:

* the dashboard (``/research/surveys/<slug>``), median of ``--requests`` GETs after a
  warm-up, at 10M and at 1,000, in the same run: target ratio ≤ 1.2;
* the first by-group request (``groups?question=cheated&by=year``), the first
  regression (``regression?outcome=cheated&covariates=year&covariates=age``) and the
  by-group request reading the largest kept joint counts (``question=device&by=age``)
  on a server just started, with no count snapshot in the database (cold): target
  < 2 s; whether the kept joint counts were complete is recorded (``recount`` makes
  them so on a database loaded before they existed); a 503 "being prepared" is
  followed after its ``Retry-After``, as a browser would;
* the per-response CSV (``responses.csv``): lines, seconds, and the serving worker's
  peak RSS during the export (``VmHWM`` reset just before), at 10M against 1,000:
  constant memory means the same peak.

``explain`` runs ``EXPLAIN (ANALYZE, BUFFERS)`` on the cold count's SQL and on the
alternatives named in ``COUNT_VARIANTS``.

    .venv/bin/python benchmarks/ten_million.py load                 # ~15 min at 10M
    .venv/bin/python benchmarks/ten_million.py recount   # the joint counts of a database
                                                         # loaded before they were kept
    .venv/bin/python benchmarks/ten_million.py measure
    .venv/bin/python benchmarks/ten_million.py explain
    .venv/bin/python benchmarks/ten_million.py stop --remove
    .venv/bin/python benchmarks/ten_million.py load --responses 1000000 --folder /tmp/pg1m
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import json
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

if __package__ in (None, ""):  # run as a script: make ``benchmarks`` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks import load_synthetic  # noqa: E402
from benchmarks.bench_dashboard import (  # noqa: E402
    USERNAME,
    Researcher,
    create_researcher,
    reset_peak_rss,
    summarize_ms,
    worker_cpu,
    worker_memory,
)
from benchmarks.loadlib import (  # noqa: E402
    CONNECTION_ERRORS,
    Server,
    ServerConfig,
    machine_info,
    new_secret_key,
    server_env,
)
from survey_app.domain.definitions import parse_definition  # noqa: E402
from survey_app.domain.display_logic import NOT_APPLICABLE  # noqa: E402
from survey_app.storage import backends, joint_tallies, postgresql, tallies  # noqa: E402
from survey_app.storage.database import write_transaction  # noqa: E402
from survey_app.storage.surveys import Survey, get_survey, store_survey  # noqa: E402
from tests.support.postgresql import Cluster, server_binaries  # noqa: E402

HERE = Path(__file__).resolve().parent
SHAPE = load_synthetic.SURVEYS["mixed"]
SLUG = SHAPE.slug
DEFAULT_FOLDER = Path("/tmp/survey-ten-million")
SMALL_RESPONSES = 1_000
DASHBOARD = f"/research/surveys/{SLUG}"
COLD_PAGES = {
    "groups": f"{DASHBOARD}/groups?question=cheated&by=year",
    "regression": f"{DASHBOARD}/regression?outcome=cheated&covariates=year&covariates=age",
    # The largest kept counts: the ten-option unary-encoded choice's 2^10 reports with
    # every year and age (about 280,000 combinations at 10M).
    "groups_largest": f"{DASHBOARD}/groups?question=device&by=age",
}
TARGETS = {"dashboard_ratio": 1.2, "cold_seconds": 2.0, "export_growth_mib": 10.0}
BATCH = 200_000
COPY_SQL = "COPY responses (survey_id, submission_id, answered_on, design, answers) FROM STDIN"
# Kept in postgresql.auto.conf, so that a later ``pg_ctl start`` listens where ``Cluster``
# made the first start listen (its options are given on the command line only).
KEPT_SETTINGS = {"listen_addresses": "", "fsync": "off"}


# --------------------------------------------------------------------------- the cluster


class KeptCluster(Cluster):
    """``Cluster``, kept between runs: started again from its folder if it exists."""

    def ensure_running(self) -> bool:
        """Start the server (creating the cluster the first time); whether we started it."""
        if (self.data / "postmaster.pid").exists():
            return False
        if not (self.data / "PG_VERSION").exists():
            self.folder.mkdir(parents=True, exist_ok=True)
            self.start()
            self._keep_settings()
            return True
        self._run("pg_ctl", "-D", str(self.data), "-l", str(self.folder / "log"), "-w", "start")
        return True

    def _keep_settings(self) -> None:
        import psycopg

        settings = KEPT_SETTINGS | {"unix_socket_directories": str(self.folder)}
        with psycopg.connect(self.url(), autocommit=True) as conn:
            for name, value in settings.items():
                conn.execute(f"ALTER SYSTEM SET {name} = '{value}'")

    def stop_gently(self) -> None:
        """A clean shutdown (``Cluster.stop`` is immediate: fine for a cluster thrown away)."""
        self._run("pg_ctl", "-D", str(self.data), "-m", "fast", "-w", "stop")

    def database(self, name: str) -> str:
        """The URL of database ``name``, created if missing."""
        import psycopg

        with psycopg.connect(self.url(), autocommit=True) as conn:
            found = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name])
            if found.fetchone() is None:
                conn.execute(f"CREATE DATABASE {name}")
        return self.url(name)


def cluster_at(folder: Path) -> KeptCluster:
    binaries = server_binaries()
    if binaries is None:
        raise SystemExit("PostgreSQL's server is not installed (Debian: postgresql)")
    return KeptCluster(binaries, folder)


@contextmanager
def running(folder: Path) -> Iterator[KeptCluster]:
    """The cluster at ``folder``, running; stopped afterwards only if we started it."""
    cluster = cluster_at(folder)
    started = cluster.ensure_running()
    try:
        yield cluster
    finally:
        if started:
            cluster.stop_gently()


# --------------------------------------------------------------------------- loading


def stored_survey(url: str) -> Survey:
    """The benchmark survey in the database at ``url``, stored through the app if missing."""
    db = backends.connect(url)
    try:
        backends.migrate(db)
        survey = get_survey(db, SLUG)
        if survey is None:
            definition = parse_definition(SHAPE.definition(SLUG), f"{SLUG}.json", "json")
            survey = store_survey(db, definition)
        return survey
    finally:
        db.conn.close()


def generated_rows(
    survey: Survey, responses: int, seed: int, totals: dict[str, dict[str, int]]
) -> Iterator[bytes]:
    """``COPY`` text for ``responses`` rows, a batch at a time, as ``record_response``
    stores them; each question's tally cells are added to ``totals`` as we go."""
    columns = [load_synthetic.Column(q, SHAPE.truth[q.key]) for q in survey.questions]
    formatter = load_synthetic.AnswerFormatter([q.key for q in survey.questions])
    rng = np.random.default_rng(seed)
    prefix = f"{survey.id}\t"
    suffix = f"\t{datetime.date.today().isoformat()}\t{survey.design}\t"
    for count in load_synthetic._batches(responses, BATCH):
        tokens = []
        for column in columns:
            column_tokens, cells = column.batch(rng, count)
            tokens.append(column_tokens)
            mine = totals.setdefault(column.question.key, {})
            for cell, value in cells.items():
                mine[cell] = mine.get(cell, 0) + value
        texts = formatter.format(tokens)
        formatter.check(tokens, texts)
        ids = load_synthetic.submission_ids(count)
        yield "".join(
            f"{prefix}{sid}{suffix}{text}\n" for sid, text in zip(ids, texts, strict=True)
        ).encode()


def copy_rows(url: str, survey: Survey, responses: int, seed: int) -> dict[str, Any]:
    """COPY the generated rows in, set the survey's count; seconds and the kept totals."""
    totals: dict[str, dict[str, int]] = {}
    db = postgresql.connect(url)
    started = time.perf_counter()
    loaded = 0
    try:
        with write_transaction(db), db.conn.raw.cursor() as cursor, cursor.copy(COPY_SQL) as copy:
            for block in generated_rows(survey, responses, seed, totals):
                copy.write(block)
                loaded += block.count(b"\n")
                print(f"  {loaded:>12,} rows {time.perf_counter() - started:7.1f} s", flush=True)
        copied = time.perf_counter() - started
        with write_transaction(db):
            db.execute(
                "UPDATE surveys SET responses = (SELECT count(*) FROM responses "
                "WHERE survey_id = ?) WHERE id = ?",
                [survey.id, survey.id],
            )
        db.conn.raw.execute("VACUUM (ANALYZE) responses")
        return {
            "rows": loaded,
            "copy_seconds": round(copied, 1),
            "vacuum_analyze_seconds": round(time.perf_counter() - started - copied, 1),
            "totals": totals,
        }
    finally:
        db.conn.close()


def rebuild_tallies(url: str, survey: Survey, totals: dict[str, dict[str, int]]) -> dict[str, Any]:
    """``tallies.recount``, as ``survey-app recount`` runs it, checked against ``totals``.

    Where the recount cannot run on PostgreSQL yet (its SQL is SQLite's), the generator's
    totals are stored instead, as ``load_synthetic`` stores them, and the error is kept in
    the results: ``recount`` (the subcommand) runs it again later on the same rows.
    """
    import psycopg

    db = backends.connect(url)
    started = time.perf_counter()
    try:
        result = tallies.recount(db, survey)
    except psycopg.ProgrammingError as err:
        store_totals(db, survey, totals)
        return {"recount_error": str(err).splitlines()[0], "tallies": "the generator's totals"}
    finally:
        db.conn.close()
    return {
        "recount_seconds": round(time.perf_counter() - started, 1),
        "recount_matches_generated_totals": result.after == totals,
    }


def rebuild_joint_counts(url: str, survey: Survey) -> dict[str, Any]:
    """``joint_tallies.rebuild``, as ``survey-app recount`` runs it: the rows went in by
    ``COPY``, not through ``record_response``, so the joint counts kept as responses
    arrive are built from them once (and, on a database loaded before they existed, this
    is the upgrade's one-off rebuild)."""
    db = backends.connect(url)
    started = time.perf_counter()
    try:
        result = joint_tallies.rebuild(db, survey)
    finally:
        db.conn.close()
    return {
        "joint_counts_seconds": round(time.perf_counter() - started, 1),
        "joint_counts_matched": result.matched,
    }


def store_totals(db: backends.Database, survey: Survey, totals: dict[str, dict[str, int]]) -> None:
    ids = {q.key: q.id for q in survey.questions}
    with write_transaction(db):
        db.conn.executemany(
            "INSERT INTO tallies (question_id, cell, value) VALUES (?, ?, ?) "
            "ON CONFLICT (question_id, cell) DO UPDATE SET value = excluded.value",
            [
                (ids[key], cell, value)
                for key, cells in totals.items()
                for cell, value in cells.items()
            ],
        )


def one_number(url: str, sql: str) -> int:
    """The one number ``sql`` reads from the database at ``url``, on a connection of its own."""
    db = postgresql.connect(url)
    try:
        return int(db.execute(sql).fetchone()[0])
    finally:
        db.conn.close()


def database_size(url: str) -> int:
    return one_number(url, "SELECT pg_database_size(current_database())")


def load(cluster: KeptCluster, name: str, responses: int, seed: int) -> dict[str, Any]:
    """A fresh database ``name`` with ``responses`` rows and its tallies rebuilt."""
    import psycopg

    with psycopg.connect(cluster.url(), autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {name}")
    url = cluster.database(name)
    survey = stored_survey(url)
    started = time.perf_counter()
    copied = copy_rows(url, survey, responses, seed)
    rebuilt = rebuild_tallies(url, survey, copied["totals"])
    joint = rebuild_joint_counts(url, survey)
    return {
        "database": name,
        "responses": responses,
        **copied,
        **rebuilt,
        **joint,
        "load_seconds": round(time.perf_counter() - started, 1),
        "database_bytes": database_size(url),
    }


# --------------------------------------------------------------------------- the cold count

# The joint count of ``cheated`` by ``year`` (the by-group page's) over the survey's
# first rows, as ``crosstabs._scan`` asks for it (``id > ? AND id <= ?``), written the
# ways PostgreSQL can read a value out of JSON, each as (what reads a key's value, the
# rows read). The last two read copies of the same rows made for the comparison: the JSON
# kept as jsonb (a generated column would hold that), and the values in typed columns.
NO_ANSWER = f"nullif({{}}, '{NOT_APPLICABLE}')"
ROWS = "SELECT {select} FROM responses WHERE survey_id = %(survey)s AND id <= %(last)s"
COUNT_VARIANTS = {
    # The text parsed into jsonb once per key asked for (the plan's translation).
    "jsonb per key": ("answers::jsonb ->> '{key}'", ROWS.format(select="answers")),
    # Parsed once per row, then read per key.
    "jsonb once per row": (
        "answers ->> '{key}'",
        ROWS.format(select="answers::jsonb AS answers") + " OFFSET 0",
    ),
    # The json type: checked, then scanned per key (no tree built).
    "json per key": ("answers::json ->> '{key}'", ROWS.format(select="answers")),
    "stored jsonb": ("answers ->> '{key}'", "SELECT answers FROM kept_jsonb"),
    "typed columns": ("{key}::text", "SELECT * FROM kept_columns"),
}
COUNTED_KEYS = ("cheated", "year")
KEPT_COPIES = (
    f"CREATE TEMPORARY TABLE kept_jsonb AS SELECT answers::jsonb AS answers FROM ({ROWS}) r",
    "CREATE TEMPORARY TABLE kept_columns AS SELECT "
    + ", ".join(f"(answers ->> '{key}')::smallint AS {key}" for key in COUNTED_KEYS)
    + " FROM kept_jsonb",
)


def count_sql(variant: str, keys: Sequence[str]) -> str:
    extract, rows = COUNT_VARIANTS[variant]
    columns = ", ".join(NO_ANSWER.format(extract.format(key=key)) for key in keys)
    groups = ", ".join(str(i + 1) for i in range(len(keys)))
    return f"SELECT {columns}, count(*) FROM ({rows}) counted GROUP BY {groups}"  # noqa: S608


def explain(
    url: str, rows: int, parallel_workers: Sequence[int], variants: Sequence[str]
) -> list[dict[str, Any]]:
    """Each of ``variants`` of the cold count over the survey's first ``rows`` rows, with
    and without PostgreSQL's parallel workers: the time ``EXPLAIN ANALYZE`` reports (the
    clock not read per row, which would add its own cost to every row), and the plan.
    The variants read the same rows into the same aggregate: what differs between their
    times is what reading the values out of the JSON costs."""
    import psycopg

    runs = []
    with psycopg.connect(url, autocommit=True) as conn:
        survey = conn.execute("SELECT id FROM surveys WHERE slug = %s", [SLUG]).fetchone()
        assert survey is not None, f"no survey {SLUG!r} at {url}"
        first = conn.execute("SELECT min(id) FROM responses").fetchone()
        bounds = {"survey": survey[0], "last": (first[0] if first else 0) + rows - 1}
        if {"stored jsonb", "typed columns"} & set(variants):
            for statement in KEPT_COPIES:
                conn.execute(statement.format(select="answers"), bounds)
            conn.execute("ANALYZE kept_jsonb")
            conn.execute("ANALYZE kept_columns")
        for workers in parallel_workers:
            conn.execute(f"SET max_parallel_workers_per_gather = {int(workers)}")
            for variant in variants:
                sql = count_sql(variant, COUNTED_KEYS)
                started = time.perf_counter()
                plan = conn.execute(
                    f"EXPLAIN (ANALYZE, TIMING OFF, BUFFERS, FORMAT JSON) {sql}", bounds
                )
                wall = time.perf_counter() - started
                top: dict[str, Any] = (plan.fetchone() or [[{}]])[0][0]
                runs.append(
                    {
                        "variant": variant,
                        "rows": rows,
                        "parallel_workers": workers,
                        "execution_ms": round(top.get("Execution Time", 0.0)),
                        "wall_seconds": round(wall, 2),
                        "sql": sql,
                        "plan": top.get("Plan"),
                    }
                )
                print(f"{variant:>20} workers {workers}: {wall:6.2f} s", flush=True)
    return runs


# --------------------------------------------------------------------------- measuring


def forget_counts_and_researcher(url: str) -> None:
    """No count snapshot and no lease: the next analysis of the survey starts cold. No
    researcher of an earlier run either: each run makes its own, with a new password."""
    db = postgresql.connect(url)
    earlier = f"(SELECT id FROM researchers WHERE username = '{USERNAME}')"
    try:
        with write_transaction(db):
            db.execute("DELETE FROM count_snapshots")
            db.execute("DELETE FROM count_leases")
            for table in ("researcher_sessions", "password_links", "survey_viewers"):
                db.execute(f"DELETE FROM {table} WHERE researcher_id IN {earlier}")  # noqa: S608
            db.execute(f"UPDATE surveys SET owner_id = NULL WHERE owner_id IN {earlier}")  # noqa: S608
            db.execute(f"DELETE FROM researchers WHERE id IN {earlier}")  # noqa: S608
    finally:
        db.conn.close()


def first_request(client: Researcher, path: str) -> dict[str, Any]:
    """Seconds until ``path`` answers 200, following each 503 after its ``Retry-After``
    as the "being prepared" page makes a browser do; the statuses seen."""
    statuses = []
    started = time.perf_counter()
    while True:
        status, _body, reply = client.browser.fetch("GET", path)
        statuses.append(status)
        if status != 503:
            break
        time.sleep(float(reply.getheader("Retry-After") or 1))
    seconds = time.perf_counter() - started
    return {"seconds": round(seconds, 3), "statuses": statuses, "answered": status == 200}


def export_memory(server: Server, client: Researcher, seconds: float) -> dict[str, Any]:
    """The per-response CSV, read (and counted, not kept) for at most ``seconds``, with
    the workers' peak RSS (``VmHWM``, reset to the RSS just before) read every half
    second meanwhile: a worker the server kills mid-export (its ``--timeout``) is gone
    by the end, its peak with it. The stream ends early if the server cuts it."""
    before, cpu_before = worker_memory(server), worker_cpu(server)
    reset = all([reset_peak_rss(pid) for pid in before])
    peaks: dict[int, int] = {}
    done = threading.Event()

    def sample() -> None:
        while True:
            finished = done.wait(0.5)
            for pid, memory in worker_memory(server).items():
                peaks[pid] = max(peaks.get(pid, 0), memory.get("VmHWM", 0))
            if finished:
                return

    sampler = threading.Thread(target=sample)
    sampler.start()
    lines = size = 0
    started = time.perf_counter()
    ending = "complete"
    response = client.browser.open("GET", f"{DASHBOARD}/responses.csv")
    try:
        while chunk := response.read1(1 << 20):
            lines += chunk.count(b"\n")
            size += len(chunk)
            if time.perf_counter() - started > seconds:
                ending = f"stopped by us after {seconds:.0f} s"
                break
    except CONNECTION_ERRORS as err:
        ending = f"cut by the server: {type(err).__name__}"
    finally:
        response.close()
        client.browser.close()
        done.set()
        sampler.join()
    elapsed = time.perf_counter() - started
    cpu = {pid: used - cpu_before[pid] for pid, used in worker_cpu(server).items()}
    return {
        "ending": ending,
        "seconds": round(elapsed, 1),
        "lines": lines,
        "bytes": size,
        "rows_per_second": round((lines - 1) / elapsed),
        "peak_reset": reset,
        "rss_before_mib": round(max(m["VmRSS"] for m in before.values()) / 1024, 1),
        "peak_during_export_mib": round(max(peaks.values(), default=0) / 1024, 1),
        "worker_cpu_seconds_of_survivors": round(max(cpu.values(), default=0.0), 1),
        "server_log_problems": server.log_problems(),
    }


def interleaved_dashboards(
    clients: dict[str, Researcher], rounds: int, per_round: int
) -> dict[str, dict[str, Any]]:
    """The dashboard of each database, ``per_round`` GETs at a time, taking turns, so
    that the machine's other work weighs on both alike."""
    samples: dict[str, list[float]] = {name: [] for name in clients}
    for client in clients.values():
        client.timings(DASHBOARD, 1, 5)  # every worker's first look is behind us
    for _ in range(rounds):
        for name, client in clients.items():
            for _ in range(per_round):
                started = time.perf_counter()
                client.get(DASHBOARD)
                samples[name].append(1000 * (time.perf_counter() - started))
    return {name: summarize_ms(times) for name, times in samples.items()}


def measure(cluster: KeptCluster, args: argparse.Namespace) -> dict[str, Any]:
    """Both databases served at once; see the module's docstring."""
    secret_key = new_secret_key()
    urls = {name: cluster.database(name) for name in ("small", "large")}
    result: dict[str, Any] = {"started": now(), "machine": machine_info()}
    args.data_dir.mkdir(parents=True, exist_ok=True)
    for url in urls.values():
        forget_counts_and_researcher(url)
        create_researcher(server_env(url, secret_key))  # type: ignore[arg-type]
    with contextlib.ExitStack() as stack:
        servers = {
            name: stack.enter_context(
                Server(url, ServerConfig(), secret_key, args.data_dir / f"gunicorn-{name}.log")  # type: ignore[arg-type]
            )
            for name, url in urls.items()
        }
        clients = {name: Researcher(server.port) for name, server in servers.items()}
        for client in clients.values():
            client.log_in(DASHBOARD)
        result["responses"] = {name: count_responses(url) for name, url in urls.items()}
        result["joint_counts_complete"] = {
            name: joint_counts_complete(url) for name, url in urls.items()
        }
        result["cold"] = {
            name: {page: first_request(client, path) for page, path in COLD_PAGES.items()}
            for name, client in clients.items()
        }
        result["dashboard"] = interleaved_dashboards(clients, args.rounds, args.requests)
        result["export"] = {
            name: export_memory(servers[name], clients[name], args.export_seconds)
            for name in ("small", "large")
        }
        result["server_logs_clean"] = {
            name: not server.log_problems() for name, server in servers.items()
        }
    result["summary"] = summary(result)
    result["finished"] = now()
    return result


def count_responses(url: str) -> int:
    return one_number(url, "SELECT count(*) FROM responses")


def joint_counts_complete(url: str) -> bool:
    """Whether every sensitive question's kept joint counts hold every response (false on
    a database loaded before they existed, until ``recount`` rebuilt them)."""
    missing = (
        "SELECT count(*) FROM questions WHERE sensitive = 1 AND joint_tallies_complete IS NULL"
    )
    return one_number(url, missing) == 0


def summary(result: dict[str, Any]) -> dict[str, Any]:
    dashboard, export, cold = result["dashboard"], result["export"], result["cold"]
    ratio = dashboard["large"]["median_ms"] / dashboard["small"]["median_ms"]
    slowest_cold = max(
        page["seconds"] if page["answered"] else float("inf") for page in cold["large"].values()
    )
    growth = {
        name: run["peak_during_export_mib"] - run["rss_before_mib"] for name, run in export.items()
    }
    return {
        "dashboard_ratio": round(ratio, 2),
        "slowest_cold_seconds": slowest_cold,
        "export_peak_above_rss_before_mib": growth,
        "targets_met": {
            "dashboard_ratio_at_most_1_2": ratio <= TARGETS["dashboard_ratio"],
            "first_analysis_under_2_s": slowest_cold < TARGETS["cold_seconds"],
            "export_in_constant_memory": growth["large"]
            <= growth["small"] + TARGETS["export_growth_mib"],
            "export_has_n_plus_1_lines": all(
                export[name]["lines"] == result["responses"][name] + 1 for name in export
            ),
        },
    }


def now() -> str:
    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")


def write_json(name: str, data: dict[str, Any], results: Path) -> Path:
    results.mkdir(parents=True, exist_ok=True)
    path = results / f"ten-million-{name}.json"
    path.write_text(json.dumps(data, indent=2, default=str) + "\n")
    return path


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("command", choices=["load", "recount", "measure", "explain", "stop"])
    parser.add_argument("--folder", type=Path, default=DEFAULT_FOLDER)
    parser.add_argument("--responses", type=int, default=10_000_000)
    parser.add_argument("--seed", type=int, default=load_synthetic.DEFAULT_SEED)
    parser.add_argument("--rounds", type=int, default=10, help="dashboard rounds")
    parser.add_argument("--requests", type=int, default=10, help="dashboard GETs a round")
    parser.add_argument(
        "--export-seconds", type=float, default=600.0, help="read the CSV at most this long"
    )
    parser.add_argument("--rows", type=int, default=1_000_000, help="rows explain counts")
    parser.add_argument(
        "--variants", nargs="+", choices=list(COUNT_VARIANTS), default=list(COUNT_VARIANTS)
    )
    parser.add_argument("--parallel-workers", type=int, nargs="+", default=[0, 2])
    parser.add_argument("--data-dir", type=Path, default=HERE / "data" / "ten-million")
    parser.add_argument("--results-dir", type=Path, default=HERE / "results")
    args = parser.parse_args(argv)
    if args.command == "load":
        with running(args.folder) as cluster:
            loads = [
                load(cluster, "small", SMALL_RESPONSES, args.seed),
                load(cluster, "large", args.responses, args.seed + 1),
            ]
        print(write_json("load", {"loads": loads}, args.results_dir))
    elif args.command == "recount":
        with running(args.folder) as cluster:
            recounts = {}
            for name in ("small", "large"):
                url = cluster.database(name)
                recounts[name] = rebuild_joint_counts(url, stored_survey(url))
        print(write_json("recount", {"started": now(), "recounts": recounts}, args.results_dir))
    elif args.command == "measure":
        with running(args.folder) as cluster:
            result = measure(cluster, args)
        print(write_json("measure", result, args.results_dir))
        print(json.dumps(result["summary"], indent=2))
        return 0 if all(result["summary"]["targets_met"].values()) else 1
    elif args.command == "explain":
        with running(args.folder) as cluster:
            runs = explain(
                cluster.database("large"), args.rows, args.parallel_workers, args.variants
            )
        print(write_json("explain", {"started": now(), "runs": runs}, args.results_dir))
    else:
        cluster_at(args.folder).stop_gently()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
