"""Validating a survey definition: plain values in, a checked ``SurveyDefinition`` out.

Every rule a survey file must follow is checked here, once, whether the file came from the
importer, the builder or the first-run example. Each problem is a ``SurveyDefinitionError``
naming the field path; ``definitions`` adds its line and file.

The author hears of every problem at once, not one per attempt: each rule raises its one
problem, and ``_Problems`` records it and lets validation go on to the next field. A check
that depends on another field's value (a choice question's options on its type, every text
on the survey's languages) is skipped when that value is itself wrong, so one mistake is
never reported again as the others it would cause.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import re
from collections.abc import Callable, Sequence
from fractions import Fraction
from typing import ParamSpec, TypeVar

from survey_app.domain.display_logic import ShowIf
from survey_app.domain.display_order import AS_WRITTEN, OPTION_ORDERS, QUESTION_ORDERS, REVERSE
from survey_app.domain.languages import LANGUAGES
from survey_app.domain.survey_completion import MAX_THANK_YOU_LENGTH, read_completion
from survey_app.domain.survey_limits import (
    ACCESS_MODES,
    DEFAULT_LANGUAGES,
    DEFAULT_MECHANISM,
    DEFAULT_QUESTION_TYPE,
    DEFAULT_YES_NO_EPSILON,
    EPSILON_DECIMALS,
    EPSILON_MAX,
    EPSILON_MIN,
    LARGEST_REPORT,
    MAX_CONSENT_LENGTH,
    MAX_CONTACT_LENGTH,
    MAX_DESCRIPTION_LENGTH,
    MAX_EPSILON_MAX,
    MAX_NUMBER_MAGNITUDE,
    MAX_NUMBER_RANGE,
    MAX_OPTION_LENGTH,
    MAX_OPTIONS,
    MAX_QUESTION_KEY_LENGTH,
    MAX_QUESTION_TEXT_LENGTH,
    MAX_QUESTIONS,
    MAX_SCORE_MAGNITUDE,
    MAX_SECTIONS,
    MAX_SLUG_LENGTH,
    MAX_TITLE_LENGTH,
    MECHANISMS,
    MIN_OPTIONS,
    PLAIN_TYPES,
    QUESTION_KEY_PATTERN,
    QUESTION_KEYS,
    QUESTION_TYPES,
    RESERVED_QUESTION_KEYS,
    SECTION_KEYS,
    SLUG_PATTERN,
    SURVEY_KEYS,
)
from survey_app.domain.survey_model import (
    QuestionDefinition,
    QuestionTexts,
    SectionDefinition,
    SectionTexts,
    SurveyDefinition,
    SurveyDefinitionError,
    SurveyTexts,
    default_epsilon,
)
from survey_app.domain.survey_reading import YamlScalar, field_path
from survey_app.privacy import AnswerSpace, QuestionType, mechanism_for

_Args = ParamSpec("_Args")
_Value = TypeVar("_Value")


class _Problems:
    """Every problem found so far in one definition."""

    def __init__(self) -> None:
        self.found: list[SurveyDefinitionError] = []

    def __len__(self) -> int:
        return len(self.found)

    def add(self, message: str, field: str) -> None:
        self.found.append(SurveyDefinitionError(message, field))

    def check(
        self, rule: Callable[_Args, _Value], *args: _Args.args, **kwargs: _Args.kwargs
    ) -> _Value | None:
        """What ``rule`` makes of its arguments, or None when it finds a problem, which is
        then recorded."""
        try:
            return rule(*args, **kwargs)
        except SurveyDefinitionError as problem:
            self.found.append(problem)
            return None

    def error(self) -> SurveyDefinitionError:
        return SurveyDefinitionError.collected(self.found)


def validate_survey(values: object, text: str) -> SurveyDefinition:
    """The survey that ``values`` (as ``survey_reading`` reads them) describe; ``text`` is
    the definition as written, kept as the survey's ``source``.

    Raises every problem found, together. Only a definition that is no mapping, or whose
    languages are wrong (every text is judged against them), is not looked into further.
    """
    problems = _Problems()
    survey = _mapping(values, "", SURVEY_KEYS, problems)
    if survey is None:
        raise problems.error()
    slug = problems.check(_slug, survey["slug"]) if "slug" in survey else None
    languages = problems.check(_languages, survey.get("languages", list(DEFAULT_LANGUAGES)))
    access = problems.check(_choice, survey.get("access", "open"), "access", ACCESS_MODES)
    max_epsilon = None
    if "max_epsilon" in survey:
        max_epsilon = problems.check(
            _decimal, survey["max_epsilon"], "max_epsilon", MAX_EPSILON_MAX
        )
    question_order = problems.check(
        _choice, survey.get("question_order", AS_WRITTEN), "question_order", QUESTION_ORDERS
    )
    if languages is None:
        raise problems.error()
    title = _survey_text(survey, "title", MAX_TITLE_LENGTH, languages, problems)
    description = _survey_text(
        survey, "description", MAX_DESCRIPTION_LENGTH, languages, problems, may_be_empty=True
    )
    # An empty consent would show an "I agree" step with nothing to agree to.
    consent = _survey_text(survey, "consent", MAX_CONSENT_LENGTH, languages, problems)
    contact = _survey_text(
        survey, "contact", MAX_CONTACT_LENGTH, languages, problems, may_be_empty=True
    )
    thank_you = _survey_text(
        survey, "thank_you", MAX_THANK_YOU_LENGTH, languages, problems, may_be_empty=True
    )
    completion = None
    if "completion" in survey:
        completion = problems.check(read_completion, survey["completion"])
    questions, sections = _survey_questions(survey, languages, problems)
    if questions is not None and max_epsilon is not None:
        problems.check(_check_total_epsilon, questions, max_epsilon)
    if problems:
        raise problems.error()
    # Each part is None only when it had a problem, and none was found.
    assert slug is not None and access is not None and questions is not None
    assert question_order is not None
    assert title is not None and description is not None
    assert consent is not None and contact is not None and thank_you is not None
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
        thank_you=thank_you[main],
        completion=completion,
        languages=languages,
        translations={
            language: SurveyTexts(
                title[language],
                description[language],
                consent[language],
                contact[language],
                thank_you[language],
            )
            for language in languages[1:]
        },
        sections=sections,
        question_order=question_order,
        source=text,
    )


def _survey_questions(
    survey: dict[str, object], languages: tuple[str, ...], problems: _Problems
) -> tuple[tuple[QuestionDefinition, ...] | None, tuple[SectionDefinition, ...]]:
    """The survey's questions, from ``questions`` (one page) or ``sections`` (a page each),
    and its sections (none for one page). A file has one or the other: with both, which
    questions the survey asks would be a guess."""
    if "questions" in survey and "sections" in survey:
        problems.add(
            "a survey lists its questions under questions (one page) or under sections "
            "(a page each), not both",
            "sections",
        )
        return None, ()
    if "sections" in survey:
        parts = _sections(survey["sections"], languages, problems)
        return (None, ()) if parts is None else parts
    if "questions" in survey:
        written = _questions(survey["questions"], languages, problems)
        return (None if written is None else _conditioned(written, problems)), ()
    problems.add("is required but missing", "questions")  # (or sections: see the docs)
    return None, ()


def _sections(
    value: object, languages: tuple[str, ...], problems: _Problems
) -> tuple[tuple[QuestionDefinition, ...], tuple[SectionDefinition, ...]] | None:
    """Each section's questions, in one flat tuple as a one-page survey has them, and
    where each section starts; keys are unique across the whole survey (they name its
    form fields and CSV columns)."""
    items = problems.check(_section_list, value)
    if items is None:
        return None
    before = len(problems)
    written: list[_Written] = []
    sections: list[SectionDefinition] = []
    first_use: dict[str, str] = {}
    for index, item in enumerate(items):
        field = f"sections[{index}]"
        section = _mapping(item, field, SECTION_KEYS, problems)
        if section is None:
            continue
        title = None
        if "title" in section:
            title = _localized(
                section["title"], f"{field}.title", MAX_TITLE_LENGTH, languages, problems
            )
        description = dict.fromkeys(languages, "")
        if "description" in section:
            description = (
                _localized(
                    section["description"],
                    f"{field}.description",
                    MAX_DESCRIPTION_LENGTH,
                    languages,
                    problems,
                    may_be_empty=True,
                )
                or description
            )
        order = None
        if "question_order" in section:
            order = problems.check(
                _choice, section["question_order"], f"{field}.question_order", QUESTION_ORDERS
            )
        found = None
        if "questions" in section:
            found = _questions(
                section["questions"], languages, problems, f"{field}.questions", first_use
            )
        if title is None or found is None:
            continue
        main = languages[0]
        sections.append(
            SectionDefinition(
                start=len(written),
                title=title[main],
                description=description[main],
                translations={
                    code: SectionTexts(title[code], description[code]) for code in languages[1:]
                },
                question_order=order,
            )
        )
        written.extend(found)
    if len(problems) == before and len(written) > MAX_QUESTIONS:
        problems.add(
            f"the sections must list at most {MAX_QUESTIONS} questions together "
            f"(got {len(written)})",
            "sections",
        )
    questions = _conditioned(written, problems)
    return None if len(problems) > before or questions is None else (questions, tuple(sections))


def _section_list(value: object) -> list[object]:
    if not isinstance(value, list):
        raise SurveyDefinitionError(
            f"must be a list of sections, each with a title and questions (got {_describe(value)})",
            "sections",
        )
    if not value:
        raise SurveyDefinitionError("must list at least one section", "sections")
    if len(value) > MAX_SECTIONS:
        raise SurveyDefinitionError(
            f"must list at most {MAX_SECTIONS} sections (got {len(value)})", "sections"
        )
    return value


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


def _survey_text(
    survey: dict[str, object],
    name: str,
    max_length: int,
    languages: tuple[str, ...],
    problems: _Problems,
    *,
    may_be_empty: bool = False,
) -> dict[str, str] | None:
    """One of the survey's own texts, empty in every language when it is left out (a
    missing title is already the mapping's problem)."""
    if name not in survey:
        return dict.fromkeys(languages, "")
    return _localized(
        survey[name], name, max_length, languages, problems, may_be_empty=may_be_empty
    )


