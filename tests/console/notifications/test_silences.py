"""Silences (docs/architecture.md §12): a shift lead silences matching notifications for planned
work. A silenced notification is recorded and listed, but neither delivered nor escalated; still
open when the silence ends, it is delivered then. Creating and ending a silence is recorded
append-only. Real SMTP and HTTP receivers."""

import itertools
from datetime import timedelta

import pytest
from django.db import DatabaseError, connection, transaction
from django.utils import timezone

from console.models import Notification, NotificationDelivery, Silence, SilenceEnding
from console.notifications.delivery import deliver_pending
from console.notifications.evaluate import evaluate_notifications
from console.notifications.services import silence_create, silence_end
from console.roles import SHIFT_LEAD
from recovery.models import TidyWorkflow
from tests.console_personas import make_user
from tests.notification_support import recovery_is_fresh

URL = "/notifications/silences/"
A01, A02 = "paused:RECOVERY_JOB_MISSING:A01", "paused:RECOVERY_JOB_MISSING:A02"


@pytest.fixture
def floor(notify_db, settings):
    settings.NOTIFY_PAUSED_TOO_LONG_MINUTES = 10_000
    settings.NOTIFY_GROUP_WAIT_SECONDS = 30
    settings.ESCALATE_AFTER_MINUTES = 30
    recovery_is_fresh()
    return notify_db


def pause(wms, n: int, aisle_no: int) -> list[int]:
    counters = wms.__dict__.setdefault("aisle_counters", {})
    wms._space_no = counters.setdefault(aisle_no, itertools.count(1 + 200 * (aisle_no - 1)))
    return [wms.build("paused").workflow_id for _ in range(n)]


def silence(user, *, aisle="A01", event="", reason="", start=None, hours=4) -> Silence:
    start = start or timezone.now() - timedelta(minutes=1)
    return silence_create(user=user, event=event, reason=reason, aisle=aisle, starts_at=start,
                          ends_at=start + timedelta(hours=hours), comment="shuttle A01 maintenance")


def sent_keys(smtp_server, webhook_receiver) -> tuple[list[str], list[str]]:
    return ([m.message["X-Tidy-Dedup-Key"] for m in smtp_server.messages],
            [r.json()["dedup_key"] for r in webhook_receiver.requests])


def test_a_silence_keeps_its_aisle_quiet_and_delivers_when_it_ends(floor, smtp_server, webhook_receiver, settings):
    settings.NOTIFY_EMAIL_TO = ["floor@warehouse.example"]
    lead = make_user("lena", SHIFT_LEAD)
    quiet = silence(lead)
    in_a01 = pause(floor, 3, 1)
    pause(floor, 1, 2)
    t0 = timezone.now()
    report = evaluate_notifications(now=t0)
    assert sorted(report.opened) == [A01, A02] and report.silenced == [A01]
    held = Notification.objects.get(dedup_key=A01)
    assert (held.silenced_by_id, held.announced_at, held.state) == (quiet.pk, None, "open")  # recorded

    assert deliver_pending(now=t0 + timedelta(seconds=31)).sent == 2
    assert sent_keys(smtp_server, webhook_receiver) == ([A02], [A02])  # nothing of A01 reached anyone

    recovery_is_fresh(t0 + timedelta(minutes=31))
    report = evaluate_notifications(now=t0 + timedelta(minutes=31))
    assert report.escalated == [A02]  # the silenced one does not escalate
    deliver_pending(now=t0 + timedelta(minutes=31))
    assert A01 not in sent_keys(smtp_server, webhook_receiver)[1]

    silence_end(silence_id=quiet.pk, user=lead, now=t0 + timedelta(minutes=32))
    recovery_is_fresh(t0 + timedelta(minutes=33))
    report = evaluate_notifications(now=t0 + timedelta(minutes=33))
    assert report.released == [A01] and report.escalated == []
    assert deliver_pending(now=t0 + timedelta(minutes=33)).sent == 2
    mails, hooks = sent_keys(smtp_server, webhook_receiver)
    assert mails[-1] == hooks[-1] == A01
    hook = webhook_receiver.requests[-1].json()
    assert (hook["count"], hook["workflow_ids"], hook["severity"]) == (3, in_a01, "warning")
    held.refresh_from_db()
    assert (held.silenced_by_id, held.announced_at) == (None, t0 + timedelta(minutes=33))

    # Escalation counts from its release, not from when it opened.
    recovery_is_fresh(t0 + timedelta(minutes=50))
    assert evaluate_notifications(now=t0 + timedelta(minutes=50)).escalated == []
    recovery_is_fresh(t0 + timedelta(minutes=64))
    assert evaluate_notifications(now=t0 + timedelta(minutes=64)).escalated == [A01]


