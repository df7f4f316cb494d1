"""/handover/: shift boundaries (SHIFT_STARTS, warehouse time), what each section holds, the
shift parameter's validation, CSV with cells escaped against spreadsheet formulas, roles."""

import csv
import io
import re
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.urls import reverse
from django.utils import timezone

from console.csv_safe import safe_cell
from console.floor import selectors as floor
from console.models import CancelProposal, RepairAudit, WorkflowNote
from console.readers.shifts import shift_after, shift_at, shift_before, shift_starting
from recovery.models import RecoveryDecision

HANDOVER = reverse("handover")
BERLIN = ZoneInfo("Europe/Berlin")


@pytest.fixture
def berlin(settings):
    settings.TIME_ZONE = "Europe/Berlin"
    settings.SHIFT_STARTS = [(6, 0), (14, 0), (22, 0)]
    return settings


@pytest.mark.parametrize("local,start,end", [
    ((2026, 3, 2, 5, 59), (2026, 3, 1, 22, 0), (2026, 3, 2, 6, 0)),
    ((2026, 3, 2, 6, 0), (2026, 3, 2, 6, 0), (2026, 3, 2, 14, 0)),
    ((2026, 3, 2, 13, 59), (2026, 3, 2, 6, 0), (2026, 3, 2, 14, 0)),
    ((2026, 3, 2, 23, 30), (2026, 3, 2, 22, 0), (2026, 3, 3, 6, 0)),
])
def test_a_moment_falls_in_the_shift_that_started_last(berlin, local, start, end):
    shift = shift_at(datetime(*local, tzinfo=BERLIN))
    assert (shift.start, shift.end) == (datetime(*start, tzinfo=BERLIN), datetime(*end, tzinfo=BERLIN))
    assert shift_after(shift_before(shift)) == shift


def test_shifts_follow_the_configured_starts(berlin):
    berlin.SHIFT_STARTS = [(7, 30), (19, 30)]
    shift = shift_at(datetime(2026, 3, 2, 3, 0, tzinfo=BERLIN))
    assert (shift.param, shift.end.hour, shift.end.minute) == ("2026-03-01@19:30", 7, 30)


def at(moment: datetime, kind: str, workflow_id: int, text: str = "") -> None:
    """A pause decision or a note dated `moment` (an update or a raw insert: notes are append-only)."""
    if kind == "pause":
        d = RecoveryDecision.objects.create(workflow_id=workflow_id, action="PAUSE", reason="RECOVERY_JOB_MISSING",
                                            rule="R1", evidence={}, fingerprint="f")
        RecoveryDecision.objects.filter(pk=d.pk).update(decided_at=moment)
    else:
        with connection.cursor() as cursor:
            cursor.execute("INSERT INTO console_workflownote (workflow_id, at, username, text) "
                           "VALUES (%s, %s, 'lena', %s)", [workflow_id, moment, text])


@pytest.fixture
def shift_history(wms, audit_truncate_allowed, personas, berlin):
    shift = shift_starting(datetime(2026, 3, 2).date(), datetime(2026, 1, 1, 6, 0).time())
    second = timedelta(seconds=1)
    for n, moment in enumerate((shift.start - second, shift.start, shift.end - second, shift.end), start=1):
        at(moment, "pause", 100 + n)
        at(moment, "note", 100 + n, f"note {n}")
    return shift


def test_it_holds_what_happened_from_the_first_to_the_last_second_of_the_shift(shift_history):
    report = floor.handover(shift=shift_history)
    assert [d.workflow_id for d in report.paused] == [102, 103]
    assert [n.text for n in report.notes] == ["note 2", "note 3"]
    before = floor.handover(shift=shift_before(shift_history))
    assert [d.workflow_id for d in before.paused] == [101] and [n.text for n in before.notes] == ["note 1"]
    after = floor.handover(shift=shift_after(shift_history))
    assert [n.text for n in after.notes] == ["note 4"]
    assert report.notifications == [] and report.acknowledgements == []


def test_the_page_shows_the_chosen_shift(shift_history, client, personas):
    client.force_login(personas["supervisor"])
    response = client.get(HANDOVER, {"shift": "2026-03-02@06:00"})
    assert response.status_code == 200
    html = response.content.decode()
    assert "note 2" in html and "note 3" in html and "note 1" not in html and "note 4" not in html
    assert 'href="/handover/?shift=2026-03-01%4022%3A00"' in html  # previous shift
    assert 'href="/handover/?shift=2026-03-02%4014%3A00"' in html  # next shift
    assert 'media="print"' in html and "console/print" in html


