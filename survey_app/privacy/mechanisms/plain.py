"""What the plain mechanisms (``plain_choice``, ``plain_number``) do alike: their stored
name, their words, an infinite ε and no part in a public release. A plain question is stored
as given, outside any privacy guarantee."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import ClassVar

from ..words import Text, lazy_gettext
from .interface import MechanismDefaults

#: The stored name of every plain mechanism; the parameters tell them apart.
PLAIN_NAME = "none"
DESCRIPTION = lazy_gettext("Stored exactly as you give it: answer only if you are happy with that.")


class PlainDefaults(MechanismDefaults):
    """The base of the plain mechanisms: each adds its answers' shape (options or a range)."""

    name: ClassVar[str] = PLAIN_NAME
    randomized: ClassVar[bool] = False
    browser_script: ClassVar[str | None] = None
    respondent_name: ClassVar[Text] = lazy_gettext("Not randomized")
    researcher_name: ClassVar[Text] = lazy_gettext("not randomized")
    auto_score: ClassVar[float] = 0.0

    @property
    def epsilon(self) -> float:
        return math.inf

    def central_counting(self) -> None:
        """None: nothing is randomized, so the sensitive questions' release leaves it out."""
        return None

    def export_encoding(self, key: str, options: Sequence[str]) -> str:
        return "the answer as given (not randomized)"

    def description(self) -> Text:
        return DESCRIPTION
