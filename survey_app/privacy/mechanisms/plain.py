"""What the plain mechanisms (``plain_choice``, ``plain_number``) say alike: their stored
name and their words. A plain question is stored as given, outside any privacy guarantee."""

from __future__ import annotations

from ..words import lazy_gettext

#: The stored name of every plain mechanism; the parameters tell them apart.
PLAIN_NAME = "none"
RESPONDENT_NAME = lazy_gettext("Not randomized")
RESEARCHER_NAME = lazy_gettext("not randomized")
DESCRIPTION = lazy_gettext("Stored exactly as you give it: answer only if you are happy with that.")
EXPORT_ENCODING = "the answer as given (not randomized)"
