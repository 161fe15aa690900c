"""What a survey definition may hold: its keys, question types, sizes, ε bounds and defaults.

Plain data, stated once: validation enforces these limits, and the builder, storage, the
privacy ledger and the respondent's form read the same values instead of restating them.
"""

from __future__ import annotations

import math
import re
from fractions import Fraction

from survey_app.privacy import QuestionType
from survey_app.privacy.mechanisms import AUTO, file_names, randomized
from survey_app.privacy.mechanisms import MECHANISMS as REGISTERED

#: Keys a definition may have, in documentation order; True marks the required ones.
SURVEY_KEYS = {
    "slug": True,
    "languages": False,
    "title": True,
    "description": False,
    "access": False,
    "consent": False,
    "contact": False,
    "max_epsilon": False,
    "thank_you": False,
    "completion": False,
    "question_order": False,
    # One of the two, never both: ``questions`` for one page, ``sections`` for several.
    "questions": False,
    "sections": False,
}
#: Keys a section may have, in documentation order; True marks the required ones.
SECTION_KEYS = {"title": True, "description": False, "question_order": False, "questions": True}
#: Keys a question may have, in documentation order; True marks the required ones.
#: Which of the optional ones apply depends on the type and on ``sensitive``.
QUESTION_KEYS = {
    "key": True,
    "text": True,
    "type": False,
    "sensitive": False,
    "required": False,
    "show_if": False,
    "epsilon": False,
    "mechanism": False,
    "options": False,
    "scores": False,
    "option_order": False,
    "fixed_options": False,
    "min": False,
    "max": False,
}
#: Question types the app can collect (``privacy.question_types``): yes/no, one of a list
#: of options, a whole number between min and max, a rating scale (ordered options with
#: scores).
#: The kinds a survey may ask: those with a registered mechanism (a kind whose mechanism
#: is still in ``mechanisms.UNWIRED`` waits).
QUESTION_TYPES = tuple(kind for kind in QuestionType if randomized(kind))
#: The kinds a question may be plain in (``sensitive: false``, stored as given): those with
#: a plain mechanism. Yes/no exists to be randomized; tick all that apply has no plain
#: mechanism yet, so it is always randomized too.
PLAIN_TYPES = tuple(
    kind
    for kind in QUESTION_TYPES
    if any(m.question_type is kind.mechanism_kind and not m.randomized for m in REGISTERED)
)
# open: anyone with the survey's address, once per browser; invitation: single-use links.
ACCESS_MODES = ("open", "invitation")
DEFAULT_QUESTION_TYPE = QuestionType.YES_NO
#: A survey's languages when its file names none; the first of a survey's languages is its
#: main one, the language of its exports.
DEFAULT_LANGUAGES = ("en",)
#: The mechanisms a sensitive question may ask for, by type (each mechanism's
#: ``file_name``), for the types that have a choice; "auto" lets the privacy package pick
#: the more accurate one for the question's ε and size.
MECHANISMS = {kind: file_names(kind) for kind in QuestionType if len(file_names(kind)) > 1}
DEFAULT_MECHANISM = AUTO
#: Names the survey form already uses for its own fields; a question named like one
#: would collide with it in the submitted form.
RESERVED_QUESTION_KEYS = frozenset(
    {"csrf_token", "submission_id", "randomized", "invitation", "design", "agreed"}
)

SLUG_PATTERN = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
QUESTION_KEY_PATTERN = re.compile(r"[a-z0-9_]+")
MAX_SLUG_LENGTH = 64
MAX_TITLE_LENGTH = 200
MAX_DESCRIPTION_LENGTH = 5000
MAX_CONSENT_LENGTH = 5000
MAX_CONTACT_LENGTH = 500
MAX_QUESTIONS = 100
#: A sectioned survey's pages (its questions together still at most MAX_QUESTIONS).
MAX_SECTIONS = 20
MAX_QUESTION_KEY_LENGTH = 64
MAX_QUESTION_TEXT_LENGTH = 1000
MIN_OPTIONS = 2
MAX_OPTIONS = 20
MAX_OPTION_LENGTH = 200
#: A scale's scores: whole numbers of at most this magnitude, strictly increasing.
MAX_SCORE_MAGNITUDE = 10**6
#: A number question's bounds: whole numbers, |min|, |max| ≤ MAX_NUMBER_MAGNITUDE and
#: max - min ≤ MAX_NUMBER_RANGE (the range sets the noise a number question needs).
MAX_NUMBER_MAGNITUDE = 10**9
MAX_NUMBER_RANGE = 1_000_000

#: A question's requested ε: a decimal with at most EPSILON_DECIMALS places, in
#: [EPSILON_MIN, EPSILON_MAX]. Written exactly, it reaches the privacy package unrounded.
EPSILON_MIN = Fraction("0.01")
EPSILON_MAX = Fraction(10)
EPSILON_DECIMALS = 3
#: The survey's max_epsilon: the same kind of decimal, in [EPSILON_MIN, MAX_EPSILON_MAX].
MAX_EPSILON_MAX = Fraction(1000)
#: ε of a yes/no question without epsilon: fair coins, P(yes|yes) = 3/4, P(yes|no) = 1/4.
DEFAULT_YES_NO_EPSILON = math.log(3)
#: ε of a sensitive choice or number question without epsilon.
DEFAULT_CHOICE_NUMBER_EPSILON = Fraction(1)
#: The largest magnitude a stored number report may have: a tally cell holds a 64-bit
#: integer and sums squares of reports, and the square of a larger one would not fit.
LARGEST_REPORT = 3 * 10**9
