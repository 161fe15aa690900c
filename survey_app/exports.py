"""CSV exports, written as a stream of lines so memory stays flat however many rows.

The HTTP routes and the ``survey-app export`` command both iterate these generators, so
the two give the same bytes.
"""

from __future__ import annotations

import csv
import io
import itertools
from collections.abc import Iterable, Iterator

import sqlite_utils

from .responses import iter_responses
from .surveys import Survey

RESPONSE_COLUMNS = (
    "survey",
    "answered_on",
    "mechanism",
    "truth_probability",
    "forced_yes_probability",
)


def csv_lines(rows: Iterable[Iterable[object]]) -> Iterator[str]:
    """Each row as one CSV line (RFC 4180 quoting, ``\\r\\n`` endings)."""
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    for row in rows:
        writer.writerow(row)
        yield buffer.getvalue()
        buffer.seek(0)
        buffer.truncate()


def responses_csv(db: sqlite_utils.Database, survey: Survey) -> Iterator[str]:
    """The randomized per-response CSV: one row a response, a 1/0 column a question.

    Values are reported (randomized) answers, 1 = "yes"; analyse them with the design in
    the mechanism columns, never as true answers.
    """
    keys = [q.key for q in survey.questions]
    header = [*RESPONSE_COLUMNS, *keys]
    rows = (
        [
            response.survey_slug,
            response.answered_on,
            response.mechanism,
            response.truth_probability,
            response.forced_yes_probability,
            *(int(response.reported[key]) for key in keys),
        ]
        for response in iter_responses(db, survey)
    )
    return csv_lines(itertools.chain([header], rows))
