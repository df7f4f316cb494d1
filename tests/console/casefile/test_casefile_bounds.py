"""The case file stays bounded whatever the WCS sends (docs/architecture.md §16): consecutive
duplicate reports fold into one event with a count and a time range, a long file is read a page
at a time through a cursor, the printable page shows its first and last events and links to the
rest, and a cursor that is not one is a 400 naming `after`."""

from datetime import datetime

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from recovery.models import CallbackReceipt, tidy_job_id
from tests.repair_support import paused
from tests.wcs_helpers import create, finish, status

TWO_MB = 2 * 1024 * 1024
RECEIPTS = 60_000

# 60,000 job-status receipts for one step's job, each with its own sequence (so none folds), in
# one statement: what a WCS sending a status report every few seconds for days leaves behind.
MANY_RECEIPTS = """
INSERT INTO recovery_callbackreceipt (received_at, endpoint, job_id, workflow_id, step_id, stage, job_status,
                                      wcs_event_id, http_status, outcome, message, payload, duration_ms, sequence)
SELECT now() + make_interval(secs => g),
       'job-status', %(job_id)s, %(workflow_id)s, %(step_id)s, '', 2,
       '', 200, 'ACCEPTED', '',
       jsonb_build_object('job_id', %(job_id)s, 'status', 2, 'sequence', g), 1.5, g
FROM generate_series(1, %(count)s) AS g
"""


def many_receipts(workflow_id: int, step_id: int, count: int = RECEIPTS) -> None:
    with connection.cursor() as cursor:
        cursor.execute(MANY_RECEIPTS, {"job_id": tidy_job_id(workflow_id, step_id), "workflow_id": workflow_id,
                                       "step_id": step_id, "count": count})
        cursor.execute("ANALYZE recovery_callbackreceipt")


def test_the_same_report_again_and_again_is_one_event_with_its_count_and_time_range(repair_db, operator, client):
    created, _ = create(repair_db, 1)
    wid, (step,) = created.workflow_id, created.step_ids
    job = tidy_job_id(wid, step)
    for _ in range(6):
        assert status(client, job, 2).status_code == 200  # the first is taken, the others change nothing
    assert finish(client, job).status_code == 200
    for _ in range(4):
        assert finish(client, job).status_code == 200  # duplicates
    client.force_login(operator)
    events = client.get(f"/workflows/{wid}/case-file.json").json()["events"]

    receipts = list(CallbackReceipt.objects.filter(workflow_id=wid).order_by("id"))
    assert len(receipts) == 11
    folded = [(e["kind"], e["details"]["outcome"], e["count"]) for e in events if e["kind"] in ("job_status",
                                                                                                  "callback")]
    first_status, rest_status = receipts[0], receipts[1:6]
    assert folded == [("job_status", first_status.outcome, 1), ("job_status", rest_status[0].outcome, 5),
                      ("callback", "ACCEPTED", 1), ("callback", "DUPLICATE", 4)]
    repeated = next(e for e in events if e["kind"] == "job_status" and e["count"] == 5)
    assert datetime.fromisoformat(repeated["at"]) == rest_status[0].received_at
    assert datetime.fromisoformat(repeated["last_at"]) == rest_status[-1].received_at
    assert repeated["details"]["receipt_id"] == rest_status[0].pk  # the first of them
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    page = client.get(f"/workflows/{wid}/case-file.html").content.decode()
    assert "× 5" in page and "× 4" in page


def test_sixty_thousand_receipts_make_pages_under_two_megabytes_read_with_limits(repair_db, operator, client):
    built = paused(repair_db, "job_missing")
    wid, step = built.workflow_id, built.step_ids[0]
    many_receipts(wid, step)
    client.force_login(operator)

    with CaptureQueriesContext(connection) as queries:
        response = client.get(f"/workflows/{wid}/case-file.json")
    assert response.status_code == 200 and len(response.content) < TWO_MB
    receipt_reads = [q["sql"] for q in queries.captured_queries if 'FROM "recovery_callbackreceipt"' in q["sql"]]
    assert receipt_reads and all("LIMIT" in sql for sql in receipt_reads)  # never the whole history
    first = response.json()
    assert first["after"] is None and first["next"]
    assert [e["seq"] for e in first["events"]] == list(range(1, len(first["events"]) + 1))
    assert first["events"][0]["kind"] == "created"

    second = client.get(f"/workflows/{wid}/case-file.json", {"after": first["next"]}).json()
    assert second["after"] == first["next"] and second["next"]
    assert second["events"][0]["seq"] == first["events"][-1]["seq"] + 1
    ids = [e["details"]["receipt_id"] for page in (first, second) for e in page["events"] if e["kind"] == "job_status"]
    assert ids == sorted(set(ids))  # no receipt told twice, none skipped between the pages
    assert ids == list(CallbackReceipt.objects.filter(workflow_id=wid).order_by("id")
                       .values_list("id", flat=True)[:len(ids)])

    html = client.get(f"/workflows/{wid}/case-file.html")
    assert html.status_code == 200 and len(html.content) < TWO_MB
    page = html.content.decode()
    last = CallbackReceipt.objects.filter(workflow_id=wid).order_by("-id").first()
    assert 'id="event-1"' in page and "The last events" in page
    assert f"<code translate=\"no\">{last.pk}</code>" in page  # the newest receipt is on the page
    assert "case-file.html?after=" in page and "case-file.json?after=" in page


def test_reading_every_page_tells_every_receipt_once(repair_db, operator, client, settings):
    built = paused(repair_db, "job_missing")
    wid, step = built.workflow_id, built.step_ids[0]
    many_receipts(wid, step, count=1_200)
    client.force_login(operator)
    seen, seqs, after = [], [], None
    for _ in range(20):
        page = client.get(f"/workflows/{wid}/case-file.json", {"after": after} if after else {}).json()
        seen += [e["details"]["receipt_id"] for e in page["events"] if e["kind"] == "job_status"]
        seqs += [e["seq"] for e in page["events"]]
        after = page["next"]
        if after is None:
            break
    assert after is None
    assert seen == list(CallbackReceipt.objects.filter(workflow_id=wid).order_by("id").values_list("id", flat=True))
    assert seqs == list(range(1, len(seqs) + 1))


@pytest.mark.parametrize("after", ["", "x", "1-z5", "1-r1_2_3", "1-r5-r6", "-1", "1-r99999999999999999999",
                                   "1-o9223372036854775807_1_0", "1" * 30, "1-r1_0" * 100, "1-r1_0\n"])
@pytest.mark.parametrize("suffix", ["json", "html"])
def test_a_cursor_that_is_not_one_is_a_400_naming_after(repair_db, operator, client, after, suffix):
    built = paused(repair_db, "job_missing")
    client.force_login(operator)
    response = client.get(f"/workflows/{built.workflow_id}/case-file.{suffix}", {"after": after})
    assert response.status_code == 400
    if suffix == "json":
        assert response.json()["field"] == "after"
    else:
        assert "after" in response.content.decode()


def test_after_given_twice_is_a_400(repair_db, operator, client):
    built = paused(repair_db, "job_missing")
    client.force_login(operator)
    response = client.get(f"/workflows/{built.workflow_id}/case-file.json?after=1&after=2")
    assert response.status_code == 400 and response.json()["field"] == "after"
