"""Shared pieces of the benchmarks: the one gunicorn harness (``Server``), the one HTTP
client (``Browser``, standard library only), and the checks run on the database afterwards.
The load, crash and scale (``bench_dashboard.py``) benchmarks all serve the app through
``Server`` with the recommended setting in docs/operating.md (``DEFAULT_CONFIG``) unless
told otherwise.

Every client "browser" has its own cookie jar and its own HTTP/1.1 keep-alive connection,
and answers exactly once (the app refuses a second response from the same browser), so
each response is: new browser, GET the form, POST the answers. About 5% of the POSTs are
sent a second time, byte for byte and with the cookie the browser had before the first
reply (the reply, Set-Cookie included, counts as lost), on a new connection.

Nothing here ever imports the app: the server is a subprocess (``gunicorn
"survey_app:create_app()"``) and the database is prepared and recounted through the
``survey-app`` command line, so the benchmarks exercise the public contracts only. The
database file itself is opened read-only-in-spirit with ``sqlite3`` for the checks.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import functools
import http.client
import http.cookiejar
import itertools
import json
import os
import platform
import random
import re
import secrets
import signal
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
RESULTS_DIR = REPO_ROOT / "benchmarks" / "results"
EXAMPLE_SURVEY = REPO_ROOT / "examples" / "campus-health.yaml"
VENV_BIN = Path(sys.executable).parent
HOST = "127.0.0.1"
APP = "survey_app:create_app()"
# Errors that mean "no usable reply": refused, reset, closed early, timed out, bad framing.
CONNECTION_ERRORS = (OSError, http.client.HTTPException)
# A log line with one of these means the app misbehaved even if every client was happy.
BAD_LOG_PATTERNS = (
    "Traceback",
    "database is locked",
    "WORKER TIMEOUT",
    "Exception in worker",
    "Error handling request",
    "was sent SIGKILL",
)

HIDDEN_INPUT = re.compile(r'<input type="hidden" name="(\w+)" value="([^"]*)">')
# Yes/no goes on the wire as "y"/"n" (equal lengths: a POST's size shows no answer).
RADIO_YES = re.compile(r'<input type="radio" name="(\w+)" value="y"')
# The thank-you page holds both texts per yes/no cell; the stored one has class="shown".
STORED_ANSWER = re.compile(
    r'<td data-key="(\w+)">(?:<span hidden=hidden>[^<]*</span>)*<span class="shown">(yes|no)<'
)


# --------------------------------------------------------------------------- the machine


def _read(path: str) -> str:
    try:
        return Path(path).read_text()
    except OSError:
        return ""


def machine_info() -> dict[str, Any]:
    """What the numbers were measured on; they mean little without it."""
    cpu_model = next(
        (
            line.split(":", 1)[1].strip()
            for line in _read("/proc/cpuinfo").splitlines()
            if line.startswith("model name")
        ),
        platform.processor() or "unknown",
    )
    mem_kib = next(
        (
            int(line.split()[1])
            for line in _read("/proc/meminfo").splitlines()
            if line.startswith("MemTotal:")
        ),
        0,
    )
    return {
        "nproc": os.cpu_count(),
        "cpu_model": cpu_model,
        "ram_gib": round(mem_kib / 1024 / 1024, 1),
        "python": platform.python_version(),
        "sqlite": sqlite3.sqlite_version,
        "gunicorn": _package_version("gunicorn"),
        "packages": {name: _package_version(name) for name in PACKAGES},
        "platform": platform.platform(),
        "commit": git_commit(),
    }


PACKAGES = ("flask", "werkzeug", "sqlite-utils", "numpy")  # gunicorn has its own key


def _git(*args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=REPO_ROOT, capture_output=True, text=True, timeout=10, check=True
    ).stdout.strip()


def git_commit() -> str:
    """The app's commit, with ``+dirty`` when the working tree has changes."""
    try:
        head = _git("rev-parse", "--short", "HEAD")
        dirty = _git("status", "--porcelain", "--untracked-files=no")
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return head + ("+dirty" if dirty else "")


def machine_cpu_seconds() -> dict[str, float]:
    """Machine-wide CPU seconds so far (all processes, all containers on this kernel).

    Compared with what the server and the client used in a phase, it shows whether
    something else was competing for the CPUs while we measured (``other``), and
    ``steal`` shows a hypervisor taking the virtual CPUs away.
    """
    fields = _read("/proc/stat").splitlines()[0].split()[1:] if _read("/proc/stat") else []
    if len(fields) < 8:
        return {"busy": 0.0, "steal": 0.0}
    ticks = os.sysconf("SC_CLK_TCK")
    user, nice, system, _idle, _iowait, irq, softirq, steal = (int(x) for x in fields[:8])
    return {"busy": (user + nice + system + irq + softirq) / ticks, "steal": steal / ticks}


