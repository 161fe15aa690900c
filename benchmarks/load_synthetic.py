"""Load synthetic randomized responses into a survey database, fast, for scale benchmarks.

Two survey shapes (``--survey``):

* ``mixed`` (slug ``mixed-benchmark``): ``examples/mixed-survey.yaml``'s six questions
  (a plain choice, three yes/no of which one optional, a GRR choice, a Duchi number) plus
  three so that every mechanism and value encoding is stored: an optional OUE choice with
  10 options, a discrete-Laplace number and a plain number.
* ``yes-no`` (slug ``load-benchmark``): 20 yes/no questions at prevalences from 2% to 70%,
  the shape of the earlier benchmark runs.

The survey is stored the app's own way (``parse_definition`` + ``store_survey``), so each
question gets its real mechanism and exact parameters. True answers are drawn with a
seeded NumPy generator and randomized with ``survey_app.privacy.simulate`` (each
mechanism's vectorized simulator, the same report distribution as the real one). The rows
go straight into ``responses`` with ``executemany`` in big batches, in exactly the format
``record_response`` writes: ``answered_on`` today, the survey's ``design`` fingerprint, and
``answers`` as ``json.dumps({key: stored value})`` writes it (1/0, an option index, unary
bits as a "0101..." string, an integer, null for a skip). The tallies (``n``, ``yes``,
option cells, ``sum``, ``sum_squares``) and ``surveys.responses`` are raised by the exact
batch totals in the same transaction. ``tallies.recount`` then checks them against the
rows.

Synthetic data only: the generator is seeded, so anyone with the seed can replay the
coins. Nothing here is ever used for real respondents. True answers live only in memory,
one batch at a time; only their per-question totals are kept, to check the estimates.

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
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from itertools import repeat
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import yaml

if __package__ in (None, ""):  # run as a script: make ``benchmarks`` and ``survey_app`` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

REPO = Path(__file__).resolve().parent.parent

from survey_app.domain.definitions import parse_definition  # noqa: E402
from survey_app.privacy import simulate  # noqa: E402
from survey_app.storage import joint_tallies  # noqa: E402
from survey_app.storage.database import connect, migrate, write_transaction  # noqa: E402
from survey_app.storage.surveys import Question, Survey, get_survey, store_survey  # noqa: E402
from survey_app.storage.tallies import recount  # noqa: E402

DEFAULT_SEED = 20240601
DEFAULT_BATCH = 100_000
MIXED_EXAMPLE = REPO / "examples" / "mixed-survey.yaml"

Draw = Callable[[np.random.Generator, int], npt.NDArray[Any]]


@dataclass(frozen=True)
class TrueAnswers:
    """How one question's synthetic true answers are drawn, and how often it is skipped."""

    draw: Draw
    skip: float = 0.0  # only for optional questions


def _bernoulli(p: float) -> Draw:
    return lambda rng, n: rng.random(n) < p


def _categorical(shares: Sequence[float]) -> Draw:
    cumulative = np.cumsum(shares)
    cumulative[-1] = 1.0
    return lambda rng, n: np.searchsorted(cumulative, rng.random(n), side="right")


# --------------------------------------------------------------------------- the surveys

