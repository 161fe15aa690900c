"""Where the checkout is, found from this file rather than from a test's own folder."""

from __future__ import annotations

from pathlib import Path

# The directory holding pyproject.toml: the same wherever a test module sits under tests/.
ROOT = next(p for p in Path(__file__).resolve().parents if (p / "pyproject.toml").is_file())