@pytest.fixture
def floor_now(wms, audit_truncate_allowed, personas):
    paused = wms.build("paused", age_minutes=90)
    stalled = wms.build("healthy", job_status=3)
    with connection.cursor() as cursor:
        cursor.execute("UPDATE mydo_job SET updated_at = now() - interval '2 hours' WHERE job_id = %s",
                       [f"TDY-{stalled.workflow_id}-{stalled.step_ids[0]}"])
    lead = personas["shiftlead"]
    CancelProposal.objects.create(workflow_id=paused.workflow_id, proposed_by=lead, reason_code="OTHER",
                                  reason_text="tray gone, cancel it", fingerprint="f", evidence={},
                                  idempotency_key="k1")
    RepairAudit.objects.create(user=personas["operator"], username="operator", action="REISSUE",
                               workflow_id=paused.workflow_id, outcome="APPLIED", reason_code="JOB_LOST",
                               reason_text="=HYPERLINK(\"http://x\")")
    RepairAudit.objects.create(username="operator", action="RECHECK", stage=RepairAudit.Stage.PREVIEW,
                               workflow_id=paused.workflow_id, outcome="APPLIED")
    WorkflowNote.objects.create(workflow_id=stalled.workflow_id, username="lena", user=lead,
                                text="-vehicle 3 fault, maintenance called")
    return {"paused": paused, "stalled": stalled}


def test_the_current_shift_lists_repairs_open_pauses_stalled_proposals_and_notes(floor_now, client, personas):
    report = floor.handover(shift=shift_at(timezone.now()))
    assert [(a.action, a.username) for a in report.repairs] == [("REISSUE", "operator")]  # not the preview
    assert [o.workflow_id for o in report.still_open] == [floor_now["paused"].workflow_id]
    assert [s.workflow_id for s in report.stalled] == [floor_now["stalled"].workflow_id]
    assert [p.workflow_id for p in report.proposals] == [floor_now["paused"].workflow_id]
    assert [n.text for n in report.notes] == ["-vehicle 3 fault, maintenance called"]
    client.force_login(personas["shiftlead"])
    html = client.get(HANDOVER).content.decode()
    assert "current shift" in html and "tray gone, cancel it" in html and "vehicle 3 fault" in html
    assert "/repair/proposals/" in html  # a shift lead may review the proposal
    client.force_login(personas["supervisor"])
    assert "/repair/proposals/" not in client.get(HANDOVER).content.decode()


def test_csv_escapes_cells_that_a_spreadsheet_would_run(floor_now, client, personas):
    client.force_login(personas["supervisor"])
    response = client.get(HANDOVER, {"format": "csv"})
    assert response.status_code == 200 and response["Content-Type"].startswith("text/csv")
    assert "attachment" in response["Content-Disposition"]
    rows = list(csv.reader(io.StringIO(b"".join(response.streaming_content).decode())))
    assert rows[0] == ["section", "time", "workflow", "who", "what", "detail"]
    sections = [r[0] for r in rows[1:]]
    assert sections == ["repair", "still paused", "stalled", "cancel proposal", "note"]
    note = rows[-1]
    assert note[5] == "'-vehicle 3 fault, maintenance called"
    repair = rows[1]
    assert repair[5] == 'APPLIED JOB_LOST: =HYPERLINK("http://x")'  # does not start with "="


@pytest.mark.parametrize("value,expected", [
    ("=1+1", "'=1+1"), ("+1", "'+1"), ("-1", "'-1"), ("@SUM(A1)", "'@SUM(A1)"), ("\tx", "'\tx"),
    ("\rx", "'\rx"), ("plain", "plain"), ("a=b", "a=b"), (None, None), (42, 42),
])
def test_csv_cell(value, expected):
    assert safe_cell(value) == expected


@pytest.mark.parametrize("params,field", [
    ({"shift": "2026-13-01@06:00"}, "shift"),
    ({"shift": "2026-03-01@07:00"}, "shift"),
    ({"shift": "yesterday"}, "shift"),
    ({"shift": "2026-03-01@06:00\x00"}, "shift"),
    ({"shift": "x" * 41}, "shift"),
    ({"format": "xlsx"}, "format"),
])
def test_a_bad_parameter_is_a_400_naming_the_field(wms, personas, client, params, field):
    client.force_login(personas["operator"])
    response = client.get(HANDOVER, params)
    assert response.status_code == 400
    assert f"{field}: " in response.content.decode()


def test_it_refuses_users_without_a_role(wms, personas, client):
    assert client.get(HANDOVER).status_code == 302
    client.force_login(personas["norole"])
    assert client.get(HANDOVER).status_code == 403
    assert client.get(HANDOVER, {"format": "csv"}).status_code == 403
    assert not User.objects.get(username="norole").groups.exists()


