"""The repair audit: append-only in the database itself, filters, CSV export, read-only admin,
and the workflow page's repair panel."""

import csv
import io

import pytest
from django.contrib.auth.models import User
from django.db import DatabaseError, connection, transaction
from django.template.loader import render_to_string
from django.urls import reverse

from console.models import RepairAudit
from console.repair.selectors import repair_panel
from tests.repair_support import at_source, fingerprint, key, paused

REASON = "Job vanished at the restart at 02:10"


def reissue(client, wid, text=REASON):
    return client.post(reverse("repair-apply", args=[wid, "reissue"]), {
        "reason_code": "JOB_LOST_AT_RESTART", "reason_text": text, "fingerprint": fingerprint(wid),
        "idempotency_key": key(), **at_source(wid)})


@pytest.fixture
def two_rows(repair_db, operator, client):
    wid = paused(repair_db, "job_missing").workflow_id
    client.force_login(operator)
    reissue(client, wid, text="short")  # refused
    reissue(client, wid)  # applied
    assert RepairAudit.objects.count() == 2
    return wid


@pytest.mark.parametrize("sql", [
    "UPDATE console_repairaudit SET outcome = 'APPLIED', reason_text = 'edited'",
    "DELETE FROM console_repairaudit",
    "TRUNCATE console_repairaudit",
])
@pytest.mark.usefixtures("committed_db")
def test_the_database_refuses_to_change_or_remove_audit_rows(two_rows, sql):
    with pytest.raises(DatabaseError, match="append-only"), transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(sql)
    assert sorted(RepairAudit.objects.values_list("outcome", "reason_text")) == [
        ("APPLIED", REASON), ("REFUSED:REASON_TOO_SHORT", "short")]


def test_the_orm_cannot_edit_an_audit_row_either(two_rows):
    row = RepairAudit.objects.first()
    row.reason_text = "rewritten"
    with pytest.raises(DatabaseError), transaction.atomic():
        row.save()
    with pytest.raises(DatabaseError), transaction.atomic():
        RepairAudit.objects.all().delete()
    assert RepairAudit.objects.count() == 2


def test_a_user_with_audit_rows_cannot_be_deleted(two_rows, operator):
    with pytest.raises(Exception), transaction.atomic():  # noqa: B017  (PROTECT, then the database)
        User.objects.filter(pk=operator.pk).delete()
    assert RepairAudit.objects.filter(user=operator).count() == 2


def test_it_filters_the_audit_page(two_rows, supervisor, client):
    client.force_login(supervisor)
    page = client.get(reverse("repair-audit"))
    assert page.status_code == 200 and len(page.context["page"].rows) == 2
    refused = client.get(reverse("repair-audit"), {"outcome": "REFUSED"})
    assert [r.outcome for r in refused.context["page"].rows] == ["REFUSED:REASON_TOO_SHORT"]
    assert len(client.get(reverse("repair-audit"), {"user": "OLGA"}).context["page"].rows) == 2
    assert client.get(reverse("repair-audit"), {"user": "nobody"}).context["page"].rows == []
    assert len(client.get(reverse("repair-audit"), {"workflow": two_rows}).context["page"].rows) == 2
    assert client.get(reverse("repair-audit"), {"workflow": two_rows + 1}).context["page"].rows == []
    assert len(client.get(reverse("repair-audit"), {"action": "REISSUE", "reason_code": "JOB_LOST_AT_RESTART"})
               .context["page"].rows) == 2
    assert client.get(reverse("repair-audit"), {"since": "2999-01-01T00:00"}).context["page"].rows == []
    assert len(client.get(reverse("repair-audit"), {"until": "2999-01-01T00:00"}).context["page"].rows) == 2


def test_it_pages_the_audit_by_keyset(two_rows, supervisor, client):
    from console.repair import selectors as repair_selectors

    first = repair_selectors.audit_page(filters={}, size=1)
    assert len(first.rows) == 1 and first.next_before == first.rows[0].id
    second = repair_selectors.audit_page(filters={}, before_id=first.next_before, size=1)
    assert second.rows[0].id < first.rows[0].id and second.next_before is None


