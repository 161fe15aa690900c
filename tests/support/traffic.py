"""Everything a Chromium page exchanged with the server, and a search of it, the server's
logs and its database for a marker: a participant id or a true answer that must go nowhere."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.support.browser import LiveServer


class Traffic:
    """Every request a page made and every response it got, read once the page is done."""

    def __init__(self, page: Any) -> None:
        self.requests: list[Any] = []
        self.responses: list[Any] = []
        page.on("request", lambda request: self.requests.append(request))
        page.on("response", lambda response: self.responses.append(response))

    def texts(self, bodies: bool = True) -> list[str]:
        """Addresses, headers and bodies after the first request (the link the page was
        opened with, which a panel made); ``bodies`` False leaves out what was posted."""
        seen = []
        for request in self.requests[1:]:
            seen += [request.url, str(request.all_headers())]
            seen.append(request.post_data or "" if bodies else "")
        for response in self.responses:
            seen += [response.url if response.request is not self.requests[0] else ""]
            seen.append(str(response.all_headers()))
            seen.append(_body(response))
        return seen


def _body(response: Any) -> str:
    try:
        return response.body().decode("utf-8", "replace")
    except Exception:  # a redirect or an aborted request has none  # noqa: BLE001
        return ""


def assert_marker_nowhere(
    server: LiveServer, traffic: Traffic, marker: str, slug: str, posted: bool = True
) -> None:
    """``marker`` is in none of ``traffic`` (nor what was posted, unless ``posted`` is
    False: a true answer without JavaScript goes to the server), neither of gunicorn's
    logs (whose access log shows ``slug``'s page was logged), nor the database or its WAL."""
    for text in traffic.texts(bodies=posted):
        assert marker not in text, text[:500]
    access_log = server.workdir / "access.log"
    assert f"/s/{slug}" in access_log.read_text()
    for log in (access_log, server.workdir / "gunicorn.log"):
        assert marker not in log.read_text(errors="replace"), log
    for suffix in ("", "-wal"):
        stored = Path(f"{server.db_path}{suffix}")
        if stored.exists():
            assert marker.encode() not in stored.read_bytes(), stored
