"""Subset selection's reports in a real database (SQLite and PostgreSQL): the running
tallies and ``recount`` count each option in a stored set ("0,3,11") once, and nothing else.

A survey file gets subset selection at its best set size; to reach sizes a file would
not get (11 of 20, where "1" is inside "11"), a survey is stored with a GRR choice
question of the same options and read back with its mechanism swapped: what storage sees
is the mechanism's cells and stored text.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Callable

import pytest

from survey_app.domain.definitions import parse_definition
from survey_app.privacy.mechanisms.cells import CellRule, TallyCell
from survey_app.privacy.mechanisms.subset_selection import SubsetSelection
from survey_app.storage import tallies
from survey_app.storage.backends import Database
from survey_app.storage.responses import record_response
from survey_app.storage.surveys import Survey, store_survey
from survey_app.storage.tallies import read_tallies, recount
from tests.support.statistics import Seeded


def _subset_survey(db: Database, k: int, size: int) -> tuple[Survey, SubsetSelection]:
    """``db`` holding one open survey whose choice question (k options) is
    answered by subset selection with sets of ``size``, and an optional second one."""
    options = ", ".join(f"o{index}" for index in range(k))
    definition = parse_definition(
        "slug: sets\ntitle: Sets\nquestions:\n"
        f"  - {{key: pick, text: Pick, type: choice, options: [{options}], mechanism: grr}}\n"
        f"  - {{key: also, text: Also, type: choice, options: [{options}], mechanism: grr, "
        "required: false}\n"
    )
    stored = store_survey(db, definition)
    mechanism = SubsetSelection.from_epsilon(k, 1, size)
    survey = dataclasses.replace(
        stored,
        questions=tuple(dataclasses.replace(q, mechanism=mechanism) for q in stored.questions),
    )
    return survey, mechanism


def _python_counts(sets: list[tuple[int, ...] | None]) -> dict[str, int]:
    """n and each option's count, counted in Python from the sets themselves."""
    answered = [chosen for chosen in sets if chosen is not None]
    counts = Counter(str(index) for chosen in answered for index in chosen)
    return {"n": len(answered), **counts} if answered else {}


@pytest.mark.parametrize(("k", "size"), [(4, 2), (12, 5), (13, 1), (20, 11), (20, 3)])
def test_running_tallies_and_a_recount_count_each_member_of_a_stored_set_once(
    new_database: Callable[[], Database], k: int, size: int
) -> None:
    """Random sets (of sizes reaching past 11, where "1" is inside "11" and "12"), some
    questions skipped: the running tallies, the recount's SQL and Python's own count of
    the same sets agree cell by cell, and a recount finds nothing to correct."""
    db = new_database()
    survey, mechanism = _subset_survey(db, k, size)
    source = Seeded(k * 100 + size)
    sent: dict[str, list[tuple[int, ...] | None]] = {"pick": [], "also": []}
    for number in range(120):
        reported = {
            "pick": mechanism.randomize(source.randbelow(k), source),
            "also": None if number % 3 == 0 else mechanism.randomize(k - 1, source),
        }
        record_response(db, survey, reported, f"submission-{number:012d}")
        for key, report in reported.items():
            sent[key].append(report)
    digits = {len(str(index)) for chosen in sent["pick"] if chosen for index in chosen}
    assert (2 in digits) == (k > 10)
    expected = {key: _python_counts(sets) for key, sets in sent.items()}
    running = read_tallies(db, survey)
    assert {q.key: running[q.id] for q in survey.questions} == expected
    result = recount(db, survey)
    assert result.matched
    assert result.after == expected


def test_an_undelimited_match_is_caught(
    new_database: Callable[[], Database], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Break it: found with ``LIKE`` without the commas, option 1 is counted in "11" and
    the recount no longer agrees with the running tallies."""
    db = new_database()
    survey, _ = _subset_survey(db, 13, 2)
    record_response(db, survey, {"pick": (3, 11), "also": (0, 12)}, "submission-000000000001")
    assert recount(db, survey).matched
    shipped = tallies._aggregate

    def undelimited(cell: TallyCell, squares: str) -> str:
        if cell.rule is CellRule.MEMBER:
            return f"count(CASE WHEN {{text}} LIKE '%{cell.index}%' THEN 1 END)"
        return shipped(cell, squares)

    monkeypatch.setattr(tallies, "_aggregate", undelimited)
    broken = recount(db, survey)
    assert not broken.matched
    assert broken.after["pick"]["1"] == 1  # "1" in "3,11"
    assert broken.after["also"]["1"] == 1 and broken.after["also"]["2"] == 1  # in "0,12"
