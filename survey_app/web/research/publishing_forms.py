"""Forms for publishing results and setting the central budget (research/publishing.py).

Flask-WTF ships no type information, so FlaskForm is Any to mypy (``forms.py`` has the
same exception in pyproject.toml; this module says so line by line).
"""

from __future__ import annotations

from flask_babel import lazy_gettext as _l
from flask_wtf import FlaskForm
from wtforms import SelectMultipleField, StringField
from wtforms.validators import InputRequired, Length


class BudgetForm(FlaskForm):  # type: ignore[misc]
    budget = StringField(
        _l("Central privacy budget (ε)"), validators=[InputRequired(), Length(max=16)]
    )


class ReleaseForm(FlaskForm):  # type: ignore[misc]
    # The figures' ids are checked by release_figures.chosen_figures, which says why one is refused
    # (an unknown question, a sensitive covariate, ...); a plain choice check could not.
    figure = SelectMultipleField(_l("Figures"), validate_choice=False)
    epsilon = StringField(_l("ε for this release"), validators=[Length(max=16)])
