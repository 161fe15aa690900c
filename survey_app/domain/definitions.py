"""Survey definition files: YAML or JSON text in, a validated ``SurveyDefinition`` out.

Pure parsing and validation, with no Flask and no database, so the importer command, the
first-run example loader and the tests share one answer to "is this a valid survey?".
Every problem becomes exactly one ``SurveyDefinitionError`` naming the field and, where the
parser can tell, the line: the person fixing the file needs to know where to look, not
a traceback.
"""

from __future__ import annotations

import json
import math
import os
import re
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any

import yaml

from survey_app.domain.languages import LANGUAGES
from survey_app.privacy import AnswerSpace, QuestionType, mechanism_for
from survey_app.privacy.mechanisms import AUTO, file_names

#: Keys a definition may have, in documentation order; True marks the required ones.
SURVEY_KEYS = {
    "slug": True,
    "languages": False,
    "title": True,
    "description": False,
    "access": False,
    "consent": False,
    "contact": False,
    "max_epsilon": False,
    "questions": True,
}
#: Keys a question may have, in documentation order; True marks the required ones.
#: Which of the optional ones apply depends on the type and on ``sensitive``.
QUESTION_KEYS = {
    "key": True,
    "text": True,
    "type": False,
    "sensitive": False,
    "required": False,
    "epsilon": False,
    "mechanism": False,
    "options": False,
    "min": False,
    "max": False,
}
#: Question types the app can collect (``privacy.question_types``): yes/no, one of a list
#: of options, a whole number between min and max.
QUESTION_TYPES = tuple(QuestionType)
# open: anyone with the survey's address, once per browser; invitation: single-use links.
ACCESS_MODES = ("open", "invitation")
DEFAULT_QUESTION_TYPE = QuestionType.YES_NO
#: A survey's languages when its file names none; the first of a survey's languages is its
#: main one, the language of its exports.
DEFAULT_LANGUAGES = ("en",)
#: The mechanisms a sensitive question may ask for, by type (each mechanism's
#: ``file_name``), for the types that have a choice; "auto" lets the privacy package pick
#: the more accurate one for the question's ε and size.
MECHANISMS = {kind: file_names(kind) for kind in QuestionType if len(file_names(kind)) > 1}
DEFAULT_MECHANISM = AUTO
#: Names the survey form already uses for its own fields; a question named like one
#: would collide with it in the submitted form.
RESERVED_QUESTION_KEYS = frozenset(
    {"csrf_token", "submission_id", "randomized", "invitation", "design", "agreed"}
)

SLUG_PATTERN = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
QUESTION_KEY_PATTERN = re.compile(r"[a-z0-9_]+")
MAX_SLUG_LENGTH = 64
MAX_TITLE_LENGTH = 200
MAX_DESCRIPTION_LENGTH = 5000
MAX_CONSENT_LENGTH = 5000
MAX_CONTACT_LENGTH = 500
MAX_QUESTIONS = 100
MAX_QUESTION_KEY_LENGTH = 64
MAX_QUESTION_TEXT_LENGTH = 1000
MIN_OPTIONS = 2
MAX_OPTIONS = 20
MAX_OPTION_LENGTH = 200
#: A number question's bounds: whole numbers, |min|, |max| ≤ MAX_NUMBER_MAGNITUDE and
#: max - min ≤ MAX_NUMBER_RANGE (the range sets the noise a number question needs).
MAX_NUMBER_MAGNITUDE = 10**9
MAX_NUMBER_RANGE = 1_000_000

#: A question's requested ε: a decimal with at most EPSILON_DECIMALS places, in
#: [EPSILON_MIN, EPSILON_MAX]. Written exactly, it reaches the privacy package unrounded.
EPSILON_MIN = Fraction("0.01")
EPSILON_MAX = Fraction(10)
EPSILON_DECIMALS = 3
#: The survey's max_epsilon: the same kind of decimal, in [EPSILON_MIN, MAX_EPSILON_MAX].
MAX_EPSILON_MAX = Fraction(1000)
#: ε of a yes/no question without epsilon: fair coins, P(yes|yes) = 3/4, P(yes|no) = 1/4.
DEFAULT_YES_NO_EPSILON = math.log(3)
#: ε of a sensitive choice or number question without epsilon.
DEFAULT_CHOICE_NUMBER_EPSILON = Fraction(1)
#: The largest magnitude a stored number report may have: a tally cell holds a 64-bit
#: integer and sums squares of reports, and the square of a larger one would not fit.
LARGEST_REPORT = 3 * 10**9

_TOO_DEEP = "the definition is nested too deeply to be a survey"
_EMPTY = "the definition is empty (it needs slug, title and questions)"


