"""The survey builder's form: its fields, the definition dict they stand for, and back.

The builder never validates on its own. Its fields become a plain dict, the dict becomes
YAML, and ``definitions.parse_definition`` judges that text exactly as it judges an
imported file, so a survey built in the browser passes or fails on the same rules with the
same messages. Going the other way, a stored or uploaded definition (already validated)
fills the fields.

Field names are flat, one per input, so a plain HTML form without JavaScript carries them:
``slug``, ``title.en``, ``q2.text.ko``, ``q2.options.ko`` (one option per line), ...
No Flask here: the routes pass ``request.form`` (a Werkzeug MultiDict), read through
``PostedForm``, the little of it this module uses.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import yaml

from survey_app.domain.display_order import AS_WRITTEN, RANDOM
from survey_app.domain.languages import LANGUAGES
from survey_app.domain.survey_limits import (
    DEFAULT_MECHANISM,
    MAX_QUESTIONS,
    MAX_SECTIONS,
    QUESTION_TYPES,
)
from survey_app.domain.survey_model import SurveyDefinitionError
from survey_app.privacy import QuestionType

#: The survey's texts, each given once per language.
SURVEY_TEXTS = ("title", "description", "consent", "contact", "thank_you")
#: Texts a survey may leave out: left empty in every language, they are not written.
OPTIONAL_TEXTS = ("description", "consent", "contact", "thank_you")
#: The completion field's choice when the survey has none.
NO_COMPLETION = "none"
#: What a new question starts as, and the mechanism left out of the file ("auto").
NEW_QUESTION_TYPE = QuestionType.YES_NO.value
AUTO_MECHANISM = DEFAULT_MECHANISM
_FALSE_WORDS = frozenset({"false", "no", "off", "0"})
_QUESTION_FIELD = re.compile(r"q(\d+)\.type")
_SECTION_FIELD = re.compile(r"s(\d+)\.title\.[a-z]{2}")


class PostedForm(Protocol):
    """A posted form's fields by name, each name possibly several times (as Werkzeug's
    ``MultiDict``, which the routes pass, holds them)."""

    def __iter__(self) -> Iterator[str]: ...

    def get(self, key: str, default: str) -> str: ...

    def getlist(self, key: str) -> list[str]: ...


@dataclass
class QuestionFields:
    """One question as the form shows it: every value as typed, texts per language."""

    key: str = ""
    type: str = NEW_QUESTION_TYPE
    text: dict[str, str] = field(default_factory=dict)
    #: Per language, the options one per line: line i in every language is option i.
    options: dict[str, str] = field(default_factory=dict)
    #: A scale's scores, one per line (line i is option i's); empty: 0, 1, 2, …
    scores: str = ""
    epsilon: str = ""
    mechanism: str = AUTO_MECHANISM
    min: str = ""
    max: str = ""
    sensitive: bool = True
    required: bool = True
    #: Display logic: the key of the earlier plain question this one depends on ("":
    #: always shown), its option numbers as typed ("3, 4"), or its range.
    show_if_question: str = ""
    show_if_is: str = ""
    show_if_min: str = ""
    show_if_max: str = ""
    #: The index of its section, when the survey has sections.
    section: int = 0
    #: How the options are shown (``display_order.OPTION_ORDERS``), and the positions
    #: (from 1, as typed: "5" or "4, 5") of those that keep their place.
    option_order: str = AS_WRITTEN
    fixed_options: str = ""

    @property
    def kind(self) -> QuestionType | None:
        """The question's type, if the import knows it: the form may post anything, and
        the import is the one to say what is wrong with it."""
        return QuestionType(self.type) if self.type in QUESTION_TYPES else None


@dataclass
class SectionFields:
    """One section as the form shows it: its title and description per language."""

    title: dict[str, str] = field(default_factory=dict)
    description: dict[str, str] = field(default_factory=dict)
    #: Its questions' order (``display_order.QUESTION_ORDERS``), or "" for the survey's.
    question_order: str = ""


@dataclass
class SurveyFields:
    """The whole builder form. Nothing here is checked: that is parse_definition's job."""

    #: The first is the survey's main language.
    languages: tuple[str, ...] = ("en",)
    slug: str = ""
    texts: dict[str, dict[str, str]] = field(default_factory=dict)
    access: str = "open"
    max_epsilon: str = ""
    #: A panel's completion: NO_COMPLETION, or a key of the file's ``completion`` (code,
    #: redirect) with its value as typed.
    completion: str = NO_COMPLETION
    completion_value: str = ""
    #: Questions shown in an order drawn for each respondent.
    random_question_order: bool = False
    questions: list[QuestionFields] = field(default_factory=list)
    #: Empty: the survey is one page. Otherwise each question's ``section`` indexes these.
    sections: list[SectionFields] = field(default_factory=list)

    def text(self, name: str, language: str) -> str:
        """A survey text (title, description, ...) in one language, "" when not given."""
        return self.texts.get(name, {}).get(language, "")

    def add_question(self, kind: str) -> None:
        """A new, empty question of ``kind`` at the end, with a key not yet used."""
        used = {question.key for question in self.questions}
        number = len(self.questions) + 1
        while f"q{number}" in used:
            number += 1
        section = max(len(self.sections) - 1, 0)  # the last section, where it is shown
        self.questions.append(QuestionFields(key=f"q{number}", type=str(kind), section=section))

    def add_section(self) -> None:
        """A new, empty section at the end; the first press makes two, the first holding
        every question so far."""
        if not self.sections:
            self.sections.append(SectionFields())
        self.sections.append(SectionFields())

    def remove_section(self, index: int) -> None:
        """Remove section ``index``; its questions join the section before it (the first
        section's, the one after). Removing the last one leaves one page."""
        if not 0 <= index < len(self.sections):
            return
        del self.sections[index]
        for question in self.questions:
            if question.section > index or (question.section == index and index > 0):
                question.section -= 1
        if len(self.sections) == 0:
            for question in self.questions:
                question.section = 0

    def section_sizes(self) -> list[int]:
        """How many questions each section holds (none: the survey is one page)."""
        return [sum(q.section == i for q in self.questions) for i in range(len(self.sections))]

    def in_section_order(self) -> None:
        """Questions listed section by section (each section's in their order), as the
        survey file lists them, so question i on the form is question i of the file."""
        last = max(len(self.sections) - 1, 0)
        for question in self.questions:
            question.section = min(max(question.section, 0), last)
        self.questions.sort(key=lambda question: question.section)

    def remove_question(self, index: int) -> None:
        if 0 <= index < len(self.questions):
            del self.questions[index]

    def move_question(self, index: int, step: int) -> None:
        """Swap question ``index`` with its neighbour ``step`` (-1 up, 1 down) away, keeping
        everything typed in both; nothing moves when there is no neighbour there."""
        place = index + step
        if 0 <= index < len(self.questions) and 0 <= place < len(self.questions):
            questions = self.questions
            questions[index], questions[place] = questions[place], questions[index]


