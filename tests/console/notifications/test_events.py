"""The evaluator: each of the six events opens exactly one notification per dedup key, a repeat
evaluation updates it, and it resolves when its cause is gone."""

from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.utils import timezone

from console.models import CancelProposal, Notification, NotificationDelivery, NotificationThreshold
from console.notifications.evaluate import evaluate_notifications
from console.notifications.events import Event
from console.notifications.groups import group_key
from console.notifications.selectors import open_notification_counts
from console.readers.stalled import stalled_workflows
from recovery.models import MydoJob, MydoJobFinish, RecoveryCycle, TidyWorkflow, tidy_job_id
from tests.notification_support import recovery_is_fresh


def cancel(wid):
    TidyWorkflow.objects.filter(pk=wid).update(status="CANCELLED")


def age_job(built, minutes, *, created=False):
    job = tidy_job_id(built.workflow_id, built.step_ids[0])
    past = timezone.now() - timedelta(minutes=minutes)
    MydoJob.objects.filter(job_id=job).update(updated_at=past, **({"created_at": past} if created else {}))
    return job


def finish_job(job_id):
    job = MydoJob.objects.get(job_id=job_id)
    MydoJobFinish.objects.create(job_id=job.job_id, in_or_out=job.in_or_out, status=4, tray_code=job.tray_code,
                                 cargo_space_id=job.cargo_space_id, target_cargo_space_id=job.target_cargo_space_id)
    MydoJob.objects.filter(job_id=job_id).delete()


# Each scenario makes the cause hold and returns (expected dedup keys by event, a function that
# removes the cause).
def paused(wms):
    built = wms.build("paused")
    recovery_is_fresh()
    return {"paused": "paused:RECOVERY_JOB_MISSING:A01"}, lambda: cancel(built.workflow_id)


def paused_too_long(wms):
    built = wms.build("paused", age_minutes=45)  # the default threshold is 30 min
    recovery_is_fresh()
    wid = built.workflow_id
    return ({"paused": "paused:RECOVERY_JOB_MISSING:A01",
             "paused_too_long": "paused_too_long:RECOVERY_JOB_MISSING:A01"}, lambda: cancel(wid))


def stalled(wms):
    built = wms.build("healthy")
    job = age_job(built, 20)  # STALLED_AFTER_MINUTES defaults to 15
    recovery_is_fresh()
    # The job moves on (status 3, updated now): no longer stalled.
    return {"stalled": "stalled:job status 2:A01"}, lambda: MydoJob.objects.filter(job_id=job).update(
        status=3, updated_at=timezone.now())


def recovery_stale(wms):
    RecoveryCycle.objects.create(started_at=timezone.now() - timedelta(minutes=10),
                                 finished_at=timezone.now() - timedelta(minutes=10), outcome="SUCCEEDED")
    return {"recovery_stale": "recovery_stale"}, recovery_is_fresh


def proposal_waiting(wms):
    built = wms.build("paused")
    recovery_is_fresh()
    lead = User.objects.create_user("lena")
    p = CancelProposal.objects.create(workflow_id=built.workflow_id, proposed_by=lead, reason_code="TRAY_REMOVED",
                                      reason_text="tray taken off the rack by hand", fingerprint="f", evidence={},
                                      idempotency_key="k1")
    CancelProposal.objects.filter(pk=p.pk).update(proposed_at=timezone.now() - timedelta(minutes=11))
    return ({"paused": "paused:RECOVERY_JOB_MISSING:A01", "proposal_waiting": f"proposal_waiting:{p.pk}"},
            lambda: CancelProposal.objects.filter(pk=p.pk).update(status="REJECTED"))


def backlog_not_draining(wms):
    built = wms.build("healthy")
    job = age_job(built, 20, created=True)  # waiting the whole 15 min window, nothing finished
    MydoJob.objects.filter(job_id=job).update(updated_at=timezone.now())  # not stalled: it changed just now
    recovery_is_fresh()
    return {"backlog_not_draining": "backlog_not_draining"}, lambda: finish_job(job)


SCENARIOS = [paused, paused_too_long, stalled, recovery_stale, proposal_waiting, backlog_not_draining]


def test_the_scenarios_cover_the_six_events():
    assert {s.__name__ for s in SCENARIOS} == set(Event.values)


def unresolved_keys():
    return dict(Notification.objects.filter(resolved_at__isnull=True).values_list("dedup_key", "event"))


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.__name__)
def test_it_opens_one_notification_per_key_updates_it_and_resolves_it(notify_db, scenario):
    expected, remove_cause = scenario(notify_db)
    event = scenario.__name__
    t0 = timezone.now()

    first = evaluate_notifications(now=t0)
    assert sorted(first.opened) == sorted(expected.values())
    assert unresolved_keys() == {key: ev for ev, key in expected.items()}
    (n,) = Notification.objects.filter(event=event)
    assert (n.dedup_key, n.state, n.evaluations, n.opened_at) == (expected[event], "open", 1, t0)
    assert n.subject and n.url_path.startswith("/")
    # The outbox: one pending delivery per channel; no channel configured -> the log.
    assert list(n.deliveries.values_list("channel", "kind", "state")) == [("log", "opened", "pending")]

    second = evaluate_notifications(now=t0 + timedelta(seconds=5))
    assert second.opened == [] and expected[event] in second.updated
    (n,) = Notification.objects.filter(event=event)
    assert (n.evaluations, n.last_seen_at, n.state) == (2, t0 + timedelta(seconds=5), "open")
    assert NotificationDelivery.objects.filter(notification__event=event).count() == 1  # not sent twice

    remove_cause()
    third = evaluate_notifications(now=t0 + timedelta(seconds=10))
    assert expected[event] in third.resolved
    (n,) = Notification.objects.filter(event=event)
    assert (n.state, n.resolved_at) == ("resolved", t0 + timedelta(seconds=10))

    # The cause comes back later: a new notification under the same key.
    if event == "recovery_stale":
        RecoveryCycle.objects.all().delete()
        evaluate_notifications(now=t0 + timedelta(seconds=15))
        assert list(Notification.objects.filter(event=event).values_list("state", flat=True)) == ["open", "resolved"]


