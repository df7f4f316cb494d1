"""An audit entry shows the evidence before and after as a table, like the evidence card:
one field per row, before and after side by side, the changed fields marked."""

import re

from django.urls import reverse

from console.models import RepairAudit
from console.repair.evidence_diff import evidence_rows
from tests.repair_support import at_source, paused

REASON = "Job lost at the 02:10 restart; tray seen at its source"


def test_nested_objects_become_fields_and_lists_read_as_values():
    before = {"workflow_status": "PAUSED_RECOVERY", "active_job": None, "stock_locations": ["A01", "A02"],
              "source_exists": True, "moves": [{"tray": "T1"}, {"tray": "T2"}]}
    after = {"workflow_status": "ACTIVE", "active_job": {"job_id": "TDY-1-1", "status": 1},
             "stock_locations": ["A01", "A02"], "source_exists": True, "moves": [{"tray": "T1"}, {"tray": "T3"}]}
    rows = {r.key: (r.label, r.before, r.after, r.changed) for r in evidence_rows(before, after)}
    assert rows == {
        "workflow_status": ("workflow status", "PAUSED_RECOVERY", "ACTIVE", True),
        "stock_locations": ("stock locations", "A01, A02", "A01, A02", False),
        "source_exists": ("source exists", "yes", "yes", False),
        "moves[0].tray": ("moves[0] · tray", "T1", "T1", False),
        "moves[1].tray": ("moves[1] · tray", "T2", "T3", True),
        "active_job.job_id": ("active job · job id", "—", "TDY-1-1", True),
        "active_job.status": ("active job · status", "—", "1", True),
    }
    assert [r.key for r in evidence_rows({"finish_job": None}, {"finish_job": None})] == ["finish_job"]
    # jsonb reorders keys; the rows follow the evidence's own field order, unknown keys last.
    assert [r.key for r in evidence_rows(before, after)] == [
        "workflow_status", "active_job.job_id", "active_job.status", "stock_locations", "source_exists",
        "moves[0].tray", "moves[1].tray"]
    assert [r.key for r in evidence_rows({"step": {"tray_code": "T1", "step_id": 3}, "workflow_id": 1}, None)] == [
        "workflow_id", "step.step_id", "step.tray_code"]
    assert evidence_rows(None, None) == []
    assert [(r.before, r.after) for r in evidence_rows(None, {"stock_rows": 0})] == [("—", "0")]


def test_the_audit_entry_page_shows_a_table_with_the_changed_fields_marked(repair_db, operator, client):
    built = paused(repair_db, "job_missing")
    wid = built.workflow_id
    client.force_login(operator)
    preview = client.post(reverse("repair-preview", args=[wid, "reissue"]),
                          {"reason_code": "JOB_LOST_AT_RESTART", "reason_text": REASON, **at_source(wid)})
    client.post(reverse("repair-apply", args=[wid, "reissue"]), {
        "reason_code": "JOB_LOST_AT_RESTART", "reason_text": REASON,
        "fingerprint": preview.context["preview"].fingerprint, "idempotency_key": preview.context["key"],
        **at_source(wid)})
    entry = RepairAudit.objects.get(stage="APPLY")
    html = client.get(reverse("repair-audit-entry", args=[entry.pk])).content.decode()

    assert "{'" not in html and "None," not in html  # no Python dict on the page
    status = re.search(r'<tr data-field="workflow_status" class="changed">(.*?)</tr>', html, re.S)
    assert status, "the workflow status row is marked changed"
    assert re.search(r'<td data-label="Before">PAUSED_RECOVERY</td>', status.group(1))
    assert "<strong>ACTIVE</strong>" in status.group(1) and "changed</span>" in status.group(1)
    assert re.search(r'<tr data-field="active_job.job_id" class="changed">\s*<th scope="row">active job · job id'
                     rf'</th>\s*<td data-label="Before">—</td>\s*<td data-label="After"><strong>TDY-{wid}-', html)
    unchanged = re.search(r'<tr data-field="step_count">\s*<th scope="row">step count</th>\s*'
                          r'<td data-label="Before">(\d+)</td>\s*<td data-label="After">(\d+)</td>', html)
    assert unchanged and unchanged.group(1) == unchanged.group(2)
    changed = sum(r.changed for r in evidence_rows(entry.evidence_before, entry.evidence_after))
    assert changed >= 3 and f"<strong>{changed}</strong> fields changed" in html


def test_a_refused_attempt_shows_the_same_evidence_on_both_sides(repair_db, operator, client):
    wid = paused(repair_db, "job_missing").workflow_id
    client.force_login(operator)
    client.post(reverse("repair-preview", args=[wid, "reissue"]),
                {"reason_code": "JOB_LOST_AT_RESTART", "reason_text": "short"})
    entry = RepairAudit.objects.get()
    html = client.get(reverse("repair-audit-entry", args=[entry.pk])).content.decode()
    assert entry.outcome == "REFUSED:REASON_TOO_SHORT" and entry.evidence_before == entry.evidence_after
    assert "No field changed." in html and 'class="changed"' not in html
    assert '<tr data-field="workflow_status">' in html
