"""The ``survey-app`` command group. Commands stay thin: the work is in library modules.

The commands are registered on ``app.cli``, so ``flask --app survey_app`` offers them too;
``survey-app`` is that same group with the app preloaded and our own ``run``.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any, TextIO

import click
from flask import Flask, current_app
from flask.cli import FlaskGroup, with_appcontext
from werkzeug.serving import make_server

from survey_app import __version__
from survey_app.cli.audit import audit_command
from survey_app.cli.releases import COMMANDS as RELEASE_COMMANDS
from survey_app.config import SettingError, command_line_base
from survey_app.domain.definitions import load_definition
from survey_app.domain.exports import aggregate_csv, codebook, responses_csv
from survey_app.domain.labelled_exports import labelled_file
from survey_app.domain.question_estimates import survey_estimates
from survey_app.domain.question_privacy import (
    LedgerEntry,
    epsilon_text,
    odds_text,
    shown_epsilon,
    survey_ledger,
)
from survey_app.domain.survey_model import SurveyDefinitionError
from survey_app.privacy import DEFAULT_INTERVAL_METHOD, INTERVAL_METHODS
from survey_app.storage import postgresql_backup
from survey_app.storage.accounts import (
    AccountError,
    check_new_username,
    create_researcher,
    find_researcher,
)
from survey_app.storage.backends import describe_setting, is_postgresql, migrate, stream_rows
from survey_app.storage.database import backup_database, create_owner_only_file
from survey_app.storage.destruction import (
    Erasure,
    Removal,
    delete_survey,
    destroy_expired,
    expired_surveys,
    survey_holdings,
)
from survey_app.storage.events import COMMAND_LINE
from survey_app.storage.invitations import FEW_LINKS, create_invitations
from survey_app.storage.joint_tallies import rebuild as rebuild_joint_tallies
from survey_app.storage.postgresql import DatabaseUnavailableError
from survey_app.storage.studies import default_owner_id
from survey_app.storage.surveys import (
    Survey,
    SurveyDestroyedError,
    SurveyExistsError,
    count_surveys,
    get_survey,
    set_status,
    share_survey,
    store_survey,
    survey_response_count,
)
from survey_app.storage.tallies import recount
from survey_app.web.database_session import get_db
from survey_app.web.research.studies import typed_slug_matches

EXAMPLE_SURVEY = "campus-health.yaml"


def _survey_or_fail(slug: str) -> Survey:
    survey = get_survey(get_db(), slug)
    if survey is None:
        raise click.ClickException(f"no survey with slug {slug!r}")
    return survey


def _write_lines(lines: Iterable[str], output: TextIO) -> None:
    for line in lines:
        output.write(line)


def _open_owner_only(path: str, *, new: bool) -> TextIO:
    """A text file for writing, created readable by its owner only (0600).

    ``new``: refuse a file that already exists (links and backups are never overwritten).
    Errors are the command's: a clear message and exit status 1.
    """
    flags = os.O_WRONLY | os.O_CREAT | (os.O_EXCL if new else os.O_TRUNC)
    try:
        descriptor = os.open(path, flags, 0o600)
    except FileExistsError as err:
        raise click.ClickException(f"{path} exists; choose a new file name") from err
    except OSError as err:
        raise click.ClickException(f"cannot write {path}: {err.strerror}") from err
    return os.fdopen(descriptor, "w", newline="", encoding="utf-8")


@click.command("init-db")
@with_appcontext
def init_db_command() -> None:
    """Create the database, or migrate it to the current schema. Safe to repeat."""
    version = migrate(get_db())
    click.echo(
        f"Database ready: {describe_setting(current_app.config['DATABASE'])} "
        f"(schema version {version})."
    )


def _researcher_id_or_fail(username: str) -> int:
    researcher = find_researcher(get_db(), username)
    if researcher is None:
        raise click.ClickException(f"no researcher named {username!r}")
    return researcher.id


@click.command("import-survey")
@click.argument("file", type=click.Path(dir_okay=False))
@click.option(
    "--owner",
    help="Researcher who owns it (only they, and those it is shared with, see it). "
    "Default: the first administrator.",
)
@click.option(
    "--draft", is_flag=True, help="Import closed to answers until `survey-app open SLUG`."
)
@click.option("--listed", is_flag=True, help="List it on the front page while it is open.")
@with_appcontext
def import_survey_command(file: str, owner: str | None, draft: bool, listed: bool) -> None:
    """Create a survey from a YAML or JSON definition FILE and print its slug.

    Without --owner it belongs to the first administrator; before any account exists, to
    the first account created.
    """
    owner_id = _researcher_id_or_fail(owner) if owner else default_owner_id(get_db())
    status = "draft" if draft else "open"
    try:
        definition = load_definition(file)
        survey = store_survey(get_db(), definition, owner_id, status, listed=listed)
    except (SurveyDefinitionError, SurveyExistsError) as err:
        raise click.ClickException(str(err)) from err
    click.echo(survey.slug)


def _status_command(name: str, status: str, help_text: str) -> click.Command:
    @click.command(name, help=help_text)
    @click.argument("slug")
    @with_appcontext
    def command(slug: str) -> None:
        try:
            set_status(get_db(), _survey_or_fail(slug), status)
        except SurveyDestroyedError as err:
            raise click.ClickException(f"{err}: it stays closed") from err
        click.echo(f"{slug} is now {status}.")

    return command


@click.command("share")
@click.argument("slug")
@click.argument("username")
@with_appcontext
def share_command(slug: str, username: str) -> None:
    """Let researcher USERNAME view the results of survey SLUG."""
    share_survey(get_db(), _survey_or_fail(slug), _researcher_id_or_fail(username))
    click.echo(f"{username} can now view {slug}.")


@click.command("invite")
@click.argument("slug")
@click.option("--count", required=True, type=click.IntRange(1, 1_000_000), help="How many links.")
@click.option("-o", "--output", type=click.Path(dir_okay=False, writable=True), help="File.")
@with_appcontext
def invite_command(slug: str, count: int, output: str | None) -> None:
    """Write COUNT single-use invitation links for survey SLUG, one per line.

    Only hashes of the links are stored: keep the file, it cannot be made again. The
    survey must have `access: invitation` in its definition file.
    """
    survey = _survey_or_fail(slug)
    if not survey.by_invitation:
        raise click.ClickException(
            f"{slug} is open to anyone with its address; invitations need `access: invitation`"
        )
    base = command_line_base(current_app.config["BASE_URL"])
    # The file is created before any invitation is: a file that cannot be written must
    # not leave the database holding invitations whose links nobody has.
    handle = sys.stdout if output is None else _open_owner_only(output, new=True)
    try:
        tokens = create_invitations(get_db(), survey, count)
        _write_lines((f"{base}/s/{slug}?invitation={token}\n" for token in tokens), handle)
    finally:
        if output is not None:
            handle.close()
    if output is not None:
        click.echo(f"Wrote {count} links to {output}", err=True)
    if count < FEW_LINKS:
        click.echo(
            f"warning: only {count} links. A link is used up when its respondent starts and "
            "the answers are stored when they send them; whoever can read the database's "
            "write-ahead log (a replica, an archive, a PostgreSQL server's logs) sees both "
            f"moments, so timing can tie a response to its link. Send links to at least "
            f"{FEW_LINKS} people at a time.",
            err=True,
        )


@click.command("backup")
@click.argument("file", type=click.Path(dir_okay=False, writable=True))
@with_appcontext
def backup_command(file: str) -> None:
    """Copy the database to FILE, safe while serving: SQLite's online backup of a file,
    or pg_dump's custom format of a PostgreSQL database (restored with pg_restore)."""
    # Created here, readable by its owner only: a backup holds password hashes.
    try:
        create_owner_only_file(file)
    except FileExistsError as err:
        raise click.ClickException(f"{file} exists; choose a new file name") from err
    except OSError as err:
        raise click.ClickException(f"cannot write {file}: {err.strerror}") from err
    setting = current_app.config["DATABASE"]
    if is_postgresql(setting):
        _dump_postgresql(setting, file)
        return
    with click.progressbar(length=100, label="Backing up", file=sys.stderr) as bar:
        pages = backup_database(setting, file, bar.update)
    click.echo(f"Backed up {pages} pages to {file}; integrity check ok.")


