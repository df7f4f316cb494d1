"""Batch re-check in the qcluster: the request records the batch and enqueues one task; the task
re-checks the workflows one by one through the apply-once frame (each outcome commits as it
finishes, a second delivery re-checks nothing twice); the result page shows progress and polls
with htmx until done, and works without JavaScript."""

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from django.db import connections
from django.urls import reverse
from django_q.models import OrmQ

from console import repair
from console.models import RepairAudit, RepairBatch
from console.repair.batch import BATCH_TASK, item_key
from console.repair.registry import RepairAction
from console.repair.tasks import batch_recheck_task
from console.replay.processes import database_url
from recovery.engine.evidence import evidence_for_workflow
from tests.repair_support import *  # noqa: F403  (fixtures)
from tests.repair_support import fingerprint, key, paused, run_queued_tasks
from tests.wms_state import diff, snapshot

# Other connections (threads, processes, a live server) must see these tests' rows.
pytestmark = pytest.mark.usefixtures("committed_db")

ROOT = Path(__file__).resolve().parents[3]
REASON = "Jobs restored from the WMS backup at 03:00"


def three_paused(wms):
    """Two workflows whose job was restored in the WMS (re-check resumes them), one still broken."""
    fixed = []
    for _ in range(2):
        built = paused(wms, "job_missing")
        wms.job(built, 0, status=1)
        fixed.append(built.workflow_id)
    unfixed = paused(wms, "job_missing").workflow_id
    return fixed, unfixed


def submit(client, workflow_ids):
    data = {"workflow": [f"{w}:{fingerprint(w)}" for w in workflow_ids], "reason_code": "WMS_RECORDS_FIXED",
            "reason_text": REASON, "idempotency_key": key()}
    return client.post(reverse("repair-batch-apply"), data)


def test_the_request_records_the_batch_and_enqueues_one_task(repair_db, operator, client, settings):
    fixed, unfixed = three_paused(repair_db)
    wids = sorted([*fixed, unfixed])
    client.force_login(operator)
    before = snapshot()
    response = submit(client, wids)
    batch = RepairBatch.objects.get()
    assert response.status_code == 303 and response["Location"] == reverse("repair-batch-result", args=[batch.pk])
    (queued,) = OrmQ.objects.all()
    assert (queued.task["func"], queued.task["args"]) == (BATCH_TASK, (batch.pk,))
    assert queued.task["name"] == f"batch-recheck-{batch.pk}"
    # Nothing was re-checked inside the request.
    assert diff(before, snapshot()) == {} and RepairAudit.objects.count() == 0
    assert batch.previewed == {str(w): fingerprint(w) for w in wids}
    assert (batch.workflow_count, batch.finished_at) == (3, None)

    page = client.get(response["Location"])
    html = page.content.decode()
    assert "<strong>0</strong> of 3 done" in html and "No workflow re-checked yet." in html
    assert f'hx-trigger="every {settings.CONSOLE_REFRESH_SECONDS}s"' in html
    assert f'<noscript><meta http-equiv="refresh" content="{settings.CONSOLE_REFRESH_SECONDS}"></noscript>' in html
    assert f'<a href="{response["Location"]}">Refresh</a>' in html


def test_the_page_shows_partial_progress_and_stops_polling_when_done(repair_db, operator, client):
    fixed, unfixed = three_paused(repair_db)
    client.force_login(operator)
    location = submit(client, sorted([*fixed, unfixed]))["Location"]
    batch = RepairBatch.objects.get()
    # The first workflow's re-check finished (as the task does it: its item key, linked to the batch).
    first = min(fixed)
    repair.repair_apply(user=operator, request=repair.RepairRequest(RepairAction.RECHECK, first, "WMS_RECORDS_FIXED",
                                                                   REASON),
                        previewed_fingerprint=batch.previewed[str(first)], idempotency_key=item_key(batch, first),
                        batch=batch)

    fragment = client.get(location, headers={"HX-Request": "true", "HX-Target": "batch-progress"})
    html = fragment.content.decode()
    assert html.lstrip().startswith('<section id="batch-progress"') and "<h1>" not in html
    assert "<strong>1</strong> of 3 done" in html and "hx-trigger" in html
    assert "<strong>1</strong> resumed, <strong>0</strong> refused" in html and f"#{first}" in html

    assert run_queued_tasks() == 1
    # The task skipped the workflow already re-checked: one audit row per workflow.
    assert sorted(RepairAudit.objects.values_list("workflow_id", flat=True)) == sorted([*fixed, unfixed])
    fragment = client.get(location, headers={"HX-Request": "true", "HX-Target": "batch-progress"})
    html = fragment.content.decode()
    assert "<strong>3</strong> of 3 done, finished" in html
    assert "<strong>2</strong> resumed, <strong>1</strong> refused" in html
    assert "hx-trigger" not in html and "hx-get" not in html  # polling stops: the new region has no trigger
    page = client.get(location).content.decode()
    assert "http-equiv" not in page and ">Refresh<" not in page