def _localized(
    value: object,
    field: str,
    max_length: int,
    languages: tuple[str, ...],
    problems: _Problems,
    *,
    may_be_empty: bool = False,
) -> dict[str, str] | None:
    """One text in each of the survey's languages, by code.

    A plain string is the text of a one-language survey. Otherwise it is a mapping with
    exactly the survey's languages: a respondent reading Korean must never meet a text
    only written in English, and a language the survey does not declare is a typo or a
    forgotten ``languages`` entry. An optional text is given in every language or in none.
    """
    if not isinstance(value, dict):
        if len(languages) > 1:
            shape = ", ".join(f"{language}: ..." for language in languages)
            problems.add(
                f"must give the text in each of the survey's languages, as {{{shape}}} "
                f"(got {_describe(value)})",
                field,
            )
            return None
        text = problems.check(_text, value, field, max_length, may_be_empty=may_be_empty)
        return None if text is None else {languages[0]: text}
    before = len(problems)
    listed = ", ".join(languages)
    for language in value:  # extra ones first: they may be misspellings
        if language not in languages:
            problems.add(
                f"{_shorten(language)} is not one of the survey's languages ({listed}): "
                "list it under languages or remove it",
                field_path(field, language),
            )
    texts: dict[str, str] = {}
    for language in languages:
        path = field_path(field, language)
        if language not in value:
            problems.add(
                f"the text in {language} is missing (the survey's languages are {listed})", path
            )
            continue
        text = problems.check(_text, value[language], path, max_length, may_be_empty=may_be_empty)
        if text is not None:
            texts[language] = text
    given = [language for language, text in texts.items() if text]
    for language, text in texts.items():
        if given and not text:
            problems.add(
                f"must not be empty when the text is given in {given[0]}",
                field_path(field, language),
            )
    return None if len(problems) > before else texts


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