def new_survey_fields(language: str = "en") -> SurveyFields:
    """A blank survey with one yes/no question, the builder's starting point."""
    fields = SurveyFields(languages=(language if language in LANGUAGES else "en",))
    fields.add_question(NEW_QUESTION_TYPE)
    return fields


# The form -> fields.


def fields_from_form(form: PostedForm) -> SurveyFields:
    """Read the posted builder form. Unknown or missing fields read as empty; a question
    exists when its ``q<i>.type`` field was posted (i in order, at most MAX_QUESTIONS + 1,
    so that one too many still reaches the import's "at most" message)."""
    main = _one(form, "language") or "en"
    extra = [code for code in LANGUAGES if code != main and code in form.getlist("languages")]
    languages = (main, *extra)
    indexes = sorted(
        int(match.group(1))
        for name in form
        if (match := _QUESTION_FIELD.fullmatch(str(name))) and len(match.group(1)) < 4
    )
    questions = [_question_from_form(form, f"q{i}", languages) for i in indexes]
    sections = sorted(
        {
            int(match.group(1))
            for name in form
            if (match := _SECTION_FIELD.fullmatch(str(name))) and len(match.group(1)) < 3
        }
    )
    fields = SurveyFields(
        languages=languages,
        slug=_one(form, "slug").strip(),
        texts={name: _per_language(form, name, languages) for name in SURVEY_TEXTS},
        access=_one(form, "access") or "open",
        max_epsilon=_one(form, "max_epsilon").strip(),
        completion=_one(form, "completion") or NO_COMPLETION,
        completion_value=_one(form, "completion_value").strip(),
        random_question_order=_one(form, "question_order") == RANDOM,
        questions=questions[: MAX_QUESTIONS + 1],
        sections=[
            SectionFields(
                _per_language(form, f"s{i}.title", languages),
                _per_language(form, f"s{i}.description", languages),
                _one(form, f"s{i}.question_order"),
            )
            for i in sections[: MAX_SECTIONS + 1]
        ],
    )
    fields.in_section_order()
    return fields


