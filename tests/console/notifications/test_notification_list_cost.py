"""Cost independent of history (design §16): the notifications list counts each state up to a cap
(a LIMITed subquery, "1,000+" beyond it) and lists the newest through an index with a LIMIT, so
its cost does not grow with the notifications ever opened.

Checked on a real history (40,000 resolved notifications, then ANALYZE) and with EXPLAIN on those
row counts, not with enable_seqscan off."""

import pytest
from django.db import connection

from console.models import Notification
from console.notifications import selectors
from console.notifications import sql as notifications_sql
from tests.console.analytics.test_history_indexes import MANY_NOTIFICATIONS
from tests.console_personas import *  # noqa: F403  (fixtures: personas)
from tests.notification_support import *  # noqa: F403  (fixtures)
from tests.query_plans import plan, seq_scanned

URL = "/notifications/"
HISTORY = 40_000


@pytest.fixture
def history(notify_db, personas):
    with connection.cursor() as cursor:
        cursor.execute(MANY_NOTIFICATIONS, {"count": HISTORY})
        cursor.execute("ANALYZE console_notification")
    return notify_db


def open_ones(count: int, event: str = "stalled") -> None:
    """`count` open notifications of `event` (dedup keys of their own)."""
    with connection.cursor() as cursor:
        cursor.execute("""
            INSERT INTO console_notification (event, dedup_key, state, severity, subject, body, reason, url_path,
                                              details, opened_at, last_seen_at, evaluations, aisle)
            SELECT %(event)s, %(event)s || ':' || g, 'open', 'warning', 's', '', '', '/', '{}'::jsonb,
                   now(), now(), 1, ''
            FROM generate_series(1, %(count)s) AS g""", {"count": count, "event": event})


def test_the_counts_stop_at_the_cap_and_say_so(client, personas, history):
    open_ones(3)
    client.force_login(personas["supervisor"])
    html = client.get(URL).content.decode()
    assert "Open 3 · acknowledged 0 · resolved 1,000+" in html
    assert "showing the newest 200" in html
    assert "open (3)" in html and "resolved (1,000+)" in html
    # One event's counts: the history is all 'paused'; the three open ones are 'stalled'.
    html = client.get(URL, {"event": "stalled"}).content.decode()
    assert "Open 3 · acknowledged 0 · resolved 0" in html
    assert "Open 0 · acknowledged 0 · resolved 1,000+" in client.get(URL, {"event": "paused"}).content.decode()


def test_a_count_at_the_cap_is_exact_and_one_more_is_capped(notify_db):
    open_ones(selectors.STATE_COUNT_CAP)
    assert selectors.state_counts()["open"] == "1000"
    open_ones(1, event="paused")
    assert selectors.state_counts() == {"open": "1,000+", "acknowledged": "0", "resolved": "0"}
    assert selectors.state_counts(event="paused")["open"] == "1"


def test_the_zh_hans_page_shows_the_capped_count(client, personas, history):
    client.force_login(personas["supervisor"])
    html = client.get(URL, HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()
    assert "1,000+" in html


@pytest.mark.parametrize("event", ["", "paused"])
def test_the_counts_read_each_state_through_an_index_with_a_limit(history, event):
    """Each state's count is a LIMITed subquery; the states the history holds few of (open,
    acknowledged) are read through an index: never the whole table to count nothing."""
    text = plan(notifications_sql.NOTIFICATION_STATE_COUNTS, {"event": event, "cap": selectors.STATE_COUNT_CAP + 1})
    assert text.count("Limit") == 3, text
    index = "notification_event_state_idx" if event else "notification_state_idx"
    scans = [line for line in text.splitlines() if "Scan" in line]
    assert len(scans) == 3 and all(f"using {index}" in line for line in scans[:2]), text
    # The resolved ones fill the history: a scan that stops at the cap, whichever the planner takes.
    assert not seq_scanned(text, "console_notification") or "Seq Scan" in scans[2], text


@pytest.mark.parametrize("filters, index", [({}, "notification_opened_idx"),
                                            ({"state": "open"}, "notification_state_idx"),
                                            ({"event": "stalled"}, "notification_event")])
def test_the_list_reads_the_newest_through_an_index_with_a_limit(history, filters, index):
    """The newest 201 through an index in their order (a filter the history is full of is read
    through the time index, stopping at the LIMIT; a rare one through its own index)."""
    open_ones(3)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE console_notification")
    qs = Notification.objects.select_related("acknowledgement", "silenced_by").filter(**filters)
    text = qs.order_by("-opened_at", "-id")[:selectors.PAGE_LIMIT + 1].explain()
    assert text.lstrip().startswith("Limit"), text
    assert not seq_scanned(text, "console_notification"), text
    assert any(f"using {index}" in line for line in text.splitlines()), text
