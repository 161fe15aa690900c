"""SPSS (.sav) and Stata (.dta) files of the randomized per-response data, labelled.

The same rows and columns as the per-response CSV (``exports.responses_csv``), for
researchers who work in SPSS or Stata: each column's variable label is its question's text;
yes/no reports and reported options are numbers with value labels (1 = yes, 0 = no; an
option's index from 0, labelled with its text: the index the regression page and RRreg's
FR model use); numbers are the CSV's, unlabelled; the day is a date. The design (each
question's mechanism, exact parameters, ε and how to undo the randomization on average:
the codebook in brief) travels inside the file, as SPSS's document lines and as Stata's
notes (``notes list``), every text in full where a label had to be cut.

The formats' limits decide the names and labels. A name is at most 29 letters, digits
and "_", starting with a letter, and no reserved word: Stata's rule, which fits inside
SPSS's, less three characters, since pyreadstat names a value label set after its variable
with a count after it (``year0``), and a set's name is held to 32 characters too. A
question key becomes its name where it can. A Stata label holds 80 characters;
SPSS's variable labels hold 256 bytes, value labels 120, the file label 64 and a document
line 80. A longer text is cut between characters and ends in "…".

pyreadstat writes only to a path, from a whole table in memory: a polars frame, built
when a file is asked for (not pandas: sqlite-utils imports pandas at start-up whenever it
is installed, 29 MiB and half a second in every worker). The file goes to a
temporary file only its owner can read, which is opened and unlinked at once (POSIX keeps an
unlinked file's bytes until its last handle closes), so nothing is left behind, even when
a download is abandoned. What it holds is what the CSV holds: randomized reports, and plain
covariates as given, never a true answer to a sensitive question.

pyreadstat's ``write_dta`` drops notes, though ReadStat underneath can write them, so the
Stata notes are added here, as the ``_dta[note0]`` (their count) and ``_dta[note1]``, …
characteristics Stata's ``notes`` command keeps, inserted into the file's characteristics
section while it streams out, the map of section offsets moved on to match (Stata's
"dta file format" for release 118: <map>, <characteristics>, <ch>).
"""

from __future__ import annotations

import dataclasses
import datetime
import functools
import itertools
import json
import os
import re
import struct
import tempfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import IO, Any, cast

from survey_app.domain.display_logic import NOT_APPLICABLE
from survey_app.domain.exports import codebook, reports_one_option, response_columns
from survey_app.privacy import DEFAULT_INTERVAL_METHOD, ProportionMechanism
from survey_app.storage.backends import Database
from survey_app.storage.responses import iter_response_rows
from survey_app.storage.surveys import Question, Survey

ELLIPSIS = "…"
CHUNK_BYTES = 64 * 1024
MAX_NAME = 29  # Stata's 32, less a label set's count (fewer than 1,000 sets)
CACHED_VALUES = 4096  # distinct stored values remembered per question
BATCH_ROWS = 50_000
# Words Stata keeps for itself (lower case: keys are) and SPSS's keywords, and Stata's str#.
RESERVED_NAMES = frozenset(
    {"byte", "double", "float", "if", "in", "int", "long", "using", "with", "strl"}
    | {"all", "and", "by", "eq", "ge", "gt", "le", "lt", "ne", "not", "or", "to"}
)
STATA_STRING_TYPE = re.compile(r"str\d+")
YES_NO_LABELS = {1: "yes", 0: "no"}
#: A not-applicable cell's number, by kind of variable: below every option index and score
#: (|score| ≤ 10^6) for a code, beyond every report (|report| ≤ 3·10^9) and every value
#: mapped from one for a measure. SPSS declares it user-missing (``missing_ranges``); Stata
#: writes it as the extended missing value .a (``STATA_NOT_APPLICABLE``). Both label it.
NOT_APPLICABLE_CODES: dict[str, int | float] = {"code": -99_999_999, "measure": -1e15}
NOT_APPLICABLE_LABEL = "not applicable"
STATA_NOT_APPLICABLE = "a"
#: Tick all that apply: whether the option a response reports on was reported ticked.
TICKED_LABELS = {1: "ticked", 0: "not ticked"}
# The CSV's first three columns: their labels and kinds.
FIXED = (
    ("survey", "text"),
    ("day the response was stored", "date"),
    ("design fingerprint (the questions' mechanisms when it was answered)", "text"),
)
# Stata release 118 (Stata 14 and later, every edition): UTF-8 text, 80-character labels.
STATA_VERSION = 14
STATA_RELEASE = b"<release>118</release>"
STATA_HEAD_BYTES = 1024  # <header> and <map> end well before this
STATA_MAP = b"<map>"
STATA_CHARACTERISTICS = b"<characteristics>"
STATA_CHARACTERISTIC_NAME_BYTES = 129  # release 118's variable and characteristic names
SPSS_DOCUMENT_LINE = 80  # bytes


