"""Load synthetic randomized responses into a survey database, fast, for scale benchmarks.

The survey is stored the app's own way (``parse_definition`` + ``store_survey``). True
answers are drawn with a seeded NumPy generator at fixed prevalences and randomized with
``simulate_reports``: the real two-coin mechanism, vectorized. The randomized rows then go
straight into ``responses`` with ``executemany`` in big batches, in exactly the format
``record_response`` writes (same columns, same JSON text, a fresh random submission id
per row), and the question counters are raised by the exact column sums in the same
transaction. ``estimates.recount`` then checks that the counters match the rows.

Synthetic data only: the generator is seeded, so anyone with the seed can replay the
coins. Nothing here is ever used for real respondents. True answers live only in memory,
one batch at a time; only their per-question totals are reported, to check the estimates.

    .venv/bin/python benchmarks/load_synthetic.py --db benchmarks/data/load.db --responses 1000000
"""

from __future__ import annotations

import argparse
import base64
import datetime
import json
import secrets
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field
from itertools import repeat
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:  # run from a checkout without installing
    sys.path.insert(0, str(REPO))

from survey_app.db import connect, migrate, write_transaction  # noqa: E402
from survey_app.definitions import parse_definition  # noqa: E402
from survey_app.estimates import recount  # noqa: E402
from survey_app.privacy import MECHANISM_NAME, TwoCoinDesign, simulate_reports  # noqa: E402
from survey_app.surveys import Survey, get_survey, store_survey  # noqa: E402

DEFAULT_SLUG = "load-benchmark"
DEFAULT_SEED = 20240601
DEFAULT_BATCH = 100_000

# 20 sensitive yes/no questions with the (synthetic) prevalence their true answers are
# drawn at: from rare (2%) to common (70%), so estimates near 0 get exercised too.
QUESTIONS: tuple[tuple[str, str, float], ...] = (
    ("cheated_exam", "Have you cheated on an exam in the past year?", 0.12),
    ("plagiarism", "Have you handed in work that was not your own?", 0.08),
    ("stimulants", "Have you used a prescription stimulant without a prescription?", 0.15),
    ("cannabis", "Have you used cannabis in the past month?", 0.22),
    ("binge_drinking", "Have you had six or more drinks on one occasion this month?", 0.35),
    ("drove_drunk", "Have you driven after drinking too much to drive safely?", 0.05),
    ("skipped_meals", "Have you skipped meals because you could not afford food?", 0.18),
    ("housing_insecure", "Have you been without a stable place to sleep this year?", 0.04),
    ("gambling_debt", "Do you owe money because of gambling?", 0.02),
    ("shoplifted", "Have you taken something from a shop without paying this year?", 0.06),
    ("fare_evasion", "Have you ridden public transport without a ticket this month?", 0.25),
    ("tax_cash", "Have you been paid in cash and not declared it?", 0.10),
    ("lied_sick", "Have you called in sick when you were not?", 0.40),
    ("harassed", "Have you been harassed at work or on campus this year?", 0.20),
    ("discriminated", "Have you been treated unfairly because of who you are?", 0.30),
    ("self_harm", "Have you hurt yourself on purpose in the past year?", 0.07),
    ("anxiety", "Have you felt too anxious to work on most days this month?", 0.45),
    ("unsafe_sex", "Have you had unprotected sex with a new partner this year?", 0.16),
    ("piracy", "Have you downloaded films or music without paying this year?", 0.55),
    ("speeding", "Have you driven well over the speed limit this month?", 0.70),
)


def definition_text(slug: str = DEFAULT_SLUG) -> str:
    """The benchmark survey as a JSON definition file would hold it."""
    return json.dumps(
        {
            "slug": slug,
            "title": "Load benchmark (synthetic data)",
            "description": "Synthetic responses for scale benchmarks; not real people.",
            "questions": [
                {"key": key, "text": text, "type": "yes_no"} for key, text, _ in QUESTIONS
            ],
        },
        indent=2,
    )


def prevalences(survey: Survey) -> np.ndarray:
    by_key = {key: prevalence for key, _, prevalence in QUESTIONS}
    return np.array([by_key[q.key] for q in survey.questions])


def ensure_survey(db, slug: str) -> tuple[Survey, bool]:  # type: ignore[no-untyped-def]
    """The benchmark survey, stored through the app if it is not there yet."""
    migrate(db)
    survey = get_survey(db, slug)
    if survey is not None:
        if [q.key for q in survey.questions] != [key for key, _, _ in QUESTIONS]:
            raise SystemExit(f"survey {slug!r} exists with other questions; use another slug")
        return survey, False
    definition = parse_definition(definition_text(slug), source=f"{slug}.json", fmt="json")
    return store_survey(db, definition), True