@dataclass(frozen=True)
class QuestionTexts:
    """A question's words in one language: its text and its options, in option order."""

    text: str
    options: tuple[str, ...] = ()


@dataclass(frozen=True)
class SurveyTexts:
    """A survey's own words in one language (its questions carry theirs)."""

    title: str
    description: str = ""
    consent: str = ""
    contact: str = ""


@dataclass(frozen=True)
class QuestionDefinition:
    """One question; ``key`` names its form field and its CSV column.

    ``text`` and ``options`` are in the survey's main language; ``translations`` holds the
    same words in each of its other languages, by language code.
    """

    key: str
    text: str
    type: QuestionType = DEFAULT_QUESTION_TYPE
    #: As written; None means the type's default (see requested_epsilon) or, for a
    #: plain question, none at all.
    epsilon: Fraction | None = None
    mechanism: str = DEFAULT_MECHANISM
    options: tuple[str, ...] = ()
    min: int | None = None
    max: int | None = None
    #: False (choice and number only): stored as given, outside any privacy guarantee.
    sensitive: bool = True
    #: False: the respondent may skip it.
    required: bool = True
    #: The survey's other languages: code -> text and options (same count and order).
    #: Not hashed (a dict cannot be); equal definitions still need equal translations.
    translations: dict[str, QuestionTexts] = field(default_factory=dict, hash=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "type", QuestionType(self.type))

    def texts(self, language: str) -> QuestionTexts:
        """The question's words in ``language``; the main language's if it has no others."""
        return self.translations.get(language, QuestionTexts(self.text, self.options))

    @property
    def requested_epsilon(self) -> Fraction | float | None:
        """The ε this question asks for per respondent: None for a plain question,
        ln 3 (a float: it is irrational) for a yes/no question without epsilon."""
        if not self.sensitive:
            return None
        if self.epsilon is not None:
            return self.epsilon
        default = default_epsilon(self.type)
        return DEFAULT_YES_NO_EPSILON if default is None else default


def default_epsilon(kind: QuestionType) -> Fraction | None:
    """The ε a sensitive question of ``kind`` asks for when its file gives none: None for
    a yes/no question, whose mechanism then flips fair coins (ε = ln 3, not a decimal)."""
    return None if kind.always_randomized else DEFAULT_CHOICE_NUMBER_EPSILON


@dataclass(frozen=True)
class SurveyDefinition:
    """A survey as its definition file describes it, checked and ready to store.

    ``title``, ``description``, ``consent`` and ``contact`` are in the main language,
    ``languages[0]``; ``translations`` holds them in each other language.
    """

    slug: str
    title: str
    description: str
    questions: tuple[QuestionDefinition, ...]
    access: str = "open"
    #: When given, the questions' requested ε may add up to at most this per respondent.
    max_epsilon: Fraction | None = None
    #: Shown before the questions with an "I agree" step; "" for no consent step.
    consent: str = ""
    #: The researcher's contact, shown with the consent.
    contact: str = ""
    #: Every language the survey's texts are given in; the first is the main one.
    languages: tuple[str, ...] = DEFAULT_LANGUAGES
    #: The survey's other languages: code -> title, description, consent, contact.
    translations: dict[str, SurveyTexts] = field(default_factory=dict, hash=False)
    #: The definition text as parsed, comments and all, so the survey can be given back
    #: as its author wrote it. Not part of equality: layout and comments define nothing.
    source: str = field(default="", compare=False, repr=False)

    def texts(self, language: str) -> SurveyTexts:
        """The survey's own words in ``language``; the main language's if it has no others."""
        main = SurveyTexts(self.title, self.description, self.consent, self.contact)
        return self.translations.get(language, main)


class SurveyDefinitionError(ValueError):
    """A definition that cannot be used, located precisely enough for its author to fix it.

    ``field`` is a path such as ``questions[1].key`` ("" for the file as a whole),
    ``line`` is 1-based or None when unknown, ``source`` is the file name or ``<string>``.
    """

    def __init__(
        self, message: str, field: str = "", line: int | None = None, source: str = "<string>"
    ) -> None:
        super().__init__(message, field, line, source)
        self.message = message
        self.field = field
        self.line = line
        self.source = source

    def __str__(self) -> str:
        location = self.source if self.line is None else f"{self.source}:{self.line}"
        subject = f"{self.field}: " if self.field else ""
        return f"{location}: {subject}{self.message}"


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
        if not text.strip():
            raise SurveyDefinitionError(_EMPTY)
        data, lines = _read_json(text) if fmt == "json" else _read_yaml(text)
        return _survey(data, text)
    except SurveyDefinitionError as err:
        line = err.line if err.line is not None else _nearest_line(err.field, lines)
        raise SurveyDefinitionError(err.message, err.field, line, source) from None