def _dump_postgresql(url: str, file: str) -> None:
    """pg_dump into the owner-only FILE; a failed dump leaves no file behind."""
    try:
        postgresql_backup.dump(url, file)
    except postgresql_backup.BackupError as err:
        Path(file).unlink(missing_ok=True)
        raise click.ClickException(f"backup failed: {err}") from err
    click.echo(
        f"Dumped the PostgreSQL database to {file} (pg_dump's custom format). Restore it "
        f"with: pg_restore --clean --if-exists --no-owner --single-transaction --exit-on-error "
        f"--dbname=ADDRESS {file}"
    )


@click.command("delete-survey")
@click.argument("slug")
@click.option("--yes", is_flag=True, help="Delete without asking to type the slug (scripts).")
@with_appcontext
def delete_survey_command(slug: str, yes: bool) -> None:
    """Delete survey SLUG with everything it holds, for good.

    Its responses, counts, invitation links, releases and sharing go, from the database
    file and its WAL; the deletion is recorded (who, when, slug and title). Backups made
    before keep their copies: see docs/data-retention.md.
    """
    db = get_db()
    survey = _survey_or_fail(slug)
    if not yes:
        held = survey_holdings(db, survey)
        click.echo(
            f"This deletes {slug} ({survey.title}) for good: {held.responses} responses, "
            f"{held.invitations} invitation links, {held.releases} public releases. "
            "Backups made before keep their copies.",
            err=True,
        )
        typed = click.prompt("Type the survey's slug to delete it", default="", err=True)
        if not typed_slug_matches(survey, typed):
            raise click.ClickException("that is not the survey's slug; nothing was deleted")
    _report_removal(delete_survey(db, survey, COMMAND_LINE), "deleted, with")


