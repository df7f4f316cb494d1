"""Grouping (docs/architecture.md §12): paused, paused-too-long and stalled notifications of one
event, reason code and aisle are one notification while it is open; its first message waits
NOTIFY_GROUP_WAIT_SECONDS; later members join it without a new message; it escalates once; its
message links to the paused list and the batch re-check of exactly its workflows. Real SMTP and
HTTP receivers."""

import itertools
import re
from datetime import timedelta

import pytest
from django.utils import timezone

from console.models import Notification, NotificationDelivery
from console.notifications.delivery import deliver_pending
from console.notifications.evaluate import evaluate_notifications
from console.notifications.groups import group_key
from console.notifications.services import notification_acknowledge
from console.roles import SHIFT_LEAD
from recovery.engine.cycle import run_cycle
from recovery.models import TidyWorkflow
from tests.console_personas import make_user
from tests.notification_support import recovery_is_fresh

AISLE_SPACES = 200  # the builder's spaces per aisle (A01 holds spaces 1..200)
KEY = "paused:RECOVERY_JOB_MISSING:A01"


@pytest.fixture
def quiet(notify_db, settings):
    """Only the events under test: paused too long far away, a fresh recovery."""
    settings.NOTIFY_PAUSED_TOO_LONG_MINUTES = 10_000
    settings.NOTIFY_GROUP_WAIT_SECONDS = 30
    recovery_is_fresh()
    return notify_db


def in_aisle(wms, aisle_no: int):
    """The builder's next spaces are in aisle A<aisle_no> (each aisle's spaces counted on)."""
    counters = wms.__dict__.setdefault("aisle_counters", {})
    wms._space_no = counters.setdefault(aisle_no, itertools.count(1 + AISLE_SPACES * (aisle_no - 1)))
    return wms


def pause(wms, n: int, *, aisle_no: int = 1, reason: str = "RECOVERY_JOB_MISSING") -> list[int]:
    in_aisle(wms, aisle_no)
    return [wms.build("paused", reason=reason).workflow_id for _ in range(n)]


def mentioned_ids(text: str) -> set[int]:
    (line,) = [line for line in text.splitlines() if line.startswith("Workflows (")]
    return {int(i) for i in re.findall(r"\d+", line.split(":", 1)[1])}


@pytest.mark.usefixtures("committed_db")
def test_ninety_pauses_in_three_aisles_by_one_cycle_arrive_as_three_messages_naming_all(
        quiet, smtp_server, webhook_receiver, settings):
    settings.NOTIFY_EMAIL_TO = ["floor@warehouse.example"]
    expected = set()
    for aisle_no in (1, 2, 3):
        in_aisle(quiet, aisle_no)
        expected |= {quiet.build("job_missing").workflow_id for _ in range(30)}
    report = run_cycle()
    assert report.reasons == {"RECOVERY_JOB_MISSING": 90}
    assert set(TidyWorkflow.objects.filter(status="PAUSED_RECOVERY").values_list("pk", flat=True)) == expected
    recovery_is_fresh()

    t0 = timezone.now()
    opened = evaluate_notifications(now=t0).opened
    assert sorted(opened) == [f"paused:RECOVERY_JOB_MISSING:A0{i}" for i in (1, 2, 3)]
    assert deliver_pending(now=t0 + timedelta(seconds=29)).sent == 0  # the group wait
    assert deliver_pending(now=t0 + timedelta(seconds=30)).sent == 6  # 3 e-mails, 3 webhooks
    assert deliver_pending(now=t0 + timedelta(minutes=1)).sent == 0

    assert len(smtp_server.messages) == 3 and len(webhook_receiver.requests) == 3
    hooks = [r.json() for r in webhook_receiver.requests]
    assert sorted((h["group_key"], h["count"], h["workflow_id"]) for h in hooks) == [
        (f"paused:RECOVERY_JOB_MISSING:A0{i}", 30, None) for i in (1, 2, 3)]
    assert set().union(*(h["workflow_ids"] for h in hooks)) == expected
    assert all(h["dedup_key"] == h["group_key"] and h["event"] == "paused" for h in hooks)
    assert {h["subject"] for h in hooks} == {f"30 workflows paused in aisle A0{i}: RECOVERY_JOB_MISSING"
                                             for i in (1, 2, 3)}
    assert set().union(*(mentioned_ids(m.message.get_payload()) for m in smtp_server.messages)) == expected
    assert sorted(m.subject for m in smtp_server.messages) == sorted(h["subject"] for h in hooks)