def _question_from_form(
    form: PostedForm, prefix: str, languages: tuple[str, ...]
) -> QuestionFields:
    return QuestionFields(
        key=_one(form, f"{prefix}.key").strip(),
        type=_one(form, f"{prefix}.type"),
        text=_per_language(form, f"{prefix}.text", languages),
        options=_per_language(form, f"{prefix}.options", languages),
        scores=_one(form, f"{prefix}.scores"),
        epsilon=_one(form, f"{prefix}.epsilon").strip(),
        mechanism=_one(form, f"{prefix}.mechanism") or AUTO_MECHANISM,
        min=_one(form, f"{prefix}.min").strip(),
        max=_one(form, f"{prefix}.max").strip(),
        # A checkbox is sent only when ticked, and the builder always posts every field.
        sensitive=f"{prefix}.sensitive" in form,
        required=f"{prefix}.required" in form,
        show_if_question=_one(form, f"{prefix}.show_if.question").strip(),
        show_if_is=_one(form, f"{prefix}.show_if.is").strip(),
        show_if_min=_one(form, f"{prefix}.show_if.min").strip(),
        show_if_max=_one(form, f"{prefix}.show_if.max").strip(),
        section=_small_index(_one(form, f"{prefix}.section")),
        option_order=_one(form, f"{prefix}.option_order") or AS_WRITTEN,
        fixed_options=_one(form, f"{prefix}.fixed_options").strip(),
    )


def _small_index(text: str) -> int:
    """A posted section index; anything else is the first section."""
    return int(text) if text.isdigit() and len(text) < 3 else 0


def _one(form: PostedForm, name: str) -> str:
    """A field's value, with a browser's CRLF line ends (textareas send them) as LF."""
    value = form.get(name, "")
    return value.replace("\r\n", "\n") if isinstance(value, str) else ""


def _per_language(form: PostedForm, name: str, languages: tuple[str, ...]) -> dict[str, str]:
    return {language: _one(form, f"{name}.{language}") for language in languages}


# Fields -> the definition dict -> YAML.


def definition_dict(fields: SurveyFields) -> dict[str, Any]:
    """The definition file the form stands for, in the documented key order.

    Fields that do not apply to a question's current type (options of a number question,
    a plain question's ε) are left out rather than refused, so switching a question's
    type or making it plain loses nothing typed and adds no error. Everything else is
    written as given, even when wrong: the import's message then says what is wrong.
    """
    data: dict[str, Any] = {"slug": fields.slug}
    if fields.languages != ("en",):
        data["languages"] = list(fields.languages)
    for name in SURVEY_TEXTS:
        texts = [fields.text(name, language) for language in fields.languages]
        if name in OPTIONAL_TEXTS and not any(text.strip() for text in texts):
            continue
        data[name] = _localized(fields.texts.get(name, {}), fields.languages)
    if fields.access != "open":
        data["access"] = fields.access
    if fields.max_epsilon:
        data["max_epsilon"] = _Written(fields.max_epsilon)
    if fields.completion != NO_COMPLETION:
        data["completion"] = {fields.completion: fields.completion_value}
    if fields.random_question_order:
        data["question_order"] = RANDOM
    if fields.sections:
        data["sections"] = [
            _section_dict(fields, index, section) for index, section in enumerate(fields.sections)
        ]
    else:
        data["questions"] = [_question_dict(q, fields.languages) for q in fields.questions]
    return data


def _section_dict(fields: SurveyFields, index: int, section: SectionFields) -> dict[str, Any]:
    """A section with its questions (none: the import says a section needs one)."""
    languages = fields.languages
    data: dict[str, Any] = {"title": _localized(section.title, languages)}
    if any(section.description.get(language, "").strip() for language in languages):
        data["description"] = _localized(section.description, languages)
    if section.question_order:
        data["question_order"] = section.question_order
    data["questions"] = [
        _question_dict(q, languages) for q in fields.questions if q.section == index
    ]
    return data


