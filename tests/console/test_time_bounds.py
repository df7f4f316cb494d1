"""Every date and time a person or a query string gives lies where the stack stores it and reads
it back in every time zone (console.input_checks: EARLIEST_TIME, LATEST_TIME), else a 400 naming
the field and nothing stored; and a page never fails because of one stored row it cannot read (a
silence planted in the table past year 9999, which psycopg cannot load): it is listed as
unreadable and the page answers."""

from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from console.models import Silence, SilenceEnding
from console.notifications.evaluate import evaluate_notifications
from console.notifications.services import silence_create
from recovery.models import Cordon
from tests.notification_support import recovery_is_fresh

SILENCES = "/notifications/silences/"


@pytest.fixture
def new_york(settings):
    settings.TIME_ZONE = "America/New_York"


def silence_form(starts_at: str, ends_at: str) -> dict:
    return {"event": "", "reason": "", "aisle": "A01", "starts_at": starts_at, "ends_at": ends_at,
            "comment": "shuttle 2 maintenance"}


def named(response, field: str) -> bool:
    return f'<span translate="no">{field}</span>:' in response.content.decode()


def test_a_silence_at_the_end_of_the_calendar_is_a_400_naming_the_field(client, personas, notify_db, new_york):
    client.force_login(personas["shiftlead"])
    response = client.post(SILENCES, silence_form("9999-12-31T23:00", "9999-12-31T23:59"))
    assert response.status_code == 400
    assert named(response, "starts_at") and named(response, "ends_at")
    assert "between 1900-01-01 and 9000-01-01" in response.content.decode()
    response = client.post(SILENCES, silence_form("", "9999-12-31T23:59"))
    assert response.status_code == 400 and named(response, "ends_at")
    assert Silence.objects.count() == 0
    assert client.get(SILENCES).status_code == 200


@pytest.mark.parametrize("shift", ["9999-12-31@22:00", "9999-12-31@06:00", "0001-01-01@06:00", "8999-12-31@06:00"])
def test_a_handover_shift_at_the_end_of_the_calendar_is_a_400_naming_the_field(client, personas, wms, new_york,
                                                                                 shift):
    client.force_login(personas["supervisor"])
    for extra in ({}, {"format": "csv"}):
        response = client.get("/handover/", {"shift": shift, **extra})
        if shift.startswith("8999"):  # the last shift start before the bound: shown
            assert response.status_code == 200
            continue
        assert response.status_code == 400
        assert "shift" in response.content.decode() and "between 1900-01-01 and 9000-01-01" in \
            response.content.decode()


def test_a_cordon_ending_at_the_end_of_the_calendar_is_a_400_naming_the_field(client, personas, wms, new_york):
    client.force_login(personas["shiftlead"])
    response = client.post("/cordons/new/", {"scope": "AISLE", "place": "A01", "reason": "inspection",
                                             "ends_at": "9999-12-31T23:00"})
    assert response.status_code == 400
    assert "<code>ends_at</code>" in response.content.decode()
    assert Cordon.objects.count() == 0


@pytest.mark.parametrize("field", ["since", "until"])
def test_an_audit_filter_at_the_end_of_the_calendar_is_a_400_naming_the_field(client, personas, wms, new_york,
                                                                                field):
    client.force_login(personas["shiftlead"])
    for path in ("/repair/audit/", "/repair/audit.csv"):
        response = client.get(path, {field: "9999-12-31T23:00"})
        assert response.status_code == 400, path
        assert field in response.content.decode()


def plant_silence(user, starts_at: str, ends_at: str) -> int:
    """A silence written into the table directly, as no form would write it."""
    with connection.cursor() as cursor:
        cursor.execute(f"INSERT INTO {Silence._meta.db_table} "
                       "(event, reason, aisle, starts_at, ends_at, comment, created_at, created_by_id, username) "
                       "VALUES ('', '', 'A09', %s, %s, 'planted by hand', now(), %s, %s) RETURNING id",
                       [starts_at, ends_at, user.pk, user.username])
        return cursor.fetchone()[0]


def test_a_stored_silence_that_cannot_be_read_is_listed_as_unreadable_and_every_page_answers(
        client, personas, notify_db, new_york):
    lead = personas["shiftlead"]
    recovery_is_fresh()
    now = timezone.now()
    readable = silence_create(user=lead, event="", reason="", aisle="A01", starts_at=now - timedelta(minutes=1),
                              ends_at=now + timedelta(hours=1), comment="shuttle A01 maintenance")
    planned = plant_silence(lead, "10000-01-01 04:00+00", "10000-01-01 04:59+00")
    running = plant_silence(lead, (now - timedelta(minutes=5)).isoformat(), "10000-01-01 04:59+00")
    with pytest.raises(Exception):  # noqa: B017, PT011  (what the pages met before: psycopg's DataError)
        list(Silence.objects.filter(pk=planned))

    client.force_login(lead)
    response = client.get(SILENCES)
    assert response.status_code == 200
    html = response.content.decode()
    assert 'id="silences-unreadable"' in html
    assert f'id="silence-{planned}"' in html and f'id="silence-{running}"' in html and "planted by hand" in html
    assert f'id="silence-{readable.pk}"' in html
    assert client.get(SILENCES, headers={"HX-Request": "true"}).status_code == 200

    # Ending another silence works, and so does ending the unreadable one (its times stay unread).
    assert client.post(f"{SILENCES}{readable.pk}/end").status_code == 303
    assert client.post(f"{SILENCES}{running}/end").status_code == 303
    assert set(SilenceEnding.objects.values_list("silence_id", flat=True)) == {readable.pk, running}
    assert client.get(SILENCES).status_code == 200

    handover = client.get("/handover/")
    assert handover.status_code == 200
    assert 'id="handover-unreadable-silences"' in handover.content.decode()
    assert client.get("/handover/", {"format": "csv"}).status_code == 200
    assert client.get("/handover/", {"section": "silences"}).status_code == 200
    evaluate_notifications()  # the evaluator's silence lookup never loads them either


def test_a_stored_cordon_whose_end_cannot_be_read_is_shown_so_and_the_pages_answer(client, personas, wms, new_york):
    space = wms.move().source
    with connection.cursor() as cursor:
        cursor.execute(f"INSERT INTO {Cordon._meta.db_table} (scope, place, reason, ends_at, created_by, created_at) "
                       "VALUES ('SPACE', %s, 'planted by hand', '10000-01-01 04:59+00', 'lena', now()) RETURNING id",
                       [space])
        planted = cursor.fetchone()[0]
    client.force_login(personas["supervisor"])
    response = client.get("/cordons/")
    assert response.status_code == 200
    html = response.content.decode()
    in_force = html.split('id="cordons-in-force"', 1)[1].split("</table>", 1)[0]
    assert f'<td data-label="#">{planted}</td>' in in_force and "a time that cannot be read" in in_force
    assert client.get("/cordons/", headers={"HX-Request": "true"}).status_code == 200
    assert client.get("/map/").status_code == 200
