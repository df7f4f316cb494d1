"""The workflow page: status, evidence card (as journaled and now), steps, locks and what they
block, callbacks (refused ones included), the decision journal; the repair panel's place."""

import re

from django.db import connection
from django.urls import reverse

from console.workflows.selectors import workflow_detail
from recovery.engine.cycle import run_cycle
from recovery.models import CallbackReceipt


def page(client, workflow_id) -> str:
    response = client.get(reverse("workflow-detail", args=[workflow_id]))
    assert response.status_code == 200
    return response.content.decode()


def card_html(body: str, card_id: str) -> str:
    return re.search(rf'<article class="evidence card" id="{card_id}".*?</article>', body, re.S).group(0)


def test_it_shows_why_it_paused_with_the_mismatch_highlighted_then_and_now(supervisor_client, wms):
    built = wms.build("active_mismatch")
    run_cycle()
    body = page(supervisor_client, built.workflow_id)

    assert "PAUSED_RECOVERY" in body and 'href="/reason-codes/#RECOVERY_JOB_MISMATCH"' in body
    for card_id in ("evidence-then", "evidence-now"):
        card = card_html(body, card_id)
        mismatches = re.findall(r'<tr class="check-mismatch decisive[^"]*" data-field="([^"]+)"', card)
        assert mismatches == ["active.tray_code"], card_id
        assert "Produced this decision" in card and "active-job-mismatch" in card
    assert "Nothing has changed since it paused" in card_html(body, "evidence-now")


def test_it_shows_what_changed_since_the_pause(supervisor_client, wms):
    built = wms.build("job_missing")
    run_cycle()
    wms.job(built, 0, status=2)  # the job row was restored in the WMS: now a healthy pre-move state
    now = card_html(page(supervisor_client, built.workflow_id), "evidence-now")
    assert "Decision table: <strong>leave</strong>" in now
    assert "Changed since it paused:" in now and "check-mismatch" not in now
    assert re.search(r'data-field="active.present">.*?changed', now, re.S)


def test_it_says_when_no_pause_evidence_was_journaled(supervisor_client, wms):
    built = wms.build("paused")  # paused by hand, not by recovery
    body = page(supervisor_client, built.workflow_id)
    assert "No pause decision is journaled for this workflow" in body
    assert 'id="evidence-now"' in body


def test_it_lists_retained_locks_and_the_steps_they_block(supervisor_client, wms):
    holder = wms.build("job_missing")
    run_cycle()
    blocked_space = holder.moves[0].target
    other = wms.workflow(moves=[wms.move()], step_statuses=["PENDING"], lock=False)
    with connection.cursor() as cursor:  # a later workflow that needs the locked space as its target
        cursor.execute("UPDATE alg.tidy_step SET target_cargo_space_id = %s WHERE workflow_id = %s",
                       [blocked_space, other.workflow_id])

    detail = workflow_detail(workflow_id=holder.workflow_id)
    locks = {lk.cargo_space_id: lk for lk in detail.locks}
    assert set(locks) == {m.source for m in holder.moves} | {m.target for m in holder.moves}
    assert [(b.workflow_id, b.step_no) for b in locks[blocked_space].blocks] == [(other.workflow_id, 1)]
    assert all(not lk.blocks for space, lk in locks.items() if space != blocked_space)

    body = page(supervisor_client, holder.workflow_id)
    assert f'<a href="/workflows/{other.workflow_id}/">#{other.workflow_id}</a> step 1' in body
    assert "needs it as target" in body

    locks_page = supervisor_client.get(reverse("locks"), {"q": blocked_space}).content.decode()
    assert f"#{holder.workflow_id}</a>" in locks_page and f"#{other.workflow_id}</a> step 1" in locks_page


def test_it_shows_the_steps_timeline_and_callback_events(supervisor_client, wms):
    built = wms.build("finish_terminal_last")
    wms.build("job_missing")
    body = page(supervisor_client, built.workflow_id)
    assert body.count('class="tl-step') == 2
    assert "MOVE_FINISHED" in body
    assert f"TDY-{built.workflow_id}-{built.step_ids[0]}" in body


def test_it_shows_callbacks_refused_while_paused(supervisor_client, wms):
    model = CallbackReceipt  # records every callback received
    built = wms.build("job_missing")
    run_cycle()
    model.objects.create(endpoint="job-finish", job_id=f"TDY-{built.workflow_id}-{built.step_ids[0]}",
                         workflow_id=built.workflow_id, step_id=built.step_ids[0], stage="MOVE_FINISHED",
                         http_status=409, outcome="REFUSED_PAUSED", message="workflow is PAUSED_RECOVERY")
    model.objects.create(endpoint="job-finish", job_id="TDY-0-0", workflow_id=built.workflow_id + 1,
                         http_status=404, outcome="UNKNOWN_JOB")  # another workflow's: not shown
    body = page(supervisor_client, built.workflow_id)
    assert re.search(r'<tr class="refused">.*?HTTP 409.*?REFUSED_PAUSED.*?workflow is PAUSED_RECOVERY', body, re.S)
    assert "UNKNOWN_JOB" not in body


