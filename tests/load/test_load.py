"""Short versions of the load and crash benchmarks, against a real gunicorn server.

The benchmark code itself is reused (benchmarks/load_test.py, crash_test.py, loadlib.py);
only the sizes are small: 300 responses from 10 browsers, and a SIGKILL after 100
acknowledged responses. The throughput ratio is not asserted here (a few hundred requests
on a shared CI machine say little about it); every correctness check is.

Marked ``load`` (about 30 s, real servers): deselect with ``pytest -m "not load"``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.load

pytest.importorskip("gunicorn")
if sys.platform == "win32":  # gunicorn and process groups are POSIX only
    pytest.skip("gunicorn runs on POSIX only", allow_module_level=True)

from benchmarks.crash_test import run_crash  # noqa: E402
from benchmarks.load_test import run_once  # noqa: E402
from benchmarks.loadlib import DEFAULT_CONFIG, ServerConfig  # noqa: E402

# The recommended setting, and the threaded one docs/operating.md offers without a buffering proxy.
SETTINGS = [DEFAULT_CONFIG, ServerConfig(2, 4, "gthread")]


def failed(result: dict) -> list[dict]:
    return [check for check in result["checks"] if not check["ok"]]


@pytest.mark.parametrize("config", SETTINGS, ids=lambda config: config.label)
def test_load_every_acknowledged_response_is_stored_once(
    config: ServerConfig, tmp_path: Path
) -> None:
    result = run_once(
        config, responses=300, clients=10, healthz_requests=300, min_ratio=0, workdir=tmp_path
    )
    assert result["ok"], failed(result)
    assert result["stored"] == 300
    assert result["load"]["retried"] > 0  # the lost-reply path was exercised
    assert result["healthz_per_second"] > 0 and result["responses_per_second"] > 0


def test_crash_mid_load_loses_no_acknowledged_response(tmp_path: Path) -> None:
    result = run_crash(
        DEFAULT_CONFIG,
        responses=600,
        clients=10,
        kill_after=100,
        after_restart=50,
        workdir=tmp_path,
    )
    assert result["ok"], failed(result)
    assert result["integrity_after_kill"] == "ok" and result["integrity_after_restart"] == "ok"
    assert result["acknowledged_before_kill"] >= 100
    assert result["recount_after_restart"]["matched"]