def _question_dict(question: QuestionFields, languages: tuple[str, ...]) -> dict[str, Any]:
    data: dict[str, Any] = {
        "key": question.key,
        "text": _localized(question.text, languages),
        "type": question.type,
    }
    kind = question.kind
    always_randomized = kind is not None and kind.always_randomized
    randomized = question.sensitive or always_randomized
    if not question.sensitive:
        data["sensitive"] = False  # on a yes/no question the import explains why not
    if not question.required:
        data["required"] = False
    if randomized and question.epsilon:
        data["epsilon"] = _Written(question.epsilon)
    if randomized and not always_randomized and question.mechanism != AUTO_MECHANISM:
        data["mechanism"] = question.mechanism
    if kind is not None and kind.has_options:
        data["options"] = _options(question.options, languages)
    if kind is not None and kind.has_scores and option_lines(question.scores):
        data["scores"] = [_Written(line) for line in option_lines(question.scores)]
    if kind is not None and kind.has_options and question.option_order != AS_WRITTEN:
        data["option_order"] = question.option_order
        # Positions left typed while the order is as written are dropped, not refused.
        if question.fixed_options:
            data["fixed_options"] = [
                _Written(item) for item in re.split(r"[\s,]+", question.fixed_options) if item
            ]
    if kind is not None and kind.has_range:
        data["min"] = _Written(question.min)
        data["max"] = _Written(question.max)
    if question.show_if_question:
        data["show_if"] = _show_if_dict(question)
    return data


def _show_if_dict(question: QuestionFields) -> dict[str, Any]:
    """The condition as typed: option numbers split at commas or spaces, bounds as
    written; the import says what is wrong with any of it."""
    condition: dict[str, Any] = {"question": question.show_if_question}
    numbers = [number for number in re.split(r"[,\s]+", question.show_if_is) if number]
    if numbers:
        condition["is"] = [_Written(number) for number in numbers]
    if question.show_if_min:
        condition["min"] = _Written(question.show_if_min)
    if question.show_if_max:
        condition["max"] = _Written(question.show_if_max)
    return condition


def _localized(texts: Mapping[str, str], languages: tuple[str, ...]) -> str | dict[str, str]:
    """One language: a plain string; several: a mapping with every language, empty where
    nothing was typed, so the import names the missing translation."""
    if len(languages) == 1:
        return texts.get(languages[0], "")
    return {language: texts.get(language, "") for language in languages}


def _options(lines: Mapping[str, str], languages: tuple[str, ...]) -> list[str | dict[str, str]]:
    """Line i of every language's box is option i. Blank lines at either end are
    dropped; one in the middle stays, an empty option the import refuses by position."""
    split = {language: option_lines(lines.get(language, "")) for language in languages}
    count = max(len(options) for options in split.values())
    padded = {
        language: options + [""] * (count - len(options)) for language, options in split.items()
    }
    return [
        _localized({language: padded[language][i] for language in languages}, languages)
        for i in range(count)
    ]


def option_lines(text: str) -> list[str]:
    """A box's options: one per line, without the blank lines at its ends."""
    lines = [line.strip() for line in text.split("\n")]
    while lines and not lines[-1]:
        lines.pop()
    while lines and not lines[0]:
        lines.pop(0)
    return lines


class _Written(str):
    """A number field exactly as typed: 0.5 stays the decimal 0.5 in the file (never a
    float's repr), and text that is no number stays text, for the import to refuse."""


class _BuilderDumper(yaml.SafeDumper):
    pass


def _represent_written(dumper: yaml.SafeDumper, value: _Written) -> yaml.ScalarNode:
    text = str(value)
    tag = dumper.resolve(yaml.ScalarNode, text, (True, False))  # type: ignore[no-untyped-call]
    if tag in ("tag:yaml.org,2002:int", "tag:yaml.org,2002:float"):
        return dumper.represent_scalar(tag, text)
    return dumper.represent_str(text)


_BuilderDumper.add_representer(_Written, _represent_written)


def definition_yaml(fields: SurveyFields) -> str:
    """The form as a definition file, readable and re-importable."""
    text = yaml.dump(
        definition_dict(fields),
        Dumper=_BuilderDumper,
        allow_unicode=True,
        sort_keys=False,
        width=100,
    )
    return str(text)


# A definition file -> fields.