class CpuMeter:
    """CPU used during one phase: by the server's processes, by us, by everything else."""

    def __init__(self, server: Server):
        self.server = server
        self.machine = machine_cpu_seconds()
        self.server_cpu = server.cpu_seconds()
        self.client_cpu = time.process_time()
        self.wall = time.perf_counter()

    def result(self) -> dict[str, float]:
        machine = machine_cpu_seconds()
        server = self.server.cpu_seconds() - self.server_cpu
        client = time.process_time() - self.client_cpu
        busy = machine["busy"] - self.machine["busy"]
        wall = time.perf_counter() - self.wall
        return {
            "server_cpu_seconds": round(server, 2),
            "client_cpu_seconds": round(client, 2),
            "other_cpu_seconds": round(max(0.0, busy - server - client), 2),
            "steal_cpu_seconds": round(machine["steal"] - self.machine["steal"], 2),
            "machine_busy_fraction": round(busy / wall / (os.cpu_count() or 1), 3) if wall else 0,
        }


def _package_version(name: str) -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(name)
    except PackageNotFoundError:
        return "unknown"


# --------------------------------------------------------------------------- the database


def server_env(database: Path, secret_key: str) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        SURVEY_APP_DATABASE=str(database),
        SURVEY_APP_SECRET_KEY=secret_key,
        SURVEY_APP_RATE_LIMITS="off",
        PYTHONUNBUFFERED="1",
    )
    # The ``survey-app`` script would import the package its virtualenv was installed
    # from; a worktree's benchmark measures that worktree's code, the CLI's too.
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO_ROOT), env.get("PYTHONPATH")]))
    return env


def survey_app_command() -> list[str]:
    """The ``survey-app`` script of this Python's environment, else the module itself."""
    script = VENV_BIN / "survey-app"
    return [str(script)] if script.exists() else [sys.executable, "-m", "survey_app.cli.commands"]


