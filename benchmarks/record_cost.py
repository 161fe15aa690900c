"""What storing one response costs in the storage layer: ``record_response`` for the mixed
example survey (one plain question, five sensitive ones of every kind), each response in
its own write transaction as the app stores it, on a new SQLite file.

Run it under ``farm-bench`` from two checkouts side by side to price a change to the write
path (the joint counts of ``joint_tallies`` cost one upsert per sensitive question):

    farm-bench -n 5 -- sh -c 'cd NEW && exec .venv/bin/python benchmarks/record_cost.py' \\
        --vs "sh -c 'cd OLD && exec .venv/bin/python benchmarks/record_cost.py'"

Prints the median microseconds per response of its own run.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make ``survey_app`` importable from here
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402

from survey_app.domain.definitions import load_definition  # noqa: E402
from survey_app.storage.database import connect, migrate  # noqa: E402
from survey_app.storage.responses import record_response  # noqa: E402
from survey_app.storage.surveys import Survey, store_survey  # noqa: E402

RESPONSES = 2000
MIXED = Path(__file__).resolve().parent.parent / "examples" / "mixed-survey.yaml"


def reports(survey: Survey, rng: np.random.Generator) -> dict[str, object]:
    """One response's reports, valid for each question (their values do not matter here)."""
    reported: dict[str, object] = {}
    for q in survey.questions:
        if q.type.is_yes_no:
            reported[q.key] = bool(rng.integers(2))
        elif q.type.is_number:
            reported[q.key] = int(rng.integers(q.min or 0, (q.max or 0) + 1))
        elif q.mechanism.report_format.marks_options:
            reported[q.key] = tuple(int(b) for b in rng.integers(0, 2, len(q.options)))
        else:
            reported[q.key] = int(rng.integers(len(q.options)))
    return reported


def main() -> None:
    rng = np.random.default_rng(1)
    with tempfile.TemporaryDirectory() as folder:
        db = connect(Path(folder) / "cost.db")
        migrate(db)
        survey = store_survey(db, load_definition(MIXED))
        answers = [reports(survey, rng) for _ in range(RESPONSES)]
        seconds = []
        for i, reported in enumerate(answers):
            started = time.perf_counter()
            record_response(db, survey, reported, f"cost-{i}")  # type: ignore[arg-type]
            seconds.append(time.perf_counter() - started)
        db.conn.close()
    print(f"{statistics.median(seconds) * 1e6:.0f} µs per response (median of {RESPONSES})")


if __name__ == "__main__":
    main()
