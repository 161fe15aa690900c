"""The burst monitor on two app servers sharing one database: each counts what it served.

Issue 21 lists the burst monitor among the state that should hold across nodes. It stays
per node, by decision (docs/deploying-several-servers.md, "The burst monitor"): sharing
per-minute counts means writing them where every node reads them, and a count per minute
beside the responses' increasing ids (or a commit in the write-ahead log at the minute of
a burst) would date responses, which privacy invariant 6 forbids. These tests pin down
what that means for a researcher behind a load balancer: two apps on one database, each
with its own monitor (as two servers have), on one clock the test moves.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from flask import Flask

from survey_app.storage.surveys import get_survey
from survey_app.web.bursts import (
    EXTENSION_KEY,
    MIN_BURST,
    WITHOUT_HISTORY,
    Burst,
    BurstMonitor,
    burst_monitor,
)
from survey_app.web.database_session import get_db
from tests.conftest import make_app
from tests.support.examples import SLUG
from tests.support.respondents import answers, fresh_form

pytestmark = pytest.mark.slow
HISTORY_MINUTES = 30


class Clock:
    """Both nodes' clock (servers keep time alike), moved by the test."""

    def __init__(self) -> None:
        self.now = 1_700_000_000.0

    def __call__(self) -> float:
        return self.now


Nodes = tuple[Flask, Flask]


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def nodes(app: Flask, clock: Clock) -> Nodes:
    """Two apps on one database and one secret key, each with the monitor its own
    process would have."""
    second = make_app(app.config["DATABASE"])
    for node in (app, second):
        node.extensions[EXTENSION_KEY] = BurstMonitor(clock=clock)
    return app, second


def respond(node: Flask) -> None:
    browser = node.test_client()
    assert browser.post(f"/s/{SLUG}", data={**fresh_form(browser), **answers()}).status_code == 200


def round_robin(nodes: Nodes) -> Callable[[int], Flask]:
    """A balancer spreading requests evenly: the response's number picks its node."""
    return lambda number: nodes[number % len(nodes)]


def usual_traffic(nodes: Nodes, clock: Clock) -> None:
    """Half an hour of two responses a minute, one through each node."""
    for _minute in range(HISTORY_MINUTES):
        for node in nodes:
            respond(node)
        clock.now += 60


def largest(node: Flask) -> Burst | None:
    with node.app_context():
        survey = get_survey(get_db(), SLUG)
        assert survey is not None
        return burst_monitor(node).largest_burst(survey.id)


def test_a_burst_spread_over_two_nodes_shows_on_each_at_its_share(
    nodes: Nodes, clock: Clock
) -> None:
    usual_traffic(nodes, clock)
    pick = round_robin(nodes)
    for number in range(2 * MIN_BURST):  # a script, in one minute, through the balancer
        respond(pick(number))
    # Each node saw half of the burst against half of the usual rate: the ratio holds.
    assert [largest(node) for node in nodes] == [Burst(MIN_BURST, 1.0)] * 2


def test_a_burst_pinned_to_one_node_shows_there_at_full_size_and_not_on_the_other(
    nodes: Nodes, clock: Clock
) -> None:
    usual_traffic(nodes, clock)
    for _ in range(2 * MIN_BURST):  # a balancer keeping one address on one node
        respond(nodes[0])
    assert [largest(node) for node in nodes] == [Burst(2 * MIN_BURST, 1.0), None]


def test_without_a_usual_rate_the_fixed_threshold_applies_per_node(
    nodes: Nodes, clock: Clock
) -> None:
    """A survey with no response in the day before is flagged at ``WITHOUT_HISTORY`` in a
    minute, counted on each node: spread evenly over two, a burst must be twice that size
    to show (the guide says so)."""
    pick = round_robin(nodes)
    for number in range(2 * WITHOUT_HISTORY - 2):
        respond(pick(number))
    assert [largest(node) for node in nodes] == [None, None]
    respond(pick(0))
    respond(pick(1))
    assert [largest(node) for node in nodes] == [Burst(WITHOUT_HISTORY, 0.0)] * 2