def _mapping(
    value: object, field: str, keys: dict[str, bool], problems: _Problems
) -> dict[str, object] | None:
    """Unknown keys are refused, not ignored: a typo such as ``tittle`` would otherwise
    vanish silently and leave the author wondering why their title is missing."""
    allowed = ", ".join(keys)
    if not isinstance(value, dict):
        subject = "" if field else "the definition "
        problems.add(
            f"{subject}must be a mapping with the keys {allowed} (got {_describe(value)})", field
        )
        return None
    for key in value:
        if key not in keys:
            problems.add(f"unknown key {key!r} (allowed: {allowed})", field_path(field, key))
    for key, required in keys.items():
        if required and key not in value:
            problems.add("is required but missing", field_path(field, key))
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


@dataclasses.dataclass(frozen=True)
class _Written:
    """A question as the file writes it (``item``, at ``field``) and as read: None where
    it has problems of its own. Conditions are judged on these once every question of
    every section is known."""

    field: str
    item: object
    question: QuestionDefinition | None

    @property
    def key(self) -> object:
        return self.item.get("key") if isinstance(self.item, dict) else None


def _questions(
    value: object,
    languages: tuple[str, ...],
    problems: _Problems,
    path: str = "questions",
    first_use: dict[str, str] | None = None,
) -> list[_Written] | None:
    """The questions listed at ``path``, their conditions not yet judged; ``first_use``
    holds the keys already taken elsewhere in the survey (by another section) and where."""
    items = problems.check(_question_list, value, path)
    if items is None:
        return None
    written: list[_Written] = []
    first_use = {} if first_use is None else first_use
    for index, item in enumerate(items):
        field = f"{path}[{index}]"
        question = _mapping(item, field, QUESTION_KEYS, problems)
        if question is None:
            written.append(_Written(field, item, None))
            continue
        key_field = f"{field}.key"
        key = (
            problems.check(_question_key, question["key"], key_field) if "key" in question else None
        )
        if key in first_use:
            # Keys name form fields and CSV columns: two questions cannot share one.
            problems.add(
                f"duplicate question key {key!r} (already used by {first_use[key]})", key_field
            )
        elif key is not None:
            first_use[key] = key_field
        written.append(_Written(field, item, _question(question, key, field, languages, problems)))
    return written