def test_later_members_join_the_open_group_and_nothing_is_sent_again(quiet, webhook_receiver):
    first = pause(quiet, 1)
    t0 = timezone.now()
    assert evaluate_notifications(now=t0).opened == [KEY]
    (n,) = Notification.objects.all()
    assert (n.workflow_id, n.details["workflow_ids"], n.subject) == (
        first[0], first, f"Workflow {first[0]} paused: RECOVERY_JOB_MISSING")

    later = pause(quiet, 2)
    report = evaluate_notifications(now=t0 + timedelta(seconds=10))
    assert (report.opened, report.updated) == ([], [KEY])
    n.refresh_from_db()
    assert (n.workflow_id, n.details["workflow_ids"]) == (None, first + later)
    assert n.subject == "3 workflows paused in aisle A01: RECOVERY_JOB_MISSING"
    assert n.url_path == "/paused/?reason=RECOVERY_JOB_MISSING&aisle=A01"
    assert n.deliveries.count() == 1  # the one message, still waiting

    assert deliver_pending(now=t0 + timedelta(seconds=30)).sent == 1
    (hook,) = [r.json() for r in webhook_receiver.requests]
    assert (hook["count"], hook["workflow_ids"], hook["workflow_id"]) == (3, first + later, None)

    pause(quiet, 1)  # joins after the message went out: counted, not sent again
    recovery_is_fresh(t0 + timedelta(seconds=40))
    evaluate_notifications(now=t0 + timedelta(seconds=40))
    assert deliver_pending(now=t0 + timedelta(minutes=5)).sent == 0 and len(webhook_receiver.requests) == 1
    n.refresh_from_db()
    assert len(n.details["workflow_ids"]) == 4 and n.deliveries.count() == 1


def test_each_reason_and_aisle_is_its_own_group_and_an_unsplit_code_is_aisle_other(quiet):
    pause(quiet, 2, aisle_no=1)
    pause(quiet, 1, aisle_no=1, reason="RECOVERY_JOB_MISMATCH")
    pause(quiet, 1, aisle_no=2)
    odd = TidyWorkflow.objects.get(pk=pause(quiet, 1, aisle_no=3)[0])
    odd.steps.update(cargo_space_id="DOCK-7")  # no aisle by SPACE_CODE_PATTERN
    evaluate_notifications()
    counts = {n.dedup_key: len(n.details["workflow_ids"]) for n in Notification.objects.all()}
    assert counts == {KEY: 2, "paused:RECOVERY_JOB_MISMATCH:A01": 1, "paused:RECOVERY_JOB_MISSING:A02": 1,
                      "paused:RECOVERY_JOB_MISSING:other": 1}


def test_a_group_resolves_when_none_of_its_members_is_paused_any_more(quiet):
    ids = pause(quiet, 2)
    evaluate_notifications()
    TidyWorkflow.objects.filter(pk=ids[0]).update(status="CANCELLED")
    assert evaluate_notifications().resolved == []
    TidyWorkflow.objects.filter(pk=ids[1]).update(status="CANCELLED")
    assert evaluate_notifications().resolved == [KEY]
    assert Notification.objects.get().details["workflow_ids"] == ids  # who was in it stays


def test_acknowledging_a_group_acknowledges_its_members_and_it_does_not_escalate(quiet, settings):
    settings.ESCALATE_AFTER_MINUTES = 30
    ids = pause(quiet, 3)
    t0 = timezone.now()
    evaluate_notifications(now=t0)
    n = Notification.objects.get()
    notification_acknowledge(notification_id=n.pk, user=make_user("lena", SHIFT_LEAD))
    ids += pause(quiet, 1)  # joins the acknowledged group: no new notification
    recovery_is_fresh(t0 + timedelta(minutes=40))
    report = evaluate_notifications(now=t0 + timedelta(minutes=40))
    assert (report.opened, report.escalated) == ([], [])
    n.refresh_from_db()
    assert (n.state, n.details["workflow_ids"]) == ("acknowledged", ids)
    assert Notification.objects.filter(state="open").count() == 0


