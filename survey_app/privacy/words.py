"""Words the privacy library says to people, kept translatable without Flask.

A mechanism knows best how to tell a respondent what it does to an answer ("your real
answer is used with probability 73%"), but this package may not import Flask-Babel. So it
says it as a ``Text``: the message id, its plural and its arguments, translated only when
it is shown. ``str(text)`` speaks through the ``Wording`` installed with ``speak_with``:
the web layer installs one that translates into the page's language and formats numbers in
its locale (``survey_app/web/privacy_words.py``); without one, a script or a test gets the
English, formatted as Babel formats English.

``lazy_gettext`` and ``lazy_ngettext`` are the names ``pybabel extract`` looks for
(``-k lazy_gettext -k lazy_ngettext:1,2``), so these messages reach the catalogs like any
other.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Protocol

from babel.numbers import format_decimal, format_percent

#: Shares at or above one percent are shown whole ("73%"), smaller ones to hundredths.
WHOLE_PERCENT_FROM = Fraction(1, 100)


class Wording(Protocol):
    """How words reach a reader: a catalog and a locale's way with numbers.

    ``gettext`` and ``ngettext`` fill ``%(name)s`` placeholders from ``arguments`` (already
    turned into text) after translating, as Flask-Babel's do; ``ngettext`` also offers
    ``num``."""

    def gettext(self, msgid: str, arguments: Mapping[str, object]) -> str: ...

    def ngettext(
        self, singular: str, plural: str, num: int, arguments: Mapping[str, object]
    ) -> str: ...

    def format_decimal(self, number: float, pattern: str) -> str: ...

    def format_percent(self, number: float, pattern: str) -> str: ...


class English:
    """The words as written, numbers as Babel writes them in English: no catalog needed."""

    def gettext(self, msgid: str, arguments: Mapping[str, object]) -> str:
        return msgid % dict(arguments)

    def ngettext(
        self, singular: str, plural: str, num: int, arguments: Mapping[str, object]
    ) -> str:
        return (singular if num == 1 else plural) % {"num": num, **arguments}

    def format_decimal(self, number: float, pattern: str) -> str:
        return str(format_decimal(number, format=pattern, locale="en"))

    def format_percent(self, number: float, pattern: str) -> str:
        return str(format_percent(number, format=pattern, locale="en"))


_wording: Wording = English()


def speak_with(wording: Wording) -> None:
    """Make every ``Text``, ``Share`` and ``Figure`` speak through ``wording`` from now on."""
    global _wording
    _wording = wording


@dataclass(frozen=True)
class Share:
    """A probability as a percentage a reader takes in at a glance: 73%, or 0.25%."""

    value: Fraction

    def __str__(self) -> str:
        pattern = "#,##0%" if self.value >= WHOLE_PERCENT_FROM else "#,##0.00%"
        return _wording.format_percent(float(self.value), pattern)


@dataclass(frozen=True)
class Figure:
    """A number in the reader's locale, with a CLDR pattern such as ``#,##0.0``."""

    value: float
    pattern: str

    def __str__(self) -> str:
        return _wording.format_decimal(self.value, self.pattern)


@dataclass(frozen=True)
class Text:
    """A message to translate when shown, with its named arguments (``Share``, ``Figure``
    and ``Text`` arguments are put in words first). ``plural`` and ``num`` make it a
    plural message, ``%(num)d`` the count."""

    msgid: str
    plural: str | None = None
    num: int = 1
    arguments: Mapping[str, object] = field(default_factory=dict)

    def __str__(self) -> str:
        arguments = {
            name: str(value) if isinstance(value, (Share, Figure, Text)) else value
            for name, value in self.arguments.items()
        }
        if self.plural is None:
            return _wording.gettext(self.msgid, arguments)
        return _wording.ngettext(self.msgid, self.plural, self.num, arguments)


def lazy_gettext(msgid: str, **arguments: object) -> Text:
    """``msgid`` to be translated when shown."""
    return Text(msgid, arguments=arguments)


def lazy_ngettext(singular: str, plural: str, num: int, **arguments: object) -> Text:
    """The singular or the plural for ``num``, to be translated when shown."""
    return Text(singular, plural, num, arguments)
