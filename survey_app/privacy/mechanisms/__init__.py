"""The registry: every mechanism the app ships, one module each.

A new mechanism is a module here (its class satisfying ``interface.Mechanism``), its line
in ``MECHANISMS``, its browser module under ``survey_app/static/`` and its tests and audit
case: DESIGN.md, "Adding a mechanism". The order matters twice: ``auto`` breaks a tie for
the earlier mechanism, and a survey file's mechanism names are listed in it.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..question_types import QuestionType
from .discrete_laplace import DiscreteLaplace, noise_reach
from .duchi import DuchiBinary
from .grr import GeneralizedRandomizedResponse
from .interface import Mechanism, NumericMechanism, ProportionMechanism, ScaleMechanism
from .oue import OptimizedUnaryEncoding
from .piecewise import DiscretePiecewise
from .plain_choice import PlainChoice
from .plain_number import PlainNumber
from .sampled_option import SampledOption
from .subset_selection import SubsetSelection
from .two_coin import FAIR_COINS, MECHANISM_NAME, TwoCoinDesign

MECHANISMS: tuple[type[Mechanism], ...] = (
    TwoCoinDesign,
    GeneralizedRandomizedResponse,
    OptimizedUnaryEncoding,
    SubsetSelection,
    DiscreteLaplace,
    DuchiBinary,
    DiscretePiecewise,
    SampledOption,
    PlainChoice,
    PlainNumber,
)
#: Mechanisms built and tested in the privacy library but not yet known to the rest of the
#: app (the forms, storage's SQL, the browser, the builder, the audit, the catalogs): no
#: survey gets one. ``auto`` weighs them only when asked (``include_unwired``), after the
#: registered ones, so that their accuracy can be compared before they are offered. Wiring
#: one in moves it into ``MECHANISMS``, where ``tests/app/test_mechanism_modules.py``
#: then asks for the rest of "Adding a mechanism".
UNWIRED: tuple[type[Mechanism], ...] = ()
#: Every stored mechanism name, in registry order, each once.
MECHANISM_NAMES = tuple(dict.fromkeys(mechanism.name for mechanism in MECHANISMS))
#: What a survey file writes to let the app pick the more accurate mechanism.
AUTO = "auto"


def file_names(kind: QuestionType, *, include_unwired: bool = False) -> tuple[str, ...]:
    """The ``mechanism`` values a survey file may give a sensitive question of ``kind``:
    ``auto``, then the name of each of its randomized mechanisms that can be asked for
    (and of the ``UNWIRED`` ones too, if asked)."""
    mechanisms = randomized(kind, include_unwired=include_unwired)
    return (AUTO, *(m.file_name for m in mechanisms if m.file_name is not None))


def randomized(kind: QuestionType, *, include_unwired: bool = False) -> tuple[type[Mechanism], ...]:
    """The randomized mechanisms for a question of ``kind`` (those of its
    ``mechanism_kind``: a scale's are a choice's), in registry order (then the ``UNWIRED``
    ones, if asked)."""
    known = MECHANISMS + UNWIRED if include_unwired else MECHANISMS
    return tuple(m for m in known if m.question_type is kind.mechanism_kind and m.randomized)


def plain(kind: QuestionType) -> type[Mechanism]:
    """The mechanism of a plain question of ``kind`` (of its ``mechanism_kind``): stored as
    given."""
    return next(
        m for m in MECHANISMS if m.question_type is kind.mechanism_kind and not m.randomized
    )


def mechanism_from_parameters(parameters: Mapping[str, object]) -> Mechanism:
    """The mechanism a stored ``parameters()`` dict describes.

    Mechanisms that share a stored name (the plain ones, "none") are told apart by their
    parameters: a plain choice carries ``k``, a plain number ``min`` and ``max``.
    """
    name = parameters.get("mechanism")
    named = [mechanism for mechanism in MECHANISMS if mechanism.name == name]
    if not named:
        raise ValueError(f"unknown mechanism {name!r}; known: {', '.join(MECHANISM_NAMES)}")
    for mechanism in named:
        if mechanism.describes(parameters):
            return mechanism.from_parameters(parameters)
    raise ValueError(f"parameters of mechanism {name!r} need 'k' or 'min' and 'max'")


__all__ = [
    "AUTO",
    "FAIR_COINS",
    "MECHANISMS",
    "MECHANISM_NAME",
    "MECHANISM_NAMES",
    "DiscreteLaplace",
    "DiscretePiecewise",
    "DuchiBinary",
    "GeneralizedRandomizedResponse",
    "Mechanism",
    "NumericMechanism",
    "OptimizedUnaryEncoding",
    "PlainChoice",
    "PlainNumber",
    "ProportionMechanism",
    "ScaleMechanism",
    "SampledOption",
    "SubsetSelection",
    "TwoCoinDesign",
    "UNWIRED",
    "file_names",
    "mechanism_from_parameters",
    "noise_reach",
    "plain",
    "randomized",
]
