"""Security headers on every response."""

from __future__ import annotations

from flask import Response, request

# No inline script or style anywhere: the randomizing script is a static file, so a
# policy without 'unsafe-inline' holds and injected markup cannot run code.
CONTENT_SECURITY_POLICY = "; ".join(
    [
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self'",
        "img-src 'self' data:",
        "form-action 'self'",
        "frame-ancestors 'none'",
        "base-uri 'none'",
        "object-src 'none'",
    ]
)


def add_security_headers(response: Response) -> Response:
    response.headers.setdefault("Content-Security-Policy", CONTENT_SECURITY_POLICY)
    response.headers.setdefault("X-Content-Type-Options", "nosniff")
    response.headers.setdefault("Referrer-Policy", "no-referrer")
    response.headers.setdefault("X-Frame-Options", "DENY")
    if response.mimetype == "text/html" or _is_research(request.path):
        # Pages can show a respondent's stored answers, and every research response (CSV,
        # JSON, SVG as much as HTML) holds a survey's results: no cache, shared or the
        # browser's own, may keep a copy after the researcher logs out.
        response.headers["Cache-Control"] = "no-store"
    return response


def _is_research(path: str) -> bool:
    return path == "/research" or path.startswith("/research/")