# Reading: text -> plain values (str, list, dict, or a stand-in for other scalars) plus
# the line where each field path starts, so validation never needs to know the format.


@dataclass(frozen=True)
class _YamlScalar:
    """A YAML scalar that is not a string, kept unconstructed.

    Constructing it could itself fail (``2024-13-45`` resolves as a date), and validation
    only needs to say what it is, e.g. that ``title: yes`` is a boolean. Numbers and
    booleans are read from ``text`` as written, never through a float.
    """

    kind: str
    text: str
    tag: str = ""


_YAML_STR_TAG = "tag:yaml.org,2002:str"
_YAML_BOOL_TAG = "tag:yaml.org,2002:bool"
_YAML_INT_TAG = "tag:yaml.org,2002:int"
_YAML_FLOAT_TAG = "tag:yaml.org,2002:float"
# YAML 1.1, as PyYAML resolves it: yes/no and on/off are booleans too.
_YAML_TRUE = frozenset({"true", "yes", "on"})
_YAML_SCALAR_KINDS = {
    "tag:yaml.org,2002:null": "an empty value",
    "tag:yaml.org,2002:bool": "a boolean",
    "tag:yaml.org,2002:int": "a number",
    "tag:yaml.org,2002:float": "a number",
    "tag:yaml.org,2002:timestamp": "a date",
}


class _DefinitionLoader(yaml.SafeLoader):
    """SafeLoader that refuses aliases (``*name``).

    A survey definition never needs them, and refusing them keeps a few bytes from
    expanding into a huge or cyclic tree ("billion laughs").
    """

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            raise SurveyDefinitionError(
                "YAML aliases (*name) are not supported in survey definitions",
                line=self.peek_event().start_mark.line + 1,  # type: ignore[no-untyped-call]
            )
        return super().compose_node(parent, index)


def _read_yaml(text: str) -> tuple[object, dict[str, int]]:
    """Compose rather than load: nodes carry line numbers and show duplicate keys."""
    lines: dict[str, int] = {}
    try:
        root = yaml.compose(text, Loader=_DefinitionLoader)
        if root is None:  # only comments
            raise SurveyDefinitionError(_EMPTY)
        return _plain(root, "", lines), lines
    except yaml.YAMLError as err:
        raise SurveyDefinitionError(
            f"not valid YAML: {_yaml_problem(err)}", line=_yaml_error_line(err, text)
        ) from None
    except RecursionError:
        raise SurveyDefinitionError(_TOO_DEEP) from None