def test_an_unacknowledged_group_escalates_once(quiet, settings):
    settings.ESCALATE_AFTER_MINUTES = 30
    pause(quiet, 3)
    pause(quiet, 2, aisle_no=2)
    t0 = timezone.now()
    evaluate_notifications(now=t0)
    recovery_is_fresh(t0 + timedelta(minutes=31))
    report = evaluate_notifications(now=t0 + timedelta(minutes=31))
    assert sorted(report.escalated) == [KEY, "paused:RECOVERY_JOB_MISSING:A02"]
    assert NotificationDelivery.objects.filter(kind="escalated").count() == 2  # one per group (the log)
    recovery_is_fresh(t0 + timedelta(minutes=45))
    assert evaluate_notifications(now=t0 + timedelta(minutes=45)).escalated == []


def test_stalled_workflows_group_by_job_status_and_aisle(quiet):
    from tests.console.notifications.test_events import age_job

    in_aisle(quiet, 4)
    built = [quiet.build("healthy") for _ in range(3)]
    for b in built:
        age_job(b, 20)
    evaluate_notifications()
    (n,) = Notification.objects.filter(event="stalled")
    assert (n.dedup_key, n.details["workflow_ids"]) == ("stalled:job status 2:A04", [b.workflow_id for b in built])
    assert n.subject == "3 workflows stalled in aisle A04: jobs unchanged at status 2 for over 15 min"
    assert n.url_path == "/active/?stalled=on"


def test_the_links_show_exactly_the_groups_workflows(quiet, client):
    group = pause(quiet, 3)
    pause(quiet, 2, aisle_no=2)
    pause(quiet, 1, reason="RECOVERY_JOB_MISMATCH")
    evaluate_notifications()
    n = Notification.objects.get(dedup_key=KEY)
    client.force_login(make_user("lena", SHIFT_LEAD))
    page = client.get(n.url_path)
    assert page.status_code == 200
    assert [r.workflow_id for r in page.context["page"].rows] == group
    assert page.context["page"].total_matching == 3
    batch = client.get(n.details["links"]["batch"])
    assert batch.status_code == 200
    assert [r.workflow_id for r in batch.context["rows"]] == group and batch.context["total"] == 3
    assert 'name="aisle" value="A01"' in batch.content.decode()


def test_a_very_long_reason_still_makes_a_key_and_a_link_that_fit(quiet):
    reason = "VENDOR_" + "X" * 193
    pause(quiet, 2, reason=reason)
    evaluate_notifications()
    (n,) = Notification.objects.all()
    assert n.dedup_key == group_key("paused", reason, "A01") and len(n.dedup_key) <= 200
    assert n.dedup_key != group_key("paused", reason[:-1] + "Y", "A01")
    assert len(n.url_path) <= 200


def test_the_handover_lists_the_group(quiet, client):
    ids = pause(quiet, 3)
    evaluate_notifications()
    client.force_login(make_user("lena", SHIFT_LEAD))
    html = client.get("/handover/").content.decode()
    assert "3 workflows paused in aisle A01: RECOVERY_JOB_MISSING" in html
    assert all(f'href="/workflows/{wid}/">#{wid}</a>' in html for wid in ids)  # its members, linked
    zh = client.get("/handover/", headers={"Accept-Language": "zh-Hans"}).content.decode()
    assert "3 workflows paused" not in zh and "A01" in zh


@pytest.mark.usefixtures("committed_db")
def test_the_demo_shows_a_grouped_notification(notify_db, settings):
    """The demo warehouse after one recovery cycle: several workflows pause with one reason in one
    aisle, and the notification run shows them as one grouped notification."""
    from django.core.management import call_command

    settings.NOTIFY_PAUSED_TOO_LONG_MINUTES = 10_000
    call_command("wms_demo")
    run_cycle()
    recovery_is_fresh()
    evaluate_notifications()
    grouped = [n for n in Notification.objects.filter(event="paused") if len(n.details["workflow_ids"]) > 1]
    assert grouped, "no grouped notification in the demo"
    n = grouped[0]
    assert n.workflow_id is None and n.subject.startswith(f"{len(n.details['workflow_ids'])} workflows paused in ")