@click.command("destroy-expired")
@click.option("--dry-run", is_flag=True, help="Only list what would be destroyed.")
@with_appcontext
def destroy_expired_command(dry_run: bool) -> None:
    """Destroy the answers of every survey past its retention date (run it daily, by cron).

    A survey whose retention date has passed (in UTC) loses its responses, counts, saved
    analyses' counts and invitation links, and, unless its owner chose to keep them, its
    public releases; it is closed for good and the destruction recorded. The server also
    does this when it starts.
    """
    db = get_db()
    due = expired_surveys(db)
    if not due:
        click.echo("No survey is past its retention date.")
    elif dry_run:
        for survey in due:
            responses = survey_response_count(db, survey)
            click.echo(
                f"{survey.slug}: kept until {survey.retain_until}; would destroy "
                f"{responses} responses"
            )
    else:
        for removal in destroy_expired(db):
            _report_removal(removal, "answers destroyed:")


def _report_removal(removal: Removal, done: str) -> None:
    click.echo(f"{removal.slug}: {done} {removal.responses} responses.")
    if removal.erasure is Erasure.LOG_BUSY:
        click.echo(
            "warning: the database was busy, so copies of the removed pages stay in its "
            "write-ahead log until a later checkpoint empties it (at the latest when every "
            "connection closes, as when the server stops).",
            err=True,
        )
    elif removal.erasure is Erasure.VACUUMED:
        click.echo(
            "note: the tables were vacuumed, so PostgreSQL keeps no old version of the "
            "removed rows in them, though their bytes may stay in the tables' free space "
            "until it is reused (VACUUM FULL rewrites the files); copies remain in its "
            "write-ahead log archives, replicas and backups for as long as they are kept "
            "(docs/data-retention.md).",
            err=True,
        )