def _read_json(text: str) -> tuple[object, dict[str, int]]:
    """The json module decides the values; PyYAML, which reads nearly all JSON, lends
    line numbers and catches the duplicate keys that json.loads silently collapses."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        raise SurveyDefinitionError(
            f"not valid JSON: {err.msg} (column {err.colno})", line=err.lineno
        ) from None
    except RecursionError:
        raise SurveyDefinitionError(_TOO_DEEP) from None
    except ValueError as err:  # e.g. an integer too long to convert
        raise SurveyDefinitionError(f"not valid JSON: {err}") from None
    lines: dict[str, int] = {}
    try:
        root = yaml.compose(text, Loader=_DefinitionLoader)
        if root is not None:  # valid JSON is never empty, but the type allows it
            _plain(root, "", lines)
    except (yaml.YAMLError, RecursionError):
        # PyYAML cannot read this JSON (tab indentation, for one): no line numbers then,
        # but duplicate keys must still be refused.
        json.loads(text, object_pairs_hook=_refuse_duplicate_json_keys)
        return data, {}
    return data, lines


def _refuse_duplicate_json_keys(pairs: list[tuple[str, object]]) -> dict[str, object]:
    """json.loads hook: a repeated key is an error, not "the last one wins"."""
    mapping: dict[str, object] = {}
    for key, value in pairs:
        if key in mapping:
            raise SurveyDefinitionError("duplicate key", field=key)
        mapping[key] = value
    return mapping


def _yaml_problem(err: yaml.YAMLError) -> str:
    """The parser's own words, plus where the construct it choked on began: an unclosed
    quote is reported at the end of the file, but the author needs the line it opened on."""
    if isinstance(err, yaml.reader.ReaderError):
        return f"unacceptable character U+{err.character:04X}"
    if isinstance(err, yaml.MarkedYAMLError):
        context = ""
        if err.context and err.context_mark:
            context = f" ({err.context}, which began on line {err.context_mark.line + 1})"
        elif err.context:
            context = f" ({err.context})"
        return f"{err.problem or 'cannot parse'}{context}"
    return str(err)


def _yaml_error_line(err: yaml.YAMLError, text: str) -> int | None:
    if isinstance(err, yaml.reader.ReaderError):
        return text.count("\n", 0, err.position) + 1
    if isinstance(err, yaml.MarkedYAMLError):
        mark = err.problem_mark or err.context_mark
        return None if mark is None else mark.line + 1
    return None


def _plain(node: yaml.Node, path: str, lines: dict[str, int]) -> object:
    """Turn a composed node into plain values, noting in ``lines`` where each field starts."""
    if isinstance(node, yaml.MappingNode):
        return _plain_mapping(node, path, lines)
    if isinstance(node, yaml.SequenceNode):
        items = []
        for index, item in enumerate(node.value):
            item_path = f"{path}[{index}]"
            lines[item_path] = item.start_mark.line + 1
            items.append(_plain(item, item_path, lines))
        return items
    if node.tag == _YAML_STR_TAG:
        # PyYAML decodes a JSON-style "\ud83d\ude00" escape as two lone surrogates;
        # joining them gives back the character the author wrote.
        return str(node.value).encode("utf-16", "surrogatepass").decode("utf-16", "surrogatepass")
    kind = _YAML_SCALAR_KINDS.get(node.tag, f"a value tagged {node.tag}")
    return _YamlScalar(kind, node.value, node.tag)


def _plain_mapping(node: yaml.MappingNode, path: str, lines: dict[str, int]) -> dict[str, object]:
    """Keys are taken as written; a key given twice is an error because PyYAML's loader
    would silently keep only the last, hiding what the author meant."""
    mapping: dict[str, object] = {}
    for key_node, value_node in node.value:
        line = key_node.start_mark.line + 1
        if not isinstance(key_node, yaml.ScalarNode):
            raise SurveyDefinitionError(
                "mapping keys must be plain names, not lists or mappings", field=path, line=line
            )
        key_path = _join(path, key_node.value)
        if key_node.value in mapping:
            raise SurveyDefinitionError(
                f"duplicate key (first given on line {lines[key_path]})", field=key_path, line=line
            )
        lines[key_path] = line
        mapping[key_node.value] = _plain(value_node, key_path, lines)
    return mapping


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _nearest_line(field: str, lines: dict[str, int]) -> int | None:
    """The line of ``field``, or else of its closest enclosing field (a missing key is
    reported at the mapping that lacks it). The top level has no line of its own."""
    while field:
        if field in lines:
            return lines[field]
        cut = max(field.rfind("."), field.rfind("["))
        field = field[:cut] if cut > 0 else ""
    return None


# Validation: plain values -> SurveyDefinition. Errors carry the field path; the caller
# adds the line and the source.


def _survey(data: object, source: str) -> SurveyDefinition:
    survey = _mapping(data, "", SURVEY_KEYS)
    slug = _slug(survey["slug"])
    languages = _languages(survey.get("languages", list(DEFAULT_LANGUAGES)))
    title = _localized(survey["title"], "title", MAX_TITLE_LENGTH, languages)
    none = dict.fromkeys(languages, "")
    description = none
    if "description" in survey:
        description = _localized(
            survey["description"],
            "description",
            MAX_DESCRIPTION_LENGTH,
            languages,
            may_be_empty=True,
        )
    access = _choice(survey.get("access", "open"), "access", ACCESS_MODES)
    consent = none
    if "consent" in survey:
        # An empty consent would show an "I agree" step with nothing to agree to.
        consent = _localized(survey["consent"], "consent", MAX_CONSENT_LENGTH, languages)
    contact = none
    if "contact" in survey:
        contact = _localized(
            survey["contact"], "contact", MAX_CONTACT_LENGTH, languages, may_be_empty=True
        )
    max_epsilon = None
    if "max_epsilon" in survey:
        max_epsilon = _decimal(survey["max_epsilon"], "max_epsilon", MAX_EPSILON_MAX)
    questions = _questions(survey["questions"], languages)
    if max_epsilon is not None:
        _check_total_epsilon(questions, max_epsilon)
    main = languages[0]
    return SurveyDefinition(
        slug=slug,
        title=title[main],
        description=description[main],
        questions=questions,
        access=access,
        max_epsilon=max_epsilon,
        consent=consent[main],
        contact=contact[main],
        languages=languages,
        translations={
            language: SurveyTexts(
                title[language], description[language], consent[language], contact[language]
            )
            for language in languages[1:]
        },
        source=source,
    )


def _languages(value: object) -> tuple[str, ...]:
    """The codes the survey's texts are given in; the first is the main language."""
    known = ", ".join(LANGUAGES)
    if not isinstance(value, list) or not value:
        raise SurveyDefinitionError(
            f"must be a list of language codes among {known}, the main one first "
            f"(got {_describe(value)})",
            "languages",
        )
    languages: list[str] = []
    for index, item in enumerate(value):
        code = _choice(item, f"languages[{index}]", LANGUAGES)
        if code in languages:
            raise SurveyDefinitionError(
                f"{code!r} is listed twice (already languages[{languages.index(code)}])",
                f"languages[{index}]",
            )
        languages.append(code)
    return tuple(languages)