class AnswerFormatter:
    """Builds ``record_response``'s JSON text for a whole batch with NumPy.

    ``json.dumps({key: 0|1, ...})`` always gives the same template with one digit per
    question, so a batch is the template repeated with the digits filled in: ~50x faster
    than a million ``json.dumps`` calls. ``check`` compares rows against ``json.dumps``.
    """

    def __init__(self, keys: Sequence[str]) -> None:
        self.keys = list(keys)
        template = json.dumps(dict.fromkeys(self.keys, 0)).encode("ascii")
        self.template = np.frombuffer(template, dtype=np.uint8)
        self.width = len(template)
        # Every digit slot: the character after each '": '.
        self.slots = []
        position = 0
        for key in self.keys:
            position = template.index(f'"{key}": '.encode(), position) + len(key) + 4
            self.slots.append(position)
        assert len(self.slots) == len(self.keys)

    def format(self, reports: np.ndarray) -> list[str]:
        rows = np.broadcast_to(self.template, (len(reports), self.width)).copy()
        rows[:, self.slots] = ord("0") + reports.astype(np.uint8)
        return rows.view(f"S{self.width}").ravel().astype(f"U{self.width}").tolist()

    def check(self, reports: np.ndarray, texts: Sequence[str]) -> None:
        for bits, text in zip(reports, texts, strict=True):
            expected = json.dumps({key: int(bit) for key, bit in zip(self.keys, bits, strict=True)})
            if text != expected:
                raise AssertionError(f"answers text {text!r} != record_response's {expected!r}")


def submission_ids(count: int) -> list[str]:
    """Fresh ids shaped like ``new_submission_id`` (``secrets.token_urlsafe(16)``: 22 chars).

    From ``secrets``, not the seeded generator, so reloading never collides with rows
    already stored. 18 random bytes encode to exactly 24 base64 characters without
    padding, so one ``urlsafe_b64encode`` call serves the whole batch; the first 22 of
    each 24 are kept.
    """
    encoded = base64.urlsafe_b64encode(secrets.token_bytes(18 * count))
    chars = np.frombuffer(encoded, dtype=np.uint8).reshape(count, 24)[:, :22].copy()
    return chars.view("S22").ravel().astype("U22").tolist()


@dataclass
class LoadResult:
    database: str
    slug: str
    survey_id: int
    survey_created: bool
    responses: int
    seed: int
    batch_size: int
    journal_mode_during_load: str
    generate_seconds: float = 0.0  # drawing, randomizing and formatting rows
    insert_seconds: float = 0.0  # executemany
    commit_seconds: float = 0.0  # COMMIT (+ WAL checkpoint / journal switch back)
    load_seconds: float = 0.0  # store survey + the whole transaction, end to end
    rows_per_second: float = 0.0
    recount_seconds: float = 0.0
    recount_matched: bool = False
    database_bytes: int = 0
    counters: dict[str, tuple[int, int]] = field(default_factory=dict)
    true_prevalence_drawn: dict[str, float] = field(default_factory=dict)


def _batches(total: int, size: int) -> Iterator[int]:
    while total > 0:
        yield min(size, total)
        total -= size


