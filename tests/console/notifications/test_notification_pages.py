"""The notifications page (states, filters, acknowledgement) and the thresholds page."""

import pytest
from django.db import DatabaseError, connection, transaction
from django.utils import timezone

from console.models import Notification, NotificationAcknowledgement, NotificationThreshold
from recovery.engine.decisions import PAUSE_REASONS
from tests.console_personas import *  # noqa: F403  (fixtures: personas)
from tests.notification_support import *  # noqa: F403  (fixtures)

URL = "/notifications/"
THRESHOLDS = "/notifications/thresholds/"


def make(event: str, key: str, state: str = "open", **kw) -> Notification:
    now = timezone.now()
    return Notification.objects.create(event=event, dedup_key=key, state=state, subject=f"{event} about {key}",
                                       url_path="/recovery/", opened_at=now, last_seen_at=now,
                                       resolved_at=now if state == "resolved" else None, **kw)


@pytest.fixture
def three(notify_db, personas):
    return {"open": make("paused", "paused:1", workflow_id=1), "acked": make("stalled", "stalled:2", "acknowledged"),
            "resolved": make("recovery_stale", "recovery_stale", "resolved")}


def login(client, personas, name):
    client.force_login(personas[name])
    return client


def test_the_page_lists_open_acknowledged_and_resolved_ones(client, personas, three):
    html = login(client, personas, "supervisor").get(URL).content.decode()
    for n in three.values():
        assert f'id="notification-{n.pk}"' in html and n.subject in html
    assert "Open 1 · acknowledged 1 · resolved 1" in html
    assert html.count('>Acknowledge</button>') == 1  # only the open one offers it

    html = client.get(URL, {"state": "resolved"}).content.decode()
    assert f'id="notification-{three["resolved"].pk}"' in html and f'id="notification-{three["open"].pk}"' not in html
    html = client.get(URL, {"event": "stalled"}).content.decode()
    assert f'id="notification-{three["acked"].pk}"' in html and f'id="notification-{three["open"].pk}"' not in html


@pytest.mark.parametrize("params, field", [({"state": "bogus"}, "state"), ({"event": "x" * 500}, "event"),
                                           ({"state": "open\x00"}, "state")])
def test_a_bad_filter_is_a_400_naming_the_field(client, personas, three, params, field):
    response = login(client, personas, "operator").get(URL, params)
    assert response.status_code == 400
    assert f"{field}: Select a valid choice" in response.content.decode()


def test_any_console_role_acknowledges_once_and_the_record_says_who(client, personas, three):
    n = three["open"]
    response = login(client, personas, "supervisor").post(f"{URL}{n.pk}/acknowledge",
                                                          {"next": "/notifications/?state=open"})
    assert (response.status_code, response["Location"]) == (303, "/notifications/?state=open")
    n.refresh_from_db()
    ack = n.acknowledgement
    assert (n.state, ack.username, ack.user_id) == ("acknowledged", "supervisor", personas["supervisor"].pk)

    # A double submit, or a second person, changes nothing: the first acknowledgement stands.
    login(client, personas, "shiftlead").post(f"{URL}{n.pk}/acknowledge")
    assert list(NotificationAcknowledgement.objects.values_list("notification_id", "username")) == [
        (n.pk, "supervisor")]
    html = client.get(URL).content.decode()
    assert "by supervisor" in html


def test_htmx_gets_the_row_back(client, personas, three):
    n = three["open"]
    response = login(client, personas, "operator").post(f"{URL}{n.pk}/acknowledge", HTTP_HX_REQUEST="true")
    assert response.status_code == 200
    html = response.content.decode()
    assert html.strip().startswith(f'<tr id="notification-{n.pk}"') and "by operator" in html
    assert "<html" not in html
    assert '<p class="muted" id="notification-counts" hx-swap-oob="true">Open 0 · acknowledged 2 · resolved 1' in html


def test_acknowledging_a_resolved_one_is_refused_and_changes_nothing(client, personas, three):
    response = login(client, personas, "operator").post(f"{URL}{three['resolved'].pk}/acknowledge")
    assert response.status_code == 409 and "only open ones are acknowledged" in response.content.decode()
    assert login(client, personas, "operator").post(f"{URL}99999/acknowledge").status_code == 404
    assert not NotificationAcknowledgement.objects.exists()


def test_acknowledge_refuses_get_anonymous_and_users_without_a_role(client, personas, three):
    path = f"{URL}{three['open'].pk}/acknowledge"
    assert client.post(path).status_code == 302  # to the sign-in page
    assert login(client, personas, "operator").get(path).status_code == 405
    assert login(client, personas, "norole").post(path).status_code == 403
    assert client.get(URL).status_code == 403
    assert not NotificationAcknowledgement.objects.exists()