def test_a_threshold_per_reason_code_decides_paused_too_long(notify_db):
    recovery_is_fresh()
    slow = notify_db.build("paused", reason="RECOVERY_JOB_MISSING", age_minutes=45)
    other = notify_db.build("paused", reason="RECOVERY_JOB_MISMATCH", age_minutes=45)
    NotificationThreshold.objects.create(reason_code="RECOVERY_JOB_MISSING", paused_too_long_minutes=60)
    NotificationThreshold.objects.create(reason_code="RECOVERY_JOB_MISMATCH", paused_too_long_minutes=40)
    evaluate_notifications()
    assert list(Notification.objects.filter(event="paused_too_long").values_list("dedup_key", "details__workflow_ids")
                ) == [("paused_too_long:RECOVERY_JOB_MISMATCH:A01", [other.workflow_id])]
    evaluate_notifications(now=timezone.now() + timedelta(minutes=16))
    assert set(Notification.objects.filter(event="paused_too_long").values_list("dedup_key", flat=True)) == {
        "paused_too_long:RECOVERY_JOB_MISMATCH:A01", "paused_too_long:RECOVERY_JOB_MISSING:A01"}
    assert Notification.objects.get(dedup_key="paused_too_long:RECOVERY_JOB_MISSING:A01").workflow_id == (
        slow.workflow_id)


def test_the_database_refuses_a_second_unresolved_notification_for_a_key(notify_db):
    now = timezone.now()
    fields = {"event": "recovery_stale", "dedup_key": "recovery_stale", "subject": "s", "url_path": "/",
              "opened_at": now, "last_seen_at": now}
    Notification.objects.create(**fields, state="acknowledged")
    with pytest.raises(IntegrityError), transaction.atomic():
        Notification.objects.create(**fields)
    Notification.objects.filter(dedup_key="recovery_stale").update(state="resolved", resolved_at=now)
    Notification.objects.create(**fields)  # after it resolved, the key may open again


def test_an_acknowledged_notification_absorbs_repeats_until_its_cause_resolves(notify_db):
    recovery_is_fresh()
    built = notify_db.build("paused")
    evaluate_notifications()
    Notification.objects.filter(event="paused").update(state="acknowledged")
    assert evaluate_notifications().opened == []
    assert Notification.objects.filter(event="paused").count() == 1
    cancel(built.workflow_id)
    assert evaluate_notifications().resolved == ["paused:RECOVERY_JOB_MISSING:A01"]


def test_stalled_workflows_lists_only_active_ones_with_an_unchanged_job_of_status_1_to_3(notify_db):
    stale = notify_db.build("healthy", job_status=1)
    age_job(stale, 16)
    fresh = notify_db.build("healthy")
    age_job(fresh, 14)
    finished = notify_db.build("healthy", job_status=4)  # not an active job status
    age_job(finished, 60)
    paused_one = notify_db.build("healthy")
    age_job(paused_one, 60)
    TidyWorkflow.objects.filter(pk=paused_one.workflow_id).update(status="PAUSED_RECOVERY")
    rows = stalled_workflows()
    assert [(r.workflow_id, r.job_status, r.step_no) for r in rows] == [(stale.workflow_id, 1, 1)]
    assert rows[0].job_id == tidy_job_id(stale.workflow_id, stale.step_ids[0])


def test_open_counts_cover_every_event(notify_db):
    assert open_notification_counts() == dict.fromkeys(Event.values, 0)
    notify_db.build("paused")
    notify_db.build("paused", reason="RECOVERY_JOB_MISMATCH")  # two reasons: two groups
    evaluate_notifications()  # no cycle yet: recovery is stale too
    counts = open_notification_counts()
    assert counts == {**dict.fromkeys(Event.values, 0), "paused": 2, "recovery_stale": 1}
    Notification.objects.filter(event="recovery_stale").update(state="acknowledged")
    assert open_notification_counts()["recovery_stale"] == 0


def test_a_pause_reason_longer_than_a_notification_keeps_does_not_stop_the_evaluation(notify_db, settings):
    """The WMS can hold a pause reason of any length; the evaluation keeps its first 200 characters
    and opens every notification, the others included (one long reason made each evaluation fail)."""
    settings.NOTIFY_PAUSED_TOO_LONG_MINUTES = 10_000
    recovery_is_fresh()
    long = notify_db.build("paused", reason="VENDOR_" + "X" * 493)
    notify_db.build("paused")
    report = evaluate_notifications()
    assert sorted(report.opened) == sorted([group_key("paused", ("VENDOR_" + "X" * 493)[:200], "A01"),
                                            "paused:RECOVERY_JOB_MISSING:A01"])
    assert all(len(key) <= 200 for key in report.opened)
    assert Notification.objects.get(workflow_id=long.workflow_id).reason == ("VENDOR_" + "X" * 493)[:200]
    assert evaluate_notifications().opened == []  # the same cause, not a new one each minute