def _conditioned(
    written: Sequence[_Written], problems: _Problems
) -> tuple[QuestionDefinition, ...] | None:
    """Every question with its ``show_if`` condition, judged against the whole survey (a
    condition may name a question of an earlier section); None when any has a problem."""
    before = len(problems)
    conditioned = [
        _with_condition(index, entry.question, written, problems)
        for index, entry in enumerate(written)
        if entry.question is not None
    ]
    if len(problems) > before or len(conditioned) < len(written):
        return None
    return tuple(conditioned)


#: Keys a show_if condition may have; "question" is required.
SHOW_IF_KEYS = {"question": True, "is": False, "min": False, "max": False}


def _with_condition(
    index: int, question: QuestionDefinition, written: Sequence[_Written], problems: _Problems
) -> QuestionDefinition:
    """``question`` (the ``index``-th of the survey) with its ``show_if`` condition, checked
    against the whole survey: it names another question, so it is judged once every
    question is known."""
    item = written[index].item
    assert isinstance(item, dict)  # a question that is not a mapping was refused before
    if "show_if" not in item:
        return question
    field = f"{written[index].field}.show_if"
    condition = _mapping(item["show_if"], field, SHOW_IF_KEYS, problems)
    if condition is None or "question" not in condition:
        return question
    checked = problems.check(_show_if, condition, index, written, field)
    return dataclasses.replace(question, show_if=checked)


def _show_if(
    condition: dict[str, object], index: int, written: Sequence[_Written], field: str
) -> ShowIf | None:
    """The condition written: on an earlier plain question, its options or a range;
    None when the question it names has problems of its own (it cannot be judged).

    A condition on a sensitive question is refused: who was shown a question would be
    seen in the form's requests and stored as "not applicable", and would tell the
    answer it depends on, unrandomized. Only a plain answer, stored as given anyway, may
    decide what someone is shown.
    """
    key = _string(condition["question"], f"{field}.question")
    keys = [entry.key for entry in written]
    if key not in keys:
        raise SurveyDefinitionError(
            f"names no question of this survey ({_shorten(key)}); a condition names an "
            "earlier question by its key",
            f"{field}.question",
        )
    named = keys.index(key)
    if named == index:
        raise SurveyDefinitionError(
            "a question cannot be shown on a condition on its own answer", f"{field}.question"
        )
    if named > index:
        cycle = _condition_cycle(written, named, index)
        also = f"; the conditions form a cycle ({' → '.join(cycle)})" if cycle else ""
        raise SurveyDefinitionError(
            f"names a later question ({written[named].field}, {key!r}): a condition may only "
            f"depend on a question asked before it{also}",
            f"{field}.question",
        )
    target = written[named].question
    if target is None:
        return None
    if target.sensitive:
        raise SurveyDefinitionError(
            f"names the sensitive question {key!r}: which questions someone saw would reveal "
            "their answer to it, unrandomized; a condition may only depend on a plain "
            "question (sensitive: false)",
            f"{field}.question",
        )
    if target.type.has_options:
        return _option_condition(condition, key, len(target.options), field)
    return _range_condition(condition, key, target, field)