@pytest.mark.usefixtures("committed_db")
def test_the_database_refuses_to_update_or_delete_an_acknowledgement(client, personas, three):
    login(client, personas, "operator").post(f"{URL}{three['open'].pk}/acknowledge")
    for sql in ("UPDATE console_notificationacknowledgement SET username = 'someone else'",
                "DELETE FROM console_notificationacknowledgement",
                "TRUNCATE console_notificationacknowledgement CASCADE"):
        with pytest.raises(DatabaseError, match="append-only"), transaction.atomic(), connection.cursor() as c:
            c.execute(sql)
    assert list(NotificationAcknowledgement.objects.values_list("username", flat=True)) == ["operator"]


# --- thresholds -----------------------------------------------------------------------------

CODES = [r.value for r in PAUSE_REASONS]  # the form has one field per pause reason


def form(**changes) -> dict:
    return {**dict.fromkeys(CODES, "30"), **changes}


def test_a_shift_lead_sets_thresholds_per_reason_code(client, personas, notify_db):
    response = login(client, personas, "shiftlead").post(THRESHOLDS, form(RECOVERY_JOB_MISSING="90"))
    assert response.status_code == 200 and "Saved: RECOVERY_JOB_MISSING." in response.content.decode()
    assert list(NotificationThreshold.objects.values_list("reason_code", "paused_too_long_minutes", "updated_by")) == [
        ("RECOVERY_JOB_MISSING", 90, personas["shiftlead"].pk)]
    html = client.get(THRESHOLDS).content.decode()
    assert 'name="RECOVERY_JOB_MISSING" value="90"' in html


@pytest.mark.parametrize("name", ["supervisor", "operator"])
def test_others_may_read_thresholds_but_not_change_them(client, personas, notify_db, name):
    login(client, personas, name)
    html = client.get(THRESHOLDS).content.decode()
    assert "RECOVERY_JOB_MISSING" in html and "<input" not in html.split("<main", 1)[1]
    assert client.post(THRESHOLDS, form(RECOVERY_JOB_MISSING="90")).status_code == 403
    assert not NotificationThreshold.objects.exists()


@pytest.mark.parametrize("value, message", [("abc", "Enter a whole number"), ("0", "greater than or equal to 1"),
                                            ("", "This field is required"), ("99999999", "less than or equal to"),
                                            ("١٢", None), ("5\x00", None), ("1e3", "Enter a whole number")])
def test_bad_threshold_input_is_a_400_naming_the_field_and_changes_nothing(client, personas, notify_db, value,
                                                                           message):
    NotificationThreshold.objects.create(reason_code="RECOVERY_JOB_MISMATCH", paused_too_long_minutes=45)
    response = login(client, personas, "shiftlead").post(
        THRESHOLDS, form(RECOVERY_JOB_MISMATCH="60", RECOVERY_JOB_MISSING=value))
    html = response.content.decode()
    assert response.status_code == 400, html
    assert "Nothing was changed." in html and "RECOVERY_JOB_MISSING: " in html
    if message:
        assert message in html
    assert list(NotificationThreshold.objects.values_list("reason_code", "paused_too_long_minutes")) == [
        ("RECOVERY_JOB_MISMATCH", 45)]


def test_the_navigation_links_the_notifications(client, personas, notify_db):
    html = login(client, personas, "supervisor").get("/").content.decode()
    assert 'href="/notifications/"' in html


@pytest.mark.parametrize("nxt", ["https://evil.example/", "/x\nSet-Cookie: a=b", "/x\x00", "//evil.example"])
def test_a_foreign_or_broken_next_goes_back_to_the_list(client, personas, three, nxt):
    response = login(client, personas, "operator").post(f"{URL}{three['open'].pk}/acknowledge", {"next": nxt})
    assert (response.status_code, response["Location"]) == (303, "/notifications/")


def test_a_huge_id_is_a_404(client, personas, three):
    assert login(client, personas, "operator").post(f"{URL}{10**30}/acknowledge").status_code == 404


def test_the_system_check_reports_a_disabled_acknowledgement_trigger(notify_db):
    from console.notifications.checks import check_acknowledgements_are_append_only

    assert check_acknowledgements_are_append_only(databases=["default"]) == []
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute("ALTER TABLE console_notificationacknowledgement "
                           "DISABLE TRIGGER console_notificationacknowledgement_no_update_delete")
        (error,) = check_acknowledgements_are_append_only(databases=["default"])
        assert error.id == "console.E110" and "no_update_delete" in error.msg
        transaction.set_rollback(True)
    assert check_acknowledgements_are_append_only(databases=["default"]) == []