def fields_from_source(source: str) -> SurveyFields:
    """Fill the form from a definition file's text that ``parse_definition`` accepted.

    Read with YAML's base loader, which keeps every scalar as the text it was written as
    (``0.5``, ``no``, ``"1"``): the fields show what the author wrote, and the import has
    already refused aliases and anything else that could not be a survey.
    """
    data = yaml.load(source, Loader=yaml.BaseLoader)  # noqa: S506 (BaseLoader builds only str, list, dict)
    if not isinstance(data, dict):
        raise ValueError("a validated definition is a mapping")
    languages = tuple(data.get("languages") or ("en",))
    ((completion, completion_value),) = (data.get("completion") or {NO_COMPLETION: ""}).items()
    sections = data.get("sections", [])
    listed = [(0, item) for item in data.get("questions", [])] + [
        (index, item) for index, section in enumerate(sections) for item in section["questions"]
    ]
    questions = []
    for index, item in listed:
        question = _question_fields(item, languages)
        question.section = index
        questions.append(question)
    return SurveyFields(
        languages=languages,
        slug=data.get("slug", ""),
        texts={name: _texts(data.get(name, ""), languages) for name in SURVEY_TEXTS},
        access=data.get("access", "open"),
        max_epsilon=data.get("max_epsilon", ""),
        completion=completion,
        completion_value=completion_value,
        random_question_order=data.get("question_order") == RANDOM,
        questions=questions,
        sections=[
            SectionFields(
                _texts(section.get("title", ""), languages),
                _texts(section.get("description", ""), languages),
                section.get("question_order", ""),
            )
            for section in sections
        ],
    )


def _question_fields(data: Mapping[str, Any], languages: tuple[str, ...]) -> QuestionFields:
    options = [_texts(option, languages) for option in data.get("options", [])]
    condition = data.get("show_if") or {}  # validated already
    return QuestionFields(
        key=data.get("key", ""),
        type=data.get("type", NEW_QUESTION_TYPE),
        text=_texts(data.get("text", ""), languages),
        options={
            language: "\n".join(option[language] for option in options)
            for language in (languages if options else ())
        },
        scores="\n".join(data.get("scores", [])),
        epsilon=data.get("epsilon", ""),
        mechanism=data.get("mechanism", AUTO_MECHANISM),
        min=data.get("min", ""),
        max=data.get("max", ""),
        sensitive=_flag(data.get("sensitive", "true")),
        required=_flag(data.get("required", "true")),
        show_if_question=condition.get("question", ""),
        show_if_is=", ".join(condition.get("is", [])),
        show_if_min=condition.get("min", ""),
        show_if_max=condition.get("max", ""),
        option_order=data.get("option_order", AS_WRITTEN),
        fixed_options=", ".join(data.get("fixed_options", [])),
    )


def _texts(value: object, languages: tuple[str, ...]) -> dict[str, str]:
    if isinstance(value, dict):
        return {language: str(value.get(language, "")) for language in languages}
    return {language: str(value) for language in languages[:1]}


def _flag(text: str) -> bool:
    return text.strip().lower() not in _FALSE_WORDS


# Where the import's errors go on the form.

_ERROR_PATH = re.compile(
    r"questions\[(?P<index>\d+)\]"
    r"(?:\.(?P<name>[a-z_]+))?(?:\[\d+\])?(?:\.(?P<language>[a-z]{2}))?"
)
_SHOW_IF_ERROR_PATH = re.compile(
    r"questions\[(?P<index>\d+)\]\.show_if(?:\.(?P<name>question|is|min|max))?(?:\[\d+\])?"
)
_SURVEY_ERROR_PATH = re.compile(r"(?P<name>[a-z_]+)(?:\[\d+\])?(?:\.(?P<language>[a-z]{2}))?")
_TEXT_FIELDS = frozenset({*SURVEY_TEXTS, "text", "options"})
_QUESTION_NAMES = frozenset(
    {
        "key",
        "text",
        "type",
        "sensitive",
        "required",
        "epsilon",
        "mechanism",
        "options",
        "scores",
        "option_order",
        "fixed_options",
        "min",
        "max",
    }
)
_SURVEY_NAMES = frozenset({"slug", *SURVEY_TEXTS, "access", "max_epsilon", "question_order"})