def _condition_cycle(written: Sequence[_Written], start: int, back_to: int) -> list[str]:
    """The keys on the path of conditions from question ``start`` that comes back to
    question ``back_to``, or [] when it does not (a later question is refused either way;
    a cycle is named so its author sees why no order of the questions would do)."""
    keys = [entry.key for entry in written]
    path, seen = [str(keys[back_to]), str(keys[start])], {start}
    current = start
    while True:
        item = written[current].item
        condition = item.get("show_if") if isinstance(item, dict) else None
        named = condition.get("question") if isinstance(condition, dict) else None
        if named not in keys:
            return []
        current = keys.index(str(named))
        path.append(str(keys[current]))
        if current == back_to:
            return path
        if current in seen:
            return []
        seen.add(current)


def _option_condition(written: dict[str, object], key: str, count: int, field: str) -> ShowIf:
    """A condition on a plain choice or scale: the options (numbered from 1) that show."""
    for bound in ("min", "max"):
        if bound in written:
            raise SurveyDefinitionError(
                f"{key!r} is a choice: list the options that show this question under "
                f"is (numbered from 1), not {bound}",
                f"{field}.{bound}",
            )
    if "is" not in written:
        raise SurveyDefinitionError(
            f"is required for a condition on the choice {key!r}: the options (numbered "
            f"from 1 to {count}) that show this question",
            f"{field}.is",
        )
    value = written["is"]
    if not isinstance(value, list) or not value:
        raise SurveyDefinitionError(
            f"must list option numbers from 1 to {count} (got {_describe(value)})", f"{field}.is"
        )
    options: list[int] = []
    for position, item in enumerate(value):
        number = _whole_number(item, f"{field}.is[{position}]")
        if not 1 <= number <= count:
            raise SurveyDefinitionError(
                f"option {number} is out of range: {key!r} has {count} options (1 to {count})",
                f"{field}.is[{position}]",
            )
        if number - 1 in options:
            raise SurveyDefinitionError(f"option {number} is listed twice", f"{field}.is")
        options.append(number - 1)
    return ShowIf(key, options=tuple(sorted(options)))


def _range_condition(
    written: dict[str, object], key: str, target: QuestionDefinition, field: str
) -> ShowIf:
    """A condition on a plain number: the inclusive range (min, max or both) that shows."""
    if "is" in written:
        raise SurveyDefinitionError(
            f"{key!r} is a number: give the range that shows this question as min and max, not is",
            f"{field}.is",
        )
    if "min" not in written and "max" not in written:
        raise SurveyDefinitionError(
            f"a condition on the number {key!r} needs min, max or both (an inclusive range)",
            field,
        )
    low = _whole_number(written["min"], f"{field}.min") if "min" in written else None
    high = _whole_number(written["max"], f"{field}.max") if "max" in written else None
    if low is not None and high is not None and high < low:
        raise SurveyDefinitionError(
            f"must be at least min (got min {low}, max {high})", f"{field}.max"
        )
    assert target.min is not None and target.max is not None
    if (low is not None and low > target.max) or (high is not None and high < target.min):
        raise SurveyDefinitionError(
            f"no answer to {key!r} ({target.min} to {target.max}) is in this range, so the "
            "question would never be shown",
            field,
        )
    return ShowIf(key, min=low, max=high)


def _question_list(value: object, field: str) -> list[object]:
    if not isinstance(value, list):
        raise SurveyDefinitionError(f"must be a list of questions (got {_describe(value)})", field)
    if not value:
        raise SurveyDefinitionError("must list at least one question", field)
    if len(value) > MAX_QUESTIONS:
        raise SurveyDefinitionError(
            f"must list at most {MAX_QUESTIONS} questions (got {len(value)})", field
        )
    return value


