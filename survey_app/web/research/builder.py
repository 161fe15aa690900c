"""The survey builder: researchers create and edit draft surveys in the browser.

Every essential action is a plain form post, named by the button pressed (``add``,
``remove``, ``move_up``, ``move_down``, ``preview``, ``save``, ``download``; uploading is a
form of its own), so the builder works without JavaScript; ``static/builder.js`` only shows
each question's fields as its type changes and adds the live preview, from
``POST /research/builder/preview``.

The form's fields become a definition file (``builder_fields``) that
``definitions.parse_definition`` checks exactly as it checks an imported file; every
problem it finds is shown at once, listed at the top and again at the field it names.
Drafts are their owner's alone: anyone else, and any survey past the draft stage, gets a
404.
The preview renders the respondent's page inside a disabled fieldset with no valid form
token, so it can never send, let alone store, an answer. A sectioned survey's preview
walks its sections: in the builder with builder.js's buttons (every section is shown
without it), on a saved draft's preview page by ``?section=N`` links.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import PurePath

from babel.lists import format_list
from flask import (
    Blueprint,
    abort,
    current_app,
    redirect,
    render_template,
    request,
    url_for,
)
from flask_babel import force_locale, get_locale
from markupsafe import Markup
from werkzeug.wrappers import Response

from survey_app.domain.builder_fields import (
    MOVE_BUTTONS,
    PlacedProblem,
    SurveyFields,
    definition_yaml,
    field_id,
    fields_from_form,
    fields_from_source,
    messages_by_field,
    moved_button,
    new_survey_fields,
    placed_problems,
)
from survey_app.domain.definitions import parse_definition
from survey_app.domain.display_order import display_parts
from survey_app.domain.previews import preview_survey
from survey_app.domain.sample_plans import QuestionPlan, plan_survey
from survey_app.domain.survey_limits import PLAIN_TYPES, QUESTION_TYPES
from survey_app.domain.survey_model import SurveyDefinition, SurveyDefinitionError
from survey_app.privacy import QuestionType
from survey_app.privacy.planner import MIN_HALF_WIDTH
from survey_app.storage.surveys import (
    Survey,
    SurveyExistsError,
    SurveyNotDraftError,
    replace_draft,
    store_survey,
    survey_source,
)
from survey_app.web.database_session import get_db
from survey_app.web.i18n import current_language
from survey_app.web.i18n import gettext as _
from survey_app.web.research.access import attachment, owned_draft
from survey_app.web.research.auth import current_researcher
from survey_app.web.respond.conditions import condition_views

bp = Blueprint("builder", __name__, url_prefix="/builder")


#: The name parse_definition puts in front of a built survey's errors.
SOURCE = "builder"
#: The planner beside the preview: its defaults and limits (the dashboard's).
DEFAULT_RESPONDENTS = 1000
MAX_RESPONDENTS = 10_000_000
DEFAULT_MARGIN_POINTS = 5.0
PLAN_CONFIDENCE = 0.95


@dataclass(frozen=True)
class Checked:
    """The form judged by the import: a definition, or everything wrong with it."""

    definition: SurveyDefinition | None
    problems: tuple[PlacedProblem, ...] = ()


def check(fields: SurveyFields) -> Checked:
    try:
        return Checked(parse_definition(definition_yaml(fields), SOURCE))
    except SurveyDefinitionError as err:
        return Checked(None, placed_problems(err, fields.languages, fields.section_sizes()))


@bp.get("/")
def new() -> str:
    return _page(new_survey_fields(str(get_locale())), None, opened=0)


@bp.post("/")
def new_action() -> Response | tuple[str, int]:
    return _act(None)


@bp.get("/drafts/<slug>")
def edit(slug: str) -> str:
    draft = owned_draft(slug)
    fields = fields_from_source(survey_source(get_db(), draft))
    notice = _("Draft saved.") if request.args.get("saved") else None
    return _page(fields, draft, notice=notice)


@bp.post("/drafts/<slug>")
def edit_action(slug: str) -> Response | tuple[str, int]:
    return _act(owned_draft(slug))


@bp.post("/preview")
def live_preview() -> str:
    """The preview panel alone, for builder.js to swap in as the researcher types."""
    fields = fields_from_form(request.form)
    return render_template("research/builder_preview.html", **_preview(fields, check(fields)))


@bp.get("/drafts/<slug>/preview")
def draft_preview(slug: str) -> str:
    """A saved draft as its respondents will see it, in the page's language if the survey
    has it (the language switcher's ``?lang=`` picks another)."""
    draft = owned_draft(slug)
    language = _survey_language(draft.languages, str(get_locale()))
    shown = draft.localized(language)
    walk = _walk(request.args.get("section", ""), len(shown.sections))
    return render_template(
        "research/builder_preview_page.html",
        draft=draft,
        page_languages=draft.languages,
        **_panel(shown, language, DEFAULT_RESPONDENTS, DEFAULT_MARGIN_POINTS, walk),
    )


@dataclass(frozen=True)
class Walk:
    """Where the draft's preview page is among a survey's sections: ``index`` (from 0),
    shown alone when ``asked`` for (a link followed: its heading takes the focus, as
    after a respondent's Next), else the respondent's first page, the first section."""

    index: int
    asked: bool


def _walk(raw: str, count: int) -> Walk:
    """The section ``?section=N`` (from 1) asks for; the first page when it asks for none
    or for one the survey does not have (an address kept from before a section was
    removed still shows the survey)."""
    number = int(raw) if raw.isdecimal() and len(raw) < 4 else 0
    return Walk(number - 1, asked=True) if 1 <= number <= count else Walk(0, asked=False)


@bp.get("/drafts/<slug>/survey.yaml")
def draft_download(slug: str) -> Response:
    draft = owned_draft(slug)
    return _yaml_download(survey_source(get_db(), draft), draft.slug)


@bp.post("/upload")
def upload_new() -> str | tuple[str, int]:
    return _upload(None)


@bp.post("/drafts/<slug>/upload")
def upload_to_draft(slug: str) -> str | tuple[str, int]:
    return _upload(owned_draft(slug))


def _act(draft: Survey | None) -> Response | tuple[str, int]:
    """One press of a builder button on the form as posted."""
    form = request.form
    fields = fields_from_form(form)
    if "add" in form:
        kind = form["add"] if form["add"] in QUESTION_TYPES else QUESTION_TYPES[0]
        fields.add_question(kind)
        added = len(fields.questions) - 1
        return _page(fields, draft, focus=field_id(f"q{added}.key"), opened=added), 200
    if "remove" in form:
        index = form.get("remove", "", type=str)
        if index.isdigit():
            fields.remove_question(int(index))
        return _page(fields, draft), 200
    if "add_section" in form:
        fields.add_section()
        added = len(fields.sections) - 1
        return _page(fields, draft, focus=field_id(f"s{added}.title.{fields.languages[0]}")), 200
    if "remove_section" in form:
        index = form.get("remove_section", "", type=str)
        if index.isdigit():
            fields.remove_section(int(index))
        return _page(fields, draft), 200
    for step, button in MOVE_BUTTONS.items():
        index = form.get(button, "", type=str)
        if index.isdigit():
            fields.move_question(int(index), step)
            return _page(fields, draft), 200
    checked = check(fields)
    wants_file = "download" in form or "save" in form
    if checked.definition is None:
        return _page(fields, draft, checked), 400 if wants_file else 200
    if "download" in form:
        return _yaml_download(checked.definition.source, checked.definition.slug)
    if "save" in form:
        return _save(fields, draft, checked.definition)
    return _page(fields, draft, checked), 200


def _save(
    fields: SurveyFields, draft: Survey | None, definition: SurveyDefinition
) -> Response | tuple[str, int]:
    researcher = current_researcher()
    assert researcher is not None  # guaranteed by the research blueprint's guard
    db = get_db()
    try:
        if draft is None:
            saved = store_survey(db, definition, researcher.id, status="draft")
        else:
            saved = replace_draft(db, draft, definition)
    except SurveyExistsError:
        taken = SurveyDefinitionError(
            _("A survey with this slug already exists: choose another."), "slug"
        )
        return _page(fields, draft, Checked(None, placed_problems(taken, fields.languages))), 409
    except SurveyNotDraftError:
        abort(409, description=_("This survey is no longer a draft, so it cannot be changed."))
    return redirect(url_for(".edit", slug=saved.slug, saved=1))


def _upload(draft: Survey | None) -> str | tuple[str, int]:
    """Fill the form from an uploaded definition file, checked as ``import-survey`` checks
    it. Nothing is stored until the researcher saves."""
    upload = request.files.get("file")
    name = PurePath(upload.filename or "").name if upload else ""
    label = name or "upload"
    try:
        if upload is None or not name:
            raise SurveyDefinitionError(_("Choose a survey file (YAML or JSON) to upload."))
        definition = parse_definition(_decoded(upload.read(), label), label)
    except SurveyDefinitionError as err:
        fields = _stored_fields(draft)
        upload_errors = [problem.located() for problem in err.problems]
        return _page(fields, draft, upload_errors=upload_errors), 400
    notice = _("Loaded %(name)s. Nothing is saved until you press “Save draft”.", name=name)
    return _page(fields_from_source(definition.source), draft, notice=notice)


def _decoded(raw: bytes, label: str) -> str:
    """The file's text, refused as ``load_definition`` refuses a file that is not UTF-8."""
    try:
        # utf-8-sig: editors on Windows like to start UTF-8 files with a byte-order mark.
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        raise SurveyDefinitionError(
            f"not UTF-8 text (undecodable byte at offset {err.start})",
            line=raw.count(b"\n", 0, err.start) + 1,
            source=label,
        ) from None


def _stored_fields(draft: Survey | None) -> SurveyFields:
    if draft is None:
        return new_survey_fields(str(get_locale()))
    return fields_from_source(survey_source(get_db(), draft))


def _yaml_download(text: str, slug: str) -> Response:
    return attachment(text, "application/yaml", f"{slug or 'survey'}.yaml")


def _page(
    fields: SurveyFields,
    draft: Survey | None,
    checked: Checked | None = None,
    *,
    notice: str | None = None,
    upload_errors: list[str] | None = None,
    focus: str | None = None,
    opened: int | None = None,
) -> str:
    """The builder page. Without ``checked`` (a fresh form) errors stay unshown, but the
    preview still appears if the form is already a valid survey.

    Questions are folded to one line, but for those with a problem shown and question
    ``opened`` (one just added); ``focus`` is the id of the control to focus."""
    judged = checked or check(fields)
    action = url_for(".edit_action", slug=draft.slug) if draft else url_for(".new_action")
    upload = url_for(".upload_to_draft", slug=draft.slug) if draft else url_for(".upload_new")
    problems = checked.problems if checked else ()
    return render_template(
        "research/builder.html",
        fields=fields,
        draft=draft,
        action=action,
        upload_action=upload,
        problems=problems,
        field_errors=messages_by_field(problems),
        unfolded={problem.question for problem in problems} | {opened},
        notice=notice,
        upload_errors=upload_errors or [],
        focus=focus,
        question_types=QUESTION_TYPES,
        plain_types=PLAIN_TYPES,
        only_for=_only_for,
        move_buttons=MOVE_BUTTONS,
        moved_button=moved_button,
        **_preview(fields, judged),
    )


def _only_for(kinds: list[QuestionType]) -> str:
    """The legend of fields that only questions of ``kinds`` have, in the words of the
    type menu, so the form reads right without JavaScript too."""
    labels = [str(kind.builder_label) for kind in kinds]
    listed = format_list(labels, style="or", locale=get_locale() or current_language())
    return _("Only for questions of type: %(types)s", types=listed)


def _preview(fields: SurveyFields, checked: Checked) -> dict[str, object]:
    """What the preview panel shows: the respondent's page, the ledger and the planner, or
    the problems while the form is not a valid survey yet."""
    form = request.form
    respondents = _number(form.get("plan_respondents"), DEFAULT_RESPONDENTS, 1, MAX_RESPONDENTS)
    margin = _number(form.get("plan_margin"), DEFAULT_MARGIN_POINTS, 100 * MIN_HALF_WIDTH, 100)
    if checked.definition is None:
        return {
            "preview_problems": checked.problems,
            "plan_respondents": int(respondents),
            "plan_margin": margin,
        }
    language = _survey_language(fields.languages, form.get("preview_language", ""))
    survey = preview_survey(checked.definition, language)
    return _panel(survey, language, int(respondents), margin)


def _panel(
    survey: Survey, language: str, respondents: int, margin: float, walk: Walk | None = None
) -> dict[str, object]:
    """The preview's context: ``walk`` on the draft's preview page, None in the builder."""
    plans: list[QuestionPlan] = plan_survey(survey, margin / 100, respondents, PLAN_CONFIDENCE)
    return {
        "preview": survey,
        "preview_language": language,
        "respondent_page": _respondent_page(survey, language, walk),
        "walk": walk,
        "plans": plans,
        "plan_respondents": respondents,
        "plan_margin": margin,
        "plan_confidence": PLAN_CONFIDENCE,
    }


def _respondent_page(survey: Survey, language: str, walk: Walk | None) -> Markup:
    """The main part of ``respond/survey.html`` for ``survey``, in ``language``: the very
    template respondents get, rendered without its page around it (and so without its
    browser scripts), and with an empty form token that no server would accept. Its
    questions and options are in one order drawn as for a respondent.

    A sectioned survey shows, in the builder, every section one after another (builder.js
    then walks them in the page); on the draft's preview page, the section ``walk`` is at,
    as the respondent's first page or as a page on the way through without JavaScript."""
    template = current_app.jinja_env.get_template("respond/survey.html")
    context: dict[str, object] = {
        "survey": survey,
        "shown_parts": display_parts(survey.parts, survey.part_orders),
        "submission_id": "",
        "invitation": None,
        "problems": [],
        "field_errors": {},
        "shown_section": walk.index if walk and walk.asked else None,
        "sections_in_page": (walk.index,) if walk else (),
        "carried": None,
        "every_section_shown": walk is None,
    }
    current_app.update_template_context(context)
    with force_locale(language):
        context["conditions"] = condition_views(survey)  # each note in the preview's language
        markup = "".join(template.blocks["main"](template.new_context(context)))
    return Markup(markup)  # noqa: S704 (rendered by our autoescaping template)


def _survey_language(languages: tuple[str, ...], wanted: str) -> str:
    return wanted if wanted in languages else languages[0]


def _number(raw: str | None, default: float, low: float, high: float) -> float:
    """A planner input, or its default when it is not a number in range."""
    try:
        value = float(raw or "")
    except ValueError:
        return default
    return value if low <= value <= high else default