def test_it_shows_the_decision_journal_newest_first(supervisor_client, wms):
    built = wms.build("finish_not_terminal")
    run_cycle()
    body = page(supervisor_client, built.workflow_id)
    journal = body[body.index("Decision journal"):]
    assert "PAUSE" in journal and "finish-job-not-terminal" in journal and "recovery (cycle" in journal


def test_it_leaves_a_place_for_the_repair_panel(supervisor_client, wms):
    built = wms.build("job_missing")
    run_cycle()
    body = page(supervisor_client, built.workflow_id)
    assert '<section aria-label="Corrections" class="repair-slot">' in body
    # the panel sits between the evidence and the history, outside both refreshing fragments
    assert body.index('id="evidence-now"') < body.index("repair-slot") < body.index('id="workflow-history"')


def _rows(objects) -> list[dict]:
    return [{f.attname: getattr(o, f.attname) for f in o._meta.concrete_fields} for o in objects]


def test_the_history_statement_reads_what_the_orm_reads(wms):
    """The history fragment's one statement (workflows_sql.WORKFLOW_HISTORY) gives the same rows,
    in the same order, as reading each table through the ORM: awkward data included (a duplicated
    archive row, JSON payloads, more than 100 receipts, a locked space missing from
    bas_cargo_space, a space another workflow needs), and nothing of a neighbouring workflow."""
    from datetime import timedelta

    from django.utils import timezone

    from console.workflows.selectors import _lock_rows, _lock_values
    from recovery.models import MydoJob, MydoJobFinish, TidyCallbackEvent, TidySpaceLock, TidyStep

    built = wms.workflow(moves=[wms.move(), wms.move(), wms.move()],
                         step_statuses=["COMPLETED", "DISPATCHED", "PENDING"])
    neighbour = wms.build("finish_terminal_last")
    wms.job(built, 0, status=4, finished=True)
    wms.job(built, 0, status=4, finished=True)  # archived twice
    wms.job(built, 1, status=2)
    wms.event(built, 0)
    wms.event(built, 0, stage="RECOVERY_FINISHED")
    other = wms.workflow(moves=[wms.move()], step_statuses=["PENDING"], lock=False)
    with connection.cursor() as cursor:
        cursor.execute("UPDATE alg.tidy_callback_event SET payload = %s WHERE workflow_id = %s",
                       ['{"status": 4, "note": "<b>é</b>", "n": [1, 2.5, null]}', built.workflow_id])
        cursor.execute("UPDATE alg.tidy_step SET target_cargo_space_id = %s WHERE workflow_id = %s",
                       [built.moves[2].target, other.workflow_id])
        cursor.execute("INSERT INTO alg.tidy_space_lock (workflow_id, cargo_space_id) VALUES (%s, 'NOT-A-SPACE')",
                       [built.workflow_id])
    start = timezone.now() - timedelta(hours=1)
    for i in range(103):
        CallbackReceipt.objects.create(
            endpoint="job-finish", job_id=f"TDY-{built.workflow_id}-{built.step_ids[i % 3]}",
            workflow_id=built.workflow_id, http_status=200 if i % 2 else 409, outcome="ACCEPTED",
            payload={"i": i}, duration_ms=i / 3, remote_addr="10.0.0.7" if i == 5 else None)
        CallbackReceipt.objects.filter(pk=CallbackReceipt.objects.latest("id").pk).update(
            received_at=start + timedelta(seconds=i // 2))  # pairs received at the same instant
    CallbackReceipt.objects.create(endpoint="job-finish", job_id="x", workflow_id=neighbour.workflow_id,
                                   http_status=200, outcome="ACCEPTED")

    detail = workflow_detail(workflow_id=built.workflow_id)
    wid = built.workflow_id
    steps = list(TidyStep.objects.filter(workflow_id=wid).order_by("step_no"))
    job_ids = [s.job_id for s in steps]
    assert _rows(t.step for t in detail.timeline) == _rows(steps)
    assert _rows(t.active_job for t in detail.timeline if t.active_job) == _rows(
        MydoJob.objects.filter(job_id__in=job_ids))
    assert _rows(f for t in detail.timeline for f in t.finished_jobs) == _rows(
        MydoJobFinish.objects.filter(job_id__in=job_ids).order_by("finish_id"))
    assert len(detail.timeline[0].finished_jobs) == 2
    events = TidyCallbackEvent.objects.filter(workflow_id=wid).order_by("event_id")
    assert _rows(detail.events) == _rows(events) and len(detail.events) == 2
    assert detail.events[0].payload == {"status": 4, "note": "<b>é</b>", "n": [1, 2.5, None]}
    assert _rows(detail.receipts) == _rows(
        CallbackReceipt.objects.filter(workflow_id=wid).order_by("-id")[:100])
    assert len(detail.receipts) == 100 and {r.workflow_id for r in detail.receipts} == {wid}
    assert all(isinstance(r.received_at, type(start)) and r.received_at.tzinfo for r in detail.receipts)

    orm_locks = _lock_rows(list(_lock_values(TidySpaceLock.objects.filter(workflow_id=wid).order_by("cargo_space_id"))))
    assert detail.locks == orm_locks
    by_space = {lk.cargo_space_id: lk for lk in detail.locks}
    assert by_space["NOT-A-SPACE"].space_tray_code is None
    assert by_space[built.moves[0].source].space_tray_code == built.moves[0].tray_code
    assert [b.workflow_id for b in by_space[built.moves[2].target].blocks] == [other.workflow_id]
    assert detail.lock_count == len(detail.locks) == 7


def test_the_workflow_and_its_journal_read_what_the_orm_reads(wms, supervisor_client):
    """workflows_sql.WORKFLOW_AND_JOURNAL gives the workflow row and its newest 50 decisions as the
    ORM reads them (ties on decided_at broken by id, the evidence JSON as stored, a decision with
    no cycle), nothing of another workflow; an id beyond bigint is a 404, not a 500."""
    from recovery.models import RecoveryDecision, TidyWorkflow

    built = wms.build("job_missing")
    other = wms.build("job_missing")
    run_cycle()
    run_cycle()
    pause = RecoveryDecision.objects.filter(workflow_id=built.workflow_id).first()
    for i in range(55):
        RecoveryDecision.objects.create(workflow_id=built.workflow_id, step_id=None, source="REPAIR",
                                        action="PAUSE", reason="", rule="r", fingerprint=f"f{i}",
                                        evidence={"i": i, "nested": {"x": [1.5, None, "<é>"]}})
    RecoveryDecision.objects.filter(workflow_id=built.workflow_id, fingerprint__startswith="f").update(
        decided_at=pause.decided_at)  # many at the same instant

    detail = workflow_detail(workflow_id=built.workflow_id)
    assert _rows([detail.workflow]) == _rows([TidyWorkflow.objects.get(pk=built.workflow_id)])
    expected = RecoveryDecision.objects.filter(workflow_id=built.workflow_id).order_by("-decided_at", "-pk")[:50]
    assert _rows(detail.decisions) == _rows(expected) and len(detail.decisions) == 50
    assert {d.workflow_id for d in detail.decisions} == {built.workflow_id} != {other.workflow_id}
    assert any(d.cycle_id is None for d in detail.decisions)
    assert workflow_detail(workflow_id=other.workflow_id + 1000) is None
    assert supervisor_client.get(f"/workflows/{2**63}/").status_code == 404
    assert supervisor_client.get(f"/workflows/{2**63 - 1}/").status_code == 404


def test_the_history_follows_the_journals_own_sequence_when_clocks_disagree(wms, supervisor_client):
    """Receipts, events and archive rows are listed by their ids, the timestamps shown beside:
    a report whose clock ran behind does not jump ahead of the one journaled before it."""
    from datetime import timedelta

    from django.utils import timezone

    from recovery.models import TidyCallbackEvent

    built = wms.build("finish_terminal_last")
    wid = built.workflow_id
    now = timezone.now()
    first = CallbackReceipt.objects.create(endpoint="job-status", job_id="TDY-x", workflow_id=wid, http_status=200,
                                           outcome="ACCEPTED", sequence=1)
    second = CallbackReceipt.objects.create(endpoint="job-status", job_id="TDY-x", workflow_id=wid, http_status=200,
                                            outcome="STALE_REPORT", sequence=2)
    CallbackReceipt.objects.filter(pk=first.pk).update(received_at=now)
    CallbackReceipt.objects.filter(pk=second.pk).update(received_at=now - timedelta(minutes=5))  # clock behind
    wms.event(built, 1, stage="OUTBOUND_FINISHED")
    TidyCallbackEvent.objects.filter(workflow_id=wid, stage="OUTBOUND_FINISHED").update(
        received_at=now - timedelta(days=1))
    detail = workflow_detail(workflow_id=wid)
    assert [r.pk for r in detail.receipts] == [second.pk, first.pk]  # newest journal entry first
    assert [e.stage for e in detail.events] == ["MOVE_FINISHED", "OUTBOUND_FINISHED"]
    body = page(supervisor_client, wid)
    assert body.index("STALE_REPORT") < body.index("ACCEPTED</strong>")
    assert "sequence 2" in body