@click.command("export")
@click.argument("slug")
@click.option(
    "--responses", is_flag=True, help="The randomized per-response CSV instead of the aggregate."
)
@click.option("-o", "--output", type=click.Path(dir_okay=False, writable=True), help="File.")
@click.option(
    "--confidence",
    default=0.95,
    show_default=True,
    type=click.Choice(["0.9", "0.95", "0.99"]),
    callback=lambda _ctx, _param, value: float(value),
)
@click.option(
    "--method",
    default=DEFAULT_INTERVAL_METHOD,
    show_default=True,
    type=click.Choice(INTERVAL_METHODS),
)
@click.option(
    "--format",
    "file_format",
    default="csv",
    show_default=True,
    type=click.Choice(["csv", "sav", "dta"]),
    help="sav (SPSS) or dta (Stata): the per-response data, labelled, with the design in "
    "the file's notes (needs -o).",
)
@with_appcontext
def export_command(
    slug: str,
    responses: bool,
    output: str | None,
    confidence: float,
    method: str,
    file_format: str,
) -> None:
    """Write a survey's CSV export to standard output or a file.

    With -o FILE, the codebook (design, ε, estimator, interval, app version, export
    time) is written next to it: FILE with its extension replaced by .codebook.json
    (responses.csv: responses.codebook.json). An SPSS or Stata file holds its design.
    """
    survey = _survey_or_fail(slug)
    db = get_db()
    if file_format != "csv":
        if output is None:
            raise click.UsageError("--format sav or dta writes a binary file: give -o FILE.")
        with _open_owner_only(output, new=False) as handle:
            handle.buffer.writelines(labelled_file(db, survey, file_format, __version__))
        click.echo(f"Wrote {output}", err=True)
        return
    if responses:  # on a connection of its own, streamed: millions of rows, flat memory
        lines = stream_rows(current_app.config["DATABASE"], lambda own: responses_csv(own, survey))
    else:
        lines = aggregate_csv(survey, survey_estimates(db, survey, confidence, method))
    if output is None:
        _write_lines(lines, sys.stdout)
        return
    with _open_owner_only(output, new=False) as handle:
        _write_lines(lines, handle)
    kind = "responses" if responses else "aggregate"
    book_path = Path(output).with_suffix(".codebook.json")
    book = codebook(survey, kind, confidence, method, __version__)
    with _open_owner_only(str(book_path), new=False) as handle:
        handle.write(json.dumps(book, indent=2) + "\n")
    click.echo(f"Wrote {output} and {book_path}", err=True)


@click.command("recount")
@click.argument("slug")
@with_appcontext
def recount_command(slug: str) -> None:
    """Rebuild a survey's answer counters and kept joint counts from its responses and say
    if they matched (joint counts kept since an upgrade only: rebuilt, not compared)."""
    db, survey = get_db(), _survey_or_fail(slug)
    result = recount(db, survey)
    joint = rebuild_joint_tallies(db, survey)
    for key, before, after in result.differences():
        click.echo(f"{key}: stored {before}, recounted {after}")
    for key, matched in joint.matched.items():
        if matched is None:
            click.echo(f"{key}: joint counts rebuilt (kept from the upgrade on; now complete)")
        elif not matched:
            click.echo(f"{key}: joint counts did not match the responses")
    if result.matched and joint.all_matched:
        click.echo(f"Counters matched the responses ({len(result.after)} questions).")
    else:
        click.echo("Counters did not match; they now equal the recount.")


@click.command("ledger")
@click.argument("slug")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@with_appcontext
def ledger_command(slug: str, as_json: bool) -> None:
    """List every question's mechanism, exact parameters and ε, and the survey's total."""
    survey = _survey_or_fail(slug)
    entries = survey_ledger(survey)
    if as_json:
        click.echo(
            json.dumps(
                {
                    "survey": slug,
                    "design": survey.design,
                    "epsilon_total": survey.epsilon_total,
                    "epsilon_total_at_most": str(shown_epsilon(entries.epsilon_bound)),
                    "questions": [_ledger_row(entry) for entry in entries],
                },
                indent=2,
            )
        )
        return
    for entry in entries:
        epsilon = (
            f"ε = {epsilon_text(entry.epsilon_bound)}" if entry.sensitive else "not randomized"
        )
        click.echo(f"{entry.key}: {entry.mechanism}, {epsilon}")
        parameters = {k: v for k, v in entry.parameters.items() if k != "mechanism"}
        if parameters:
            click.echo(f"    parameters: {json.dumps(parameters, sort_keys=True)}")
        click.echo(f"    {entry.how}")
    limit = f" (limit {survey.max_epsilon})" if survey.max_epsilon else ""
    odds = odds_text(entries.epsilon_bound)
    likely = f"is at most {odds} times" if odds else "may be more than a billion times"
    click.echo(
        f"Total per respondent: ε = {epsilon_text(entries.epsilon_bound)}{limit}, basic "
        f"composition: any stored response {likely} as likely under one set of true answers "
        "as under another."
    )


def _ledger_row(entry: LedgerEntry) -> dict[str, object]:
    """An entry for ``ledger --json``: ε as computed (a float, for machines) and as shown
    to people (rounded up, as exact decimal text), in place of the exact bound."""
    row = {name: value for name, value in entry.__dict__.items() if name != "epsilon_bound"}
    row["epsilon_at_most"] = str(shown_epsilon(entry.epsilon_bound))
    return row


