"""Three app servers behind nginx on one PostgreSQL, with faults: one server SIGKILLed and
PostgreSQL restarted mid-run; then one server on SQLite, same client, for comparison.

The setup is docs/deploying-several-servers.md's, run on this machine: a PostgreSQL
cluster listening on 127.0.0.1 with a password (scram-sha-256), three gunicorn servers on
three fixed ports with the same settings, nginx in front with an upstream of the three.

Every response is one new browser (loadlib.Browser): GET the form, POST answers. A
refused request (502/503 or a connection error) is sent again, the POST byte for byte with
the same form, until it is answered 200; so every response ends acknowledged, and the
form token's single use is what keeps a POST whose first reply was lost from being stored
twice. A response is identified afterwards by the submission id its form carried, which
the app already stores with the row (nothing new is stored for the benchmark).

Checks: every acknowledged submission id stored exactly once and as its thank-you page
said, nothing stored that was not acknowledged, ``survey-app recount`` finds the counters
matching, and no traceback in any server's log.

    .venv/bin/python benchmarks/three_nodes.py                       # 20,000 responses
    .venv/bin/python benchmarks/three_nodes.py --responses 3000      # a short run
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import pwd
import random
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make ``benchmarks`` and ``survey_app`` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks import loadlib  # noqa: E402

SERVICE_USER = "postgres"  # PostgreSQL refuses to run as root; Debian's package makes this user
DATABASE_NAME = "survey"
APP_USER = "survey_app"
REFUSED = (502, 503, 504)  # what a client retries (nginx's 502/504: no server answered)
RETRY_PAUSE_SECONDS = 0.2
THREE_NODES = "postgresql, three nodes behind nginx"
ONE_SQLITE_NODE = "sqlite, one node behind nginx"


def free_port() -> int:
    """A port nothing listens on now (bound and released: good enough on one machine)."""
    with socket.socket() as sock:
        sock.bind((loadlib.HOST, 0))
        return int(sock.getsockname()[1])


# --------------------------------------------------------------------------- PostgreSQL


def _server_binaries() -> Path:
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"), key=lambda p: int(p.parts[4]))
    if not found:
        raise RuntimeError(
            "PostgreSQL's server is not installed (Debian: apt-get install postgresql)"
        )
    return found[-1].parent


class PostgresServer:
    """A throwaway PostgreSQL cluster as a deployment has one: on 127.0.0.1 and a port,
    password (scram-sha-256) required, one database and one role for the app."""

    def __init__(self, port: int | None = None) -> None:
        # A folder of its own under /tmp: the server's user must reach it, and its socket
        # path must stay short (at most 107 bytes).
        self.folder = Path(tempfile.mkdtemp(prefix="survey-pg-"))
        self.data = self.folder / "data"
        self.port = port or free_port()
        self.password = secrets.token_urlsafe(24)
        self.binaries = _server_binaries()
        self.user = pwd.getpwnam(SERVICE_USER) if os.geteuid() == 0 else None

    @property
    def url(self) -> str:
        """The app's ``SURVEY_APP_DATABASE``."""
        password = urllib.parse.quote(self.password, safe="")
        return f"postgresql://{APP_USER}:{password}@127.0.0.1:{self.port}/{DATABASE_NAME}"

    def create(self) -> PostgresServer:
        """initdb, start, and make the app's role and database (the guide's first step)."""
        superuser_password = self.folder / "superuser-password"
        superuser_password.write_text(secrets.token_urlsafe(24) + "\n")
        if self.user is not None:
            shutil.chown(self.folder, self.user.pw_name)
            shutil.chown(superuser_password, self.user.pw_name)
        # The socket sits in this owner-only folder, so "trust" there admits only the
        # server's own user (the guide's "peer", which needs that user to be "postgres"
        # and so fails for a developer running the benchmark as themselves). TCP, the
        # app's way in, requires the password.
        self._run(
            "initdb", "-D", str(self.data), "-U", SERVICE_USER, "-E", "UTF8", "--locale=C",
            "--auth-local=trust", "--auth-host=scram-sha-256",
            f"--pwfile={superuser_password}", "--no-instructions",
        )  # fmt: skip
        settings = (
            f"listen_addresses = '127.0.0.1'\nport = {self.port}\n"
            f"unix_socket_directories = '{self.folder}'\n"
        )
        with open(self.data / "postgresql.conf", "a") as conf:
            conf.write(settings)
        self.start()
        self.psql(f"CREATE ROLE {APP_USER} LOGIN PASSWORD '{self.password}'")
        self.psql(f"CREATE DATABASE {DATABASE_NAME} OWNER {APP_USER}")
        return self

    def start(self) -> None:
        self._pg_ctl("start")

    def stop(self, mode: str = "fast") -> None:
        self._pg_ctl("stop", "-m", mode)

    def restart(self) -> None:
        """``pg_ctl restart -m fast``: every connection is ended, the server back in seconds."""
        self._pg_ctl("restart", "-m", "fast")

    def remove(self) -> None:
        if (self.data / "postmaster.pid").exists():
            self.stop("immediate")
        shutil.rmtree(self.folder, ignore_errors=True)

    def psql(self, sql: str, database: str = "postgres") -> str:
        """Run SQL as the superuser over the cluster's own socket."""
        return self._run(
            "psql", "-h", str(self.folder), "-p", str(self.port), "-d", database,
            "-U", SERVICE_USER, "-v", "ON_ERROR_STOP=1", "-At", "-c", sql,
        )  # fmt: skip

    def _pg_ctl(self, *arguments: str) -> None:
        self._run("pg_ctl", "-D", str(self.data), "-l", str(self.folder / "log"), "-w", *arguments)

    def _run(self, program: str, *arguments: str) -> str:
        command = [str(self.binaries / program), *arguments]
        if self.user is not None:
            command = ["runuser", "-u", self.user.pw_name, "--", *command]
        done = subprocess.run(
            command, cwd=self.folder, capture_output=True, text=True, timeout=120, check=False
        )
        if done.returncode != 0:
            raise RuntimeError(f"{program} failed ({done.returncode}): {done.stderr.strip()}")
        return done.stdout


