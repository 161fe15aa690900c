"""A Flask app that collects survey answers under local differential privacy."""

# ruff: noqa: E402 (the thread settings below must come before any import of NumPy)

from __future__ import annotations

import os

# Before NumPy loads its BLAS: one thread per process. The app's matrices are small (a
# regression over a few thousand covariate patterns) and gunicorn already runs a worker per
# core, so BLAS threads only contend: a million-response fit took 3.75 s with the default
# threads and 0.54 s with one on a busy two-core server (benchmarks/REGRESSION.md). An
# operator's own setting wins.
for _variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")

from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import TYPE_CHECKING, Any

try:
    __version__ = version("survey-app")
except PackageNotFoundError:  # running from a checkout that was never installed
    __version__ = "0.0.0+unknown"

#: The package's folder: templates, static files, translations and the example surveys.
PACKAGE_DIR = Path(__file__).resolve().parent

if TYPE_CHECKING:
    from survey_app.web.app import create_app


def __getattr__(name: str) -> Any:
    """``survey_app.create_app`` (gunicorn's ``"survey_app:create_app()"``), loaded on first
    use: ``import survey_app.privacy`` alone loads no Flask and no database code."""
    if name == "create_app":
        from survey_app.web.app import create_app

        return create_app
    raise AttributeError(f"module 'survey_app' has no attribute {name!r}")


__all__ = ["PACKAGE_DIR", "__version__", "create_app"]