@click.command("create-researcher")
@click.argument("username")
@click.option(
    "--password-stdin", is_flag=True, help="Read the password from standard input (scripts)."
)
@click.option(
    "--admin", is_flag=True, help="Make it an administrator (the first account always is)."
)
@with_appcontext
def create_researcher_command(username: str, password_stdin: bool, admin: bool) -> None:
    """Create a researcher account; asks for the password unless --password-stdin.

    The first account ever created is an administrator and owns every survey nobody owned;
    administrators add the others in the browser, at /research/people.
    """
    try:
        check_new_username(get_db(), username)
        if password_stdin:
            password = sys.stdin.readline().rstrip("\r\n")
        else:
            password = click.prompt("Password", hide_input=True, confirmation_prompt=True)
        researcher = create_researcher(get_db(), username, password, admin=admin)
    except AccountError as err:
        raise click.ClickException(str(err)) from err
    kind = "administrator" if researcher.is_admin else "researcher"
    click.echo(f"Created {kind} {researcher.username!r}; log in at /login.")


def examples_folder() -> Path:
    """The example surveys: inside an installed wheel, else at the top of the checkout."""
    from survey_app import PACKAGE_DIR

    inside = PACKAGE_DIR / "examples"
    return inside if inside.is_dir() else PACKAGE_DIR.parent / "examples"


@click.command("run")
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=5000, show_default=True, type=int)
@with_appcontext
def run_command(host: str, port: int) -> None:
    """Serve the app for trying it out; a fresh database gets the example survey.

    For production use gunicorn (see docs/operating.md): this is Werkzeug's development server.
    """
    db = get_db()
    migrate(db)
    if count_surveys(db) == 0:
        example = load_definition(examples_folder() / EXAMPLE_SURVEY)
        survey = store_survey(db, example, default_owner_id(db), listed=True)
        click.echo(f"Loaded the example survey {survey.slug!r}.")
    for removal in destroy_expired(db):
        _report_removal(removal, "past its retention date, answers destroyed:")
    app = current_app._get_current_object()  # type: ignore[attr-defined]
    # Bind first, so that a busy port is an error before anything claims to be running.
    try:
        server = make_server(host, port, app, threaded=True)
    except OSError as err:
        raise click.ClickException(
            f"cannot serve on {host}:{port}: {err.strerror}; choose another with --port"
        ) from err
    click.echo(f"Survey app running: open http://{host}:{port}/ (Ctrl+C stops it)")
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


COMMANDS = (
    init_db_command,
    import_survey_command,
    _status_command("open", "open", "Open survey SLUG for answers."),
    _status_command("close", "closed", "Close survey SLUG: it refuses further answers."),
    share_command,
    invite_command,
    backup_command,
    delete_survey_command,
    destroy_expired_command,
    export_command,
    recount_command,
    ledger_command,
    *RELEASE_COMMANDS,
    audit_command,
    create_researcher_command,
    run_command,
)


def register_commands(app: Flask) -> None:
    for command in COMMANDS:
        app.cli.add_command(command)


def _create_app() -> Flask:
    """The app for the command line: a setting it cannot start with is a one-line error."""
    from survey_app import create_app

    try:
        # Not the server starting: `destroy-expired --dry-run` must still see what is due.
        return create_app(retention_check=False)
    except SettingError as err:
        raise click.ClickException(str(err)) from err


class _SurveyAppGroup(FlaskGroup):
    """Flask's group, offering only this app's commands.

    Installed Flask extensions add commands of their own through entry points (Flask-Limiter's
    ``limiter``), and Flask adds ``routes`` and ``shell``: none of them is for an operator of
    this app, and ``flask --app survey_app`` still offers them to developers.
    """

    def invoke(self, ctx: click.Context) -> Any:
        """A database that cannot be reached is one line and exit status 1, no traceback."""
        try:
            return super().invoke(ctx)
        except DatabaseUnavailableError as err:
            raise click.ClickException(str(err)) from err

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(command.name for command in COMMANDS if command.name)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name not in self.list_commands(ctx):
            return None
        return super().get_command(ctx, name)


main = _SurveyAppGroup(
    name="survey-app",
    create_app=_create_app,
    add_default_commands=False,
    add_version_option=False,
    load_dotenv=False,
    help="Collect sensitive survey answers under local differential privacy.",
)


if __name__ == "__main__":
    main()