@dataclass(frozen=True)
class Limit:
    """How long a format lets one kind of text be, in characters or in UTF-8 bytes."""

    size: int
    in_bytes: bool = False

    def fit(self, text: str) -> str:
        """``text``, or as much of it as fits followed by "…", cut between characters."""
        if not self.in_bytes:
            return text if len(text) <= self.size else text[: self.size - 1] + ELLIPSIS
        data = text.encode()
        if len(data) <= self.size:
            return text
        room = self.size - len(ELLIPSIS.encode())
        return data[:room].decode(errors="ignore") + ELLIPSIS


@dataclass(frozen=True)
class Variable:
    """One column of the file: its valid name, its full label, its value labels (None for
    none) and what it holds: "text", a "date", a "code" (yes/no, an option, a bit) or a
    "measure"."""

    name: str
    label: str
    value_labels: dict[int, str] | None
    kind: str
    #: Its question has a condition (``show_if``): a response it did not apply to holds
    #: the user-missing value "not applicable" here, apart from a skip's system missing.
    conditioned: bool = False

    @property
    def not_applicable_code(self) -> int | float:
        """The number a not-applicable cell holds in the table (``NOT_APPLICABLE_CODES``)."""
        return NOT_APPLICABLE_CODES[self.kind]


@dataclass(frozen=True)
class LabelledTable:
    """A survey's responses as the file will hold them: the file's label, the variables,
    their values, and the design in paragraphs."""

    label: str
    variables: list[Variable]
    frame: Any  # a polars.DataFrame, one column a variable (polars is imported late)
    notes: list[str]


@dataclass(frozen=True)
class FileFormat:
    """A statistics package's file: its name and type, its limits, pyreadstat's writer
    with the options it takes for this file, and how the bytes go out."""

    extension: str
    mimetype: str
    label: Limit
    value_label: Limit
    file_label: Limit
    writer: str
    options: Callable[[LabelledTable], dict[str, Any]]
    stream: Callable[[IO[bytes], list[str]], Iterator[bytes]]
    #: The frame and the writer's options that mark the not-applicable cells missing.
    user_missing: Callable[[LabelledTable], tuple[Any, dict[str, Any]]]


def variable_names(columns: Sequence[str]) -> list[str]:
    """A valid, distinct SPSS and Stata name for each CSV column: "." (unary encoding's
    ``key.2``) becomes "_", a "q" goes before a name not starting with a letter or that is
    a reserved word; a name cut to ``MAX_NAME`` loses a "_" at its end (SPSS advises
    against one), and one already taken ends in "_2", "_3"…"""
    taken: set[str] = set()
    names = []
    for column in columns:
        base = column.replace(".", "_")
        if not base[:1].isalpha() or base in RESERVED_NAMES or STATA_STRING_TYPE.fullmatch(base):
            base = "q" + base if base[:1] == "_" else "q_" + base
        name, copy = base[:MAX_NAME].rstrip("_"), 1
        while name in taken:
            copy += 1
            suffix = f"_{copy}"
            name = base[: MAX_NAME - len(suffix)].rstrip("_") + suffix
        taken.add(name)
        names.append(name)
    return names