def _question(
    question: dict[str, object],
    key: str | None,
    field: str,
    languages: tuple[str, ...],
    problems: _Problems,
) -> QuestionDefinition | None:
    """The question ``question`` describes, ``key`` already checked (None: it was wrong),
    or None when anything else about it is wrong too."""
    before = len(problems)
    text = None
    if "text" in question:
        text = _localized(
            question["text"], f"{field}.text", MAX_QUESTION_TEXT_LENGTH, languages, problems
        )
    kind_name = problems.check(
        _choice, question.get("type", DEFAULT_QUESTION_TYPE), f"{field}.type", QUESTION_TYPES
    )
    sensitive = problems.check(_boolean, question.get("sensitive", True), f"{field}.sensitive")
    required = problems.check(_boolean, question.get("required", True), f"{field}.required")
    if kind_name is None or sensitive is None:
        return None  # what follows depends on the type and on being randomized
    kind = QuestionType(kind_name)
    if not sensitive and kind.always_randomized:
        problems.add(
            "yes/no questions are always randomized: sensitive: false is only for "
            "choice and number questions",
            f"{field}.sensitive",
        )
        sensitive = True  # as it will be: its ε is still judged, and no plain rule applies
    elif not sensitive and kind not in PLAIN_TYPES:
        problems.add(
            f"{kind} questions are always randomized (there is no plain form of them yet): "
            "leave sensitive out",
            f"{field}.sensitive",
        )
        sensitive = True
    epsilon = None
    if "epsilon" in question:
        epsilon = problems.check(_epsilon, question["epsilon"], sensitive, f"{field}.epsilon")
    mechanism: str | None = DEFAULT_MECHANISM
    if "mechanism" in question:
        mechanism = problems.check(
            _mechanism, question["mechanism"], kind, sensitive, f"{field}.mechanism"
        )
    options = _question_options(question, kind, field, languages, problems)
    scores = _question_scores(question, kind, options, field, languages, problems)
    count = len(options[languages[0]]) if options else None
    option_order, fixed_options = _option_order(question, kind, count, field, problems)
    low, high = _bounds(question, kind, field, problems)
    if key is None or text is None or len(problems) > before:
        return None  # (a missing key or text is the mapping's problem)
    # Each part is None only when it had a problem, and none was found.
    assert required is not None
    assert mechanism is not None and options is not None
    main = languages[0]
    if sensitive:
        space = AnswerSpace(kind, len(options[main]), low, high)
        requested = epsilon if epsilon is not None else default_epsilon(kind)
        problems.check(_check_reports_fit, space, requested, mechanism, field)
        if len(problems) > before:
            return None
    return QuestionDefinition(
        key=key,
        text=text[main],
        type=kind,
        epsilon=epsilon,
        mechanism=mechanism,
        options=options[main],
        scores=scores,
        min=low,
        max=high,
        sensitive=sensitive,
        required=required,
        option_order=option_order,
        fixed_options=fixed_options,
        translations={
            language: QuestionTexts(text[language], options[language]) for language in languages[1:]
        },
    )


def _epsilon(value: object, sensitive: bool, field: str) -> Fraction:
    if not sensitive:
        raise SurveyDefinitionError(
            "a plain question (sensitive: false) has no ε: it is stored as given", field
        )
    return _decimal(value, field, EPSILON_MAX)


def _mechanism(value: object, kind: QuestionType, sensitive: bool, field: str) -> str:
    if kind not in MECHANISMS:
        raise SurveyDefinitionError(
            "yes/no questions always use two-coin randomized response: leave mechanism out",
            field,
        )
    if not sensitive:
        raise SurveyDefinitionError(
            "a plain question (sensitive: false) has no mechanism: it is stored as given", field
        )
    return _choice(value, field, MECHANISMS[kind])


def _question_options(
    question: dict[str, object],
    kind: QuestionType,
    field: str,
    languages: tuple[str, ...],
    problems: _Problems,
) -> dict[str, tuple[str, ...]] | None:
    """A choice question's options per language; none (and none allowed) for the others."""
    if not kind.has_options:
        if "options" in question:
            problems.add(
                f"only choice questions and rating scales have options (this one is {kind})",
                f"{field}.options",
            )
        return dict.fromkeys(languages, ())
    if "options" not in question:
        needs = "a rating scale" if kind.has_scores else f"a {kind} question"
        problems.add(f"is required for {needs}", f"{field}.options")
        return None
    options = _options(question["options"], f"{field}.options", languages, problems)
    if options is not None and kind.is_multiple:
        _no_none_option(options[languages[0]], f"{field}.options", problems)
    return options


#: Options a tick-all-that-apply question may not list: ticking none of them says it.
NONE_OPTIONS = frozenset({"none", "none of these", "none of the above", "nothing"})


def _no_none_option(options: tuple[str, ...], field: str, problems: _Problems) -> None:
    """ "None of these" is ticking nothing: as an option it could be ticked with others,
    and its share would be estimated apart from the empty set it means."""
    for index, option in enumerate(options):
        if option.strip().rstrip(".").casefold() in NONE_OPTIONS:
            problems.add(
                f"{_shorten(option)}: a tick-all-that-apply question says none of these "
                "by ticking nothing; leave it out of the options",
                f"{field}[{index}]",
            )


