"""Forms for researchers. Labels are lazy: each page shows them in its own language."""

from __future__ import annotations

from flask_babel import lazy_gettext as _l
from flask_wtf import FlaskForm
from wtforms import BooleanField, DateField, IntegerField, PasswordField, StringField
from wtforms.validators import InputRequired, Length, NumberRange, Optional

from survey_app.web.research.studies import MAX_LINKS_AT_ONCE


class LoginForm(FlaskForm):
    username = StringField(_l("Username"), validators=[InputRequired(), Length(max=64)])
    password = PasswordField(_l("Password"), validators=[InputRequired(), Length(max=1024)])


class ConfirmForm(FlaskForm):
    """The confirmation step's button: only its CSRF token, so a link or another site's
    form cannot act for the researcher."""


class ShareForm(FlaskForm):
    username = StringField(
        _l("Username of the researcher"), validators=[InputRequired(), Length(max=64)]
    )


class InviteForm(FlaskForm):
    count = IntegerField(
        _l("How many links"),
        validators=[InputRequired(), NumberRange(min=1, max=MAX_LINKS_AT_ONCE)],
    )


class DeleteForm(FlaskForm):
    """Deleting a survey with its data: its address typed out, so no slip of a finger
    (or a form of another survey's) destroys a study."""

    slug = StringField(
        _l("To confirm, type the survey's address name:"),
        validators=[InputRequired(), Length(max=64)],
    )


class ListingForm(FlaskForm):
    listed = BooleanField(_l("List this survey on the front page"))


class RetentionForm(FlaskForm):
    retain_until = DateField(_l("Keep the answers until"), validators=[Optional()])
    keep_public_figures = BooleanField(_l("Keep the published figures after that day"))