def _question_variables(question: Question, names: Iterator[str]) -> list[Variable]:
    """A question's variables (``_variables``), marked when its question is conditioned."""
    variables = _variables(question, names)
    if question.show_if is None:
        return variables
    return [dataclasses.replace(variable, conditioned=True) for variable in variables]


def _variables(question: Question, names: Iterator[str]) -> list[Variable]:
    """A question's variables: one, or one per option's bit (labelled "[option] text"),
    or for tick all that apply the option a response reports on and its reported tick."""
    if question.type.is_multiple:
        options = dict(enumerate(question.options))
        return [
            Variable(next(names), f"{question.text} (option reported on)", options, "code"),
            Variable(next(names), f"{question.text} (reported ticked)", TICKED_LABELS, "code"),
        ]
    if len(question.mechanism.export_columns(question.key)) > 1:
        return [
            Variable(next(names), f"[{option}] {question.text}", None, "code")
            for option in question.options
        ]
    if question.type.is_yes_no:
        return [Variable(next(names), question.text, YES_NO_LABELS, "code")]
    if reports_one_option(question):
        labels = dict(zip(option_codes(question), question.options, strict=True))
        return [Variable(next(names), question.text, labels, "code")]
    return [Variable(next(names), question.text, None, "measure")]


def option_codes(question: Question) -> tuple[int, ...]:
    """The values an option's reports are written as: a scale's scores (so the column's
    mean is the mean reported score), otherwise the option's index."""
    return question.scores if question.type.has_scores else tuple(range(len(question.options)))


def _cells(question: Question, variables: list[Variable]) -> Callable[[Any], tuple[Any, ...]]:
    """How a stored value becomes the question's cells: the CSV's (``export_cells``), a
    reported option's text turned back into its index; None for a skip; each variable's
    ``not_applicable_code`` where the question did not apply. Remembered per
    stored value: a question has few (two for yes/no and Duchi's bit, k options), and a
    mechanism may compute its cells from exact rationals, tens of µs a call."""
    mechanism, options = question.mechanism, question.options
    width = len(mechanism.export_columns(question.key))
    one_option = reports_one_option(question)
    codes = dict(zip(options, option_codes(question), strict=True))

    @functools.lru_cache(maxsize=CACHED_VALUES)
    def cells(stored: Any) -> tuple[Any, ...]:
        if stored is None:
            return (None,) * width
        if stored == NOT_APPLICABLE:
            return tuple(variable.not_applicable_code for variable in variables)
        reported = mechanism.export_cells(stored, options)
        return (codes[str(reported[0])],) if one_option else tuple(reported)

    return cells


def _rows(db: Database, survey: Survey, groups: list[list[Variable]]) -> Iterator[tuple[Any, ...]]:
    """Every stored response as the file's row: the CSV's, options as codes, a date."""
    encoders = [_cells(q, group) for q, group in zip(survey.questions, groups, strict=True)]
    day = functools.cache(datetime.date.fromisoformat)  # one per day, not per row
    for answered_on, design, *stored in iter_response_rows(db, survey):
        cells = (encode(value) for encode, value in zip(encoders, stored, strict=True))
        yield (survey.slug, day(str(answered_on)), design, *itertools.chain.from_iterable(cells))


def _frame(
    db: Database,
    survey: Survey,
    variables: list[Variable],
    groups: list[list[Variable]],
) -> Any:
    """The table pyreadstat is given: a polars frame, typed column by column, built
    ``BATCH_ROWS`` responses at a time, so the rows as Python objects never all exist at
    once (8 bytes a number in the frame against some 40 as objects)."""
    import polars  # here only: a download needs it, a worker's start does not

    kinds = {"text": polars.Utf8, "date": polars.Date, "code": polars.Int32}
    schema = {v.name: kinds.get(v.kind, polars.Float64) for v in variables}
    rows = _rows(db, survey, groups)
    batches = [polars.DataFrame(schema=schema)]
    while batch := list(itertools.islice(rows, BATCH_ROWS)):
        batches.append(polars.DataFrame(batch, schema=schema, orient="row"))
    return polars.concat(batches)


