"""Page and /metrics reads under CONSOLE_STATEMENT_TIMEOUT_MS (design §16): a page whose statement
waits on a lock another connection holds answers 503 naming the timeout, in the reader's language,
at once rather than when the lock goes; the worker's connection is fine for the next request; what
writes or feeds a write (repairs, callbacks) waits as before."""

import threading
import time

import psycopg
import pytest
from django.db import connection

from console.database.timeouts import is_bounded

# Another connection's lock must be seen by the server's sessions: rows are committed.
pytestmark = pytest.mark.usefixtures("committed_db")

TIMEOUT_MS = 300


@pytest.mark.parametrize("method,path,bounded", [
    ("GET", "/paused/", True),
    ("HEAD", "/workflow/12/", True),
    ("GET", "/metrics", True),
    ("GET", "/map/", True),
    ("POST", "/notes/workflow/12/", False),  # a write
    ("GET", "/repair/workflow/12/release-lock/preview", False),  # a repair's preview and freshness guard
    ("GET", "/repair/audit/", False),
    ("POST", "/api/wcs/job-finish", False),  # callbacks
    ("GET", "/health/ready", False),  # the probe has its own budget
    ("GET", "/static/console/console.css", False),
])
def test_which_requests_are_bound(method, path, bounded):
    assert is_bounded(method, path) is bounded


def _hold(table: str):
    """A second session holding `table` exclusively: every read of it waits."""
    s = connection.settings_dict
    holder = psycopg.connect(dbname=s["NAME"], user=s["USER"] or None, host=s["HOST"] or None,
                             port=s["PORT"] or None, password=s["PASSWORD"] or None)
    holder.execute(f"LOCK TABLE {table} IN ACCESS EXCLUSIVE MODE")
    return holder


def test_a_page_that_waits_too_long_answers_503_naming_the_timeout(supervisor_client, settings):
    settings.CONSOLE_STATEMENT_TIMEOUT_MS = TIMEOUT_MS
    assert supervisor_client.get("/paused/").status_code == 200
    holder = _hold("alg.tidy_workflow")
    try:
        started = time.monotonic()
        answer = supervisor_client.get("/paused/")
        took = time.monotonic() - started
        text = answer.content.decode()
        assert answer.status_code == 503, text[:500]
        assert took < 3, took  # the timeout, not the lock, ended it
        assert "CONSOLE_STATEMENT_TIMEOUT_MS" in text and "300 ms" in text and "The database is slow" in text
        assert answer["Retry-After"] == "30"

        chinese = supervisor_client.get("/paused/", HTTP_ACCEPT_LANGUAGE="zh-hans")
        text = chinese.content.decode()
        assert chinese.status_code == 503
        assert "数据库响应缓慢" in text and "300 毫秒" in text and "CONSOLE_STATEMENT_TIMEOUT_MS" in text

        fragment = supervisor_client.get("/paused/", HTTP_HX_REQUEST="true")  # a live refresh too
        assert fragment.status_code == 503
    finally:
        holder.close()
    # The request's transaction was rolled back: the same worker answers the next page.
    assert supervisor_client.get("/paused/").status_code == 200


def test_a_scrape_that_waits_too_long_answers_503_naming_the_timeout(client, settings):
    settings.CONSOLE_STATEMENT_TIMEOUT_MS = TIMEOUT_MS
    settings.METRICS_TOKEN = "statement-timeout-test-token"  # /metrics is closed without one on a configured database
    bearer = {"HTTP_AUTHORIZATION": f"Bearer {settings.METRICS_TOKEN}"}
    assert client.get("/metrics", **bearer).status_code == 200
    holder = _hold("alg.tidy_workflow")
    try:
        answer = client.get("/metrics", **bearer)
    finally:
        holder.close()
    assert answer.status_code == 503
    assert answer["Content-Type"].startswith("text/plain")
    assert "CONSOLE_STATEMENT_TIMEOUT_MS (300 ms)" in answer.content.decode()
    assert client.get("/metrics", **bearer).status_code == 200


def test_a_repair_page_is_not_bound_and_waits_for_the_lock(supervisor_client, settings):
    settings.CONSOLE_STATEMENT_TIMEOUT_MS = TIMEOUT_MS
    holder = _hold("console_repairaudit")
    threading.Timer(1.0, holder.close).start()
    started = time.monotonic()
    answer = supervisor_client.get("/repair/audit/")
    assert answer.status_code == 200
    assert time.monotonic() - started >= 0.9  # it waited for the lock instead of giving up at 300 ms


def test_the_timeout_lasts_only_for_the_request_s_transaction(supervisor_client, settings):
    settings.CONSOLE_STATEMENT_TIMEOUT_MS = TIMEOUT_MS
    assert supervisor_client.get("/paused/").status_code == 200
    with connection.cursor() as cursor:
        cursor.execute("SHOW statement_timeout")
        assert cursor.fetchone()[0] == "0"  # SET LOCAL: nothing left on the session for what comes next