def _question_scores(
    question: dict[str, object],
    kind: QuestionType,
    options: dict[str, tuple[str, ...]] | None,
    field: str,
    languages: tuple[str, ...],
    problems: _Problems,
) -> tuple[int, ...]:
    """A scale's scores, as written or 0, 1, … in option order; none for the others."""
    if not kind.has_scores:
        if "scores" in question:
            problems.add(f"only rating scales have scores (this one is {kind})", f"{field}.scores")
        return ()
    count = len(options[languages[0]]) if options else None
    if "scores" not in question:
        return tuple(range(count or 0))
    return problems.check(_scores, question["scores"], count, f"{field}.scores") or ()


def _scores(value: object, count: int | None, field: str) -> tuple[int, ...]:
    """One whole number per option, each above the one before: the scale's order."""
    if not isinstance(value, list):
        raise SurveyDefinitionError(
            f"must be a list of whole numbers, one per option (got {_describe(value)})", field
        )
    if count is not None and len(value) != count:
        raise SurveyDefinitionError(
            f"must give one score per option: {count} (got {len(value)})", field
        )
    scores = tuple(_score(item, f"{field}[{index}]") for index, item in enumerate(value))
    for index, (before, after) in enumerate(itertools.pairwise(scores)):
        if after <= before:
            raise SurveyDefinitionError(
                f"must increase from each option to the next (got {after} after {before})",
                f"{field}[{index + 1}]",
            )
    return scores


def _score(value: object, field: str) -> int:
    if (
        isinstance(value, YamlScalar)
        and value.is_integer
        and len(value.text) <= _MAX_NUMBER_TEXT
        and _WHOLE_NUMBER.fullmatch(value.text)
    ):
        number: int | None = int(value.text)
    elif isinstance(value, int) and not isinstance(value, bool):
        number = value
    else:
        number = None
    if number is None or abs(number) > MAX_SCORE_MAGNITUDE:
        raise SurveyDefinitionError(
            f"must be a whole number from {-MAX_SCORE_MAGNITUDE} to {MAX_SCORE_MAGNITUDE} "
            f"(got {_number_got(value)})",
            field,
        )
    return number


def _option_order(
    question: dict[str, object],
    kind: QuestionType,
    count: int | None,
    field: str,
    problems: _Problems,
) -> tuple[str, tuple[int, ...]]:
    """How the options are shown, and which keep their place (from 0; the file counts
    from 1). Only questions with options have an order; ``reverse`` only suits a scale,
    whose options run from one end to the other."""
    order_field, fixed_field = f"{field}.option_order", f"{field}.fixed_options"
    if not kind.has_options:
        for name in ("option_order", "fixed_options"):
            if name in question:
                problems.add(
                    f"only choice, rating scale and tick-all questions have options to "
                    f"order (this one is {kind})",
                    f"{field}.{name}",
                )
        return AS_WRITTEN, ()
    allowed = OPTION_ORDERS if kind.has_scores else tuple(o for o in OPTION_ORDERS if o != REVERSE)
    order = problems.check(_choice, question.get("option_order", AS_WRITTEN), order_field, allowed)
    if "fixed_options" not in question:
        return order or AS_WRITTEN, ()
    fixed = problems.check(_fixed_options, question["fixed_options"], count, fixed_field)
    if fixed and order == AS_WRITTEN:
        problems.add(
            "options keep their place anyway unless option_order is random or reverse",
            fixed_field,
        )
    return order or AS_WRITTEN, fixed or ()


def _fixed_options(value: object, count: int | None, field: str) -> tuple[int, ...]:
    """Positions (1-based, as a reader counts the options) of options that stay put, each
    once; given back from 0."""
    if not isinstance(value, list):
        raise SurveyDefinitionError(
            f"must be a list of option positions, 1 for the first (got {_describe(value)})",
            field,
        )
    positions: list[int] = []
    for index, item in enumerate(value):
        item_field = f"{field}[{index}]"
        position = _position(item, count, item_field)
        if position in positions:
            first = f"{field}[{positions.index(position)}]"
            raise SurveyDefinitionError(
                f"position {position} is listed twice (already {first})", item_field
            )
        positions.append(position)
    return tuple(sorted(position - 1 for position in positions))