def _number(value: Fraction) -> str:
    """A probability for the notes: the float of the exact rational, all its digits."""
    return repr(float(value))


def _estimate(question: Question, reports_in: str) -> str:
    """How to undo the randomization on average, in the question's own numbers."""
    if not question.sensitive:
        return "stored as given: nothing to undo"
    if question.type.estimates_mean:
        return "the column's mean is an unbiased estimate of the mean answer"
    p_true, p_false = cast(ProportionMechanism, question.mechanism).exact_rates
    low, slope = _number(p_false), _number(p_true - p_false)
    return f"a share = (share of reports {reports_in} - {low}) / {slope}"


def _coded(labels: dict[int, str]) -> str:
    return "; ".join(f"{code} = {text}" for code, text in labels.items())


def _values_text(question: Question, variables: list[Variable], encoding: str) -> tuple[str, str]:
    """What the question's values are, and which reports a share counts."""
    [first, *others] = variables
    if question.type.is_multiple:
        option, ticked = first.name, others[0].name
        codes = _coded(dict(enumerate(question.options)))
        values = f"{option}: {codes}; {ticked}: 1 = ticked, 0 = not"
        return values, f"with {ticked} = 1 among the rows whose {option} is the option"
    if others:
        per_option = zip(variables, question.options, strict=True)
        bits = "; ".join(f"{variable.name} for {option}" for variable, option in per_option)
        return f"1 = the option's bit reported set, 0 = not ({bits})", "with the option's bit set"
    if first.value_labels is None:
        return encoding, ""
    reports_in = "of the option" if question.type.has_options else "of yes (1)"
    return _coded(first.value_labels), reports_in


def _question_note(question: Question, variables: list[Variable], entry: dict[str, Any]) -> str:
    """One question's paragraph: its variables, key, mechanism, exact parameters, ε, its
    text in full, what the values are and how to estimate from them."""
    values, reports_in = _values_text(question, variables, entry["encoding"])
    parameters = json.dumps(entry["parameters"], sort_keys=True)
    names = ", ".join(variable.name for variable in variables)
    return (
        f"{names}: question {question.key} ({question.type}, {entry['mechanism']}, epsilon "
        f"{entry['epsilon']}, parameters {parameters}). {question.text} Values: {values}. "
        f"Estimate: {_estimate(question, reports_in)}."
    )


def _notes(survey: Survey, groups: list[list[Variable]], app_version: str) -> list[str]:
    """The design in paragraphs: what the file is, the privacy, then each question."""
    # The interval options only matter to the aggregate CSV's codebook.
    book = codebook(survey, "responses", 0.95, DEFAULT_INTERVAL_METHOD, app_version)
    head = [
        f"{survey.title} ({survey.slug}): one row per response, exported by survey-app "
        f"{app_version} at {book['exported_at']}.",
        "Sensitive questions hold randomized reports, not true answers: analyse them with "
        "each question's design below, never as answers. A missing value is a skipped "
        "question; the user-missing value labelled not applicable (SPSS: "
        f"{NOT_APPLICABLE_CODES['code']} for a code, {NOT_APPLICABLE_CODES['measure']:.0f} for "
        "a number; Stata: .a) a question whose show_if condition on a plain answer did not "
        "hold, so it was not asked.",
        f"Privacy: each question's epsilon is below; a respondent who answers them all "
        f"reveals at most epsilon {book['epsilon_per_respondent']} ({book['composition']}).",
    ]
    entries = book["questions"]
    return head + [
        _question_note(question, variables, entry)
        for question, variables, entry in zip(survey.questions, groups, entries, strict=True)
    ]