def error_field_name(path: str, languages: Iterable[str]) -> str | None:
    """The form field an import error's path points at (``questions[1].options[0].ko`` is
    ``q1.options.ko``), or None when it names none (the whole file, the question list).

    A text's path without a language (one-language surveys) means the main language's box.
    """
    main = next(iter(languages), "en")
    condition = _SHOW_IF_ERROR_PATH.fullmatch(path)
    if condition:
        return f"q{condition['index']}.show_if.{condition['name'] or 'question'}"
    question = _ERROR_PATH.fullmatch(path)
    if question:
        name = question["name"]
        if name is None:
            return f"q{question['index']}.key"
        if name not in _QUESTION_NAMES:
            return None
        if name in _TEXT_FIELDS:
            return f"q{question['index']}.{name}.{question['language'] or main}"
        return f"q{question['index']}.{name}"
    if path.partition(".")[0] == "completion":
        return "completion_value"
    survey = _SURVEY_ERROR_PATH.fullmatch(path)
    if survey and survey["name"] == "languages":
        return "language"
    if survey and survey["name"] in _SURVEY_NAMES:
        if survey["name"] in _TEXT_FIELDS:
            return f"{survey['name']}.{survey['language'] or main}"
        return str(survey["name"])
    return None


@dataclass(frozen=True)
class PlacedProblem:
    """One of the import's problems, placed on the form."""

    #: The import's field path (``questions[1].options[2].ko``), as the file says it.
    path: str
    message: str
    #: The form field it names (``q1.options.ko``), if any.
    field: str | None
    #: The index of the question it is about, if any: that question is shown unfolded.
    question: int | None


def placed_problems(
    error: SurveyDefinitionError, languages: Iterable[str], sizes: Sequence[int] = ()
) -> tuple[PlacedProblem, ...]:
    """Every problem of the import's ``error``, each with its place on the form;
    ``sizes`` are the form's sections' numbers of questions (none: one page)."""
    codes = tuple(languages)
    return tuple(
        PlacedProblem(
            problem.field,
            problem.message,
            _section_field_name(problem.field, codes)
            or error_field_name(_flat_path(problem.field, sizes), codes),
            _question_index(_flat_path(problem.field, sizes)),
        )
        for problem in error.problems
    )


_SECTION_QUESTION_PATH = re.compile(r"sections\[(?P<section>\d+)\]\.questions\[(?P<index>\d+)\]")
_SECTION_TEXT_PATH = re.compile(
    r"sections\[(?P<section>\d+)\]\.(?P<name>title|description)(?:\.(?P<language>[a-z]{2}))?"
)


def _flat_path(path: str, sizes: Sequence[int]) -> str:
    """A section's question's path as the form numbers it: ``sections[1].questions[0]``
    is ``questions[n]``, n the questions of the sections before."""
    found = _SECTION_QUESTION_PATH.match(path)
    if not found or int(found["section"]) >= len(sizes):
        return path
    place = sum(sizes[: int(found["section"])]) + int(found["index"])
    return f"questions[{place}]{path[found.end() :]}"


def _section_field_name(path: str, languages: tuple[str, ...]) -> str | None:
    """The form field of a section's title or description (``s1.title.ko``)."""
    found = _SECTION_TEXT_PATH.fullmatch(path)
    if not found:
        return None
    return f"s{found['section']}.{found['name']}.{found['language'] or languages[0]}"


def messages_by_field(problems: Iterable[PlacedProblem]) -> dict[str, list[str]]:
    """The messages to show at each form field, in the order the import found them."""
    messages: dict[str, list[str]] = {}
    for problem in problems:
        if problem.field is not None:
            messages.setdefault(problem.field, []).append(problem.message)
    return messages


def _question_index(path: str) -> int | None:
    found = _ERROR_PATH.match(path)
    return int(found["index"]) if found else None


#: The buttons that move a question, by the way they move it (up is -1).
MOVE_BUTTONS = {-1: "move_up", 1: "move_down"}


def moved_button(index: int, step: int, count: int) -> str:
    """The id of the button that moved question ``index`` by ``step``, at the question's
    new place (of ``count``); the other way's button once the question is first or last,
    where there is none this way. The move comes back at it as the address's fragment,
    so the page opens at the question and the keyboard carries on from the button."""
    place = index + step
    way = -step if place == (0 if step < 0 else count - 1) else step
    return field_id(f"q{place}.{MOVE_BUTTONS[way]}")


def field_id(name: str) -> str:
    """The HTML id of a builder field: ``q1.text.ko`` is ``b-q1-text-ko`` (the prefix keeps
    clear of the ids in the embedded respondent preview)."""
    return "b-" + name.replace(".", "-")
