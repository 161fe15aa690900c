"""Bursts: minutes in which a survey got far more responses than it usually does.

An open survey cannot stop one person from fetching a fresh form again and again (see
docs/writing-surveys.md, "What an open survey can and cannot prevent"); what it can do is show the
researcher that it happened. This module counts each survey's stored responses per
clock minute and flags a minute whose count reaches both ``MIN_BURST`` and ``FACTOR``
times the survey's usual rate: the median count of the minutes that had any response
in the day before it. A survey with no response in that day (new, or this process just
started) has no usual rate yet; then ``WITHOUT_HISTORY`` responses in a minute flag it.

The flag is a warning, not a verdict: a lecture hall answering together looks the same
as a script, and the dashboard says so.

Privacy invariant 6 says a response row holds no time finer than the day, and so
nothing here is ever written to the database: counts per minute next to the rows'
increasing ids would tie each response to its minute. The counts live in this process's
memory only, hold no response and no address, and are forgotten after a day (and on a
restart). The dashboard says a burst happened and how large it was, not when.

With several worker processes each one counts the responses it served, about 1/N of
them each, and the dashboard shows the counts of whichever worker answers it: a burst
spread over the workers shows on each at about 1/N of its size, against a usual rate
also about 1/N, so the ratio that flags it holds (the ``MIN_BURST`` floor applies per
worker).

Several servers on one database are N workers more, and the same holds: a balancer that
spreads requests gives each its share of the burst and of the usual rate; one that pins
an address to a server puts a one-address burst on one worker at full size against that
worker's 1/N usual rate, so it flags there at least as readily. Sharing the counts
would mean writing them where every server reads them, the database, which is what
invariant 6 forbids; so the dashboard shows what the worker serving it saw.
"""

from __future__ import annotations

import statistics
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from flask import Flask

MIN_BURST = 20  # responses in one minute before a minute can count as a burst
FACTOR = 10  # ... and this many times the survey's usual count per active minute
WITHOUT_HISTORY = 100  # the threshold when the survey had no response in the day before
WINDOW_MINUTES = 24 * 60  # how far back the usual rate and the flags reach
EXTENSION_KEY = "survey_app.web.bursts"


@dataclass(frozen=True)
class Burst:
    """A flagged minute: the responses in it, and the survey's usual count before it (the
    median over the minutes with any responses in the day before; 0 for none). Its time is
    deliberately not part of it."""

    count: int
    usual: float


class BurstMonitor:
    """Responses per survey per minute for the last day, in this process's memory."""

    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._minutes: dict[int, dict[int, int]] = {}  # survey id → {minute: responses}
        self._usual: dict[int, tuple[int, float]] = {}  # survey id → (minute, its usual)
        self._bursts: dict[int, dict[int, float]] = {}  # survey id → {minute: usual}

    def record(self, survey_id: int) -> None:
        """Count one stored response (not a retry, not a refused form)."""
        minute = int(self._clock() // 60)
        with self._lock:
            counts = self._minutes.setdefault(survey_id, {})
            if minute not in counts:  # a new minute: a day-old one may be due to go
                self._forget_before(survey_id, minute - WINDOW_MINUTES)
            count = counts[minute] = counts.get(minute, 0) + 1
            if count < MIN_BURST or minute in self._bursts.get(survey_id, {}):
                return
            usual = self._usual_before(survey_id, minute)
            if count >= (FACTOR * max(usual, 1.0) if usual else WITHOUT_HISTORY):
                self._bursts.setdefault(survey_id, {})[minute] = usual

    def bursts(self, survey_id: int) -> list[Burst]:
        """The survey's flagged minutes of the last day, largest first (and not when)."""
        minute = int(self._clock() // 60)
        with self._lock:
            self._forget_before(survey_id, minute - WINDOW_MINUTES)
            counts = self._minutes.get(survey_id, {})
            found = [
                Burst(counts[m], usual) for m, usual in self._bursts.get(survey_id, {}).items()
            ]
        return sorted(found, key=lambda burst: burst.count, reverse=True)

    def largest_burst(self, survey_id: int) -> Burst | None:
        """The day's largest flagged minute for this survey, or None."""
        found = self.bursts(survey_id)
        return found[0] if found else None

    def _usual_before(self, survey_id: int, minute: int) -> float:
        """The median count of the earlier minutes with responses (0 without any), once per
        minute: earlier minutes no longer change."""
        cached = self._usual.get(survey_id)
        if cached is not None and cached[0] == minute:
            return cached[1]
        earlier = [c for m, c in self._minutes[survey_id].items() if m < minute]
        usual = float(statistics.median(earlier)) if earlier else 0.0
        self._usual[survey_id] = (minute, usual)
        return usual

    def _forget_before(self, survey_id: int, oldest: int) -> None:
        for table in (self._minutes.get(survey_id, {}), self._bursts.get(survey_id, {})):
            for stale in [m for m in table if m < oldest]:
                del table[stale]


def burst_monitor(app: Flask) -> BurstMonitor:
    """The app's monitor, made on first use (one per app, so per worker process)."""
    monitor = app.extensions.get(EXTENSION_KEY)
    if monitor is None:  # setdefault: two threads of one worker agree on one monitor
        monitor = app.extensions.setdefault(EXTENSION_KEY, BurstMonitor())
    assert isinstance(monitor, BurstMonitor)
    return monitor