def _localized(
    value: object,
    field: str,
    max_length: int,
    languages: tuple[str, ...],
    *,
    may_be_empty: bool = False,
) -> dict[str, str]:
    """One text in each of the survey's languages, by code.

    A plain string is the text of a one-language survey. Otherwise it is a mapping with
    exactly the survey's languages: a respondent reading Korean must never meet a text
    only written in English, and a language the survey does not declare is a typo or a
    forgotten ``languages`` entry. An optional text is given in every language or in none.
    """
    if not isinstance(value, dict):
        if len(languages) > 1:
            shape = ", ".join(f"{language}: ..." for language in languages)
            raise SurveyDefinitionError(
                f"must give the text in each of the survey's languages, as {{{shape}}} "
                f"(got {_describe(value)})",
                field,
            )
        return {languages[0]: _text(value, field, max_length, may_be_empty=may_be_empty)}
    listed = ", ".join(languages)
    for language in [*value, *languages]:  # extra ones first: they may be misspellings
        if language not in languages:
            problem = (
                f"{_shorten(language)} is not one of the survey's languages ({listed}): "
                "list it under languages or remove it"
            )
        elif language not in value:
            problem = f"the text in {language} is missing (the survey's languages are {listed})"
        else:
            continue
        raise SurveyDefinitionError(problem, _join(field, language))
    texts = {
        language: _text(
            value[language], _join(field, language), max_length, may_be_empty=may_be_empty
        )
        for language in languages
    }
    given = [language for language in languages if texts[language]]
    for language in languages:
        if given and not texts[language]:
            raise SurveyDefinitionError(
                f"must not be empty when the text is given in {given[0]}", _join(field, language)
            )
    return texts


def _check_total_epsilon(questions: tuple[QuestionDefinition, ...], limit: Fraction) -> None:
    """Composition: a respondent answering every sensitive question reveals at most the
    sum of their ε. Realized ε never exceeds requested (the privacy package rounds toward
    privacy), so checking the requested values is sound."""
    exact = Fraction(0)
    fair_coins = 0  # yes/no questions without epsilon: ln 3 each, irrational
    for question in questions:
        requested = question.requested_epsilon
        if isinstance(requested, Fraction):
            exact += requested
        elif requested is not None:
            fair_coins += 1
    if not fair_coins:
        if exact <= limit:
            return
        total = f"= {_format_decimal(exact)}"
    else:
        # Float error is far below the gap between n·ln 3 + (a decimal) and a decimal.
        inexact = float(exact) + fair_coins * DEFAULT_YES_NO_EPSILON
        if inexact <= limit:
            return
        # Rounded up: the total shown is never at or below the limit it exceeds.
        shown = Fraction(math.ceil(inexact * 1000), 1000)
        plural = "s" if fair_coins > 1 else ""
        total = (
            f"≈ {_format_decimal(shown)} (with {fair_coins} yes/no question{plural} "
            "at the default ε = ln 3 ≈ 1.099)"
        )
    raise SurveyDefinitionError(
        f"the questions add up to ε {total} per respondent, more than "
        f"max_epsilon = {_format_decimal(limit)}",
        "max_epsilon",
    )


def _mapping(value: object, field: str, keys: dict[str, bool]) -> dict[str, object]:
    """Unknown keys are refused, not ignored: a typo such as ``tittle`` would otherwise
    vanish silently and leave the author wondering why their title is missing."""
    allowed = ", ".join(keys)
    if not isinstance(value, dict):
        subject = "" if field else "the definition "
        raise SurveyDefinitionError(
            f"{subject}must be a mapping with the keys {allowed} (got {_describe(value)})", field
        )
    for key in value:
        if key not in keys:
            raise SurveyDefinitionError(
                f"unknown key {key!r} (allowed: {allowed})", _join(field, key)
            )
    for key, required in keys.items():
        if required and key not in value:
            raise SurveyDefinitionError("is required but missing", _join(field, key))
    return value


