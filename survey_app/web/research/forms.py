"""Forms for researchers. Labels are lazy: each page shows them in its own language."""

from __future__ import annotations

from flask_babel import lazy_gettext as _l
from flask_wtf import FlaskForm
from wtforms import IntegerField, PasswordField, StringField
from wtforms.validators import InputRequired, Length, NumberRange

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