def test_a_groups_acknowledgement_counts_under_its_aisle_in_the_analytics(quiet):
    from console.analytics.selectors import analytics
    from tests.console.analytics.test_analytics import stat

    pause(quiet, 3, aisle_no=3)
    t0 = timezone.now()
    evaluate_notifications(now=t0)
    n = Notification.objects.get()
    assert (n.workflow_id, n.aisle) == (None, "A03")
    notification_acknowledge(notification_id=n.pk, user=make_user("lena", SHIFT_LEAD))
    report = analytics(now=timezone.now() + timedelta(minutes=1))
    assert stat(report, "acknowledge", 7, "aisle", "A03")[:2] == (1, 0)


def test_each_members_case_file_shows_its_group_and_the_groups_acknowledgement(quiet, client):
    ids = pause(quiet, 2)
    evaluate_notifications()
    lead = make_user("lena", SHIFT_LEAD)
    notification_acknowledge(notification_id=Notification.objects.get().pk, user=lead)
    client.force_login(lead)
    for wid in ids:
        case = client.get(f"/workflows/{wid}/case-file.json").json()
        (event,) = [e for e in case["events"] if e["kind"] == "notification"]
        assert event["details"]["dedup_key"] == KEY and event["details"]["group_members"] == ids
        (ack,) = [e for e in case["events"] if e["kind"] == "acknowledged"]
        assert ack["actor"] == "lena"


def test_the_notifications_page_names_a_groups_workflows(quiet, client, settings):
    from console.notifications.messages import SHOWN_MEMBERS

    ids = pause(quiet, SHOWN_MEMBERS + 2)
    evaluate_notifications()
    client.force_login(make_user("otto", "operator"))
    html = client.get("/notifications/").content.decode()
    assert f"{SHOWN_MEMBERS + 2} workflows paused in aisle A01" in html
    assert all(f'href="/workflows/{wid}/">#{wid}</a>' in html for wid in ids[:SHOWN_MEMBERS])
    assert f'href="/workflows/{ids[-1]}/"' not in html and "and 2 more" in html
    zh = client.get("/notifications/", headers={"Accept-Language": "zh-Hans"}).content.decode()
    assert "以及另外 2 个" in zh


def test_the_paused_list_filters_by_aisle_and_refuses_a_hostile_one(quiet, client):
    a01 = pause(quiet, 2)
    a02 = pause(quiet, 1, aisle_no=2)
    odd = pause(quiet, 1, aisle_no=3)
    TidyWorkflow.objects.get(pk=odd[0]).steps.update(cargo_space_id="DOCK-7")
    client.force_login(make_user("otto", "operator"))
    for aisle, expected in (("A01", a01), ("A02", a02), ("other", odd), ("A99", [])):
        page = client.get("/paused/", {"aisle": aisle}).context["page"]
        assert ([r.workflow_id for r in page.rows], page.total_matching) == (expected, len(expected))
    response = client.get("/paused/", {"aisle": "A01\x00"})
    assert response.status_code == 400 and "aisle" in response.content.decode()


def test_the_webhook_names_at_most_fifty_members_and_counts_them_all(quiet, webhook_receiver):
    from recovery.models import TidyStep

    ids = pause(quiet, 50) + pause(quiet, 5, aisle_no=2)
    TidyStep.objects.filter(workflow_id__in=ids).update(cargo_space_id="A01-01-01")  # all 55 in aisle A01
    t0 = timezone.now()
    evaluate_notifications(now=t0)
    assert deliver_pending(now=t0 + timedelta(seconds=30)).sent == 1
    (hook,) = [r.json() for r in webhook_receiver.requests]
    assert (hook["dedup_key"], hook["count"], hook["workflow_ids"], hook["workflow_id"]) == (KEY, 55, ids[:50], None)
