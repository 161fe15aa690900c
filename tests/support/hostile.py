"""Settings and sizes for the property-based hostile tests (test_hostile_*.py)."""

from __future__ import annotations

from typing import Any

MAX_BODY = 64 * 1024  # the default SURVEY_APP_MAX_CONTENT_LENGTH
HUGE = MAX_BODY + 5000  # comfortably over the limit whatever the encoding


def hostile(max_examples: int) -> Any:
    """Hypothesis settings for the property-based tests.

    Function-scoped fixtures are not reset between examples: each test resets what it
    needs by hand (``stored.reset_responses()``), so that health check is off.
    """
    from hypothesis import HealthCheck, settings

    return settings(
        max_examples=max_examples,
        deadline=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    )