def _position(value: object, count: int | None, field: str) -> int:
    """An option's position: a whole number from 1 to the number of options (any from 1
    when the options themselves are wrong and cannot be counted)."""
    try:
        position: int | None = _whole_number(value, field)
    except SurveyDefinitionError:
        position = None
    if position is None or position < 1 or (count is not None and position > count):
        span = f"from 1 to {count}" if count is not None else "from 1"
        raise SurveyDefinitionError(
            f"must be an option's position, a whole number {span} (got {_number_got(value)})",
            field,
        )
    return position


def _bounds(
    question: dict[str, object], kind: QuestionType, field: str, problems: _Problems
) -> tuple[int | None, int | None]:
    """A number question's min and max; None for the others, which may not have them."""
    if not kind.has_range:
        for bound in ("min", "max"):
            if bound in question:
                problems.add(
                    f"only number questions have min and max (this one is {kind})",
                    f"{field}.{bound}",
                )
        return None, None
    found: list[int | None] = []
    for bound in ("min", "max"):
        if bound in question:
            found.append(problems.check(_whole_number, question[bound], f"{field}.{bound}"))
        else:
            problems.add("is required for a number question", f"{field}.{bound}")
            found.append(None)
    low, high = found
    if low is not None and high is not None:
        problems.check(_range_fits, low, high, f"{field}.max")
    return low, high


def _range_fits(low: int, high: int, field: str) -> None:
    if high <= low:
        raise SurveyDefinitionError(f"must be greater than min (got min {low}, max {high})", field)
    if high - low > MAX_NUMBER_RANGE:
        raise SurveyDefinitionError(
            f"must be at most {MAX_NUMBER_RANGE} more than min (got max - min = {high - low})",
            field,
        )


def _options(
    value: object, field: str, languages: tuple[str, ...], problems: _Problems
) -> dict[str, tuple[str, ...]] | None:
    """Option texts as shown to the respondent, per language; their order is their index
    in the form, in the stored answers and in the export, so it is kept as written.

    Options must differ within each language: a respondent reading only Korean could not
    tell two options apart that differ only in English.
    """
    items = problems.check(_option_list, value, field)
    if items is None:
        return None
    before = len(problems)
    options: dict[str, list[str]] = {language: [] for language in languages}
    first_use: dict[tuple[str, str], str] = {}
    for index, item in enumerate(items):
        item_field = f"{field}[{index}]"
        if isinstance(item, dict):
            item = {language: _integer_as_text(text) for language, text in item.items()}
        elif len(languages) == 1:
            item = _integer_as_text(item)
        texts = _localized(item, item_field, MAX_OPTION_LENGTH, languages, problems)
        for language, option in (texts or {}).items():
            option_field = (
                field_path(item_field, language) if isinstance(item, dict) else item_field
            )
            if (language, option) in first_use:
                problems.add(
                    f"duplicate option {_shorten(option)} (already {first_use[language, option]})",
                    option_field,
                )
            else:
                first_use[language, option] = option_field
            options[language].append(option)
    return None if len(problems) > before else {k: tuple(v) for k, v in options.items()}


def _option_list(value: object, field: str) -> list[object]:
    if not isinstance(value, list):
        raise SurveyDefinitionError(
            f"must be a list of option texts (got {_describe(value)})", field
        )
    if not MIN_OPTIONS <= len(value) <= MAX_OPTIONS:
        raise SurveyDefinitionError(
            f"must list {MIN_OPTIONS} to {MAX_OPTIONS} options (got {len(value)})", field
        )
    return value


def _integer_as_text(value: object) -> object:
    """Options such as 1, 2, 3 are labels: an integer is taken as the text it was written
    as. Anything else non-textual (1.5, yes) still needs quotes, which _string says."""
    if isinstance(value, YamlScalar) and value.is_integer:
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
        if "\x00" in value:
            # No text column of PostgreSQL holds one; SQLite would: refused alike on both.
            raise SurveyDefinitionError("contains a NUL character (\\0)", field)
        return value
    hint = ""
    if isinstance(value, YamlScalar) and value.text:
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
    if isinstance(value, YamlScalar) and value.is_number:
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
        isinstance(value, YamlScalar)
        and value.is_integer
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
    if isinstance(value, YamlScalar) and value.is_number:
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
    if isinstance(value, YamlScalar) and value.is_boolean:
        return value.is_true
    got = f"the text {_shorten(value)}" if isinstance(value, str) else _describe(value)
    raise SurveyDefinitionError(f"must be true or false (got {got})", field)


def _describe(value: object) -> str:
    """Names the kind of a value for error messages, in the file author's terms."""
    if isinstance(value, YamlScalar):
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