def test_a_silence_that_runs_out_releases_what_it_held(floor, webhook_receiver):
    lead = make_user("lena", SHIFT_LEAD)
    t0 = timezone.now()
    silence(lead, start=t0 - timedelta(minutes=1), hours=1)
    pause(floor, 2, 1)
    evaluate_notifications(now=t0)
    assert deliver_pending(now=t0 + timedelta(minutes=5)).sent == 0
    recovery_is_fresh(t0 + timedelta(minutes=60))
    assert evaluate_notifications(now=t0 + timedelta(minutes=60)).released == [A01]
    assert deliver_pending(now=t0 + timedelta(minutes=60)).sent == 1
    assert [r.json()["dedup_key"] for r in webhook_receiver.requests] == [A01]


def test_what_resolves_or_is_acknowledged_under_a_silence_is_never_sent(floor, webhook_receiver):
    from console.notifications.services import notification_acknowledge

    lead = make_user("lena", SHIFT_LEAD)
    quiet = silence(lead, aisle="")  # every aisle
    gone = pause(floor, 1, 1)
    pause(floor, 1, 2)
    t0 = timezone.now()
    evaluate_notifications(now=t0)
    TidyWorkflow.objects.filter(pk__in=gone).update(status="CANCELLED")
    assert evaluate_notifications(now=t0 + timedelta(seconds=5)).resolved == [A01]
    notification_acknowledge(notification_id=Notification.objects.get(dedup_key=A02).pk, user=lead)
    silence_end(silence_id=quiet.pk, user=lead, now=t0 + timedelta(minutes=1))
    recovery_is_fresh(t0 + timedelta(minutes=2))
    report = evaluate_notifications(now=t0 + timedelta(minutes=2))
    assert report.released == []
    assert deliver_pending(now=t0 + timedelta(minutes=5)).sent == 0 and webhook_receiver.requests == []
    assert set(NotificationDelivery.objects.values_list("state", flat=True)) == {"withheld"}


def test_matchers_each_blank_means_any(floor):
    lead = make_user("lena", SHIFT_LEAD)
    silence(lead, aisle="", event="paused_too_long")
    silence(lead, aisle="A02", reason="RECOVERY_JOB_MISSING")
    pause(floor, 1, 1)
    pause(floor, 1, 2)
    evaluate_notifications()
    held = dict(Notification.objects.values_list("dedup_key", "silenced_by__aisle"))
    assert held == {A01: None, A02: "A02"}


# --- the page ------------------------------------------------------------------------------------

def form(**kw) -> dict:
    start = timezone.localtime(timezone.now() - timedelta(minutes=5))
    data = {"event": "", "reason": "", "aisle": "A01", "starts_at": start.strftime("%Y-%m-%dT%H:%M"),
            "ends_at": (start + timedelta(hours=6)).strftime("%Y-%m-%dT%H:%M"), "comment": "shuttle 2 maintenance"}
    return {**data, **kw}


