"""Workflow notes: any console role adds one (form and htmx), append-only in PostgreSQL itself,
validated (400 naming the field), 403 and nothing written without a role, at most
NOTES_PER_USER_PER_HOUR per person (429, nothing written)."""

from datetime import timedelta

import pytest
from django.db import DatabaseError, IntegrityError, connection, transaction
from django.urls import reverse
from django.utils import timezone

from console.models import WorkflowNote
from console.notes.services import NoteRateLimited, note_create


@pytest.fixture
def workflow(wms, audit_truncate_allowed, personas):
    return wms.build("healthy")


def add_url(workflow) -> str:
    return reverse("workflow-note-add", args=[workflow.workflow_id])


def note_rows() -> list[tuple]:
    return list(WorkflowNote.objects.order_by("id").values_list("workflow_id", "username", "text"))


@pytest.mark.parametrize("who", ["supervisor", "operator", "shiftlead"])
def test_every_console_role_adds_a_note(workflow, client, personas, who):
    client.force_login(personas[who])
    response = client.post(add_url(workflow), {"text": "  Vehicle 3 fault, maintenance called.  "})
    assert response.status_code == 303
    assert response["Location"] == reverse("workflow-detail", args=[workflow.workflow_id]) + "#notes"
    assert note_rows() == [(workflow.workflow_id, who, "Vehicle 3 fault, maintenance called.")]
    page = client.get(reverse("workflow-detail", args=[workflow.workflow_id])).content.decode()
    assert "Vehicle 3 fault, maintenance called." in page and 'id="notes"' in page


def test_htmx_gets_the_notes_section_back(workflow, client, personas):
    client.force_login(personas["operator"])
    response = client.post(add_url(workflow), {"text": "Tray wedged at A01"}, headers={"HX-Request": "true"})
    assert response.status_code == 200
    html = response.content.decode()
    assert html.lstrip().startswith('<section id="notes"') and "Tray wedged at A01" in html and "<html" not in html


def test_the_longest_note_is_kept_whole(workflow, client, personas):
    client.force_login(personas["supervisor"])
    text = "x" * 1999 + "\u00e9"
    assert client.post(add_url(workflow), {"text": text}).status_code == 303
    assert note_rows()[0][2] == text


@pytest.mark.parametrize("text", ["", "   ", "x" * 2001, "null\x00byte", "bell\x07", "esc\x1b[31m"])
def test_bad_text_is_a_400_naming_the_field_and_writes_nothing(workflow, client, personas, text):
    client.force_login(personas["operator"])
    response = client.post(add_url(workflow), {"text": text})
    assert response.status_code == 400
    assert "text: " in response.content.decode()
    htmx = client.post(add_url(workflow), {"text": text}, headers={"HX-Request": "true"})
    assert htmx.status_code == 200 and 'id="note-error"' in htmx.content.decode()
    assert note_rows() == []


def test_newlines_and_tabs_are_kept(workflow, client, personas):
    client.force_login(personas["operator"])
    assert client.post(add_url(workflow), {"text": "line one\r\n\tline two"}).status_code == 303
    assert note_rows()[0][2] == "line one\r\n\tline two"


def test_users_without_a_role_get_403_and_nothing_is_written(workflow, client, personas):
    assert client.post(add_url(workflow), {"text": "anonymous"}).status_code == 302
    client.force_login(personas["norole"])
    assert client.post(add_url(workflow), {"text": "no role here"}).status_code == 403
    assert note_rows() == []


def test_get_is_refused_and_an_unknown_workflow_is_404(workflow, client, personas):
    client.force_login(personas["operator"])
    assert client.get(add_url(workflow)).status_code == 405
    assert client.post(reverse("workflow-note-add", args=[999999]), {"text": "lost"}).status_code == 404
    assert note_rows() == []


def test_a_user_without_a_role_sees_neither_the_notes_nor_the_form(workflow, client, personas):
    client.force_login(personas["operator"])
    client.post(add_url(workflow), {"text": "for the floor only"})
    client.force_login(personas["norole"])
    response = client.get(reverse("workflow-detail", args=[workflow.workflow_id]))
    html = response.content.decode()
    assert response.status_code == 403 and "Add a note" not in html and "for the floor only" not in html


