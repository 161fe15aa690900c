"""Survey definition files: YAML or JSON text in, a validated ``SurveyDefinition`` out.

Pure parsing and validation, with no Flask and no database, so the importer command, the
first-run example loader, the builder and the tests share one answer to "is this a valid
survey?". The work is done by ``survey_reading`` (text to plain values and their lines)
and ``survey_validation`` (plain values to a survey); here a problem gets its place.
Every problem names the field and, where the parser can tell, the line: the person fixing
the file needs to know where to look, not a traceback. All the problems validation finds
are raised at once, as one ``SurveyDefinitionError`` listing them in file order; a file
that cannot be read at all stops at that.
"""

from __future__ import annotations

import os
from pathlib import Path

from survey_app.domain.survey_model import SurveyDefinition, SurveyDefinitionError
from survey_app.domain.survey_reading import nearest_line, read_values
from survey_app.domain.survey_validation import validate_survey


def load_definition(path: str | os.PathLike[str]) -> SurveyDefinition:
    """Read and validate a definition file; its suffix (.json or not) picks the parser."""
    source = os.fspath(path)
    try:
        raw = Path(path).read_bytes()
    except OSError as err:
        raise SurveyDefinitionError(
            f"cannot read the file: {err.strerror or err}", source=source
        ) from None
    try:
        # utf-8-sig: editors on Windows like to start UTF-8 files with a byte-order mark.
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        raise SurveyDefinitionError(
            f"not UTF-8 text (undecodable byte at offset {err.start})",
            line=raw.count(b"\n", 0, err.start) + 1,
            source=source,
        ) from None
    return parse_definition(text, source)


def parse_definition(
    text: str, source: str = "<string>", fmt: str | None = None
) -> SurveyDefinition:
    """Parse and validate a definition given as text.

    ``fmt`` is "yaml" or "json"; None guesses from ``source``'s suffix (.json is JSON,
    anything else YAML). ``source`` only labels error messages.
    """
    if fmt is None:
        fmt = "json" if Path(source).suffix.lower() == ".json" else "yaml"
    if fmt not in ("yaml", "json"):
        raise ValueError(f"fmt must be 'yaml', 'json' or None, not {fmt!r}")
    lines: dict[str, int] = {}
    try:
        values, lines = read_values(text, fmt)
        return validate_survey(values, text)
    except SurveyDefinitionError as err:
        located = [_located(problem, lines, source) for problem in err.problems]
        # In file order, problems of the file as a whole (no line) first; the sort is
        # stable, so problems on one line keep the order validation found them in.
        located.sort(key=lambda problem: -1 if problem.line is None else problem.line)
        raise SurveyDefinitionError.collected(located) from None


def _located(
    problem: SurveyDefinitionError, lines: dict[str, int], source: str
) -> SurveyDefinitionError:
    line = problem.line if problem.line is not None else nearest_line(problem.field, lines)
    return SurveyDefinitionError(problem.message, problem.field, line, source)
