"""A ``SurveyDefinition`` written back out as a survey file (YAML) that parses to it again.

For a survey whose original file was not kept, and for anyone who needs a definition as
text: the survey comes back in the form its author would have written, keys in
documentation order, most defaults left out, ε as the decimal it was written as.
"""

from __future__ import annotations

from fractions import Fraction
from typing import TypeVar

import yaml

from survey_app.domain.display_order import AS_WRITTEN
from survey_app.domain.survey_limits import DEFAULT_LANGUAGES, DEFAULT_MECHANISM
from survey_app.domain.survey_model import QuestionDefinition, SurveyDefinition

T = TypeVar("T")


def definition_yaml(definition: SurveyDefinition) -> str:
    """YAML text that ``parse_definition`` reads back as an equal definition."""
    languages = definition.languages
    texts = {code: definition.texts(code) for code in languages}
    survey: dict[str, object] = {"slug": definition.slug}
    if languages != DEFAULT_LANGUAGES:
        survey["languages"] = list(languages)
    survey["title"] = _per_language({c: t.title for c, t in texts.items()}, languages)
    if definition.description:
        survey["description"] = _per_language(
            {c: t.description for c, t in texts.items()}, languages
        )
    if definition.access != "open":
        survey["access"] = definition.access
    if definition.consent:
        survey["consent"] = _per_language({c: t.consent for c, t in texts.items()}, languages)
    if definition.contact:
        survey["contact"] = _per_language({c: t.contact for c, t in texts.items()}, languages)
    if definition.max_epsilon is not None:
        survey["max_epsilon"] = _decimal(definition.max_epsilon)
    if definition.thank_you:
        survey["thank_you"] = _per_language({c: t.thank_you for c, t in texts.items()}, languages)
    if definition.completion is not None:
        survey["completion"] = {definition.completion.kind: definition.completion.value}
    if definition.question_order != AS_WRITTEN:
        survey["question_order"] = definition.question_order
    if definition.sections:
        survey["sections"] = _sections(definition)
    else:
        survey["questions"] = [_question(question, languages) for question in definition.questions]
    return yaml.safe_dump(survey, allow_unicode=True, sort_keys=False, width=88)


def _sections(definition: SurveyDefinition) -> list[dict[str, object]]:
    """Each section with its words and its questions, as the file lists them."""
    languages = definition.languages
    ends = [section.start for section in definition.sections[1:]] + [len(definition.questions)]
    sections: list[dict[str, object]] = []
    for section, end in zip(definition.sections, ends, strict=True):
        texts = {code: section.texts(code) for code in languages}
        item: dict[str, object] = {
            "title": _per_language({c: t.title for c, t in texts.items()}, languages)
        }
        if section.description:
            item["description"] = _per_language(
                {c: t.description for c, t in texts.items()}, languages
            )
        if section.question_order is not None:
            item["question_order"] = section.question_order
        item["questions"] = [
            _question(question, languages) for question in definition.questions[section.start : end]
        ]
        sections.append(item)
    return sections


def _question(question: QuestionDefinition, languages: tuple[str, ...]) -> dict[str, object]:
    texts = {code: question.texts(code) for code in languages}
    item: dict[str, object] = {
        "key": question.key,
        "text": _per_language({c: t.text for c, t in texts.items()}, languages),
        "type": question.type.value,
    }
    if not question.sensitive:
        item["sensitive"] = False
    if not question.required:
        item["required"] = False
    if question.show_if is not None:
        item["show_if"] = question.show_if.written()
    if question.epsilon is not None:
        item["epsilon"] = _decimal(question.epsilon)
    if question.mechanism != DEFAULT_MECHANISM:
        item["mechanism"] = question.mechanism
    if question.type.has_options:
        item["options"] = [
            _per_language({c: t.options[index] for c, t in texts.items()}, languages)
            for index in range(len(question.options))
        ]
    if question.type.has_scores and question.scores != tuple(range(len(question.scores))):
        item["scores"] = list(question.scores)
    if question.option_order != AS_WRITTEN:
        item["option_order"] = question.option_order
    if question.fixed_options:
        item["fixed_options"] = [index + 1 for index in question.fixed_options]
    if question.type.has_range:
        item["min"] = question.min
        item["max"] = question.max
    return item


def _per_language(values: dict[str, T], languages: tuple[str, ...]) -> T | dict[str, T]:
    """A one-language survey's texts are plain strings; otherwise one entry per language,
    the main one first."""
    if len(languages) == 1:
        return values[languages[0]]
    return {code: values[code] for code in languages}


def _decimal(value: Fraction) -> int | float:
    """ε and max_epsilon have at most three decimals and stay below 10⁴, so the float's
    shortest representation, which YAML writes, is exactly the decimal."""
    return value.numerator if value.denominator == 1 else float(value)
