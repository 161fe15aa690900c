"""A server that starts while its PostgreSQL database does not answer: it starts all the
same, answers 503 (with a Retry-After), and serves as soon as the database answers, with
no restart, doing the start's retention check before its first request then."""

from __future__ import annotations

from psycopg.conninfo import conninfo_to_dict

from survey_app.storage import backends
from tests.conftest import make_app
from tests.support.examples import SLUG
from tests.support.postgresql import Cluster


def test_a_server_started_without_its_database_serves_once_it_answers(
    postgresql_cluster: Cluster, example_postgresql: str
) -> None:
    ready = postgresql_cluster.copy_database(example_postgresql)
    db = backends.connect(ready)
    db.execute("UPDATE surveys SET retain_until = '2000-01-01' WHERE slug = ?", [SLUG])
    db.conn.close()
    later = f"later_{conninfo_to_dict(ready)['dbname']}"
    app = make_app(postgresql_cluster.url(later))  # no such database yet
    client = app.test_client()

    refused = client.get("/healthz")
    assert refused.status_code == 503
    assert refused.headers["Retry-After"] == "5"
    assert "Traceback" not in refused.get_data(as_text=True)

    postgresql_cluster.rename_database(ready, later)  # the database comes back
    assert client.get("/healthz").status_code == 200
    db = backends.connect(postgresql_cluster.url(later))
    destroyed = db.execute("SELECT destroyed_on FROM surveys WHERE slug = ?", [SLUG]).fetchone()
    assert destroyed[0] is not None  # the retention check ran before that first request
