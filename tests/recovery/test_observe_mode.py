"""Observe mode (RECOVERY_MODE=observe): a cycle decides and journals each decision it would make,
with its evidence, marked observed; it changes no WMS table, takes no row lock and pauses nothing.
Proven by whole-table checksums (the replay's) over many cycles, on every row of the decision
table and on the demo warehouse."""

from collections import Counter
from datetime import timedelta

import pytest
from django.core.management import call_command
from django.db import connection
from prometheus_client.parser import text_string_to_metric_families

from console.models import Notification
from console.notifications.evaluate import evaluate_notifications
from console.replay.database import compare, live_checksums, replay_tables
from recovery.demo.warehouse import EXPECTED
from recovery.engine.cycle import CarriedBacklog, run_cycle
from recovery.engine.decisions import decide
from recovery.engine.evidence import evidence_for_workflow
from recovery.engine.wms_sql import WMS_TABLES
from recovery.models import JournalTotal, RecoveryCycle, RecoveryDecision
from recovery.runtime.lease import connect_direct
from recovery.runtime.retention import journal_retention_run
from tests.wcs_helpers import create, finish, status
from tests.wms_state import diff, snapshot

CHANGING_KINDS = [k for k, (action, _) in EXPECTED.items() if action != "LEAVE"]


def wms_checksums():
    return live_checksums([t for t in replay_tables() if t.label in WMS_TABLES])


def build_every_kind(wms) -> dict[int, str]:
    return {wms.build(kind).workflow_id: kind for kind in EXPECTED}


def test_it_journals_every_decision_it_would_make_and_changes_no_wms_table(wms, settings):
    settings.RECOVERY_MODE = "observe"
    kinds = build_every_kind(wms)
    before, sums = snapshot(), wms_checksums()
    report = run_cycle()

    assert report.succeeded and report.observing
    assert diff(before, snapshot()) == {}
    assert compare(sums, wms_checksums()) == []
    observed = {d.workflow_id: d for d in RecoveryDecision.objects.all()}
    assert all(d.observed for d in observed.values())
    expected = {wid: EXPECTED[kind] for wid, kind in kinds.items() if kind in CHANGING_KINDS}
    assert {wid: (d.action, d.reason or None) for wid, d in observed.items()} == expected
    for wid, d in observed.items():
        evidence = evidence_for_workflow(wid)  # unchanged: what was journaled is what is there
        assert (d.fingerprint, d.evidence["workflow_id"], d.rule) == (evidence.fingerprint, wid,
                                                                       decide(evidence).rule.value)
        assert d.cycle_id == report.cycle_id and d.source == "RECOVERY"
    assert report.decisions == Counter(action for action, _ in expected.values())
    cycle = RecoveryCycle.objects.get(pk=report.cycle_id)
    assert (cycle.mode, cycle.outcome) == ("observe", "SUCCEEDED")
    assert cycle.decision_counts["PAUSE"] == sum(a == "PAUSE" for a, _ in expected.values())


def test_the_demo_warehouse_through_many_observing_cycles_keeps_every_wms_checksum(wms, settings):
    settings.RECOVERY_MODE = "observe"
    call_command("wms_demo")
    sums = wms_checksums()
    carried = CarriedBacklog()
    reports = [run_cycle(carried=carried, max_decisions=7) for _ in range(12)]  # a small budget: the backlog too

    assert all(r.succeeded and r.observing for r in reports)
    assert compare(sums, wms_checksums()) == []  # mismatches=[]
    needing = sum(1 for e in map(evidence_for_workflow, _active_ids()) if decide(e).changes_state)
    assert needing > 7
    # Every workflow needing a decision was observed once; the repeats journaled nothing more.
    journal = Counter(RecoveryDecision.objects.values_list("workflow_id", flat=True))
    assert len(journal) == needing and set(journal.values()) == {1}
    assert RecoveryDecision.objects.filter(observed=False).count() == 0
    assert {c.mode for c in RecoveryCycle.objects.all()} == {"observe"}


def _active_ids() -> list[int]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT workflow_id FROM alg.tidy_workflow WHERE status = 'ACTIVE' ORDER BY 1")
        return [row[0] for row in cursor.fetchall()]


def test_an_observation_is_journaled_again_only_when_its_evidence_changes(wms, settings):
    settings.RECOVERY_MODE = "observe"
    built = wms.build("active_not_pre_move")
    run_cycle()
    run_cycle()
    assert RecoveryDecision.objects.count() == 1
    first_status = RecoveryDecision.objects.get().evidence["active_job"]["status"]
    with connection.cursor() as cursor:  # the WMS moves the job on: new evidence, same decision
        cursor.execute("UPDATE mydo_job SET status = %s WHERE job_id = %s", [5 - first_status, built_job(built)])
        assert cursor.rowcount == 1
    run_cycle()
    run_cycle()
    rows = list(RecoveryDecision.objects.order_by("id").values_list("action", "reason", "observed"))
    assert rows == [("PAUSE", "RECOVERY_ACTIVE_EVIDENCE_INVALID", True)] * 2
    first, second = RecoveryDecision.objects.order_by("id")
    assert first.fingerprint != second.fingerprint
    assert second.evidence["active_job"]["status"] == 5 - first_status


