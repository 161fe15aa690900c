"""The per-response data for SPSS and Stata: ``responses.sav`` and ``responses.dta``.

For the owner and the researchers a survey is shared with, like the dashboard's other
downloads (``access.visible_survey``). The file is built before the response starts, from
the request's own connection, and streams from a temporary file already unlinked
(``domain.labelled_exports``).
"""

from __future__ import annotations

from flask import Blueprint, Response

from survey_app import __version__
from survey_app.domain.labelled_exports import FORMATS, labelled_file
from survey_app.web.database_session import get_db
from survey_app.web.research.access import visible_survey

bp = Blueprint("downloads", __name__)


def _labelled_download(slug: str, extension: str) -> Response:
    survey = visible_survey(slug)
    pieces = labelled_file(get_db(), survey, extension, __version__)
    response = Response(pieces, mimetype=FORMATS[extension].mimetype)
    response.headers.set(
        "Content-Disposition", "attachment", filename=f"{slug}-responses.{extension}"
    )
    return response


@bp.get("/surveys/<slug>/responses.sav")
def responses_sav(slug: str) -> Response:
    """The randomized per-response data as an SPSS file, labelled, the design in its
    documents."""
    return _labelled_download(slug, "sav")


@bp.get("/surveys/<slug>/responses.dta")
def responses_dta(slug: str) -> Response:
    """The randomized per-response data as a Stata file, labelled, the design in its
    notes."""
    return _labelled_download(slug, "dta")
