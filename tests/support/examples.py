"""The example surveys the tests run against, and a survey open by invitation only."""

from __future__ import annotations

from .paths import ROOT

EXAMPLE = ROOT / "examples" / "campus-health.yaml"
SLUG = "campus-health"
KEYS = ("cheated", "drugs", "skipped_meals")

MIXED = ROOT / "examples" / "mixed-survey.yaml"
MIXED_SLUG = "student-life"

# A survey answerable only through single-use invitation links.
INVITE_ONLY = """\
slug: staff-pulse
title: Staff pulse
access: invitation
questions:
  - key: burnout
    text: Have you felt burnt out this month?
"""
