"""Shared floor terminals (docs/operations.md "Security"): no signed-in answer or export is kept by a browser
or a proxy (`Cache-Control: no-store, private`), a session ends after SESSION_IDLE_MINUTES
without a person's request (a page refreshing itself is not one) and when the browser closes,
and the language cookie is Secure and SameSite on a configured database."""

from datetime import timedelta

import pytest
from django.contrib.sessions.models import Session
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from tests.ops.test_security_settings import _run, production_env

# Other connections (threads, processes, a live server) must see these tests' rows.
pytestmark = pytest.mark.usefixtures("committed_db")

NO_STORE = "no-store, private"


def _pages(workflow_id: int) -> list[str]:
    return [reverse("dashboard"), reverse("paused-workflows"), reverse("workflow-detail", args=[workflow_id]),
            reverse("locks"), reverse("rack-map"), reverse("reason-codes"), reverse("recovery-health"),
            reverse("flow-health"), reverse("active-workflows"), reverse("search") + "?q=nothing-here",
            reverse("handover"), reverse("handover") + "?format=csv", reverse("notifications"),
            reverse("notification-thresholds"), reverse("repair-audit"), reverse("repair-audit-csv"),
            reverse("security")]


def test_every_signed_in_answer_and_export_is_no_store_private(wms, personas):
    built = wms.build("paused")
    client = Client()
    client.force_login(personas["shiftlead"])
    for path in _pages(built.workflow_id):
        response = client.get(path)
        assert response.status_code == 200, path
        assert response["Cache-Control"] == NO_STORE, (path, response.get("Cache-Control"))
    # A live refresh (htmx fragment), a refused page and a form post are signed-in answers too.
    fragment = client.get(reverse("paused-workflows"), headers={"HX-Request": "true", "HX-Target": "paused-results",
                                                                 "HX-Trigger": "paused-results"})
    assert fragment.status_code == 200 and fragment["Cache-Control"] == NO_STORE
    note = client.post(reverse("workflow-note-add", args=[built.workflow_id]), {"text": "vehicle 3 stopped"})
    assert note.status_code in (200, 302, 303) and note["Cache-Control"] == NO_STORE
    norole = Client()
    norole.force_login(personas["norole"])
    refused = norole.get(reverse("dashboard"))
    assert refused.status_code == 403 and refused["Cache-Control"] == NO_STORE


def test_answers_to_nobody_signed_in_keep_their_own_caching(transactional_db, client):
    assert client.get("/metrics")["Cache-Control"] == "no-store"  # its own, unchanged
    assert client.get("/health/live")["Cache-Control"] == "max-age=0, no-cache, no-store, must-revalidate, private"
    assert "Cache-Control" not in client.get("/api/wcs/openapi.json")


def _session_expiry(client) -> timezone.datetime:
    return Session.objects.get(session_key=client.session.session_key).expire_date


def test_a_session_ends_after_the_idle_time_and_a_live_refresh_is_not_activity(wms, personas, settings):
    settings.SESSION_COOKIE_AGE = 30 * 60
    client = Client()
    client.force_login(personas["supervisor"])
    assert client.get(reverse("dashboard")).status_code == 200
    first = _session_expiry(client)
    assert timedelta(minutes=29) < first - timezone.now() <= timedelta(minutes=30)

    # A person's request more than a minute later moves the end of the session on.
    _backdate_activity(client, minutes=5)
    Session.objects.filter(session_key=client.session.session_key).update(expire_date=first - timedelta(minutes=5))
    assert client.get(reverse("paused-workflows")).status_code == 200
    moved = _session_expiry(client)
    assert timedelta(minutes=29) < moved - timezone.now() <= timedelta(minutes=30)

    # A page refreshing itself every few seconds does not: a terminal left on the dashboard
    # signs out after the idle time like any other.
    _backdate_activity(client, minutes=5)
    Session.objects.filter(session_key=client.session.session_key).update(expire_date=moved - timedelta(minutes=5))
    poll = client.get(reverse("dashboard"), headers={"HX-Request": "true", "HX-Target": "dashboard-live",
                                                      "HX-Trigger": "dashboard-live"})
    assert poll.status_code == 200
    assert _session_expiry(client) == moved - timedelta(minutes=5)

    # Past the idle time the session is gone: the next request asks for the sign-in again.
    Session.objects.filter(session_key=client.session.session_key).update(
        expire_date=timezone.now() - timedelta(seconds=1))
    answer = client.get(reverse("dashboard"))
    assert answer.status_code == 302 and answer["Location"].startswith(reverse("login"))


def _backdate_activity(client, *, minutes: int) -> None:
    """The session's record of the last activity, as if it had been `minutes` ago (saving the
    session moves its end; the caller sets the end afterwards)."""
    from console.security.terminals import ACTIVITY_KEY

    session = client.session
    session[ACTIVITY_KEY] = session[ACTIVITY_KEY] - minutes * 60
    session.save()


def test_the_session_cookie_ends_with_the_browser(transactional_db, personas, settings):
    client = Client()
    response = client.post(reverse("login"), {"username": "supervisor", "password": "pw-" + "x" * 8})
    assert response.status_code == 302
    cookie = response.cookies[settings.SESSION_COOKIE_NAME]
    assert cookie["max-age"] == "" and cookie["expires"] == ""  # a browser-session cookie


SHOW = ("from django.conf import settings as s; print(s.SESSION_COOKIE_AGE, s.SESSION_EXPIRE_AT_BROWSER_CLOSE, "
        "s.LANGUAGE_COOKIE_SECURE, s.LANGUAGE_COOKIE_SAMESITE, s.LANGUAGE_COOKIE_HTTPONLY)")


@pytest.mark.django_db
def test_production_sessions_last_a_shift_and_the_language_cookie_is_secure():
    result = _run(["shell", "-c", SHOW], production_env())
    assert result.returncode == 0, result.stderr
    assert result.stdout.split()[-5:] == ["28800", "True", "True", "Lax", "True"]
    result = _run(["shell", "-c", SHOW], production_env(SESSION_IDLE_MINUTES="45", LANGUAGE_COOKIE_SECURE="false"))
    assert result.stdout.split()[-5:] == ["2700", "True", "False", "Lax", "True"]


@pytest.mark.django_db
@pytest.mark.parametrize("value", ["0", "a shift", "100000"])
def test_a_bad_idle_time_stops_the_program_naming_it(value):
    result = _run(["check"], production_env(SESSION_IDLE_MINUTES=value))
    assert result.returncode != 0 and "SESSION_IDLE_MINUTES" in result.stderr


def test_the_language_cookie_carries_secure_and_samesite_when_set(transactional_db, settings):
    settings.LANGUAGE_COOKIE_SECURE = True
    client = Client()
    client.get(reverse("login"))
    response = client.post(reverse("set_language"), {"language": "zh-hans", "next": "/"})
    cookie = response.cookies[settings.LANGUAGE_COOKIE_NAME]
    assert cookie.value == "zh-hans"
    assert cookie["secure"] is True and cookie["samesite"] == "Lax" and cookie["httponly"] is True


@pytest.mark.django_db
def test_check_deploy_still_passes_with_the_production_variables():
    result = _run(["check", "--deploy", "--fail-level", "WARNING"], production_env())
    assert result.returncode == 0, result.stdout + result.stderr