# 20 sensitive yes/no questions with the (synthetic) prevalence their true answers are
# drawn at: from rare (2%) to common (70%), so estimates near 0 get exercised too.
YES_NO_QUESTIONS: tuple[tuple[str, str, float], ...] = (
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

# The three questions added to the mixed example so every mechanism is stored.
MIXED_EXTRA_QUESTIONS: tuple[dict[str, Any], ...] = (
    {
        "key": "device",
        "text": "Which device do you use most for studying?",
        "type": "choice",
        "options": [
            "Laptop",
            "Desktop",
            "Tablet",
            "Phone",
            "Library computer",
            "E-reader",
            "Paper only",
            "Shared family computer",
            "Smartwatch",
            "Other",
        ],
        "mechanism": "oue",
        "epsilon": 1,
        "required": False,
    },
    {
        "key": "sleep_hours",
        "text": "How many hours did you sleep last night?",
        "type": "number",
        "min": 0,
        "max": 12,
        "mechanism": "laplace",
        "epsilon": 2,
    },
    {
        "key": "age",
        "text": "How old are you?",
        "type": "number",
        "min": 17,
        "max": 70,
        "sensitive": False,
    },
)

MIXED_TRUTH: dict[str, TrueAnswers] = {
    "year": TrueAnswers(_categorical([0.30, 0.27, 0.23, 0.20])),
    "cheated": TrueAnswers(_bernoulli(0.12)),
    "skipped_meals": TrueAnswers(_bernoulli(0.18)),
    "substance": TrueAnswers(_categorical([0.70, 0.15, 0.06, 0.04, 0.05])),
    "drinks": TrueAnswers(lambda rng, n: np.minimum(rng.poisson(6.0, n), 50)),
    "stress": TrueAnswers(_bernoulli(0.45), skip=0.10),
    "device": TrueAnswers(
        _categorical([0.55, 0.12, 0.08, 0.15, 0.03, 0.01, 0.02, 0.02, 0.005, 0.015]), skip=0.05
    ),
    "sleep_hours": TrueAnswers(
        lambda rng, n: np.clip(np.rint(rng.normal(7.0, 1.5, n)), 0, 12).astype(np.int64)
    ),
    "age": TrueAnswers(lambda rng, n: 17 + rng.binomial(53, 0.1, n)),
}


@dataclass(frozen=True)
class SurveyShape:
    slug: str
    definition: Callable[[str], str]  # slug -> JSON definition text
    truth: dict[str, TrueAnswers]


def yes_no_definition(slug: str) -> str:
    return json.dumps(
        {
            "slug": slug,
            "title": "Load benchmark (synthetic data)",
            "description": "Synthetic responses for scale benchmarks; not real people.",
            "questions": [
                {"key": key, "text": text, "type": "yes_no"} for key, text, _ in YES_NO_QUESTIONS
            ],
        },
        indent=2,
    )


def mixed_definition(slug: str) -> str:
    """examples/mixed-survey.yaml with three more questions, as a JSON definition."""
    data = yaml.safe_load(MIXED_EXAMPLE.read_text(encoding="utf-8"))
    data["slug"] = slug
    data["title"] = "Mixed benchmark (synthetic data)"
    # Its 6 per respondent would refuse the added questions; the cap is not measured here.
    data.pop("max_epsilon", None)
    data["questions"] = [*data["questions"], *MIXED_EXTRA_QUESTIONS]
    return json.dumps(data, indent=2)


SURVEYS: dict[str, SurveyShape] = {
    "mixed": SurveyShape("mixed-benchmark", mixed_definition, MIXED_TRUTH),
    "yes-no": SurveyShape(
        "load-benchmark",
        yes_no_definition,
        {key: TrueAnswers(_bernoulli(p)) for key, _, p in YES_NO_QUESTIONS},
    ),
}
DEFAULT_SURVEY = "mixed"
DEFAULT_SLUG = SURVEYS[DEFAULT_SURVEY].slug  # kept for callers of the earlier version


def ensure_survey(db, shape: SurveyShape, slug: str) -> tuple[Survey, bool]:  # type: ignore[no-untyped-def]
    """The benchmark survey, stored through the app if it is not there yet."""
    migrate(db)
    survey = get_survey(db, slug)
    if survey is not None:
        if [q.key for q in survey.questions] != list(shape.truth):
            raise SystemExit(f"survey {slug!r} exists with other questions; use another slug")
        return survey, False
    definition = parse_definition(shape.definition(slug), source=f"{slug}.json", fmt="json")
    return store_survey(db, definition), True


# --------------------------------------------------------------------------- one batch

_DIGITS = np.array([str(i) for i in range(20)])  # option indexes (k ≤ 20) and 0/1


class Column:
    """One question in a batch: true answers -> reports -> JSON tokens and tally cells.

    A token is the question's value as ``json.dumps`` writes ``answers.to_stored``'s result:
    ``1``/``0``, an index, ``"0101..."`` with its quotes, an integer, ``null``.
    """

    def __init__(self, question: Question, truth: TrueAnswers) -> None:
        self.question = question
        self.truth = truth
        self.unary = question.mechanism.name == "optimized_unary_encoding"
        self.true_total = 0.0  # sum of true values (yes_no, number)
        self.true_counts = np.zeros(len(question.options), dtype=np.int64)  # choice
        self.true_answered = 0

    def batch(self, rng: np.random.Generator, count: int) -> tuple[list[str], dict[str, int]]:
        question = self.question
        values = self.truth.draw(rng, count)
        skipped = rng.random(count) < self.truth.skip if self.truth.skip else None
        answered = values if skipped is None else values[~skipped]
        self.true_answered += len(answered)
        if question.type == "choice":
            self.true_counts += np.bincount(answered, minlength=len(question.options))
        else:
            self.true_total += float(answered.sum())
        reports = np.asarray(simulate(question.mechanism, values, rng))
        kept = reports if skipped is None else reports[~skipped]
        cells: dict[str, int] = {"n": len(kept)}
        if question.type == "yes_no":
            cells["yes"] = int(kept.sum())
            tokens = _DIGITS[reports.astype(np.int64)]
        elif self.unary:
            for index, total in enumerate(kept.sum(axis=0).tolist()):
                cells[str(index)] = int(total)
            k = reports.shape[1]
            text = np.full((count, k + 2), ord('"'), dtype=np.uint8)
            text[:, 1:-1] = reports + ord("0")
            tokens = text.view(f"S{k + 2}").ravel().astype(f"U{k + 2}")
        elif question.type == "choice":
            for index, total in enumerate(
                np.bincount(kept, minlength=len(question.options)).tolist()
            ):
                cells[str(index)] = int(total)
            tokens = _DIGITS[reports]
        else:
            wide = kept.astype(np.int64)
            cells["sum"] = int(wide.sum())
            cells["sum_squares"] = int((wide * wide).sum())
            tokens = reports.astype(np.int64).astype("U21")
        if skipped is not None:
            tokens = np.where(skipped, "null", tokens)
        return tokens.tolist(), {cell: value for cell, value in cells.items() if value}

    def truth_drawn(self) -> dict[str, float]:
        """The drawn (sample) truth per aggregate-CSV category: "yes", an option, "mean"."""
        answered = self.true_answered or 1
        if self.question.type == "choice":
            return {
                option: count / answered
                for option, count in zip(
                    self.question.options, self.true_counts.tolist(), strict=True
                )
            }
        return {"yes" if self.question.type == "yes_no" else "mean": self.true_total / answered}


class AnswerFormatter:
    """``record_response``'s JSON text for a batch, one ``%`` format per row.

    json.dumps writes ``{"key": value, ...}`` with ", " and ": " separators, so a row is a
    fixed template with each question's token filled in: many times faster than a
    ``json.dumps`` per row. ``check`` compares rows against ``json.dumps`` itself.
    """

    def __init__(self, keys: Sequence[str]) -> None:
        self.keys = list(keys)
        self.template = (
            "{" + ", ".join(json.dumps(key).replace("%", "%%") + ": %s" for key in keys) + "}"
        )

    def format(self, columns: Sequence[list[str]]) -> list[str]:
        template = self.template
        return [template % row for row in zip(*columns, strict=True)]

    def check(self, columns: Sequence[list[str]], texts: Sequence[str], rows: int = 50) -> None:
        for i, text in enumerate(texts[:rows]):
            expected = json.dumps(
                {key: json.loads(column[i]) for key, column in zip(self.keys, columns, strict=True)}
            )
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


# --------------------------------------------------------------------------- the load


@dataclass
class LoadResult:
    database: str
    survey: str
    slug: str
    survey_id: int
    survey_created: bool
    responses: int
    seed: int
    batch_size: int
    journal_mode_during_load: str
    questions: dict[str, str] = field(default_factory=dict)  # key -> mechanism name
    generate_seconds: float = 0.0  # drawing, randomizing and formatting rows
    insert_seconds: float = 0.0  # executemany
    commit_seconds: float = 0.0  # COMMIT (+ WAL checkpoint / journal switch back)
    load_seconds: float = 0.0  # store survey + the whole transaction, end to end
    rows_per_second: float = 0.0
    recount_seconds: float = 0.0
    recount_matched: bool = False
    joint_counts_seconds: float = 0.0
    database_bytes: int = 0
    responses_counter: int = 0
    counters: dict[str, dict[str, int]] = field(default_factory=dict)  # key -> tally cells
    # (key, category) as "key/category" -> drawn truth: a share, or a mean
    true_values_drawn: dict[str, float] = field(default_factory=dict)


def _batches(total: int, size: int) -> Iterator[int]:
    while total > 0:
        yield min(size, total)
        total -= size


def load(
    database: str | Path,
    responses: int,
    *,
    survey: str = DEFAULT_SURVEY,
    slug: str | None = None,
    seed: int = DEFAULT_SEED,
    batch_size: int = DEFAULT_BATCH,
    answered_on: str | None = None,
    journal_mode: str = "wal",
    verify: bool = True,
    log: bool = True,
    joint_counts: bool = True,
) -> LoadResult:
    """Store the survey if needed, add ``responses`` synthetic responses, check tallies.

    The rows go in outside ``record_response``, so the joint counts it keeps are then
    rebuilt from them (``joint_counts``), as the app would have kept them; or, for the
    benchmarks of counting from the responses, marked incomplete, as after an upgrade.

    Load-only settings, on this connection only: ``synchronous = OFF`` and a 512 MB page
    cache. ``journal_mode="truncate"`` additionally switches the file out of WAL for the
    load (new pages then skip the WAL copy-and-checkpoint) and back to WAL afterwards;
    the app's default, WAL, is kept unless asked.
    """
    shape = SURVEYS[survey]
    slug = slug or shape.slug
    database = Path(database)
    database.parent.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    db = connect(database)
    conn = db.conn
    stored, created = ensure_survey(db, shape, slug)
    result = LoadResult(
        database=str(database),
        survey=survey,
        slug=slug,
        survey_id=stored.id,
        survey_created=created,
        responses=responses,
        seed=seed,
        batch_size=batch_size,
        journal_mode_during_load=journal_mode,
        questions={q.key: q.mechanism.name for q in stored.questions},
    )
    columns = [Column(q, shape.truth[q.key]) for q in stored.questions]
    formatter = AnswerFormatter([q.key for q in stored.questions])
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

    tallies: dict[int, dict[str, int]] = {q.id: {} for q in stored.questions}
    sql = (
        "INSERT INTO responses (survey_id, submission_id, answered_on, design, answers) "
        "VALUES (?, ?, ?, ?, ?)"
    )
    loaded = 0
    try:
        with write_transaction(db):
            for count in _batches(responses, batch_size):
                t0 = time.perf_counter()
                tokens = []
                for column in columns:
                    column_tokens, cells = column.batch(rng, count)
                    tokens.append(column_tokens)
                    mine = tallies[column.question.id]
                    for cell, value in cells.items():
                        mine[cell] = mine.get(cell, 0) + value
                texts = formatter.format(tokens)
                formatter.check(tokens, texts)
                del tokens
                ids = submission_ids(count)
                t1 = time.perf_counter()
                conn.executemany(
                    sql,
                    zip(
                        repeat(stored.id, count),
                        ids,
                        repeat(answered_on),
                        repeat(stored.design),
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
            # As add_to_tallies does for one response, with the whole load's totals.
            conn.executemany(
                "INSERT INTO tallies (question_id, cell, value) VALUES (?, ?, ?) "
                "ON CONFLICT (question_id, cell) DO UPDATE SET value = value + excluded.value",
                [
                    (qid, cell, value)
                    for qid, cells in tallies.items()
                    for cell, value in cells.items()
                ],
            )
            conn.execute(
                "UPDATE surveys SET responses = responses + ? WHERE id = ?", [responses, stored.id]
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
    result.true_values_drawn = {
        f"{column.question.key}/{category}": value
        for column in columns
        for category, value in column.truth_drawn().items()
    }
    conn.close()
    # Verify on a fresh connection with the app's own settings, as `survey-app recount` would.
    db = connect(database)
    conn = db.conn
    result.responses_counter = int(
        conn.execute("SELECT responses FROM surveys WHERE id = ?", [stored.id]).fetchone()[0]
    )
    rows = int(
        conn.execute("SELECT count(*) FROM responses WHERE survey_id = ?", [stored.id]).fetchone()[
            0
        ]
    )
    if result.responses_counter != rows:
        raise AssertionError(f"surveys.responses {result.responses_counter} != {rows} rows")
    if verify:
        t0 = time.perf_counter()
        checked = recount(db, stored)
        result.recount_seconds = time.perf_counter() - t0
        result.recount_matched = checked.matched
        result.counters = checked.before
        if not checked.matched:
            raise AssertionError(
                f"tallies do not match the stored rows: {list(checked.differences())}"
            )
    else:
        keys = {q.id: q.key for q in stored.questions}
        result.counters = {key: {} for key in keys.values()}
        for qid, cell, value in conn.execute(
            "SELECT t.question_id, t.cell, t.value FROM tallies t JOIN questions q "
            "ON q.id = t.question_id WHERE q.survey_id = ?",
            [stored.id],
        ):
            if value:
                result.counters[keys[qid]][cell] = value
    t0 = time.perf_counter()
    if joint_counts:
        joint_tallies.rebuild(db, stored)
    else:
        joint_tallies.forget(db, stored)
    result.joint_counts_seconds = time.perf_counter() - t0
    conn.close()
    result.database_bytes = sum(
        p.stat().st_size for p in database.parent.glob(database.name + "*") if p.is_file()
    )
    return result


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--db", required=True, help="SQLite file (created if missing)")
    parser.add_argument("--responses", type=int, default=1_000_000)
    parser.add_argument("--survey", choices=sorted(SURVEYS), default=DEFAULT_SURVEY)
    parser.add_argument("--slug", help="default: the survey shape's own slug")
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
        survey=args.survey,
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