def built_job(built) -> str:
    return f"TDY-{built.workflow_id}-{built.step_ids[0]}"


@pytest.mark.usefixtures("committed_db")
def test_it_reads_without_a_row_lock_so_a_held_workflow_is_still_observed(wms, settings):
    held = wms.build("job_missing")
    blocker = connect_direct("test-blocker")
    blocker.autocommit = False
    try:
        blocker.execute("SELECT 1 FROM alg.tidy_workflow WHERE workflow_id = %s FOR UPDATE", (held.workflow_id,))
        applying = run_cycle(mode="apply")  # SKIP LOCKED: the held workflow is skipped
        assert (applying.skipped, sum(applying.decisions.values())) == (1, 0)
        observing = run_cycle(mode="observe")  # no FOR UPDATE at all: observed while held, without waiting
        assert (observing.skipped, observing.decisions) == (0, {"PAUSE": 1})
    finally:
        blocker.rollback()
        blocker.close()
    assert evidence_for_workflow(held.workflow_id).workflow_status == "ACTIVE"
    (observed,) = RecoveryDecision.objects.all()
    assert (observed.observed, observed.reason) == (True, "RECOVERY_JOB_MISSING")


def test_an_observed_pause_opens_no_notification_and_an_applied_one_does(wms, settings):
    settings.NOTIFY_EMAIL_TO = []
    settings.NOTIFY_WEBHOOK_URL = ""
    built = wms.build("job_missing")
    run_cycle(mode="observe")
    evaluate_notifications()
    assert not Notification.objects.filter(event="paused").exists()
    run_cycle(mode="apply")
    evaluate_notifications()
    assert list(Notification.objects.filter(event="paused").values_list("workflow_id", flat=True)) == [
        built.workflow_id]


def test_callbacks_still_take_effect_while_recovery_observes(wms, client, settings):
    settings.RECOVERY_MODE = "observe"
    created, moves = create(wms, 2)
    run_cycle()
    assert status(client, created.first_job_id, 2).status_code == 200
    response = finish(client, created.first_job_id)
    assert response.status_code == 200 and response.json()["outcome"] == "ACCEPTED"
    run_cycle()
    steps = evidence_for_workflow(created.workflow_id)
    assert steps.step.step_no == 2 and RecoveryDecision.objects.count() == 0  # healthy: nothing to observe


def test_the_decision_counters_never_count_an_observed_decision(wms, client):
    wms.build("job_missing")
    wms.build("job_missing")
    run_cycle(mode="observe")
    run_cycle(mode="observe")
    assert RecoveryDecision.objects.filter(observed=True).count() == 2
    assert _decisions_total(client) == {}
    run_cycle(mode="apply")
    assert _decisions_total(client) == {"PAUSE": 2}
    # Retention folds them under their own label, and the counter still counts the applied one only.
    RecoveryDecision.objects.update(decided_at=RecoveryDecision.objects.earliest("decided_at").decided_at
                                    - timedelta(days=400))
    journal_retention_run()
    assert set(JournalTotal.objects.filter(journal="decisions").values_list("label1", "label2", "total")) == {
        ("PAUSE", "OBSERVED", 2), ("PAUSE", "RECOVERY", 2)}
    assert RecoveryDecision.objects.count() == 0
    assert _decisions_total(client) == {"PAUSE": 2}


def _decisions_total(client) -> dict:
    body = client.get("/metrics").content.decode()
    return {s.labels["decision"]: s.value for f in text_string_to_metric_families(body) for s in f.samples
            if s.name == "tidy_recovery_decisions_total" and s.value}


def test_the_workflow_page_takes_its_pause_evidence_from_an_applied_decision_only(wms, client, settings):
    from tests.console_personas import make_user

    make_user("sup", "supervisor")
    client.login(username="sup", password="pw-" + "x" * 8)
    built = wms.build("job_missing")
    run_cycle(mode="observe")
    page = client.get(f"/workflows/{built.workflow_id}/").content.decode()
    assert "observed" in page  # the journal lists the observation, marked
    assert 'id="evidence-then"' in page and "This workflow is not paused" in page


@pytest.mark.parametrize("value", ["observe", "OBSERVE", "apply"])
def test_the_mode_setting_accepts_apply_and_observe(monkeypatch, value):
    from console.env import env_choice

    monkeypatch.setenv("RECOVERY_MODE", value)
    assert env_choice("RECOVERY_MODE", "apply", choices=("apply", "observe")) == value.lower()