def test_a_shift_lead_creates_and_ends_a_silence_and_both_are_recorded(client, personas, floor):
    client.force_login(personas["shiftlead"])
    response = client.post(URL, form())
    assert response.status_code == 303
    (s,) = Silence.objects.all()
    assert (s.aisle, s.event, s.reason, s.username, s.created_by_id) == ("A01", "", "", "shiftlead",
                                                                         personas["shiftlead"].pk)
    assert s.ends_at - s.starts_at == timedelta(hours=6)
    html = client.get(response["Location"]).content.decode()
    assert f'id="silence-{s.pk}"' in html and "shuttle 2 maintenance" in html and f"End silence {s.pk}" in html

    assert client.get(f"{URL}{s.pk}/end").status_code == 405
    response = client.post(f"{URL}{s.pk}/end")
    assert response.status_code == 303
    ending = SilenceEnding.objects.get()
    assert (ending.silence_id, ending.username) == (s.pk, "shiftlead")
    assert client.post(f"{URL}{s.pk}/end").status_code == 303  # a double submit: the first ending stays
    assert SilenceEnding.objects.count() == 1
    html = client.get(URL).content.decode()
    assert "ended by shiftlead" in html and f"End silence {s.pk}" not in html
    assert client.post(f"{URL}{10**6}/end").status_code == 404


@pytest.mark.parametrize("changes, field", [
    ({"ends_at": ""}, "ends_at"),
    ({"comment": "  "}, "comment"),
    ({"event": "bogus"}, "event"),
    ({"aisle": "A" * 65}, "aisle"),
    ({"reason": "R\x00"}, "reason"),
    ({"starts_at": "tomorrow"}, "starts_at"),
    ({"ends_at": "2026-13-45T99:99"}, "ends_at"),
    ({"starts_at": "0001-01-01T00:00", "ends_at": "0001-01-02T00:00"}, "ends_at"),
])
def test_bad_input_is_a_400_naming_the_field_and_nothing_is_stored(client, personas, floor, changes, field):
    client.force_login(personas["shiftlead"])
    response = client.post(URL, form(**changes))
    assert response.status_code == 400
    assert f'<span translate="no">{field}</span>:' in response.content.decode()
    assert Silence.objects.count() == 0


def test_a_silence_lasts_at_most_seven_days_and_ends_after_it_starts(client, personas, floor):
    client.force_login(personas["shiftlead"])
    start = timezone.localtime(timezone.now() + timedelta(hours=1))
    too_long = form(starts_at=start.strftime("%Y-%m-%dT%H:%M"),
                    ends_at=(start + timedelta(days=7, minutes=1)).strftime("%Y-%m-%dT%H:%M"))
    backwards = form(starts_at=start.strftime("%Y-%m-%dT%H:%M"),
                     ends_at=(start - timedelta(minutes=1)).strftime("%Y-%m-%dT%H:%M"))
    for data, words in ((too_long, "at most 7 days"), (backwards, "after the start")):
        response = client.post(URL, data)
        assert response.status_code == 400 and words in response.content.decode()
    assert Silence.objects.count() == 0
    exactly_seven = form(starts_at=start.strftime("%Y-%m-%dT%H:%M"),
                         ends_at=(start + timedelta(days=7)).strftime("%Y-%m-%dT%H:%M"))
    assert client.post(URL, exactly_seven).status_code == 303


def test_other_roles_read_the_silences_but_change_nothing(client, personas, floor):
    s = silence(personas["shiftlead"])
    for name in ("supervisor", "operator"):
        client.force_login(personas[name])
        html = client.get(URL).content.decode()
        assert f'id="silence-{s.pk}"' in html and 'id="silence-form"' not in html and "End silence" not in html
        assert client.post(URL, form()).status_code == 403
        assert client.post(f"{URL}{s.pk}/end").status_code == 403
    assert (Silence.objects.count(), SilenceEnding.objects.count()) == (1, 0)
    client.force_login(personas["norole"])
    assert client.get(URL).status_code == 403
    client.logout()
    assert client.get(URL).status_code == 302


def test_the_list_fragment_refreshes_alone(client, personas, floor):
    silence(personas["shiftlead"])
    client.force_login(personas["operator"])
    response = client.get(URL, headers={"HX-Request": "true"})
    html = response.content.decode()
    assert response.status_code == 200 and html.lstrip().startswith('<section id="silences-list"')
    assert "<html" not in html