def labelled_table(db: Database, survey: Survey, app_version: str) -> LabelledTable:
    """The survey's responses as a labelled file holds them, with the design's notes."""
    names = iter(variable_names(response_columns(survey)))
    fixed = [Variable(next(names), label, None, kind) for label, kind in FIXED]
    groups = [_question_variables(question, names) for question in survey.questions]
    variables = fixed + [variable for group in groups for variable in group]
    return LabelledTable(
        label=f"Randomized reports (design in the notes): {survey.title}",
        variables=variables,
        frame=_frame(db, survey, variables, groups),
        notes=_notes(survey, groups, app_version),
    )


def _byte_lines(paragraph: str, size: int) -> list[str]:
    """A paragraph in lines of at most ``size`` UTF-8 bytes, broken at spaces; a word
    longer than a line is cut between characters."""
    lines: list[str] = []
    line = ""
    for word in paragraph.split(" "):
        joined = f"{line} {word}" if line else word
        if len(joined.encode()) <= size:
            line = joined
            continue
        if line:
            lines.append(line)
        line = word
        while len(line.encode()) > size:
            piece = line.encode()[:size].decode(errors="ignore")
            lines.append(piece)
            line = line[len(piece) :]
    return [*lines, line]


def _document_lines(paragraphs: list[str]) -> list[str]:
    """The notes as SPSS document lines, a blank line between paragraphs."""
    lines: list[str] = []
    for paragraph in paragraphs:
        lines += [*_byte_lines(paragraph, SPSS_DOCUMENT_LINE), ""]
    return lines[:-1]


def _write(table: LabelledTable, path: str, file_format: FileFormat) -> None:
    """Write the file with pyreadstat, every label cut to the format's limits."""
    import pyreadstat  # here only, as polars

    value_labels = {
        variable.name: {code: file_format.value_label.fit(text) for code, text in labels.items()}
        for variable in table.variables
        if (labels := variable.value_labels) is not None
    }
    frame, missing = file_format.user_missing(table)
    for variable in table.variables:
        if variable.conditioned:
            code = STATA_NOT_APPLICABLE if "missing_user_values" in missing else None
            key = variable.not_applicable_code if code is None else code
            value_labels.setdefault(variable.name, {})[key] = NOT_APPLICABLE_LABEL  # type: ignore[index]
    getattr(pyreadstat, file_format.writer)(
        frame,
        path,
        file_label=file_format.file_label.fit(table.label),
        column_labels=[file_format.label.fit(variable.label) for variable in table.variables],
        variable_value_labels=value_labels,
        **file_format.options(table),
        **missing,
    )


def _spss_missing(table: LabelledTable) -> tuple[Any, dict[str, Any]]:
    """SPSS: each conditioned variable's not-applicable code declared user-missing."""
    ranges = {v.name: [v.not_applicable_code] for v in table.variables if v.conditioned}
    return table.frame, {"missing_ranges": ranges} if ranges else {}


def _stata_missing(table: LabelledTable) -> tuple[Any, dict[str, Any]]:
    """Stata: each conditioned variable's not-applicable code written as .a, which
    pyreadstat takes from a column of objects holding "a" (its type stays numeric)."""
    import polars

    conditioned = [v for v in table.variables if v.conditioned]
    if not conditioned:
        return table.frame, {}
    columns = [
        polars.Series(
            v.name,
            [
                STATA_NOT_APPLICABLE if value == v.not_applicable_code else value
                for value in table.frame[v.name].to_list()
            ],
            dtype=polars.Object,
        )
        for v in conditioned
    ]
    frame = table.frame.with_columns(columns)
    return frame, {"missing_user_values": {v.name: [STATA_NOT_APPLICABLE] for v in conditioned}}