def load(
    database: str | Path,
    responses: int,
    *,
    slug: str = DEFAULT_SLUG,
    seed: int = DEFAULT_SEED,
    batch_size: int = DEFAULT_BATCH,
    answered_on: str | None = None,
    journal_mode: str = "wal",
    verify: bool = True,
    log: bool = True,
) -> LoadResult:
    """Store the survey if needed, add ``responses`` synthetic responses, check counters.

    Load-only settings, on this connection only: ``synchronous = OFF`` and a 512 MB page
    cache. ``journal_mode="truncate"`` additionally switches the file out of WAL for the
    load (new pages then skip the WAL copy-and-checkpoint) and back to WAL afterwards;
    the app's default, WAL, is kept unless asked.
    """
    database = Path(database)
    started = time.perf_counter()
    db = connect(database)
    conn = db.conn
    survey, created = ensure_survey(db, slug)
    result = LoadResult(
        database=str(database),
        slug=slug,
        survey_id=survey.id,
        survey_created=created,
        responses=responses,
        seed=seed,
        batch_size=batch_size,
        journal_mode_during_load=journal_mode,
    )
    keys = [q.key for q in survey.questions]
    prevalence = prevalences(survey)
    # record_response stores the first question's design in the row; mirror it.
    row_design = survey.questions[0].design
    groups: dict[TwoCoinDesign, list[int]] = {}
    for column, question in enumerate(survey.questions):
        groups.setdefault(question.design, []).append(column)
    formatter = AnswerFormatter(keys)
    answered_on = answered_on or datetime.date.today().isoformat()
    rng = np.random.default_rng(seed)

    conn.execute("PRAGMA synchronous = OFF")
    conn.execute("PRAGMA cache_size = -524288")
    conn.execute("PRAGMA temp_store = MEMORY")
    if journal_mode != "wal":
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        mode = conn.execute(f"PRAGMA journal_mode = {journal_mode}").fetchone()[0]
        if mode != journal_mode:
            raise SystemExit(f"could not switch journal_mode to {journal_mode} (got {mode})")

    yes_totals = np.zeros(len(keys), dtype=np.int64)
    true_totals = np.zeros(len(keys), dtype=np.int64)
    sql = (
        "INSERT INTO responses (survey_id, submission_id, answered_on, mechanism, "
        "truth_probability, forced_yes_probability, answers) VALUES (?, ?, ?, ?, ?, ?, ?)"
    )
    loaded = 0
    try:
        with write_transaction(db):
            for count in _batches(responses, batch_size):
                t0 = time.perf_counter()
                truth = rng.random((count, len(keys))) < prevalence
                reports = np.empty_like(truth)
                for design, columns in groups.items():
                    reports[:, columns] = simulate_reports(truth[:, columns], design, rng)
                true_totals += truth.sum(axis=0)
                del truth
                texts = formatter.format(reports)
                formatter.check(reports[:50], texts[:50])
                ids = submission_ids(count)
                yes_totals += reports.sum(axis=0)
                t1 = time.perf_counter()
                conn.executemany(
                    sql,
                    zip(
                        repeat(survey.id, count),
                        ids,
                        repeat(answered_on),
                        repeat(MECHANISM_NAME),
                        repeat(row_design.truth_probability),
                        repeat(row_design.forced_yes_probability),
                        texts,
                        strict=False,
                    ),
                )
                t2 = time.perf_counter()
                result.generate_seconds += t1 - t0
                result.insert_seconds += t2 - t1
                loaded += count
                if log and responses > batch_size:
                    print(
                        f"  {loaded:>10,} rows  {time.perf_counter() - started:6.1f} s",
                        file=sys.stderr,
                    )
            for question, yes in zip(survey.questions, yes_totals.tolist(), strict=True):
                conn.execute(
                    "UPDATE questions SET n = n + ?, reported_yes = reported_yes + ? WHERE id = ?",
                    [responses, yes, question.id],
                )
            t_commit = time.perf_counter()
        if journal_mode == "wal":
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        if journal_mode != "wal":  # back to the app's mode, even after a failed load
            conn.execute("PRAGMA journal_mode = wal")
        conn.execute("PRAGMA synchronous = FULL")
    result.commit_seconds = time.perf_counter() - t_commit
    result.load_seconds = time.perf_counter() - started
    result.rows_per_second = responses / result.load_seconds if result.load_seconds else 0.0
    result.true_prevalence_drawn = {
        key: (total / responses if responses else 0.0)
        for key, total in zip(keys, true_totals.tolist(), strict=True)
    }
    conn.close()
    # Verify on a fresh connection with the app's own settings, as `survey-app recount` would.
    db = connect(database)
    conn = db.conn
    if verify:
        t0 = time.perf_counter()
        checked = recount(db, survey)
        result.recount_seconds = time.perf_counter() - t0
        result.recount_matched = checked.matched
        result.counters = checked.before
        if not checked.matched:
            mismatched = {
                key: (checked.before[key], checked.after[key])
                for key in checked.after
                if checked.before[key] != checked.after[key]
            }
            raise AssertionError(f"counters do not match the stored rows: {mismatched}")
    else:
        result.counters = {
            row[0]: (row[1], row[2])
            for row in conn.execute(
                "SELECT key, n, reported_yes FROM questions WHERE survey_id = ?", [survey.id]
            )
        }
    conn.close()
    result.database_bytes = sum(
        p.stat().st_size for p in database.parent.glob(database.name + "*") if p.is_file()
    )
    return result


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--db", required=True, help="SQLite file (created if missing)")
    parser.add_argument("--responses", type=int, default=1_000_000)
    parser.add_argument("--slug", default=DEFAULT_SLUG)
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument("--batch-size", type=int, default=DEFAULT_BATCH)
    parser.add_argument(
        "--journal-mode",
        choices=["wal", "truncate"],
        default="wal",
        help="journal mode during the load (the file is left in WAL either way)",
    )
    parser.add_argument("--no-verify", action="store_true", help="skip the recount check")
    args = parser.parse_args(argv)
    result = load(
        args.db,
        args.responses,
        slug=args.slug,
        seed=args.seed,
        batch_size=args.batch_size,
        journal_mode=args.journal_mode,
        verify=not args.no_verify,
    )
    print(json.dumps(asdict(result), indent=2))
    print(
        f"loaded {result.responses:,} responses in {result.load_seconds:.1f} s "
        f"({result.rows_per_second:,.0f} rows/s); recount "
        f"{'matched' if result.recount_matched else 'SKIPPED/FAILED'} "
        f"in {result.recount_seconds:.1f} s",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