def _slug(value: object) -> str:
    """The slug is the survey's URL (/s/<slug>), so it must be URL-safe as written."""
    slug = _string(value, "slug")
    if not slug:
        raise SurveyDefinitionError("must not be empty", "slug")
    if len(slug) > MAX_SLUG_LENGTH:
        raise SurveyDefinitionError(
            f"must be at most {MAX_SLUG_LENGTH} characters (got {len(slug)})", "slug"
        )
    if not SLUG_PATTERN.fullmatch(slug):
        raise SurveyDefinitionError(
            "must be lowercase letters and digits in words joined by single hyphens, "
            f"like campus-health (got {_shorten(slug)})",
            "slug",
        )
    return slug


def _text(value: object, field: str, max_length: int, *, may_be_empty: bool = False) -> str:
    """Surrounding whitespace is dropped: it is an artefact of quoting, never content."""
    text = _string(value, field).strip()
    if not text and not may_be_empty:
        raise SurveyDefinitionError("must not be empty", field)
    if len(text) > max_length:
        raise SurveyDefinitionError(
            f"must be at most {max_length} characters (got {len(text)})", field
        )
    return text


def _questions(value: object, languages: tuple[str, ...]) -> tuple[QuestionDefinition, ...]:
    if not isinstance(value, list):
        raise SurveyDefinitionError(
            f"must be a list of questions (got {_describe(value)})", "questions"
        )
    if not value:
        raise SurveyDefinitionError("must list at least one question", "questions")
    if len(value) > MAX_QUESTIONS:
        raise SurveyDefinitionError(
            f"must list at most {MAX_QUESTIONS} questions (got {len(value)})", "questions"
        )
    questions: list[QuestionDefinition] = []
    first_use: dict[str, str] = {}
    for index, item in enumerate(value):
        question = _question(item, f"questions[{index}]", languages)
        key_field = f"questions[{index}].key"
        if question.key in first_use:
            # Keys name form fields and CSV columns: two questions cannot share one.
            raise SurveyDefinitionError(
                f"duplicate question key {question.key!r} (already used by "
                f"{first_use[question.key]})",
                key_field,
            )
        first_use[question.key] = key_field
        questions.append(question)
    return tuple(questions)


def _question(value: object, field: str, languages: tuple[str, ...]) -> QuestionDefinition:
    question = _mapping(value, field, QUESTION_KEYS)
    key = _question_key(question["key"], f"{field}.key")
    text = _localized(question["text"], f"{field}.text", MAX_QUESTION_TEXT_LENGTH, languages)
    kind = QuestionType(
        _choice(question.get("type", DEFAULT_QUESTION_TYPE), f"{field}.type", QUESTION_TYPES)
    )
    sensitive = _boolean(question.get("sensitive", True), f"{field}.sensitive")
    if not sensitive and kind.always_randomized:
        raise SurveyDefinitionError(
            "yes/no questions are always randomized: sensitive: false is only for "
            "choice and number questions",
            f"{field}.sensitive",
        )
    required = _boolean(question.get("required", True), f"{field}.required")
    epsilon = None
    if "epsilon" in question:
        if not sensitive:
            raise SurveyDefinitionError(
                "a plain question (sensitive: false) has no ε: it is stored as given",
                f"{field}.epsilon",
            )
        epsilon = _decimal(question["epsilon"], f"{field}.epsilon", EPSILON_MAX)
    mechanism = DEFAULT_MECHANISM
    if "mechanism" in question:
        if kind not in MECHANISMS:
            raise SurveyDefinitionError(
                "yes/no questions always use two-coin randomized response: leave mechanism out",
                f"{field}.mechanism",
            )
        if not sensitive:
            raise SurveyDefinitionError(
                "a plain question (sensitive: false) has no mechanism: it is stored as given",
                f"{field}.mechanism",
            )
        mechanism = _choice(question["mechanism"], f"{field}.mechanism", MECHANISMS[kind])
    options: dict[str, tuple[str, ...]] = dict.fromkeys(languages, ())
    if kind.has_options:
        if "options" not in question:
            raise SurveyDefinitionError("is required for a choice question", f"{field}.options")
        options = _options(question["options"], f"{field}.options", languages)
    elif "options" in question:
        raise SurveyDefinitionError(
            f"only choice questions have options (this one is {kind})", f"{field}.options"
        )
    low = high = None
    if kind.has_range:
        for bound in ("min", "max"):
            if bound not in question:
                raise SurveyDefinitionError("is required for a number question", f"{field}.{bound}")
        low = _whole_number(question["min"], f"{field}.min")
        high = _whole_number(question["max"], f"{field}.max")
        if high <= low:
            raise SurveyDefinitionError(
                f"must be greater than min (got min {low}, max {high})", f"{field}.max"
            )
        if high - low > MAX_NUMBER_RANGE:
            raise SurveyDefinitionError(
                f"must be at most {MAX_NUMBER_RANGE} more than min (got max - min = {high - low})",
                f"{field}.max",
            )
    else:
        for bound in ("min", "max"):
            if bound in question:
                raise SurveyDefinitionError(
                    f"only number questions have min and max (this one is {kind})",
                    f"{field}.{bound}",
                )
    main = languages[0]
    if sensitive:
        space = AnswerSpace(kind, len(options[main]), low, high)
        requested = epsilon if epsilon is not None else default_epsilon(kind)
        _check_reports_fit(space, requested, mechanism, field)
    return QuestionDefinition(
        key=key,
        text=text[main],
        type=kind,
        epsilon=epsilon,
        mechanism=mechanism,
        options=options[main],
        min=low,
        max=high,
        sensitive=sensitive,
        required=required,
        translations={
            language: QuestionTexts(text[language], options[language]) for language in languages[1:]
        },
    )