def survey_app_cli(database: Path, *args: str, secret_key: str = "x" * 32) -> str:
    """Run ``survey-app ARGS`` on the database and return its standard output."""
    done = subprocess.run(
        [*survey_app_command(), *args],
        cwd=REPO_ROOT,
        env=server_env(database, secret_key),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(
            f"survey-app {' '.join(args)} failed ({done.returncode}):\n{done.stdout}{done.stderr}"
        )
    return done.stdout


def prepare_database(database: Path, survey_file: Path = EXAMPLE_SURVEY) -> str:
    """A fresh database holding one survey; returns its slug."""
    return survey_app_cli(database, "import-survey", str(survey_file)).strip().splitlines()[-1]


def recount_cli(database: Path, slug: str) -> dict[str, Any]:
    """``survey-app recount SLUG``: did the stored counters already equal the recount?"""
    output = survey_app_cli(database, "recount", slug)
    return {"matched": "Counters matched" in output, "output": output.strip()}


def integrity_check(database: Path) -> str:
    conn = sqlite3.connect(database, timeout=30)
    try:
        return "\n".join(row[0] for row in conn.execute("PRAGMA integrity_check"))
    finally:
        conn.close()


def _rebuild_cells(cells: dict[str, int], kind: str, value: Any) -> None:
    """Add one stored value to its question's cells, as ``tallies.increments`` would."""
    if value is None:  # a skipped question counts nowhere
        return
    cells["n"] = cells.get("n", 0) + 1
    if kind == "yes_no":
        cells["yes"] = cells.get("yes", 0) + int(value)
    elif isinstance(value, str):  # unary encoding: one cell per bit set
        for index, bit in enumerate(value):
            if bit == "1":
                cells[str(index)] = cells.get(str(index), 0) + 1
    elif kind == "choice":
        cells[str(value)] = cells.get(str(value), 0) + 1
    else:
        cells["sum"] = cells.get("sum", 0) + int(value)
        cells["sum_squares"] = cells.get("sum_squares", 0) + int(value) ** 2


def database_state(database: Path, slug: str) -> dict[str, Any]:
    """The stored responses and tallies, and the tallies recomputed from the rows.

    Read with plain ``sqlite3`` (no app code): ``tallies`` holds one row per (question,
    cell): ``n``, ``yes``, an option's index, ``sum``, ``sum_squares``. Cells that are 0
    are left out on both sides (a "no" stores a ``yes`` cell of 0). The survey's
    ``responses`` counter and every row's ``design`` fingerprint are read too.
    """
    conn = sqlite3.connect(database, timeout=30)
    try:
        survey_id, responses_counter, design = conn.execute(
            "SELECT id, responses, design FROM surveys WHERE slug = ?", [slug]
        ).fetchone()
        rows = conn.execute(
            "SELECT submission_id, design, answers FROM responses WHERE survey_id = ?",
            [survey_id],
        ).fetchall()
        kinds = dict(
            conn.execute("SELECT key, type FROM questions WHERE survey_id = ?", [survey_id])
        )
        counters: dict[str, dict[str, int]] = {key: {} for key in kinds}
        for key, cell, value in conn.execute(
            "SELECT q.key, t.cell, t.value FROM tallies t JOIN questions q "
            "ON q.id = t.question_id WHERE q.survey_id = ?",
            [survey_id],
        ):
            if value:
                counters[key][cell] = value
    finally:
        conn.close()
    answers: dict[str, dict[str, Any]] = {}
    rebuilt: dict[str, dict[str, int]] = {key: {} for key in kinds}
    designs: Counter[str] = Counter()
    for submission_id, row_design, text in rows:
        stored = json.loads(text)
        answers[submission_id] = stored
        designs[row_design] += 1
        for key, value in stored.items():
            _rebuild_cells(rebuilt[key], kinds[key], value)
    return {
        "submission_ids": [row[0] for row in rows],
        "answers": answers,
        "counters": counters,
        "rebuilt_counters": rebuilt,
        "responses_counter": responses_counter,
        "survey_design": design,
        "row_designs": dict(designs),
    }


# --------------------------------------------------------------------------- the server


def _free_listening_socket() -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((HOST, 0))
    sock.set_inheritable(True)
    return sock


@dataclasses.dataclass(frozen=True)
class ServerConfig:
    """A gunicorn setting; the defaults are docs/operating.md's recommendation (4 sync
    workers)."""

    workers: int = 4
    threads: int = 1
    worker_class: str = "sync"

    @property
    def label(self) -> str:
        return f"{self.workers}x{self.threads} {self.worker_class}"

    @classmethod
    def parse(cls, text: str) -> ServerConfig:
        """``3x8`` (gthread) or ``5x1:sync``."""
        shape, _, worker_class = text.partition(":")
        workers, _, threads = shape.lower().partition("x")
        return cls(int(workers), int(threads or 1), worker_class or "gthread")


DEFAULT_CONFIG = ServerConfig()  # the recommended setting (docs/operating.md, LOAD.md)
# The --timeout of docs/operating.md. A sync worker cannot tell the arbiter it is alive while it
# streams a response, so at gunicorn's default of 30 s a per-response CSV of a million
# rows (20-50 s on 2 busy cores) would be killed mid-download ("WORKER TIMEOUT").
WORKER_TIMEOUT = 120


@functools.cache
def _gunicorn_has_control_socket() -> bool:
    usage = subprocess.run(
        [sys.executable, "-m", "gunicorn", "--help"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    ).stdout
    return "--control-socket" in usage


def _control_socket_options(log_path: Path) -> list[str]:
    """gunicorn >= 24 opens a control socket, by default at one shared path in $HOME; keep
    ours next to the log, so two servers on one machine never meet there."""
    if not _gunicorn_has_control_socket():
        return []
    return ["--control-socket", str(log_path.with_suffix(".ctl"))]


class Server:
    """``gunicorn "survey_app:create_app()"`` in a process group of its own.

    The listening socket is bound here (port 0, so never a clash) and handed to gunicorn
    as ``fd://N``; our copy is closed once gunicorn has it, so when gunicorn dies the port
    refuses connections instead of queueing them.
    """

    def __init__(
        self,
        database: Path,
        config: ServerConfig,
        secret_key: str,
        log_path: Path,
        app: str = APP,
    ):
        self.app = app
        self.database = database
        self.config = config
        self.secret_key = secret_key
        self.log_path = log_path
        self.process: subprocess.Popen[bytes] | None = None
        self.command: list[str] = []
        self.port = 0
        self._log_offset = 0

    def start(self, timeout: float = 60.0) -> Server:
        sock = _free_listening_socket()
        self.port = sock.getsockname()[1]
        command = [
            sys.executable,
            "-m",
            "gunicorn",
            "--bind",
            f"fd://{sock.fileno()}",
            "--workers",
            str(self.config.workers),
            "--threads",
            str(self.config.threads),
            "--worker-class",
            self.config.worker_class,
            "--timeout",
            str(WORKER_TIMEOUT),
            "--graceful-timeout",
            "10",
            *_control_socket_options(self.log_path),
            self.app,
        ]
        self.command = command
        log = open(self.log_path, "ab")  # noqa: SIM115 - handed to the child, closed below
        self._log_offset = log.tell()
        try:
            self.process = subprocess.Popen(
                command,
                cwd=REPO_ROOT,
                env=server_env(self.database, self.secret_key),
                stdout=log,
                stderr=subprocess.STDOUT,
                pass_fds=[sock.fileno()],
                start_new_session=True,  # its own process group: one killpg takes it all
            )
        finally:
            log.close()
            sock.close()
        self._wait_ready(timeout)
        return self

    def _wait_ready(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            assert self.process is not None
            if self.process.poll() is not None:
                raise RuntimeError(f"gunicorn exited at start:\n{self.log_text()}")
            try:
                conn = http.client.HTTPConnection(HOST, self.port, timeout=5)
                conn.request("GET", "/healthz")
                if conn.getresponse().status == 200 and self._all_workers_booted():
                    conn.close()
                    return
                conn.close()
            except CONNECTION_ERRORS:
                pass
            time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"gunicorn did not become ready in {timeout} s:\n{self.log_text()}")

    def _all_workers_booted(self) -> bool:
        return self.log_text().count("Booting worker") >= self.config.workers

    @property
    def pgid(self) -> int:
        assert self.process is not None
        return self.process.pid  # start_new_session: the leader's pid is the group id

    def group_pids(self) -> list[int]:
        pids = []
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit():
                stat = _read(f"/proc/{entry.name}/stat")
                fields = stat.rpartition(")")[2].split()
                if len(fields) > 2 and int(fields[2]) == self.pgid:
                    pids.append(int(entry.name))
        return pids

    def worker_pids(self) -> list[int]:
        """The workers: the process group without the arbiter."""
        return sorted(pid for pid in self.group_pids() if pid != self.pgid)

    def cpu_seconds(self) -> float:
        """User + system CPU time used so far by the arbiter and its live workers."""
        ticks = os.sysconf("SC_CLK_TCK")
        total = 0
        for pid in self.group_pids():
            fields = _read(f"/proc/{pid}/stat").rpartition(")")[2].split()
            if len(fields) > 12:
                total += int(fields[11]) + int(fields[12])  # utime, stime
        return total / ticks

    def kill(self) -> None:
        """SIGKILL the whole process group at once: no worker gets to finish anything."""
        assert self.process is not None
        os.killpg(self.pgid, signal.SIGKILL)
        self.process.wait(timeout=30)
        deadline = time.monotonic() + 10
        while self.group_pids() and time.monotonic() < deadline:  # workers die a bit later
            time.sleep(0.05)

    def stop(self) -> None:
        """Graceful stop (SIGTERM, as an init system would), SIGKILL if it hangs."""
        if self.process is None or self.process.poll() is not None:
            return
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(self.pgid, signal.SIGKILL)
            self.process.wait(timeout=30)

    def log_text(self) -> str:
        try:
            with open(self.log_path, "rb") as handle:
                handle.seek(self._log_offset)
                return handle.read().decode("utf-8", "replace")
        except OSError:
            return ""

    def log_problems(self) -> dict[str, int]:
        text = self.log_text()
        return {pattern: text.count(pattern) for pattern in BAD_LOG_PATTERNS if pattern in text}

    def log_tracebacks(self, limit: int = 2, max_lines: int = 80) -> list[str]:
        """The first few error blocks of the log (a log line and its traceback)."""
        blocks: list[list[str]] = []
        current: list[str] | None = None
        for line in self.log_text().splitlines():
            starts_entry = line.startswith("[")
            if current is not None and (starts_entry or len(current) >= max_lines):
                blocks.append(current)
                current = None
                if len(blocks) >= limit:
                    break
            if current is None and (
                line.startswith("Traceback") or ("[ERROR]" in line and starts_entry)
            ):
                current = [line]
            elif current is not None:
                current.append(line)
        if current is not None and len(blocks) < limit:
            blocks.append(current)
        return ["\n".join(block) for block in blocks]

    def __enter__(self) -> Server:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


# --------------------------------------------------------------------------- the clients


class Browser:
    """One browser: its own cookie jar and its own keep-alive connection."""

    def __init__(self, port: int, timeout: float = 60.0):
        self.port = port
        self.timeout = timeout
        self.jar = http.cookiejar.CookieJar()
        self.conn: http.client.HTTPConnection | None = None

    def _connection(self) -> http.client.HTTPConnection:
        if self.conn is None:
            self.conn = http.client.HTTPConnection(HOST, self.port, timeout=self.timeout)
        return self.conn

    def close(self) -> None:
        if self.conn is not None:
            self.conn.close()
            self.conn = None

    def headers_for(self, method: str, path: str, body: bytes | None) -> dict[str, str]:
        request = urllib.request.Request(f"http://{HOST}:{self.port}{path}", method=method)
        self.jar.add_cookie_header(request)
        headers = dict(request.header_items())
        if body is not None:
            headers["Content-Type"] = "application/x-www-form-urlencoded"
        return headers

    def open(
        self,
        method: str,
        path: str,
        body: bytes | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> http.client.HTTPResponse:
        """Send one request and return the reply unread, to stream it; its cookies are in
        the jar already. Read it to the end (or ``close()``) before the next request."""
        if headers is None:
            headers = self.headers_for(method, path, body)
        conn = self._connection()
        try:
            conn.request(method, path, body=body, headers=dict(headers))
            response = conn.getresponse()
        except BaseException:
            self.close()
            raise
        request = urllib.request.Request(f"http://{HOST}:{self.port}{path}", method=method)
        self.jar.extract_cookies(response, request)
        return response

    def fetch(
        self,
        method: str,
        path: str,
        body: bytes | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> tuple[int, bytes, http.client.HTTPResponse]:
        """One request, read whole: status, body and the reply (for its headers)."""
        response = self.open(method, path, body, headers)
        try:
            data = response.read()
        except BaseException:
            self.close()
            raise
        if response.will_close:
            self.close()
        return response.status, data, response

    def send(
        self, method: str, path: str, body: bytes | None, headers: Mapping[str, str]
    ) -> tuple[int, str]:
        """One request; cookies from the reply go into the jar. Errors close the connection."""
        status, data, _ = self.fetch(method, path, body, headers)
        return status, data.decode("utf-8", "replace")

    def get(self, path: str) -> tuple[int, str]:
        return self.send("GET", path, None, self.headers_for("GET", path, None))

    def post_form(self, path: str, fields: Mapping[str, str]) -> tuple[int, str, str]:
        """POST a form as a browser would; status, page and the redirect's Location."""
        body = urllib.parse.urlencode(fields).encode()
        status, data, response = self.fetch("POST", path, body)
        return status, data.decode("utf-8", "replace"), response.getheader("Location") or ""


@dataclasses.dataclass
class Submission:
    """One attempted response, as the client saw it."""

    submission_id: str = ""
    sent: dict[str, str] = dataclasses.field(default_factory=dict)
    client_randomized: bool = False
    get_status: int | None = None
    post_status: int | None = None
    post_sent: bool = False  # the POST left the client (its outcome may be unknown)
    stored_on_page: dict[str, int] | None = None
    retried: bool = False
    retry_status: int | None = None
    retry_same_page: bool | None = None
    error: str | None = None  # "GET: ...", "POST: ..." or "retry: ..."
    seconds: float = 0.0
    finished_at: float = 0.0  # time.monotonic() when the client was done with it
    # To replay the POST byte for byte later (after a crash): body and headers as sent.
    post_body: bytes = b""
    post_headers: dict[str, str] = dataclasses.field(default_factory=dict)

    @property
    def acknowledged(self) -> bool:
        return self.post_status == 200


def stored_answers(page: str) -> dict[str, int] | None:
    """The thank-you page's "exactly what was stored for you" table, as 0/1 per key."""
    found = STORED_ANSWER.findall(page)
    return {key: int(value == "yes") for key, value in found} if found else None


def respond_once(port: int, slug: str, rng: random.Random, retry: bool) -> Submission:
    """A new browser answers the survey once: GET the form, POST answers (maybe twice)."""
    result = Submission()
    browser = Browser(port)
    path = f"/s/{slug}"
    started = time.perf_counter()
    stage = "GET"
    try:
        result.get_status, page = browser.get(path)
        if result.get_status != 200:
            return result
        hidden = dict(HIDDEN_INPUT.findall(page))
        keys = RADIO_YES.findall(page)
        # The form's submission_id is a signed form token, "<random>.<time>.<signature>";
        # the app stores only the random part, as the response's submission id.
        result.submission_id = hidden.get("submission_id", "").partition(".")[0]
        result.client_randomized = rng.random() < 0.5
        answers = {key: rng.choice(("y", "n")) for key in keys}
        fields = {**hidden, **answers}
        if result.client_randomized:
            fields["randomized"] = "client"
        result.sent = answers
        body = urllib.parse.urlencode(fields).encode()
        headers = browser.headers_for("POST", path, body)
        result.post_body, result.post_headers = body, headers
        stage = "POST"
        result.post_sent = True
        result.post_status, page = browser.send("POST", path, body, headers)
        if result.post_status == 200:
            result.stored_on_page = stored_answers(page)
        if retry and result.post_status == 200:
            # The reply "was lost": the browser resends the very same request (its cookie
            # as before the reply) on a new connection.
            stage = "retry"
            result.retried = True
            browser.close()
            result.retry_status, again = browser.send("POST", path, body, headers)
            result.retry_same_page = again == page
    except CONNECTION_ERRORS as err:
        result.error = f"{stage}: {type(err).__name__}: {err}"
    finally:
        browser.close()
        result.seconds = time.perf_counter() - started
        result.finished_at = time.monotonic()
    return result


def replay_post(port: int, slug: str, submission: Submission) -> tuple[int | None, str]:
    """Send a recorded POST again, byte for byte (a browser retrying after no reply)."""
    browser = Browser(port)
    try:
        return browser.send("POST", f"/s/{slug}", submission.post_body, submission.post_headers)
    except CONNECTION_ERRORS as err:
        return None, f"{type(err).__name__}: {err}"
    finally:
        browser.close()


def _percentiles(values: list[float]) -> dict[str, float]:
    if not values:
        return {}
    ordered = sorted(values)

    def at(q: float) -> float:
        return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000, 1)

    return {"p50_ms": at(0.50), "p95_ms": at(0.95), "p99_ms": at(0.99), "max_ms": at(1.0)}


def _run_clients(clients: int, worker: Callable[[int], None]) -> float:
    """Start ``clients`` threads running ``worker(i)``; wall-clock seconds until all end."""
    threads = [
        threading.Thread(target=worker, args=(i,), name=f"client-{i}", daemon=True)
        for i in range(clients)
    ]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return time.perf_counter() - started


def healthz_load(port: int, clients: int, requests: int, per_connection: int = 2) -> dict[str, Any]:
    """``requests`` GET /healthz from ``clients`` threads.

    Each client opens a new connection every ``per_connection`` requests (0: one
    connection for good), as a response's browser does for its GET and POST. With
    connections kept for good, gunicorn's gthread workers keep each one on the worker that
    happened to accept it, so how evenly 50 connections fell on the workers decides the
    result: measured 900 to 1,800 requests/s on one and the same server.
    """
    counter = itertools.count()
    lock = threading.Lock()
    statuses: Counter[int] = Counter()
    errors: list[str] = []
    latencies: list[float] = []

    def worker(_i: int) -> None:
        browser = Browser(port)
        mine: list[float] = []
        sent = 0
        try:
            while next(counter) < requests:
                if per_connection and sent and sent % per_connection == 0:
                    browser.close()
                sent += 1
                started = time.perf_counter()
                try:
                    status, body = browser.get("/healthz")
                except CONNECTION_ERRORS as err:
                    with lock:
                        errors.append(f"{type(err).__name__}: {err}")
                    continue
                mine.append(time.perf_counter() - started)
                with lock:
                    statuses[status if body.strip() == "ok" else -status] += 1
        finally:
            browser.close()
            with lock:
                latencies.extend(mine)

    cpu_before = time.process_time()
    seconds = _run_clients(clients, worker)
    done = sum(statuses.values())
    return {
        "requests": requests,
        "per_connection": per_connection,
        "seconds": round(seconds, 3),
        "per_second": round(done / seconds, 1),
        "statuses": {str(k): v for k, v in sorted(statuses.items())},
        "errors": len(errors),
        "error_samples": errors[:5],
        "latency": _percentiles(latencies),
        "client_cpu_seconds": round(time.process_time() - cpu_before, 2),
    }


class ResponseLoad:
    """``total`` responses from ``clients`` threads; stoppable, and observable while running.

    Every thread takes the next response number from a shared counter, so the total is
    exact. ``acknowledged`` counts POSTs answered 200 so far (the crash test watches it).
    """

    def __init__(
        self,
        port: int,
        slug: str,
        clients: int,
        total: int,
        retry_rate: float = 0.05,
        seed: int = 1,
    ):
        self.port, self.slug, self.clients, self.total = port, slug, clients, total
        self.retry_rate, self.seed = retry_rate, seed
        self.stop = threading.Event()
        self.results: list[Submission] = []
        self.acknowledged = 0
        self.seconds = 0.0
        self._counter = itertools.count()
        self._lock = threading.Lock()

    def _worker(self, _i: int) -> None:
        while not self.stop.is_set():
            number = next(self._counter)
            if number >= self.total:
                return
            # Per-response generator: the same seed gives the same answers and retries.
            rng = random.Random(self.seed * 1_000_003 + number)
            result = respond_once(self.port, self.slug, rng, rng.random() < self.retry_rate)
            with self._lock:
                self.results.append(result)
                self.acknowledged += result.acknowledged

    def run(self) -> ResponseLoad:
        cpu_before = time.process_time()
        self.seconds = _run_clients(self.clients, self._worker)
        self.client_cpu_seconds = time.process_time() - cpu_before
        return self

    def start_in_background(self) -> threading.Thread:
        thread = threading.Thread(target=self.run, name="load", daemon=True)
        thread.start()
        return thread

    def summary(self) -> dict[str, Any]:
        results = self.results
        completed = [r for r in results if r.acknowledged]
        statuses = Counter(
            f"{kind} {status}"
            for r in results
            for kind, status in (
                ("GET", r.get_status),
                ("POST", r.post_status),
                ("retry", r.retry_status),
            )
            if status is not None
        )
        return {
            "attempted": len(results),
            "acknowledged": len(completed),
            "retried": sum(r.retried for r in results),
            "client_randomized": sum(r.client_randomized for r in results),
            "seconds": round(self.seconds, 3),
            "responses_per_second": round(len(completed) / self.seconds, 1) if self.seconds else 0,
            "statuses": dict(sorted(statuses.items())),
            "server_errors_5xx": sum(
                1
                for r in results
                for s in (r.get_status, r.post_status, r.retry_status)
                if s is not None and s >= 500
            ),
            "connection_errors": sum(r.error is not None for r in results),
            "error_samples": [r.error for r in results if r.error][:5],
            "latency_get_post": _percentiles([r.seconds for r in completed if not r.retried]),
            "client_cpu_seconds": round(getattr(self, "client_cpu_seconds", 0.0), 2),
        }


# --------------------------------------------------------------------------- the checks


@dataclasses.dataclass
class Checks:
    """Named pass/fail checks with their evidence; the scripts exit 1 if any failed."""

    items: list[dict[str, Any]] = dataclasses.field(default_factory=list)

    def add(self, name: str, ok: bool, detail: Any = "") -> bool:
        self.items.append({"check": name, "ok": bool(ok), "detail": detail})
        return bool(ok)

    @property
    def ok(self) -> bool:
        return all(item["ok"] for item in self.items)

    def failed(self) -> list[dict[str, Any]]:
        return [item for item in self.items if not item["ok"]]

    def lines(self) -> Iterable[str]:
        for item in self.items:
            mark = "ok  " if item["ok"] else "FAIL"
            detail = f": {item['detail']}" if item["detail"] not in ("", None) else ""
            yield f"  [{mark}] {item['check']}{detail}"


def check_stored(
    checks: Checks,
    state: Mapping[str, Any],
    acknowledged: Iterable[Submission],
    maybe_stored: Iterable[str] = (),
) -> None:
    """Every acknowledged response stored exactly once and as the page said; nothing else.

    ``maybe_stored``: submission ids whose POST was sent but never answered (a crash); they
    may or may not be stored, but at most once.
    """
    ids = list(state["submission_ids"])
    stored = set(ids)
    acked = {r.submission_id: r for r in acknowledged}
    duplicates = [sid for sid, n in Counter(ids).items() if n > 1]
    checks.add("no submission id stored twice", not duplicates, f"{len(duplicates)} duplicated")
    missing = sorted(set(acked) - stored)
    checks.add(
        "every acknowledged response is stored",
        not missing,
        f"{len(acked)} acknowledged, {len(missing)} missing {missing[:3] if missing else ''}",
    )
    extras = sorted(stored - set(acked) - set(maybe_stored))
    checks.add(
        "nothing stored that was not acknowledged (or in flight)",
        not extras,
        f"{len(stored)} stored, {len(extras)} unexplained",
    )
    answers = state["answers"]
    differs = [
        sid
        for sid, r in acked.items()
        if sid in answers and r.stored_on_page is not None and answers[sid] != r.stored_on_page
    ]
    no_page = [sid for sid, r in acked.items() if r.stored_on_page is None]
    checks.add(
        "stored answers equal the thank-you page's",
        not differs and not no_page,
        f"{len(differs)} differ, {len(no_page)} pages without the table",
    )
    as_sent = [
        sid
        for sid, r in acked.items()
        if r.client_randomized
        and sid in answers
        and answers[sid] != {k: int(v == "y") for k, v in r.sent.items()}
    ]
    checks.add(
        "client-randomized answers stored as sent",
        not as_sent,
        f"{sum(r.client_randomized for r in acked.values())} checked, {len(as_sent)} differ",
    )


def check_counters(checks: Checks, state: Mapping[str, Any]) -> None:
    """The tallies, the survey's response counter and the rows' design all agree."""
    checks.add(
        "tallies equal the responses (recomputed from rows)",
        state["counters"] == state["rebuilt_counters"],
        f"stored {state['counters']}, rebuilt {state['rebuilt_counters']}",
    )
    stored = len(state["submission_ids"])
    checks.add(
        "surveys.responses equals the stored rows",
        state["responses_counter"] == stored,
        f"counter {state['responses_counter']}, rows {stored}",
    )
    checks.add(
        "every row names the survey's design fingerprint",
        set(state["row_designs"]) <= {state["survey_design"]},
        state["row_designs"],
    )


def check_retries(checks: Checks, results: Iterable[Submission]) -> None:
    retried = [r for r in results if r.retried]
    bad = [r for r in retried if r.retry_status != 200 or not r.retry_same_page]
    checks.add(
        "retried POSTs answered 200 with the same thank-you page",
        not bad,
        f"{len(retried)} retried, {len(bad)} not answered alike"
        + (f" (statuses {Counter(r.retry_status for r in bad)})" if bad else ""),
    )


def check_log(checks: Checks, server: Server) -> None:
    problems = server.log_problems()
    detail: Any = ""
    if problems:
        detail = {"counts": problems, "first_tracebacks": server.log_tracebacks()}
    checks.add("server log free of tracebacks, lock errors, timeouts", not problems, detail)


# --------------------------------------------------------------------------- bookkeeping


def new_secret_key() -> str:
    return secrets.token_hex(32)


def temporary_directory(prefix: str) -> tempfile.TemporaryDirectory[str]:
    return tempfile.TemporaryDirectory(prefix=prefix)


def write_results(name: str, data: Mapping[str, Any], results_dir: Path | None) -> Path | None:
    """``results_dir/NAME-<UTC timestamp>.json``; ``results_dir=None`` writes nothing."""
    if results_dir is None:
        return None
    results_dir.mkdir(parents=True, exist_ok=True)
    stamp = datetime.datetime.now(datetime.UTC).strftime("%Y%m%dT%H%M%SZ")
    path = results_dir / f"{name}-{stamp}.json"
    path.write_text(json.dumps(data, indent=2, default=str) + "\n", encoding="utf-8")
    return path


def argument_parser(doc: str) -> argparse.ArgumentParser:
    """The options the load and crash scripts share; each adds its own."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    parser.add_argument("--responses", type=int, default=10_000, help="planned responses per run")
    parser.add_argument("--clients", type=int, default=50, help="concurrent client threads")
    parser.add_argument("--workers", type=int, default=DEFAULT_CONFIG.workers)
    parser.add_argument("--threads", type=int, default=DEFAULT_CONFIG.threads)
    parser.add_argument("--worker-class", default=DEFAULT_CONFIG.worker_class)
    parser.add_argument("--retry-rate", type=float, default=0.05)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--results-dir", type=Path, default=RESULTS_DIR)
    parser.add_argument("--no-results", action="store_true", help="write no JSON file")
    return parser


def print_machine(machine: Mapping[str, Any]) -> None:
    print(
        f"machine: {machine['nproc']} CPUs ({machine['cpu_model']}), {machine['ram_gib']} GiB, "
        f"Python {machine['python']}, SQLite {machine['sqlite']}, gunicorn {machine['gunicorn']}"
    )


def finish(
    name: str,
    machine: Mapping[str, Any],
    started: float,
    runs: list[dict[str, Any]],
    results_dir: Path | None,
    **extra: Any,
) -> int:
    """Write ``NAME-<time>.json`` with every run, print the verdict; the exit status."""
    ok = all(run["ok"] for run in runs)
    result = {
        "benchmark": f"{name}_test",
        "command": " ".join(sys.argv),
        "machine": machine,
        **extra,
        "started": started,
        "seconds": round(time.time() - started, 1),
        "runs": runs,
        "ok": ok,
    }
    path = write_results(name, result, results_dir)
    if path:
        print(f"results: {path}")
    print("ALL CHECKS PASSED" if ok else "SOME CHECKS FAILED")
    return 0 if ok else 1


def median(values: Iterable[float]) -> float:
    return round(statistics.median(list(values)), 3)
