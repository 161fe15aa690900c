"""The floor for load_test.py's ratio: the same three pages from trivial Flask views.

No database, no session, no CSRF, no templates: what gunicorn, Flask and the Python
client cost on this machine before the app does any work of its own. Its responses/s ÷
healthz/s is the highest ratio any Flask app could reach here (its correctness checks
fail by design: nothing is stored).

    .venv/bin/python benchmarks/load_test.py --app "benchmarks.floor_app:create_app()" \\
        --min-ratio 0 --no-results
"""

from __future__ import annotations

import secrets

from flask import Flask, request

KEYS = ("cheated", "drugs", "skipped_meals")  # the example survey's questions
FORM = (
    '<form method="post"><input type="hidden" name="csrf_token" value="-">'
    '<input type="hidden" name="submission_id" value="{submission_id}">'
    + "".join(f'<input type="radio" name="{key}" value="y">' for key in KEYS)
    + "</form>"
)


def create_app() -> Flask:
    app = Flask(__name__)

    @app.get("/healthz")
    def healthz() -> str:
        return "ok"

    @app.get("/s/<slug>")
    def survey_form(slug: str) -> str:
        return FORM.format(submission_id=secrets.token_urlsafe(16))

    @app.post("/s/<slug>")
    def submit(slug: str) -> str:
        shown = {"y": "yes", "n": "no"}
        return "".join(
            f'<td data-key="{key}"><span class="shown">{shown.get(request.form[key])}</span></td>'
            for key in KEYS
        )

    return app