def _options(value: object, field: str, languages: tuple[str, ...]) -> dict[str, tuple[str, ...]]:
    """Option texts as shown to the respondent, per language; their order is their index
    in the form, in the stored answers and in the export, so it is kept as written.

    Options must differ within each language: a respondent reading only Korean could not
    tell two options apart that differ only in English.
    """
    if not isinstance(value, list):
        raise SurveyDefinitionError(
            f"must be a list of option texts (got {_describe(value)})", field
        )
    if not MIN_OPTIONS <= len(value) <= MAX_OPTIONS:
        raise SurveyDefinitionError(
            f"must list {MIN_OPTIONS} to {MAX_OPTIONS} options (got {len(value)})", field
        )
    options: dict[str, list[str]] = {language: [] for language in languages}
    first_use: dict[tuple[str, str], str] = {}
    for index, item in enumerate(value):
        item_field = f"{field}[{index}]"
        if isinstance(item, dict):
            item = {language: _integer_as_text(text) for language, text in item.items()}
        elif len(languages) == 1:
            item = _integer_as_text(item)
        texts = _localized(item, item_field, MAX_OPTION_LENGTH, languages)
        for language, option in texts.items():
            option_field = _join(item_field, language) if isinstance(item, dict) else item_field
            if (language, option) in first_use:
                raise SurveyDefinitionError(
                    f"duplicate option {_shorten(option)} (already {first_use[language, option]})",
                    option_field,
                )
            first_use[language, option] = option_field
            options[language].append(option)
    return {language: tuple(texts) for language, texts in options.items()}


def _integer_as_text(value: object) -> object:
    """Options such as 1, 2, 3 are labels: an integer is taken as the text it was written
    as. Anything else non-textual (1.5, yes) still needs quotes, which _string says."""
    if isinstance(value, _YamlScalar) and value.tag == _YAML_INT_TAG:
        return value.text
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return value


def _question_key(value: object, field: str) -> str:
    """The key becomes a form field name and a CSV column, hence the narrow alphabet."""
    key = _string(value, field)
    if not QUESTION_KEY_PATTERN.fullmatch(key):
        raise SurveyDefinitionError(
            f"must match {QUESTION_KEY_PATTERN.pattern} (got {_shorten(key)})", field
        )
    if len(key) > MAX_QUESTION_KEY_LENGTH:
        raise SurveyDefinitionError(
            f"must be at most {MAX_QUESTION_KEY_LENGTH} characters (got {len(key)})", field
        )
    if key in RESERVED_QUESTION_KEYS:
        raise SurveyDefinitionError(
            f"{key!r} is reserved for the survey form's own fields "
            f"({', '.join(sorted(RESERVED_QUESTION_KEYS))})",
            field,
        )
    return key


def _choice(value: object, field: str, choices: tuple[str, ...]) -> str:
    chosen = _string(value, field)
    if chosen not in choices:
        raise SurveyDefinitionError(
            f"must be one of: {', '.join(choices)} (got {_shorten(chosen)})", field
        )
    return chosen


def _string(value: object, field: str) -> str:
    if isinstance(value, str):
        if any("\ud800" <= char <= "\udfff" for char in value):
            # A lone surrogate is no character at all; it cannot be stored as UTF-8.
            raise SurveyDefinitionError("contains an invalid \\u escape (a lone surrogate)", field)
        return value
    hint = ""
    if isinstance(value, _YamlScalar) and value.text:
        # YAML reads yes, no, on, 2024 and 1.0 as non-strings; quoting is the cure.
        hint = f"; put {value.text} in quotes if you meant it as text"
    raise SurveyDefinitionError(f"must be a string (got {_describe(value)}{hint})", field)