def test_the_task_records_each_outcome_and_a_second_delivery_rechecks_nothing(repair_db, operator, client):
    fixed, unfixed = three_paused(repair_db)
    client.force_login(operator)
    submit(client, sorted([*fixed, unfixed]))
    batch = RepairBatch.objects.get()
    assert batch_recheck_task(batch.pk).startswith(f"batch re-check {batch.pk}: 3 workflow(s), finished")
    outcomes = dict(batch.audit.values_list("workflow_id", "outcome"))
    assert outcomes == {fixed[0]: "APPLIED", fixed[1]: "APPLIED", unfixed: "REFUSED:PRECONDITION"}
    assert {evidence_for_workflow(w).workflow_status for w in fixed} == {"ACTIVE"}
    assert set(batch.audit.values_list("idempotency_key", flat=True)) == {item_key(batch, w) for w in outcomes}
    batch.refresh_from_db()
    finished = batch.finished_at
    assert finished is not None

    before, audits = snapshot(), RepairAudit.objects.count()
    batch_recheck_task(batch.pk)  # delivered again
    assert diff(before, snapshot()) == {} and RepairAudit.objects.count() == audits
    batch.refresh_from_db()
    assert batch.finished_at == finished


def test_two_deliveries_at_once_recheck_each_workflow_once(repair_db, operator, client):
    fixed, unfixed = three_paused(repair_db)
    client.force_login(operator)
    submit(client, sorted([*fixed, unfixed]))
    batch = RepairBatch.objects.get()
    barrier, errors = threading.Barrier(2), []

    def deliver():
        try:
            barrier.wait()
            batch_recheck_task(batch.pk)
        except Exception as exc:  # noqa: BLE001  (reported to the test)
            errors.append(exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=deliver) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert errors == []
    assert sorted(batch.audit.values_list("workflow_id", flat=True)) == sorted([*fixed, unfixed])
    assert RepairAudit.objects.count() == 3


@pytest.mark.slow
def test_a_real_qcluster_runs_the_batch(repair_db, operator, client, settings):
    """End to end: the request enqueues, a `manage.py qcluster` process picks the task up and the
    page reaches "3 of 3 done"."""
    fixed, unfixed = three_paused(repair_db)
    client.force_login(operator)
    location = submit(client, sorted([*fixed, unfixed]))["Location"]
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "tests.settings", "DATABASE_URL": database_url("tidy-test-qcluster"),
           "SECRET_KEY": settings.SECRET_KEY, "DEBUG": "1",  # the same key signs and reads queued tasks
           "ALLOW_DEBUG_ON_CONFIGURED_DATABASE": "1",
           "WCS_CALLBACK_TOKEN": "dev-wcs-token-for-the-qcluster-test", "Q_SYNC": "0",
           "Q_WORKERS": "3"}  # one worker runs the recovery runner
    proc = subprocess.Popen([sys.executable, "manage.py", "qcluster"], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    deadline = time.monotonic() + 40
    batch = RepairBatch.objects.get()
    try:
        while batch.finished_at is None and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.5)
            batch.refresh_from_db()
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            out, _ = proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            out, _ = proc.communicate()
    assert batch.finished_at is not None, f"the qcluster did not finish the batch in 40 s:\n{out[-4000:]}"
    assert dict(batch.audit.values_list("workflow_id", "outcome")) == {
        fixed[0]: "APPLIED", fixed[1]: "APPLIED", unfixed: "REFUSED:PRECONDITION"}
    # The cluster's own recovery runner may still be queued when it stops (it hands over at once
    # after its start-up cycle); only the batch's task must have been taken off the queue.
    assert BATCH_TASK not in [queued.task["func"] for queued in OrmQ.objects.all()]
    html = client.get(location).content.decode()
    assert "<strong>3</strong> of 3 done" in html and "hx-trigger" not in html