@pytest.mark.parametrize("statement", [
    "UPDATE console_workflownote SET text = 'changed'",
    "DELETE FROM console_workflownote",
    "TRUNCATE console_workflownote",
])
@pytest.mark.usefixtures("committed_db")
def test_postgresql_refuses_to_change_or_remove_a_note(workflow, client, personas, statement):
    client.force_login(personas["operator"])
    client.post(add_url(workflow), {"text": "kept forever"})
    with pytest.raises(DatabaseError, match="append-only"), transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(statement)
    note = WorkflowNote.objects.get()
    note.text = "edited through the ORM"
    with pytest.raises(DatabaseError, match="append-only"), transaction.atomic():
        note.save()
    with pytest.raises(DatabaseError, match="append-only"), transaction.atomic():
        note.delete()
    assert note_rows() == [(workflow.workflow_id, "operator", "kept forever")]


def test_the_database_refuses_an_empty_or_overlong_note(workflow, personas):
    for text in ("", "y" * 2001):
        with pytest.raises(IntegrityError), transaction.atomic():
            WorkflowNote.objects.create(workflow_id=workflow.workflow_id, username="x", text=text)


def test_the_system_check_reports_a_disabled_note_trigger(workflow):
    from console.notes.checks import check_notes_are_append_only

    assert check_notes_are_append_only(databases=["default"]) == []
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute("ALTER TABLE console_workflownote DISABLE TRIGGER console_workflownote_no_update_delete")
        (error,) = check_notes_are_append_only(databases=["default"])
        assert error.id == "console.E120" and "console_workflownote_no_update_delete" in error.msg
        transaction.set_rollback(True)
    assert check_notes_are_append_only(databases=["default"]) == []


# --- one person's notes are rate-limited -----------------------------------------------------------


def test_a_person_past_the_hourly_limit_gets_429_and_nothing_is_stored(workflow, client, personas, settings):
    settings.NOTES_PER_USER_PER_HOUR = 3
    client.force_login(personas["operator"])
    for i in range(3):
        assert client.post(add_url(workflow), {"text": f"note {i}"}).status_code == 303
    refused = client.post(add_url(workflow), {"text": "one too many"})
    assert refused.status_code == 429
    assert 1 <= int(refused["Retry-After"]) <= 3600
    html = refused.content.decode()
    assert "You have added 3 notes in the last hour, as many as one person may." in html
    assert "This note was not saved" in html and "one too many" in html  # the text is kept in the form
    assert [r[2] for r in note_rows()] == ["note 0", "note 1", "note 2"]
    # htmx gets the form back with the message (it does not swap a 4xx answer); still nothing stored.
    again = client.post(add_url(workflow), {"text": "still too many"}, headers={"HX-Request": "true"})
    assert again.status_code == 200 and "as many as one person may" in again.content.decode()
    assert len(note_rows()) == 3

    # Another person is not affected; and an hour after the oldest, the operator may write again.
    client.force_login(personas["supervisor"])
    assert client.post(add_url(workflow), {"text": "supervisor's note"}).status_code == 303
    operator = personas["operator"]
    with pytest.raises(NoteRateLimited) as limited:
        note_create(workflow_id=workflow.workflow_id, text="x", user=operator)
    wait = limited.value.retry_after
    assert timedelta(minutes=59) < wait <= timedelta(hours=1)
    note_create(workflow_id=workflow.workflow_id, text="an hour later", user=operator,
                now=timezone.now() + wait + timedelta(seconds=1))
    assert note_rows()[-1][1:] == ("operator", "an hour later")


def test_the_workflow_page_keeps_its_cap_on_notes(workflow, client, personas):
    WorkflowNote.objects.bulk_create([WorkflowNote(workflow_id=workflow.workflow_id, username="flood", text=f"n{i}")
                                      for i in range(250)])
    client.force_login(personas["supervisor"])
    html = client.get(reverse("workflow-detail", args=[workflow.workflow_id])).content.decode()
    assert html.count('<p class="note-text">') == 200