def test_the_notifications_page_marks_a_silenced_notification(client, personas, floor):
    s = silence(personas["shiftlead"])
    pause(floor, 2, 1)
    evaluate_notifications()
    client.force_login(personas["operator"])
    html = client.get("/notifications/").content.decode()
    assert f'data-silenced="{s.pk}"' in html and f"Silenced (silence {s.pk}" in html
    zh = client.get("/notifications/", headers={"Accept-Language": "zh-Hans"}).content.decode()
    assert f'data-silenced="{s.pk}"' in zh and "Silenced (silence" not in zh


def test_the_handover_lists_the_silences_in_force_in_the_shift(client, personas, floor):
    lead = personas["shiftlead"]
    now = timezone.now()
    current = silence(lead, aisle="A07", start=now - timedelta(minutes=2), hours=1)
    long_ago = silence(lead, aisle="A09", start=now - timedelta(days=3), hours=2)
    client.force_login(lead)
    html = client.get("/handover/").content.decode()
    assert "Silences in force in this shift" in html and ">A07<" in html and ">A09<" not in html
    csv = b"".join(client.get("/handover/", {"format": "csv"}).streaming_content).decode()
    assert "silence," in csv and "aisle=A07" in csv and "aisle=A09" not in csv
    assert long_ago.pk != current.pk


def test_the_silence_page_speaks_chinese(client, personas, floor):
    from tests.console.test_languages_notifications import format_filter_words
    from tests.visible_text import english_left

    s = silence(personas["shiftlead"])
    ended = silence(personas["shiftlead"], aisle="A02")
    silence_end(silence_id=ended.pk, user=personas["shiftlead"])
    client.force_login(personas["shiftlead"])
    allow = {"shiftlead", "shuttle", "maintenance"} | format_filter_words()  # user name, the comment
    html = client.get(URL, headers={"Accept-Language": "zh-Hans"}).content.decode()
    assert "新建静默" in html and f"结束静默 {s.pk}" in html and "由 shiftlead 于" in html
    assert english_left(html, allow=allow) == []
    response = client.post(URL, form(comment="", ends_at=""), headers={"Accept-Language": "zh-Hans"})
    html = response.content.decode()
    assert response.status_code == 400 and "未记录任何内容" in html
    assert english_left(html, allow=allow | {"comment", "ends_at"}) == []  # the fields are named


@pytest.mark.parametrize("sql", [
    "UPDATE console_silence SET ends_at = ends_at + interval '1 day'",
    "DELETE FROM console_silence",
    "UPDATE console_silenceending SET username = 'someone else'",
    "DELETE FROM console_silenceending",
])
def test_silences_and_their_endings_are_append_only_in_the_database(floor, personas, sql):
    s = silence(personas["shiftlead"])
    silence_end(silence_id=s.pk, user=personas["shiftlead"])
    with pytest.raises(DatabaseError, match="append-only"), transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(sql)
    assert (Silence.objects.count(), SilenceEnding.objects.count()) == (1, 1)


def test_the_system_checks_report_a_disabled_silence_trigger(floor):
    from console.notifications.checks import check_silence_endings_are_append_only, check_silences_are_append_only

    assert check_silences_are_append_only(databases=["default"]) == []
    assert check_silence_endings_are_append_only(databases=["default"]) == []
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute("ALTER TABLE console_silence DISABLE TRIGGER console_silence_no_update_delete")
        (error,) = check_silences_are_append_only(databases=["default"])
        assert error.id == "console.E130" and "no_update_delete" in error.msg
        transaction.set_rollback(True)


def test_ending_a_silence_that_is_over_is_refused_and_records_nothing(client, personas, floor):
    over = silence(personas["shiftlead"], start=timezone.now() - timedelta(hours=3), hours=1)
    client.force_login(personas["shiftlead"])
    response = client.post(f"{URL}{over.pk}/end")
    assert response.status_code == 409 and f"Silence {over.pk} is already over." in response.content.decode()
    assert SilenceEnding.objects.count() == 0
    assert client.post(f"{URL}{10**30}/end").status_code == 404
    assert client.get(URL, {"created": "x" * 50}).status_code == 200  # a hand-made banner value is ignored
