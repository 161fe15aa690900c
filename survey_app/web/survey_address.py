"""Where a survey is answered: its full address, as the researcher sends it, and its QR code.

The address is built on ``SURVEY_APP_BASE_URL`` when that is set, and otherwise on the
address the researcher is using (a fixed default is right only for a server at that
address: links built on one pointed at the wrong server). The request's
host is safe to echo only to the researcher who sent it; with ``SURVEY_APP_TRUSTED_HOSTS``
set, Flask refuses any other Host before a page is built.
"""

from __future__ import annotations

import segno
from flask import current_app, request, url_for
from markupsafe import Markup


def _configured_base() -> str | None:
    """``SURVEY_APP_BASE_URL`` when it is set (empty by default)."""
    return str(current_app.config["BASE_URL"]).rstrip("/") or None


def _request_base() -> str:
    return request.host_url.rstrip("/")


def public_base() -> str:
    """The base that survey addresses and invitation links are built on, without a slash."""
    return _configured_base() or _request_base()


def differing_base() -> str | None:
    """The configured base when it is not the address the researcher is using: the page
    then warns that its links lead elsewhere (a proxy's address, or a mistake)."""
    configured = _configured_base()
    return configured if configured and configured != _request_base() else None


def survey_address(slug: str) -> str:
    """The full address respondents open to answer the survey."""
    return public_base() + url_for("respond.survey_form", slug=slug)


def address_qr(address: str, title: str) -> Markup:
    """The address as a QR code, an inline SVG that scales (no size, a viewBox), for a
    poster or a slide; ``title`` names it for screen readers."""
    code = segno.make(address, micro=False)
    svg = code.svg_inline(
        scale=1, border=4, omitsize=True, light="#fff", title=title, svgclass="qr"
    )
    return Markup(svg)  # noqa: S704 (segno's own SVG; the title is escaped by segno)
