"""A survey that is not stored, for the builder's preview of the respondent's page.

The preview must show exactly what respondents will get, so it goes through the same
``designs.question_mechanism`` that ``surveys.store_survey`` uses: the same exact
parameters, ε and plain-words explanation. It never touches the database: the survey has
id 0 and status "draft", so nothing could ever accept a response for it.
"""

from __future__ import annotations

import dataclasses

from survey_app.domain.designs import question_mechanism, survey_fingerprint
from survey_app.domain.survey_model import SurveyDefinition
from survey_app.storage.surveys import Question, Survey, written_decimal

PREVIEW_ID = 0


def preview_survey(definition: SurveyDefinition, language: str) -> Survey:
    """The survey ``definition`` describes, its texts in ``language`` (the main language
    when the survey has no such language), as it would be once stored."""
    shown = language if language in definition.languages else definition.languages[0]
    mechanisms = {q.key: question_mechanism(q) for q in definition.questions}
    parameters = {key: mechanism.parameters() for key, mechanism in mechanisms.items()}
    texts = definition.texts(shown)
    questions = tuple(
        Question(
            id=PREVIEW_ID,
            key=q.key,
            text=q.texts(shown).text,
            type=q.type,
            mechanism=mechanisms[q.key],
            sensitive=q.sensitive,
            required=q.required,
            show_if=q.show_if,
            options=q.texts(shown).options,
            scores=q.scores,
            min=q.min,
            max=q.max,
            requested_epsilon=written_decimal(q.epsilon),
            option_order=q.option_order,
            fixed_options=q.fixed_options,
        )
        for q in definition.questions
    )
    return Survey(
        id=PREVIEW_ID,
        slug=definition.slug,
        title=texts.title,
        description=texts.description,
        questions=questions,
        status="draft",
        access=definition.access,
        consent=texts.consent,
        contact=texts.contact,
        max_epsilon=written_decimal(definition.max_epsilon),
        design=survey_fingerprint(parameters),
        languages=definition.languages,
        sections=tuple(
            dataclasses.replace(
                section,
                title=section.texts(shown).title,
                description=section.texts(shown).description,
                translations={},
            )
            for section in definition.sections
        ),
        question_order=definition.question_order,
    )