# --------------------------------------------------------------------------- the app servers


def node_environment(database: str, secret_key: str) -> dict[str, str]:
    """The settings every node shares (docs/deploying-several-servers.md)."""
    env = dict(os.environ)
    env.update(
        SURVEY_APP_DATABASE=database,
        SURVEY_APP_SECRET_KEY=secret_key,
        SURVEY_APP_TRUSTED_PROXIES="1",
        SURVEY_APP_RATE_LIMITS="off",  # one client address sends everything here
        PYTHONUNBUFFERED="1",
    )
    env["PYTHONPATH"] = os.pathsep.join(
        filter(None, [str(loadlib.REPO_ROOT), env.get("PYTHONPATH")])
    )
    return env


def survey_app(database: str, *args: str) -> str:
    """``survey-app ARGS`` against the database, as an operator runs it on a node."""
    done = subprocess.run(
        [*loadlib.survey_app_command(), *args],
        cwd=loadlib.REPO_ROOT,
        env=node_environment(database, "unused by commands"),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"survey-app {' '.join(args)} failed: {done.stdout}{done.stderr}")
    return done.stdout


@dataclass
class Node:
    """One gunicorn server on a fixed port (nginx's upstream names it), restartable there."""

    name: str
    database: str
    secret_key: str
    folder: Path
    config: loadlib.ServerConfig = loadlib.ServerConfig(2, 1, "sync")
    port: int = field(default_factory=free_port)
    process: subprocess.Popen[bytes] | None = None

    @property
    def log_path(self) -> Path:
        return self.folder / f"{self.name}.log"

    def start(self, timeout: float = 60.0) -> Node:
        command = [
            sys.executable, "-m", "gunicorn", "--bind", f"{loadlib.HOST}:{self.port}",
            "--workers", str(self.config.workers), "--threads", str(self.config.threads),
            "--worker-class", self.config.worker_class, "--timeout", str(loadlib.WORKER_TIMEOUT),
            "--graceful-timeout", "10", "--control-socket", str(self.folder / f"{self.name}.ctl"),
            loadlib.APP,
        ]  # fmt: skip
        with open(self.log_path, "ab") as log:
            self.process = subprocess.Popen(
                command,
                cwd=loadlib.REPO_ROOT,
                env=node_environment(self.database, self.secret_key),
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # its own process group: one killpg takes it all
            )
        self._wait_ready(timeout)
        return self

    def _wait_ready(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            assert self.process is not None
            if self.process.poll() is not None:
                raise RuntimeError(f"{self.name} exited at start:\n{self.log_text()}")
            if status(self.port, "/healthz") == 200:
                return
            time.sleep(0.1)
        raise RuntimeError(f"{self.name} did not answer /healthz in {timeout} s")

    def kill(self) -> None:
        """SIGKILL the whole process group: no worker finishes anything."""
        assert self.process is not None
        os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=30)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=30)

    def log_text(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def log_problems(self) -> dict[str, int]:
        text = self.log_text()
        found = {p: text.count(p) for p in loadlib.BAD_LOG_PATTERNS if p in text}
        found.pop("was sent SIGKILL", None)  # the arbiter's words when we kill it: expected
        return found


def status(port: int, path: str) -> int | None:
    """GET ``path``: its status, or None when nothing answered."""
    browser = loadlib.Browser(port, timeout=10)
    try:
        return browser.get(path)[0]
    except loadlib.CONNECTION_ERRORS:
        return None
    finally:
        browser.close()


# --------------------------------------------------------------------------- nginx

NGINX_CONFIG = """\
worker_processes 1;
pid {folder}/nginx.pid;
error_log {folder}/nginx-error.log;
events {{ worker_connections 1024; }}
http {{
    access_log off;  # it would hold addresses and exact times the database never does
    client_body_temp_path {folder}/body;
    proxy_temp_path {folder}/proxy;
    fastcgi_temp_path {folder}/fastcgi;
    uwsgi_temp_path {folder}/uwsgi;
    scgi_temp_path {folder}/scgi;
    upstream survey_app {{
{servers}
        keepalive 32;
    }}
    server {{
        listen 127.0.0.1:{port};
        client_max_body_size 64k;
        location / {{
            proxy_pass http://survey_app;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_set_header Host $host;
            proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
            proxy_set_header X-Forwarded-Proto $scheme;
            proxy_connect_timeout 2s;
            proxy_read_timeout 130s;
            proxy_next_upstream error timeout;
        }}
    }}
}}
"""


class Nginx:
    """nginx in front of the nodes: the guide's upstream, run in the foreground."""

    def __init__(self, folder: Path, ports: Sequence[int]) -> None:
        self.folder = folder
        self.port = free_port()
        servers = "\n".join(
            f"        server 127.0.0.1:{p} max_fails=1 fail_timeout=5s;" for p in ports
        )
        self.config = folder / "nginx.conf"
        folder.mkdir(parents=True, exist_ok=True)
        self.config.write_text(NGINX_CONFIG.format(folder=folder, servers=servers, port=self.port))
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> Nginx:
        nginx = shutil.which("nginx") or "/usr/sbin/nginx"
        self.process = subprocess.Popen(
            [nginx, "-p", str(self.folder), "-c", str(self.config), "-g", "daemon off;"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 10
        while status(self.port, "/healthz") != 200:
            if time.monotonic() > deadline or self.process.poll() is not None:
                raise RuntimeError(f"nginx did not start: {self.folder / 'nginx-error.log'}")
            time.sleep(0.1)
        return self

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=30)


# --------------------------------------------------------------------------- the client


@dataclass
class Answered:
    """One response as its client saw it, after as many tries as it took."""

    submission_id: str = ""
    stored_on_page: dict[str, int] | None = None
    tries: Counter[str] = field(default_factory=Counter)  # "GET 503", "POST error", ...
    seconds: float = 0.0


def _send_until_answered(
    answered: Answered, method: str, send: Callable[[], tuple[int, str]]
) -> str:
    """Send until the reply is neither a refusal nor a connection error; the page."""
    while True:
        try:
            code, page = send()
        except loadlib.CONNECTION_ERRORS:
            answered.tries[f"{method} error"] += 1
        else:
            answered.tries[f"{method} {code}"] += 1
            if code not in REFUSED:
                if code != 200:
                    raise RuntimeError(f"{method} answered {code}: {page[:300]}")
                return page
        time.sleep(RETRY_PAUSE_SECONDS)


def answer_until_stored(port: int, slug: str, rng: random.Random) -> Answered:
    """A new browser answers the survey once, retrying every refusal until acknowledged."""
    answered = Answered()
    browser = loadlib.Browser(port)
    path = f"/s/{slug}"
    started = time.perf_counter()
    try:
        page = _send_until_answered(answered, "GET", lambda: browser.get(path))
        hidden = dict(loadlib.HIDDEN_INPUT.findall(page))
        answered.submission_id = hidden.get("submission_id", "").partition(".")[0]
        answers = {key: rng.choice(("y", "n")) for key in loadlib.RADIO_YES.findall(page)}
        body = urllib.parse.urlencode({**hidden, **answers}).encode()
        headers = browser.headers_for("POST", path, body)  # the same bytes on every try
        page = _send_until_answered(
            answered, "POST", lambda: browser.send("POST", path, body, headers)
        )
        answered.stored_on_page = loadlib.stored_answers(page)
    finally:
        browser.close()
        answered.seconds = time.perf_counter() - started
    return answered


class Load:
    """``total`` responses from ``clients`` threads, observable while it runs."""

    def __init__(self, port: int, slug: str, clients: int, total: int, seed: int) -> None:
        self.port, self.slug, self.clients, self.total, self.seed = port, slug, clients, total, seed
        self.results: list[Answered] = []
        self.failures: list[str] = []
        self.seconds = 0.0
        self.client_cpu_seconds = 0.0
        self.machine_cpu_seconds = 0.0  # every process's, ours and other people's
        self._next = iter(range(total))
        self._lock = threading.Lock()

    @property
    def acknowledged(self) -> int:
        return len(self.results)

    def _worker(self) -> None:
        while True:
            with self._lock:
                number = next(self._next, None)
            if number is None:
                return
            rng = random.Random(self.seed * 1_000_003 + number)
            try:
                result = answer_until_stored(self.port, self.slug, rng)
            except RuntimeError as err:  # an answer other than 200 or a refusal
                with self._lock:
                    self.failures.append(str(err))
                continue
            with self._lock:
                self.results.append(result)

    def run(self) -> Load:
        cpu, machine = time.process_time(), loadlib.machine_cpu_seconds()["busy"]
        threads = [threading.Thread(target=self._worker, daemon=True) for _ in range(self.clients)]
        started = time.perf_counter()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        self.seconds = time.perf_counter() - started
        self.client_cpu_seconds = time.process_time() - cpu
        self.machine_cpu_seconds = loadlib.machine_cpu_seconds()["busy"] - machine
        return self

    def summary(self) -> dict[str, Any]:
        tries: Counter[str] = Counter()
        for result in self.results:
            tries.update(result.tries)
        latencies = [r.seconds for r in self.results]
        return {
            "acknowledged": self.acknowledged,
            "failures": len(self.failures),
            "failure_samples": self.failures[:3],
            "seconds": round(self.seconds, 1),
            "responses_per_second": round(self.acknowledged / self.seconds, 1),
            "latency_median_ms": round(loadlib.median(latencies) * 1000, 1) if latencies else None,
            "requests": dict(sorted(tries.items())),
            "client_cpu_seconds": round(self.client_cpu_seconds, 1),
            "machine_cpu_seconds": round(self.machine_cpu_seconds, 1),
            "machine_busy_fraction": round(
                self.machine_cpu_seconds / self.seconds / (os.cpu_count() or 1), 2
            ),
        }


# --------------------------------------------------------------------------- the checks


def stored_state(database: str, slug: str) -> dict[str, Any]:
    """Submission ids, answers, the tallies and the survey's response counter, read with
    psycopg (no app code). The example survey's questions are all yes/no."""
    import psycopg

    with psycopg.connect(database) as conn:
        survey_id, counter = conn.execute(
            "SELECT id, responses FROM surveys WHERE slug = %s", [slug]
        ).fetchone() or (None, None)
        rows = conn.execute(
            "SELECT submission_id, answers FROM responses WHERE survey_id = %s", [survey_id]
        ).fetchall()
        tallies = conn.execute(
            "SELECT q.key, t.cell, t.value FROM tallies t JOIN questions q "
            "ON q.id = t.question_id WHERE q.survey_id = %s AND t.value <> 0",
            [survey_id],
        ).fetchall()
    answers = {submission_id: json.loads(text) for submission_id, text in rows}
    rebuilt: Counter[tuple[str, str]] = Counter()
    for stored in answers.values():
        for key, value in stored.items():
            if value is not None:
                rebuilt[key, "n"] += 1
                rebuilt[key, "yes"] += int(value)
    return {
        "submission_ids": [row[0] for row in rows],
        "answers": answers,
        "responses_counter": counter,
        "tallies": {(key, cell): value for key, cell, value in tallies},
        "rebuilt": {cell: value for cell, value in rebuilt.items() if value},
    }


def check_run(checks: loadlib.Checks, load: Load, database: str, slug: str) -> None:
    """Nothing lost, nothing doubled, every response as its page said; counters agree."""
    checks.add("every response acknowledged in the end", not load.failures, load.failures[:3])
    acknowledged = [
        loadlib.Submission(submission_id=r.submission_id, stored_on_page=r.stored_on_page)
        for r in load.results
    ]
    state = stored_state(database, slug)
    loadlib.check_stored(checks, state, acknowledged)
    rows = len(state["submission_ids"])
    checks.add(
        "surveys.responses equals the stored rows",
        state["responses_counter"] == rows,
        f"counter {state['responses_counter']}, rows {rows}",
    )
    checks.add(
        "tallies equal the responses (recomputed from rows)",
        state["tallies"] == state["rebuilt"],
        f"{len(state['tallies'])} cells",
    )


# --------------------------------------------------------------------------- the runs


def run_sqlite(work: Path, args: argparse.Namespace) -> dict[str, Any]:
    """The same client against one node on a SQLite file, behind nginx likewise."""
    database = str(work / "survey.db")
    slug = survey_app(database, "import-survey", str(loadlib.EXAMPLE_SURVEY)).split()[-1]
    node = Node("sqlite", database, secrets.token_hex(32), work, args.config).start()
    nginx = Nginx(work / "nginx-sqlite", [node.port]).start()
    try:
        load = Load(nginx.port, slug, args.clients, args.sqlite_responses, args.seed).run()
    finally:
        nginx.stop()
        node.stop()
    checks = loadlib.Checks()
    checks.add("every response acknowledged", not load.failures, load.failures[:3])
    rows = survey_app(database, "recount", slug)
    checks.add("survey-app recount: counters matched", "Counters matched" in rows, rows)
    checks.add("server log clean", not node.log_problems(), node.log_problems())
    return {
        "backend": ONE_SQLITE_NODE,
        **load.summary(),
        "checks": checks.items,
        "ok": checks.ok,
    }


def run_three_nodes(work: Path, args: argparse.Namespace) -> dict[str, Any]:
    """Three nodes on PostgreSQL; SIGKILL one at 25 %, restart PostgreSQL at 50 %, bring
    the killed node back (same port) at 75 % if asked."""
    postgres = PostgresServer().create()
    events: list[tuple[float, int, str]] = []  # seconds into the run, acknowledged, what
    try:
        survey_app(postgres.url, "init-db")
        slug = survey_app(postgres.url, "import-survey", str(loadlib.EXAMPLE_SURVEY)).split()[-1]
        key = secrets.token_hex(32)
        nodes = [Node(f"node{i}", postgres.url, key, work, args.config).start() for i in (1, 2, 3)]
        nginx = Nginx(work / "nginx", [node.port for node in nodes]).start()
        load = Load(nginx.port, slug, args.clients, args.responses, args.seed)
        thread = threading.Thread(target=load.run, daemon=True)
        started = time.monotonic()

        def at(fraction: float, what: str, action: Callable[[], object]) -> None:
            while load.acknowledged < fraction * args.responses and thread.is_alive():
                time.sleep(0.01)
            action()
            events.append((time.monotonic() - started, load.acknowledged, what))

        try:
            thread.start()
            at(0.25, "node2 SIGKILLed", nodes[1].kill)
            at(0.5, "PostgreSQL restarted (pg_ctl restart -m fast)", postgres.restart)
            if args.restart_node:
                at(0.75, "node2 started again on its port", nodes[1].start)
            thread.join()
        finally:
            nginx.stop()
            for node in nodes:
                node.stop()
        checks = loadlib.Checks()
        check_run(checks, load, postgres.url, slug)
        problems = {node.name: node.log_problems() for node in nodes if node.log_problems()}
        checks.add("server logs free of tracebacks and timeouts", not problems, problems)
        return {
            "backend": THREE_NODES,
            **load.summary(),
            "events": [f"{t:.1f} s, {n} acknowledged: {what}" for t, n, what in events],
            "phases": phases(events, load.seconds, load.acknowledged),
            "checks": checks.items,
            "ok": checks.ok,
        }
    finally:
        postgres.remove()


def phases(
    events: Sequence[tuple[float, int, str]], seconds: float, total: int
) -> list[dict[str, Any]]:
    """Responses per second between one event and the next (from the start, to the end)."""
    marks = [(0.0, 0, "start"), *events, (seconds, total, "end")]
    return [
        {
            "after": what,
            "seconds": round(t1 - t0, 1),
            "responses_per_second": round((n1 - n0) / (t1 - t0), 1) if t1 > t0 else None,
        }
        for (t0, n0, what), (t1, n1, _next) in zip(marks, marks[1:], strict=False)
    ]


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--responses", type=int, default=20_000, help="through the three nodes")
    parser.add_argument("--sqlite-responses", type=int, default=None, help="default: --responses")
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--config", type=loadlib.ServerConfig.parse, default="2x1:sync",
                        help="each node's gunicorn setting (default 2x1:sync)")  # fmt: skip
    parser.add_argument("--no-node-restart", dest="restart_node", action="store_false")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=1, help="pairs of runs, interleaved")
    parser.add_argument("--results-dir", type=Path, default=loadlib.RESULTS_DIR)
    args = parser.parse_args(argv)
    args.sqlite_responses = args.sqlite_responses or args.responses
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    machine = loadlib.machine_info()
    loadlib.print_machine(machine)
    started = time.time()
    runs = []
    with loadlib.temporary_directory("survey-three-nodes-") as tmp:
        for repeat, run in itertools.product(range(args.repeat), (run_three_nodes, run_sqlite)):
            work = Path(tmp) / f"{run.__name__}-{repeat}"
            work.mkdir()
            result = run(work, args)
            print(json.dumps({k: v for k, v in result.items() if k != "checks"}, indent=2))
            print("\n".join(loadlib.Checks(result["checks"]).lines()))
            runs.append(result)
    medians = {
        backend: loadlib.median(r["responses_per_second"] for r in runs if r["backend"] == backend)
        for backend in (THREE_NODES, ONE_SQLITE_NODE)
    }
    ratio = round(medians[THREE_NODES] / medians[ONE_SQLITE_NODE], 2)
    print(f"median responses/s {medians}; three nodes on PostgreSQL / one on SQLite: {ratio}")
    return loadlib.finish(
        "three_nodes", machine, started, runs, args.results_dir, medians=medians, ratio=ratio
    )


if __name__ == "__main__":
    sys.exit(main())
