"""Forms for accounts (adding a researcher, setting a password from a link, changing
one's own) and the words for what the accounts' rules refuse.

The rules themselves (usernames, ``accounts.MIN_PASSWORD_LENGTH``, the last administrator)
are the storage's, raised as facts and worded here: the forms only ask for every field,
and that the new password was typed the same twice. Flask-WTF ships no type
information, so FlaskForm is Any to mypy (as in publishing_forms.py)."""

from __future__ import annotations

from flask_babel import lazy_gettext as _l
from flask_wtf import FlaskForm
from wtforms import PasswordField, StringField
from wtforms.validators import InputRequired, Length

from survey_app.storage.accounts import (
    MIN_PASSWORD_LENGTH,
    AccountError,
    LastAdministratorError,
    OwnAccountError,
    PasswordTooShortError,
    UnknownAccountError,
    UsernameFormatError,
    UsernameTakenError,
    WrongPasswordError,
)

# As the login form: a password longer than this is refused before it is ever hashed.
MAX_PASSWORD_LENGTH = 1024


def _password_field(label: str) -> PasswordField:
    return PasswordField(label, validators=[InputRequired(), Length(max=MAX_PASSWORD_LENGTH)])


class AddResearcherForm(FlaskForm):  # type: ignore[misc]
    username = StringField(
        _l("Username of the new researcher"), validators=[InputRequired(), Length(max=64)]
    )


class NewPasswordForm(FlaskForm):  # type: ignore[misc]
    password = _password_field(_l("New password"))
    again = _password_field(_l("New password, again"))

    def typed_twice_alike(self) -> bool:
        return bool(self.password.data == self.again.data)


class ChangePasswordForm(NewPasswordForm):
    current = _password_field(_l("Current password"))


# A refused change in the page's language (the storage says it in the terminal's English).
REFUSALS = {
    UsernameFormatError: _l("Usernames are 1 to 64 letters, digits and the signs . _ @ -"),
    UsernameTakenError: _l("There is already a researcher named %(username)s."),
    UnknownAccountError: _l("There is no researcher named %(username)s."),
    PasswordTooShortError: _l("Passwords need at least %(length)s characters."),
    WrongPasswordError: _l("The current password is wrong."),
    LastAdministratorError: _l(
        "%(username)s is the last active administrator: make another researcher an "
        "administrator first."
    ),
    OwnAccountError: _l(
        "Not on your own account: change your password on your account page, and ask "
        "another administrator for the rest."
    ),
}


def refusal(error: AccountError) -> str:
    """The words for a refused account change, in the page's language."""
    words = str(REFUSALS[type(error)])
    return words % {"username": getattr(error, "username", ""), "length": MIN_PASSWORD_LENGTH}