def _written(table: LabelledTable, file_format: FileFormat) -> IO[bytes]:
    """The file, written to a temporary path and opened; the path is gone on return."""
    descriptor, path = tempfile.mkstemp(suffix="." + file_format.extension)
    os.close(descriptor)
    try:
        _write(table, path, file_format)
        return open(path, "rb")  # closed by the stream that reads it
    finally:
        os.unlink(path)


def _rest(handle: IO[bytes]) -> Iterator[bytes]:
    yield from iter(lambda: handle.read(CHUNK_BYTES), b"")


def _plain_stream(handle: IO[bytes], notes: list[str]) -> Iterator[bytes]:
    """The file as written (SPSS's documents are in it already)."""
    with handle:
        yield from _rest(handle)


def _stata_stream(handle: IO[bytes], notes: list[str]) -> Iterator[bytes]:
    """The file with the notes inserted (``_stata_head``)."""
    with handle:
        yield _stata_head(handle, notes)
        yield from _rest(handle)


def _characteristic(order: str, name: str, text: str) -> bytes:
    """One ``_dta[name]`` characteristic: <ch>, its length, the two names padded to 129
    bytes, the text with a NUL, </ch>."""
    width = STATA_CHARACTERISTIC_NAME_BYTES
    body = b"_dta".ljust(width, b"\0") + name.encode().ljust(width, b"\0") + text.encode() + b"\0"
    return b"<ch>" + struct.pack(f"{order}I", len(body)) + body + b"</ch>"


def _stata_head(handle: IO[bytes], notes: list[str]) -> bytes:
    """The file up to its <characteristics> tag, then the notes as ``_dta[note0]`` (their
    count), ``_dta[note1]``, …, with the map's offsets of every later section (8 is
    <characteristics>; 9 to 13, <data> to the end) moved on by the notes' length."""
    start = handle.read(STATA_HEAD_BYTES)
    if STATA_RELEASE not in start:
        raise ValueError("the Stata notes are written into release 118 files only")
    order = "<" if b"<byteorder>LSF</byteorder>" in start else ">"
    at = start.index(STATA_MAP) + len(STATA_MAP)
    offsets = struct.unpack_from(f"{order}14Q", start, at)
    texts = [str(len(notes)), *notes]
    added = b"".join(_characteristic(order, f"note{i}", text) for i, text in enumerate(texts))
    handle.seek(0)
    head = bytearray(handle.read(offsets[8] + len(STATA_CHARACTERISTICS)))
    if not head.endswith(STATA_CHARACTERISTICS):
        raise ValueError("the Stata file's map does not point at its characteristics")
    moved = [*offsets[:9], *(offset + len(added) for offset in offsets[9:])]
    struct.pack_into(f"{order}14Q", head, at, *moved)
    return bytes(head) + added


FORMATS = {
    "sav": FileFormat(
        extension="sav",
        mimetype="application/x-spss-sav",
        label=Limit(256, in_bytes=True),
        value_label=Limit(120, in_bytes=True),
        file_label=Limit(64, in_bytes=True),
        writer="write_sav",
        options=lambda table: {"note": _document_lines(table.notes)},
        stream=_plain_stream,
        user_missing=_spss_missing,
    ),
    "dta": FileFormat(
        extension="dta",
        mimetype="application/x-stata-dta",
        label=Limit(80),
        value_label=Limit(32_000, in_bytes=True),
        file_label=Limit(80),
        writer="write_dta",
        options=lambda table: {"version": STATA_VERSION},
        stream=_stata_stream,
        user_missing=_stata_missing,
    ),
}


def labelled_file(
    db: Database, survey: Survey, extension: str, app_version: str
) -> Iterator[bytes]:
    """The survey's responses as an SPSS (``sav``) or Stata (``dta``) file, in pieces.

    The table is read and the file written before this returns (so the caller's database
    connection may close); the pieces then come from the unlinked file."""
    file_format = FORMATS[extension]
    table = labelled_table(db, survey, app_version)
    return file_format.stream(_written(table, file_format), table.notes)
