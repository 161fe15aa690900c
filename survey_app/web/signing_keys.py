"""The keys the app signs with, in the order every signed value is checked against them."""

from __future__ import annotations

from flask import current_app


def signing_keys() -> list[bytes]:
    """Earlier secret keys first (``SECRET_KEY_FALLBACKS``), the current one last (Flask's
    order): a form, cookie or ticket signed before a key rotation still verifies, and new
    ones are signed with the last."""
    keys = [*(current_app.config.get("SECRET_KEY_FALLBACKS") or []), current_app.secret_key]
    return [key.encode() if isinstance(key, str) else bytes(key or b"") for key in keys]