def test_it_exports_the_filtered_audit_as_csv(two_rows, supervisor, client):
    client.force_login(supervisor)
    response = client.get(reverse("repair-audit-csv"), {"outcome": "APPLIED"})
    assert response.status_code == 200 and response.streaming
    assert response["Content-Type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(b"".join(response.streaming_content).decode())))
    assert [(r["username"], r["action"], r["outcome"], r["reason_text"]) for r in rows] == [
        ("olga", "REISSUE", "APPLIED", REASON)]
    assert '"workflow_status": "PAUSED_RECOVERY"' in rows[0]["evidence_before"]


def test_the_audit_pages_need_a_console_role(two_rows, client):
    client.logout()
    assert client.get(reverse("repair-audit"))["Location"].startswith(reverse("login"))
    client.force_login(User.objects.create_user("nobody"))
    assert client.get(reverse("repair-audit")).status_code == 403
    assert client.get(reverse("repair-audit-csv")).status_code == 403


def test_the_admin_shows_audit_rows_read_only(two_rows):
    admin = User.objects.create_superuser("root", password="pw")
    from django.test import Client

    c = Client()
    c.force_login(admin)
    row = RepairAudit.objects.first()
    assert c.get(reverse("admin:console_repairaudit_changelist")).status_code == 200
    assert c.get(reverse("admin:console_repairaudit_change", args=[row.pk])).status_code == 200
    assert c.get(reverse("admin:console_repairaudit_add")).status_code == 403
    assert c.get(reverse("admin:console_repairaudit_delete", args=[row.pk])).status_code == 403
    c.post(reverse("admin:console_repairaudit_change", args=[row.pk]), {"reason_text": "edited"})
    assert RepairAudit.objects.get(pk=row.pk).reason_text == row.reason_text


# --- the workflow page's panel ------------------------------------------------------------------


def panel(user, wid) -> str:
    # The panel is built by its selector and rendered by a plain template.
    return render_to_string("repair/_panel.html", {"panel": repair_panel(user=user, workflow_id=wid)})


def test_the_panel_offers_only_actions_whose_preconditions_hold(repair_db, operator):
    wid = paused(repair_db, "job_missing").workflow_id
    html = panel(operator, wid)
    assert reverse("repair-form", args=[wid, "reissue"]) in html
    assert reverse("repair-form", args=[wid, "reconcile-source"]) in html
    assert reverse("repair-form", args=[wid, "recheck"]) not in html
    assert "still says pause with RECOVERY_JOB_MISSING" in html  # why re-check is not offered
    assert reverse("repair-form", args=[wid, "cancel"]) not in html  # operators do not cancel


def test_the_panel_shows_a_supervisor_the_trail_and_no_controls(repair_db, operator, supervisor, client):
    wid = paused(repair_db, "job_missing").workflow_id
    client.force_login(operator)
    reissue(client, wid, text="short")
    html = panel(supervisor, wid)
    assert "REFUSED:REASON_TOO_SHORT" in html
    assert "/repair/workflow/" not in html and "<form" not in html


def test_the_panel_offers_cancel_to_a_shift_lead(repair_db, shiftlead):
    wid = paused(repair_db, "active_mismatch").workflow_id
    html = panel(shiftlead, wid)
    assert reverse("repair-form", args=[wid, "cancel"]) in html
    assert reverse("repair-form", args=[wid, "reissue"]) not in html
    assert "describes a different move" in html  # why reconcile-to-source is not offered


def test_the_repair_page_renders_for_each_role(repair_db, operator, supervisor, client):
    wid = paused(repair_db, "job_missing").workflow_id
    for user in (operator, supervisor):
        client.force_login(user)
        assert client.get(reverse("repair-workflow", args=[wid])).status_code == 200
    client.force_login(operator)
    form = client.get(reverse("repair-form", args=[wid, "reconcile-target"]))
    assert form.status_code == 200 and 'name="tray_code"' in form.content.decode()
    assert 'value="JOB_LOST_AT_RESTART"' not in form.content.decode()  # only codes for this action


def test_the_system_check_reports_a_disabled_audit_trigger(repair_db):
    from console.repair.checks import check_audit_is_append_only

    assert check_audit_is_append_only(databases=["default"]) == []
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute("ALTER TABLE console_repairaudit DISABLE TRIGGER console_repairaudit_no_update_delete")
        (error,) = check_audit_is_append_only(databases=["default"])
        assert error.id == "console.E100" and "console_repairaudit_no_update_delete" in error.msg
        transaction.set_rollback(True)
    assert check_audit_is_append_only(databases=["default"]) == []