def test_the_shift_lists_notifications_raised_and_acknowledged_in_it(floor_now, client, personas):
    from console.models import Notification, NotificationAcknowledgement

    now = timezone.now()
    raised = Notification.objects.create(event="stalled", dedup_key="stalled:7", subject="Workflow 7 stalled",
                                         workflow_id=7, url_path="/workflows/7/", opened_at=now, last_seen_at=now)
    NotificationAcknowledgement.objects.create(notification=raised, user=personas["operator"], username="operator")
    earlier = now - timedelta(days=2)
    Notification.objects.create(event="recovery_stale", dedup_key="recovery_stale", subject="old shift's",
                                url_path="/recovery/", opened_at=earlier, last_seen_at=earlier)

    report = floor.handover(shift=shift_at(now))
    assert [n.subject for n in report.notifications] == ["Workflow 7 stalled"]
    assert [(a.username, a.notification_id) for a in report.acknowledgements] == [("operator", raised.pk)]
    client.force_login(personas["supervisor"])
    html = client.get(HANDOVER).content.decode()
    assert "Workflow 7 stalled" in html and "old shift&#x27;s" not in html and "old shift's" not in html
    rows = list(csv.reader(io.StringIO(b"".join(client.get(HANDOVER, {"format": "csv"}).streaming_content).decode())))
    assert [r[0] for r in rows[1:]][-2:] == ["notification", "acknowledged"]
    assert rows[-1][3] == "operator" and rows[-2][4] == "stalled"


# --- bounded pages, complete CSV ------------------------------------------------------------------


def _bulk_notes(n: int, *, size: int, user=None, workflow_id: int = 7) -> None:
    """`n` notes written now, each `size` characters (the longest a note may be), numbered."""
    WorkflowNote.objects.bulk_create(
        [WorkflowNote(workflow_id=workflow_id, user=user, username="flood", text=f"{i:05d}" + "n" * (size - 5))
         for i in range(n)], batch_size=2000)


def test_a_flood_of_notes_keeps_the_page_small_and_the_csv_complete(
        wms, audit_truncate_allowed, client, personas, settings):
    """20,000 notes of 2,000 characters in one shift (40 MB of text): the page shows the newest
    HANDOVER_SECTION_ROWS and says how many more there are; the CSV streams every one."""
    settings.HANDOVER_SECTION_ROWS = 50
    _bulk_notes(20_000, size=2000)
    client.force_login(personas["supervisor"])
    response = client.get(HANDOVER)
    assert response.status_code == 200
    html = response.content.decode()
    assert len(response.content) < 1_000_000, len(response.content)  # about 130 kB; 41 MB before
    shown = [int(t) for t in re.findall(r'<p class="note-text">(\d{5})n', html)]
    assert shown == list(range(19_950, 20_000))  # the newest 50, in the order they were written
    assert "(20,000)" in html and "and 19,950 more" in html
    more = re.search(r'<a href="([^"]*section=notes[^"]*)"', html).group(1).replace("&amp;", "&")

    first = client.get(more)
    assert first.status_code == 200 and len(first.content) < 1_000_000
    page_one = [int(t) for t in re.findall(r'<p class="note-text">(\d{5})n', first.content.decode())]
    assert page_one == list(range(200))
    assert "Page 1 of 100" in first.content.decode() and "Paused in this shift" not in first.content.decode()
    last = client.get(more + "&page=100").content.decode()
    assert [int(t) for t in re.findall(r'<p class="note-text">(\d{5})n', last)] == list(range(19_800, 20_000))
    assert "Page 100 of 100" in client.get(more + "&page=999").content.decode()  # past the end: the last

    export = client.get(HANDOVER, {"format": "csv"})
    assert export.streaming
    rows = list(csv.reader(io.StringIO(b"".join(export.streaming_content).decode())))
    notes = [r for r in rows[1:] if r[0] == "note"]
    assert len(notes) == 20_000 and notes[0][5] == "00000" + "n" * 1995 and notes[-1][5].startswith("19999")


def test_every_section_says_how_many_it_leaves_out(floor_now, client, personas, settings):
    settings.HANDOVER_SECTION_ROWS = 5
    for i in range(6):
        RepairAudit.objects.create(username="operator", action="REISSUE", workflow_id=1000 + i, outcome="APPLIED",
                                   reason_code="JOB_LOST")
    client.force_login(personas["supervisor"])
    html = client.get(HANDOVER).content.decode()
    assert "(7)" in html and "and 2 more" in html  # 1 + 6 repairs, 5 shown
    assert "and 1 more" not in html  # the other sections are complete
    report = floor.handover(shift=shift_at(timezone.now()), limit=5)
    assert [a.workflow_id for a in report.repairs] == [1001, 1002, 1003, 1004, 1005]  # the newest five
    assert report.totals["repairs"] == 7 and report.more["repairs"] == 2 and report.more["notes"] == 0


@pytest.mark.parametrize("params,field", [
    ({"section": "everything"}, "section"),
    ({"section": "notes", "page": "0"}, "page"),
    ({"section": "notes", "page": "²"}, "page"),
    ({"section": "notes", "page": "1x"}, "page"),
])
def test_a_bad_section_or_page_is_a_400_naming_the_field(wms, personas, client, params, field):
    client.force_login(personas["operator"])
    response = client.get(HANDOVER, params)
    assert response.status_code == 400
    assert f"{field}: " in response.content.decode()