_DECIMAL_NUMBER = re.compile(
    r"[-+]?(?:(?:0|[1-9][0-9]*)(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?"
)
_WHOLE_NUMBER = re.compile(r"[-+]?(?:0|[1-9][0-9]*)")
_MAX_NUMBER_TEXT = 40  # longer is no sensible ε; and Fraction("1e999999") would be costly


def _decimal(value: object, field: str, maximum: Fraction) -> Fraction:
    """An ε-like decimal, exactly as written: 0.1 is 1/10, not the float next to it.

    Only decimal notation counts; YAML's hex, octal (leading 0), 1_000 and 1:30 forms are
    refused rather than read in a way the author may not have meant.
    """
    number = None
    if isinstance(value, _YamlScalar) and value.tag in (_YAML_INT_TAG, _YAML_FLOAT_TAG):
        number = _exact(value.text)
    elif isinstance(value, float):
        number = _exact(repr(value))  # the shortest text that reads back as this float
    elif isinstance(value, int) and not isinstance(value, bool):
        number = Fraction(value)
    if (
        number is None
        or not EPSILON_MIN <= number <= maximum
        or (number * 10**EPSILON_DECIMALS).denominator != 1
    ):
        raise SurveyDefinitionError(
            f"must be a number from {_format_decimal(EPSILON_MIN)} to "
            f"{_format_decimal(maximum)} with at most {EPSILON_DECIMALS} decimals "
            f"(got {_number_got(value)})",
            field,
        )
    return number


def _exact(text: str) -> Fraction | None:
    if len(text) > _MAX_NUMBER_TEXT or not _DECIMAL_NUMBER.fullmatch(text):
        return None  # nan, inf, hex, ...
    exponent = text.lower().partition("e")[2]
    if exponent and abs(int(exponent)) > _MAX_NUMBER_TEXT:
        return None  # far out of any range
    return Fraction(text)


def _whole_number(value: object, field: str) -> int:
    """min and max are integers as written: 1.0 is refused, since a number question
    collects whole numbers and 1.0 hints that the author expects decimals."""
    number = None
    if (
        isinstance(value, _YamlScalar)
        and value.tag == _YAML_INT_TAG
        and len(value.text) <= _MAX_NUMBER_TEXT
        and _WHOLE_NUMBER.fullmatch(value.text)
    ):
        number = int(value.text)
    elif isinstance(value, int) and not isinstance(value, bool):
        number = value
    if number is None or abs(number) > MAX_NUMBER_MAGNITUDE:
        raise SurveyDefinitionError(
            f"must be a whole number from {-MAX_NUMBER_MAGNITUDE} to {MAX_NUMBER_MAGNITUDE} "
            f"(got {_number_got(value)})",
            field,
        )
    return number


def _check_reports_fit(space: AnswerSpace, epsilon: Fraction | None, name: str, field: str) -> None:
    """Refuse a mechanism whose honest reports could be too large to store.

    The form accepts the reports an honest browser sends except with probability 2^-60
    (its ``report_range``); past ``LARGEST_REPORT`` some would be refused instead, and a
    respondent who sent again would spend fresh noise on the same answer. The mechanism
    says why, in the import's words (``storage_problem``).
    """
    problem = mechanism_for(space, epsilon, name).storage_problem(LARGEST_REPORT)
    if problem is not None:
        raise SurveyDefinitionError(problem, f"{field}.mechanism")


def _number_got(value: object) -> str:
    """A number is shown as written; anything else by its kind (text by its value too,
    since "0.5" in quotes looks just like a number in the file)."""
    if isinstance(value, _YamlScalar) and value.tag in (_YAML_INT_TAG, _YAML_FLOAT_TAG):
        return value.text
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return repr(value)
    if isinstance(value, str):
        return f"the text {_shorten(value)}"
    return _describe(value)


def _format_decimal(number: Fraction) -> str:
    """A decimal with at most EPSILON_DECIMALS places, without trailing zeros."""
    return f"{float(number):.{EPSILON_DECIMALS}f}".rstrip("0").rstrip(".")


def _boolean(value: object, field: str) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, _YamlScalar) and value.tag == _YAML_BOOL_TAG:
        return value.text.lower() in _YAML_TRUE
    got = f"the text {_shorten(value)}" if isinstance(value, str) else _describe(value)
    raise SurveyDefinitionError(f"must be true or false (got {got})", field)


def _describe(value: object) -> str:
    """Names the kind of a value for error messages, in the file author's terms."""
    if isinstance(value, _YamlScalar):
        return value.kind
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return "a string"


def _shorten(text: str, limit: int = 60) -> str:
    """repr() escapes control characters; long values are cut so the message stays readable."""
    shown = repr(text)
    return shown if len(shown) <= limit else f"{shown[: limit - 3]}..."
