"""The replay scenarios: each drives real processes through one failure boundary and records
the expected sequence, the observed outcome, the final state and a timeline.

Names are stable (`manage.py replay --scenario NAME`). A scenario function receives a
ScenarioContext; failed checks fail the scenario, an exception fails it with the traceback.
"""

import time
from dataclasses import dataclass

from django.contrib.auth.models import Group, User
from django.db import connection
from django_q.models import Schedule

from console import repair
from console.models import RepairAudit
from console.operations.observe import observed_page
from console.readers.sql import APPEND_ONLY_TABLE_EXISTS
from console.replay import database as sql
from console.replay.context import Created, ScenarioContext, ScenarioFailed
from console.replay.processes import CHILD_RECOVERY_INTERVAL_SECONDS
from console.roles import OPERATOR
from recovery.engine.decisions import SPEC_BY_RULE, Action, Rule, decide
from recovery.engine.evidence import evidence_for_workflow
from recovery.engine.transaction import StaleEvidence, apply_decision
from recovery.engine.wms_sql import WMS_TABLES
from recovery.models import OutboundHttpRequest, RecoveryCycle, RecoveryDecision
from recovery.runtime.lease import RUNNER_LEASE_KEY, connect_direct, try_lease
from recovery.runtime.schedule import SCHEDULE_NAME, ensure_recovery_schedule

# A step whose move job is gone is paused as the decision table's no-job rule says (its spec).
NO_JOB = SPEC_BY_RULE[Rule.NO_JOB]
JOB_MISSING = NO_JOB.reason.value


@dataclass(frozen=True)
class Scenario:
    name: str
    title: str
    window: str
    expected: tuple[str, ...]
    run: object  # fn(ctx)
    available: object = None  # fn() -> str | None: why it cannot run here (None: it can)


# --- shared checks ------------------------------------------------------------------------------


def _events(st: dict, step_id: int, stage: str | None = None) -> list[dict]:
    return [e for e in st["callback_events"] if e["step_id"] == step_id and (stage is None or e["stage"] == stage)]


def check_moved_once(ctx: ScenarioContext, created: Created, index: int, st: dict) -> None:
    job, mv = created.job(index), created.moves[index]
    finish = [f for f in st["finished_jobs"] if f["job_id"] == job]
    ctx.equal(f"{job}: exactly one archived finish row (status 4)", [f["status"] for f in finish], [4])
    ctx.check(f"{job}: no longer active", not any(j["job_id"] == job for j in st["active_jobs"]))
    stock = sorted((s["stock_id"], s["sku"], str(s["qty"]), s["cargo_space_id"]) for s in st["stock"]
                   if s["tray_code"] == mv.tray_code)
    expected = sorted((s["stock_id"], s["sku"], str(s["qty"]), mv.target) for s in created.stock_before
                      if s["tray_code"] == mv.tray_code)
    ctx.equal(f"tray {mv.tray_code}: the same stock rows and quantities, every one now at {mv.target}",
              stock, expected)
    spaces = {c["cargo_space_id"]: c["tray_code"] for c in st["cargo_spaces"]}
    ctx.equal(f"{mv.source} empty and {mv.target} holds {mv.tray_code}",
              (spaces.get(mv.source), spaces.get(mv.target)), (None, mv.tray_code))


def check_not_moved(ctx: ScenarioContext, created: Created, index: int, st: dict) -> None:
    mv = created.moves[index]
    stock = sorted((s["stock_id"], s["cargo_space_id"]) for s in st["stock"] if s["tray_code"] == mv.tray_code)
    expected = sorted((s["stock_id"], s["cargo_space_id"]) for s in created.stock_before
                      if s["tray_code"] == mv.tray_code)
    ctx.equal(f"tray {mv.tray_code}: stock still at its source {mv.source}", stock, expected)
    finish = [f for f in st["finished_jobs"] if f["job_id"] == created.job(index)]
    ctx.equal(f"{created.job(index)}: not archived", len(finish), 0)


def check_completed(ctx: ScenarioContext, created: Created, st: dict, *, stage: str = "MOVE_FINISHED") -> None:
    wf = st["workflows"][0]
    ctx.equal(f"workflow {created.workflow_id} COMPLETED", wf["status"], "COMPLETED")
    ctx.equal("every step COMPLETED", [s["status"] for s in st["steps"]], ["COMPLETED"] * len(created.step_ids))
    ctx.equal("every space lock released", len(st["space_locks"]), 0)
    for i, step_id in enumerate(created.step_ids):
        ctx.equal(f"step {i + 1}: exactly one {stage} event", len(_events(st, step_id, stage)), 1)
        check_moved_once(ctx, created, i, st)


def _receipts(st: dict, job_id: str, endpoint: str = "job-finish") -> list[str]:
    return [r["outcome"] for r in st["callback_receipts"] if r["job_id"] == job_id and r["endpoint"] == endpoint]


def _decisions(workflow_id: int, since=None):
    qs = RecoveryDecision.objects.filter(workflow_id=workflow_id)
    if since is not None:
        qs = qs.filter(decided_at__gte=since)
    return list(qs.order_by("id").values("id", "workflow_id", "action", "reason", "rule", "source", "cycle_id",
                                         "observed"))


def _wait_completed(ctx: ScenarioContext, workflow_id: int, timeout: float = 90.0) -> None:
    ctx.wait_until(f"workflow {workflow_id} COMPLETED",
                   lambda: ctx.workflow_status(workflow_id)[0] == "COMPLETED", timeout=timeout)


def _drive_with_simulator(ctx: ScenarioContext, created: Created, *, extra_args: list[str] | None = None) -> None:
    web = ctx.ensure_web()
    sim = ctx.procs.start_simulator(web, extra_args=extra_args)
    try:
        _wait_completed(ctx, created.workflow_id)
    finally:
        ctx.procs.stop(sim)


def _stop_wms(ctx: ScenarioContext) -> None:
    ctx.stop_wms()


# --- normal tidy --------------------------------------------------------------------------------


def normal_automatic(ctx: ScenarioContext) -> None:
    ctx.ensure_wms()
    workflows = 3 if ctx.run.profile == "full" else 1
    created = [ctx.create_workflow(steps=2) for _ in range(workflows)]
    extra = ["--duplicate", "0.5", "--drop-ack", "0.3", "--late", "0.3", "--seed", "7"] \
        if ctx.run.profile == "full" else None
    web = ctx.ensure_web()
    sim = ctx.procs.start_simulator(web, extra_args=extra)
    try:
        for c in created:
            _wait_completed(ctx, c.workflow_id)
    finally:
        ctx.procs.stop(sim)
    for c in created:
        st = ctx.state([c.workflow_id])
        check_completed(ctx, c, st)
        for step_id in c.step_ids:
            ctx.equal(f"step {step_id}: no RECOVERY_FINISHED event", len(_events(st, step_id, "RECOVERY_FINISHED")), 0)
        for job in c.jobs:
            ctx.equal(f"{job}: exactly one ACCEPTED finish receipt", _receipts(st, job).count("ACCEPTED"), 1)
            statuses = [r["job_status"] for r in st["callback_receipts"]
                        if r["job_id"] == job and r["endpoint"] == "job-status" and r["outcome"] == "ACCEPTED"]
            ctx.check(f"{job}: job status reported forward only (2 then 3, or straight to 3)",
                      statuses in ([2, 3], [3]), f"accepted status reports: {statuses}")
        ctx.equal(f"workflow {c.workflow_id}: no recovery decision (recovery left normal work alone)",
                  _decisions(c.workflow_id), [])
    ctx.observe(f"{len(created)} AUTOMATIC workflow(s) driven by the WCS simulator through HTTP to COMPLETED")


def normal_manual(ctx: ScenarioContext) -> None:
    ctx.ensure_wms()
    web = ctx.ensure_web()
    sim = ctx.procs.start_simulator(web)
    try:
        before = ctx.now()
        created = ctx.create_workflow(steps=2, origin="MANUAL")
        snapshots = list(OutboundHttpRequest.objects.filter(purpose="vehicle-snapshot", started_at__gte=before)
                         .values("method", "url", "status"))
        ctx.check("the vehicle snapshot was consulted before creation (outbound journal)",
                  any(s["url"] == ctx.run.snapshot_url and s["status"] == 200 for s in snapshots), snapshots)
        _wait_completed(ctx, created.workflow_id)
    finally:
        ctx.procs.stop(sim)
    st = ctx.state([created.workflow_id])
    ctx.equal("origin MANUAL", st["workflows"][0]["origin"], "MANUAL")
    check_completed(ctx, created, st)
    ctx.equal("no recovery decision", _decisions(created.workflow_id), [])
    ctx.observe("MANUAL tidy created after a 200 vehicle snapshot, completed through the callbacks")


# --- the two WMS-local restart cases (docs/architecture.md §13) -----------------------------------


def repairable_completion(ctx: ScenarioContext) -> None:
    ctx.ensure_wms()
    created = ctx.create_workflow(steps=2)
    _stop_wms(ctx)
    ctx.complete_move_in_wms(created, 0, why="repairable completion: the move completed in the WMS "
                                             "but the tidy step was never advanced (WMS stopped)")
    after_move = ctx.state([created.workflow_id])
    since = ctx.now()
    cycle = ctx.restart_wms()
    st = ctx.state([created.workflow_id])
    step1, step2 = created.step_ids
    ctx.check("the start-up cycle applied ADVANCE", cycle.decision_counts.get("ADVANCE", 0) >= 1,
              cycle.decision_counts)
    decisions = _decisions(created.workflow_id, since)
    ctx.equal("exactly one recovery decision: ADVANCE (finish-job-terminal)",
              [(d["action"], d["rule"]) for d in decisions], [("ADVANCE", "finish-job-terminal")])
    ctx.equal("step 1 COMPLETED, step 2 DISPATCHED", [s["status"] for s in st["steps"]], ["COMPLETED", "DISPATCHED"])
    ctx.equal("step 1: one RECOVERY_FINISHED event and no MOVE_FINISHED",
              [e["stage"] for e in _events(st, step1)], ["RECOVERY_FINISHED"])
    ctx.equal("step 2's job created (status 1)", [(j["job_id"], j["status"]) for j in st["active_jobs"]],
              [(created.job(1), 1)])
    ctx.equal("inventory not moved again by recovery (stock rows identical to after the one move)",
              st["stock"], after_move["stock"])
    ctx.equal("workflow ACTIVE with all its locks", (st["workflows"][0]["status"], len(st["space_locks"])),
              ("ACTIVE", len(after_move["space_locks"])))
    _drive_with_simulator(ctx, created)
    st = ctx.state([created.workflow_id])
    ctx.equal("workflow COMPLETED after step 2's normal callback", st["workflows"][0]["status"], "COMPLETED")
    ctx.equal("locks released", len(st["space_locks"]), 0)
    ctx.equal("step 2: one MOVE_FINISHED event", [e["stage"] for e in _events(st, step2)], ["MOVE_FINISHED"])
    for i in range(2):
        check_moved_once(ctx, created, i, st)
    ctx.observe("after restart the step advanced with RECOVERY_FINISHED; inventory moved exactly once per step")


def missing_local_job(ctx: ScenarioContext) -> None:
    ctx.ensure_wms()
    created = ctx.create_workflow(steps=2)
    _stop_wms(ctx)
    before = ctx.state([created.workflow_id])
    ctx.journal.execute(sql.DELETE_ACTIVE_JOB, {"job_id": created.job(0)},
                        why="missing local job: the active replay move job is removed while its workflow, "
                            "step and locks stay (WMS stopped)")
    since = ctx.now()
    ctx.restart_wms()
    st = ctx.state([created.workflow_id])
    ctx.equal(f"workflow PAUSED_RECOVERY with {JOB_MISSING}",
              (st["workflows"][0]["status"], st["workflows"][0]["pause_reason"]),
              ("PAUSED_RECOVERY", JOB_MISSING))
    ctx.equal("step 1 PAUSED_RECOVERY with the same reason, step 2 PENDING",
              [(s["status"], s["pause_reason"]) for s in st["steps"]],
              [("PAUSED_RECOVERY", JOB_MISSING), ("PENDING", None)])
    ctx.equal("every lock retained (same lock rows)", st["space_locks"], before["space_locks"])
    decisions = _decisions(created.workflow_id, since)
    ctx.equal("one PAUSE decision journaled", [(d["action"], d["reason"]) for d in decisions],
              [(NO_JOB.action.value, JOB_MISSING)])
    journaled = RecoveryDecision.objects.get(pk=decisions[0]["id"]).evidence if decisions else {}
    ctx.check("the decision's evidence shows neither an active nor a finished job",
              journaled.get("active_job") is None and journaled.get("finish_job") is None,
              {k: journaled.get(k) for k in ("active_job", "finish_job", "lock_count")})
    ctx.equal("no job created again", st["active_jobs"] + st["finished_jobs"], [])
    ctx.equal("inventory untouched", st["stock"], before["stock"])
    result = ctx.procs.recover_once()
    ctx.equal("another recovery cycle (recover --once) succeeds", result.returncode, 0)
    status, body = ctx.finish(created.job(0), note="a late report for the paused workflow")
    ctx.equal("a callback for the paused workflow is refused with 409 REFUSED_PAUSED",
              (status, body.get("outcome") if isinstance(body, dict) else body), (409, "REFUSED_PAUSED"))
    after = ctx.state([created.workflow_id])
    ctx.equal("still paused, locks still retained after the cycle and the callback",
              (after["workflows"][0]["status"], after["space_locks"]), ("PAUSED_RECOVERY", before["space_locks"]))
    ctx.equal("no further decision", len(_decisions(created.workflow_id, since)), 1)
    ctx.observe(f"restart paused the workflow with {JOB_MISSING}; locks retained through later cycles")


# --- load identity (docs/architecture.md §8, "The WCS boundary": load identity) -------------------

WCS_MISMATCH = SPEC_BY_RULE[Rule.WCS_REPORT_MISMATCH]


def wcs_report_mismatch(ctx: ScenarioContext) -> None:
    ctx.ensure_wms()
    created = ctx.create_workflow(steps=2)
    before = ctx.state([created.workflow_id])
    since = ctx.now()
    web = ctx.ensure_web()
    sim = ctx.procs.start_simulator(web, extra_args=["--identity", "--wrong-tray", "1", "--seed", "7"])
    reason = WCS_MISMATCH.reason.value
    try:
        ctx.wait_until(f"workflow {created.workflow_id} paused with {reason}",
                       lambda: ctx.workflow_status(created.workflow_id) == ("PAUSED_RECOVERY", reason), timeout=90)
    finally:
        ctx.procs.stop(sim)
    st = ctx.state([created.workflow_id])
    job, move = created.job(0), created.moves[0]
    ctx.equal(f"{job}: the simulator's finish named another tray and was answered REPORT_MISMATCH",
              _receipts(st, job), ["REPORT_MISMATCH"])
    check_not_moved(ctx, created, 0, st)
    ctx.equal("the job is still active", [j["job_id"] for j in st["active_jobs"]], [job])
    ctx.equal("every lock retained", st["space_locks"], before["space_locks"])
    ctx.equal("one PAUSE decision journaled, by recovery",
              [(d["action"], d["reason"]) for d in _decisions(created.workflow_id, since)],
              [(WCS_MISMATCH.action.value, reason)])
    status, body = ctx.finish(job, tray_code=f"{move.tray_code}-OTHER", location=move.target,
                              note="the WCS repeats its report")
    ctx.equal("a repeat of the report gets the same answer, 409 REPORT_MISMATCH",
              (status, body.get("outcome") if isinstance(body, dict) else body), (409, "REPORT_MISMATCH"))
    status, body = ctx.finish(job, tray_code=move.tray_code, location=move.target, note="a corrected report")
    ctx.equal("a report that agrees is refused while paused (the operator decides on the floor)",
              (status, body.get("outcome") if isinstance(body, dict) else body), (409, "REFUSED_PAUSED"))
    after = ctx.state([created.workflow_id])
    ctx.equal("inventory untouched throughout", after["stock"], before["stock"])
    ctx.observe(f"a finish naming another tray moved nothing; recovery paused the workflow with {reason}")


# --- observe mode (docs/architecture.md §16) --------------------------------------------------------


def _wms_checksums() -> sql.Checksums:
    return sql.live_checksums([t for t in sql.replay_tables() if t.label in WMS_TABLES])


OBSERVING_CYCLES = 5


def observe_mode(ctx: ScenarioContext) -> None:
    ctx.ensure_wms()
    finished = ctx.create_workflow(steps=2)
    lost = ctx.create_workflow(steps=2)
    _stop_wms(ctx)
    ctx.complete_move_in_wms(finished, 0, why="observe mode: a finish recovery would advance (the move completed "
                                              "in the WMS, the step was never advanced)")
    ctx.journal.execute(sql.DELETE_ACTIVE_JOB, {"job_id": lost.job(0)},
                        why="observe mode: a job recovery would pause for (RECOVERY_JOB_MISSING)")
    before = _wms_checksums()
    since = ctx.now()
    startup = ctx.start_qcluster(extra_env={"RECOVERY_MODE": "observe"}, name="qcluster-observing")
    ctx.equal("the start-up cycle observes", startup.mode, "observe")
    ctx.wait_until(f"{OBSERVING_CYCLES} observing cycles finished",
                   lambda: RecoveryCycle.objects.filter(mode="observe", started_at__gte=since,
                                                        finished_at__isnull=False).count() >= OBSERVING_CYCLES,
                   timeout=120)  # seconds apart; generous for a machine under load
    ctx.stop_qcluster()
    cycles = list(RecoveryCycle.objects.filter(started_at__gte=since).order_by("started_at"))
    # A stop lets the cycle in hand finish; one still RUNNING was cut by the stop's SIGKILL on a
    # machine too slow for its grace, which says nothing about observe mode. None may fail.
    ctx.check("every cycle since the start observed, and every finished one succeeded",
              all(c.mode == "observe" for c in cycles)
              and all(c.outcome == "SUCCEEDED" for c in cycles if c.finished_at is not None)
              and sum(c.outcome == "SUCCEEDED" for c in cycles) >= OBSERVING_CYCLES,
              [(c.pk, c.mode, c.outcome) for c in cycles])
    mismatches = sql.compare(before, _wms_checksums())
    ctx.equal(f"every WMS table unchanged over {len(cycles)} observing cycles (mismatches=[])", mismatches, [])
    observed = [(d["workflow_id"], d["action"], d["reason"], d["observed"])
                for d in _decisions(finished.workflow_id, since) + _decisions(lost.workflow_id, since)]
    ctx.equal("one observation per workflow, journaled once however many cycles saw it", observed, [
        (finished.workflow_id, "ADVANCE", "", True), (lost.workflow_id, "PAUSE", "RECOVERY_JOB_MISSING", True)])
    journaled = RecoveryDecision.objects.filter(workflow_id=lost.workflow_id, observed=True).first()
    ctx.check("the observation carries its evidence", journaled is not None and journaled.evidence.get(
        "workflow_id") == lost.workflow_id and journaled.evidence.get("active_job") is None,
              journaled.evidence if journaled else None)

    ctx.restart_wms()  # RECOVERY_MODE=apply: the start-up cycle decides what was observed
    st = ctx.state([finished.workflow_id, lost.workflow_id])
    by_id = {w["workflow_id"]: w for w in st["workflows"]}
    ctx.equal("applied, the decisions are the observed ones: advanced and paused",
              (by_id[finished.workflow_id]["status"], by_id[lost.workflow_id]["pause_reason"]),
              ("ACTIVE", "RECOVERY_JOB_MISSING"))
    rows = {r.workflow_id: (r.outcome, r.agreement) for r in observed_page(now=ctx.now()).rows
            if r.workflow_id in (finished.workflow_id, lost.workflow_id)}
    ctx.equal("the observe page: both decided by recovery afterwards, both agree", rows, {
        finished.workflow_id: ("recovery", "agrees"), lost.workflow_id: ("recovery", "agrees")})
    ctx.observe(f"{len(cycles)} observing cycles changed no WMS row (mismatches=[]) and journaled each decision "
                "once; switched to apply, recovery made exactly those decisions")


# --- the four integration failure windows (docs/architecture.md §13) --------------------------------


def after_persistence_before_send(ctx: ScenarioContext) -> None:
    ctx.ensure_wms()
    created = ctx.create_workflow(steps=2)
    ctx.note("the tidy and its first job are persisted; WCS has not received it (no simulator running)")
    ctx.kill_qcluster("crash after persistence, before the job was sent")
    ctx.procs.kill(ctx.run.web, why="crash after persistence, before the job was sent")
    ctx.run.web = None
    st0 = ctx.state([created.workflow_id])
    cycle = ctx.restart_wms()
    ctx.check("the start-up cycle examined the pending workflow and left it (no decision)",
              cycle.examined >= 1 and _decisions(created.workflow_id) == [],
              {"examined": cycle.examined, "decisions": cycle.decision_counts})
    st1 = ctx.state([created.workflow_id])
    ctx.equal("the pending intent survived unchanged: one job, status 1, same row",
              st1["active_jobs"], st0["active_jobs"])
    _drive_with_simulator(ctx, created)
    st = ctx.state([created.workflow_id])
    check_completed(ctx, created, st)
    for job in created.jobs:
        ctx.equal(f"{job}: one logical command (one finish accepted)", _receipts(st, job).count("ACCEPTED"), 1)
    first_created = st0["active_jobs"][0]["created_at"] if st0["active_jobs"] else None
    archived = [f["created_at"] for f in st["finished_jobs"] if f["job_id"] == created.job(0)]
    ctx.equal("history preserved: the archived job is the job created before the crash", archived, [first_created])
    ctx.equal("no recovery decision at all", _decisions(created.workflow_id), [])
    ctx.observe("the pending job was recovered as it was and executed once; no second task was created")


def after_execution_before_ack(ctx: ScenarioContext) -> None:
    ctx.ensure_wms()
    created = ctx.create_workflow(steps=1)
    job = created.job(0)
    ctx.report_status(job, 2)
    ctx.report_status(job, 3)
    for n in (1, 2):
        result = ctx.procs.recover_once(f"recover-once-{n}")
        ctx.equal(f"recovery cycle {n} while WCS executes and no finish has arrived succeeds", result.returncode, 0)
    st = ctx.state([created.workflow_id])
    ctx.equal("time passing made no second movement: job still active (status 3), nothing archived",
              ([(j["job_id"], j["status"]) for j in st["active_jobs"]], st["finished_jobs"]), ([(job, 3)], []))
    ctx.equal("no recovery decision while the job executes", _decisions(created.workflow_id), [])
    faulty = ctx.procs.start_web("web-slow-ack", faults="advance.MOVE_FINISHED:sleep=2")
    try:
        status, _ = ctx.finish(job, port=faulty.port, timeout_ms=700,
                               note="the acknowledgement is lost: the client gives up after 0.7 s")
        ctx.equal("the finish was sent but no acknowledgement came back", status, None)
        ctx.wait_until("the callback transaction committed although its acknowledgement was lost",
                       lambda: ctx.workflow_status(created.workflow_id)[0] == "COMPLETED", timeout=30)
    finally:
        ctx.procs.stop(faulty)
    status, body = ctx.finish(job, note="WCS re-sends the finish it has no acknowledgement for")
    ctx.equal("the re-sent finish is answered 200 DUPLICATE, inventory_moved false",
              (status, body.get("outcome"), body.get("inventory_moved")) if isinstance(body, dict) else status,
              (200, "DUPLICATE", False))
    st = ctx.state([created.workflow_id])
    check_completed(ctx, created, st)
    ctx.equal("receipts: ACCEPTED once, then DUPLICATE", _receipts(st, job), ["ACCEPTED", "DUPLICATE"])
    ctx.observe("no movement caused by the timeout; the lost acknowledgement was reconciled as a duplicate")


def after_completion_before_notification(ctx: ScenarioContext) -> None:
    ctx.ensure_wms()
    # Part 1: WCS completed the move and crashed before notifying; after its restart it replays
    # the event (same identity) several times, some concurrently.
    a = ctx.create_workflow(steps=1)
    job = a.job(0)
    ctx.report_status(job, 2)
    ctx.report_status(job, 3)
    ctx.note("WCS completes the move and crashes before notifying the WMS")
    threads = [ctx.in_thread(ctx.finish, job, event_id=f"wcs-{job}-finished", note=f"replayed copy {n}")
               for n in range(3)]
    for thread, _ in threads:
        thread.join(30)
    answers = [box.get("result", (None, None))[0] for _, box in threads]
    status, _ = ctx.finish(job, event_id=f"wcs-{job}-finished", note="one more replay after the others")
    answers.append(status)
    st = ctx.state([a.workflow_id])
    outcomes = _receipts(st, job)
    ctx.equal("four deliveries of one event: one ACCEPTED, three DUPLICATE",
              (outcomes.count("ACCEPTED"), outcomes.count("DUPLICATE")), (1, 3))
    ctx.check("every delivery answered 200", answers == [200] * 4, answers)
    check_completed(ctx, a, st)
    # Part 2: the WMS had archived the move but crashed before recording the step's advance;
    # the replayed callback and a recovery cycle race for the same advance.
    b = ctx.create_workflow(steps=2)
    job_b = b.job(0)
    _stop_wms(ctx)
    ctx.complete_move_in_wms(b, 0, why="the move completed in the WMS; the notification (step advance) was lost")
    after_move = ctx.state([b.workflow_id])
    ctx.ensure_web()
    threads = [ctx.in_thread(ctx.finish, job_b, event_id=f"wcs-{job_b}-finished", note=f"replayed copy {n}")
               for n in range(2)]
    recover = ctx.in_thread(ctx.procs.recover_once, "recover-once-race")
    for thread, _ in [*threads, recover]:
        thread.join(60)
    st = ctx.state([b.workflow_id])
    step1 = b.step_ids[0]
    finishing = [e["stage"] for e in _events(st, step1) if e["stage"] in ("MOVE_FINISHED", "RECOVERY_FINISHED")]
    ctx.check("step 1 advanced exactly once, by the callback or by recovery",
              len(finishing) in (1, 2) and st["steps"][0]["status"] == "COMPLETED", finishing)
    ctx.equal("step 2's job created exactly once", [j["job_id"] for j in st["active_jobs"]], [b.job(1)])
    ctx.equal("inventory not moved a second time", st["stock"], after_move["stock"])
    ctx.equal("one archived finish row for step 1", len([f for f in st["finished_jobs"] if f["job_id"] == job_b]), 1)
    receipts = _receipts(st, job_b)
    ctx.check("the replayed callbacks were accepted at most once and otherwise answered as duplicates",
              receipts.count("ACCEPTED") <= 1 and set(receipts) <= {"ACCEPTED", "DUPLICATE"}, receipts)
    ctx.observe(f"one business effect for 4 deliveries of one event; racing replay+recovery: stages {finishing}, "
                f"receipts {receipts}")


def lost_authority(ctx: ScenarioContext) -> None:
    ctx.ensure_wms()
    created = ctx.create_workflow(steps=2)
    _stop_wms(ctx)
    ctx.complete_move_in_wms(created, 0, why="evidence a recovery worker can act on (finish-job-terminal)")
    # The old authority: holds the runner lease and reads evidence, then loses its connection.
    with try_lease() as lease:
        ctx.check("the stale worker held the runner lease", lease.acquired)
        stale_evidence = evidence_for_workflow(created.workflow_id)
        stale_decision = decide(stale_evidence)
        ctx.equal("the stale worker decided ADVANCE", stale_decision.action, Action.ADVANCE)
        with connect_direct("tidy-replay-terminator") as admin:
            pid = admin.execute(sql.LEASE_HOLDER, (RUNNER_LEASE_KEY,)).fetchone()[0]
            admin.execute(sql.TERMINATE_BACKEND, (pid,))
        ctx.note("the stale worker's lease connection was terminated (communication loss)")
        time.sleep(0.2)
        ctx.equal("the stale worker sees its lease lost", lease.alive(), False)
    with try_lease() as new_lease:
        ctx.check("the runner lease is free for the new authority", new_lease.acquired)
    since = ctx.now()
    ctx.restart_wms()
    decided = _decisions(created.workflow_id, since)
    ctx.equal("the new authority (qcluster start-up cycle) applied ADVANCE once",
              [d["action"] for d in decided], ["ADVANCE"])
    before = ctx.state([created.workflow_id])
    decisions_before = RecoveryDecision.objects.count()
    try:
        apply_decision(stale_evidence, stale_decision, cycle_id=None)
        ctx.check("the stale worker's write is refused with StaleEvidence", False, "apply_decision returned")
    except StaleEvidence as exc:
        ctx.check("the stale worker's write is refused with StaleEvidence", True, str(exc))
        ctx.note("stale worker resumed: apply_decision raised StaleEvidence", actor="stale worker")
    after = ctx.state([created.workflow_id])
    ctx.equal("the stale write changed nothing", after, before)
    ctx.equal("no decision journaled by the stale worker", RecoveryDecision.objects.count(), decisions_before)
    ctx.equal("step 1 has one RECOVERY_FINISHED event", [e["stage"] for e in _events(after, created.step_ids[0])],
              ["RECOVERY_FINISHED"])
    ctx.observe("the previous authority could not write after another worker decided")


# --- processes killed and connections cut -----------------------------------------------------------


def killed_in_callback(ctx: ScenarioContext) -> None:
    ctx.ensure_wms()
    created = ctx.create_workflow(steps=1)
    job = created.job(0)
    ctx.report_status(job, 2)
    ctx.report_status(job, 3)
    before = ctx.state([created.workflow_id])
    faulty = ctx.procs.start_web("web-faulty", faults="advance.MOVE_FINISHED:sleep=60")
    try:
        thread, box = ctx.in_thread(ctx.finish, job, port=faulty.port, timeout_ms=90000,
                                    note="delivered to the worker that will be killed")
        backend, _ = ctx.procs.wait_in_transaction(faulty, statement="UPDATE alg.tidy_step")
        ctx.equal("while the callback transaction is open, the outside sees nothing of it",
                  ctx.state([created.workflow_id]), before)
        ctx.procs.kill_worker(faulty)
        ctx.procs.wait_sessions_gone(faulty.application_name, pids=[backend])
        thread.join(30)
        ctx.equal("WCS got no answer from the killed worker", box.get("result", (None,))[0], None)
    finally:
        ctx.procs.stop(faulty)
    st = ctx.state([created.workflow_id])
    ctx.equal("the killed callback transaction rolled back: nothing changed", st, before)
    result = ctx.procs.recover_once()
    ctx.equal("a recovery cycle after the crash succeeds", result.returncode, 0)
    ctx.equal("recovery left the consistent pre-move workflow alone", _decisions(created.workflow_id), [])
    status, body = ctx.finish(job, note="WCS retries the finish")
    ctx.equal("the retried finish is ACCEPTED", (status, body.get("outcome") if isinstance(body, dict) else body),
              (200, "ACCEPTED"))
    st = ctx.state([created.workflow_id])
    check_completed(ctx, created, st)
    ctx.observe("SIGKILL inside the callback transaction rolled it back; the retry moved the tray once")


def killed_in_recovery(ctx: ScenarioContext) -> None:
    ctx.ensure_wms()
    created = ctx.create_workflow(steps=2)
    _stop_wms(ctx)
    ctx.complete_move_in_wms(created, 0, why="a proven finish for recovery to advance")
    before = ctx.state([created.workflow_id])
    ctx.settle()
    ctx.start_qcluster(faults="advance.RECOVERY_FINISHED:sleep=60", wait_startup=False, name="qcluster-faulty")
    faulty = ctx.run.qcluster
    backend, _ = ctx.procs.wait_in_transaction(faulty, statement="UPDATE alg.tidy_step")
    ctx.kill_qcluster("SIGKILL inside the recovery transaction (after the step update, before commit)")
    ctx.procs.wait_sessions_gone(faulty.application_name, pids=[backend])
    st = ctx.state([created.workflow_id])
    ctx.equal("the killed recovery transaction rolled back: nothing changed", st, before)
    running = RecoveryCycle.objects.filter(trigger="STARTUP", started_at__gte=faulty.started_at,
                                           finished_at__isnull=True).count()
    ctx.check("the killed cycle's record stays unfinished (RUNNING), as evidence of the crash", running >= 1,
              f"{running} unfinished start-up cycle(s)")
    since = ctx.now()
    ctx.start_qcluster()
    st = ctx.state([created.workflow_id])
    ctx.equal("after restart: one ADVANCE decision", [d["action"] for d in _decisions(created.workflow_id, since)],
              ["ADVANCE"])
    ctx.equal("step 1: one RECOVERY_FINISHED event", [e["stage"] for e in _events(st, created.step_ids[0])],
              ["RECOVERY_FINISHED"])
    ctx.equal("inventory not moved by recovery", st["stock"], before["stock"])
    ctx.equal("one archived finish row for step 1",
              len([f for f in st["finished_jobs"] if f["job_id"] == created.job(0)]), 1)
    ctx.observe("SIGKILL inside the recovery transaction changed nothing; the restart advanced the step once")


def connection_terminated_mid_cycle(ctx: ScenarioContext) -> None:
    ctx.ensure_wms()
    first = ctx.create_workflow(steps=2)
    second = ctx.create_workflow(steps=2)
    _stop_wms(ctx)
    ctx.journal.execute(sql.DELETE_ACTIVE_JOB, {"job_id": first.job(0)},
                        why="a workflow recovery will pause (job missing); its transaction gets cut")
    ctx.complete_move_in_wms(second, 0, why="a workflow recovery will advance later in the same cycle")
    before_first = ctx.state([first.workflow_id])
    ctx.settle()
    ctx.start_qcluster(faults="recovery.before_commit:sleep=2", wait_startup=False, name="qcluster-faulty")
    faulty = ctx.run.qcluster
    backend, _ = ctx.procs.wait_in_transaction(faulty, statement="recovery_recoverydecision")
    with connect_direct("tidy-replay-terminator") as admin:
        admin.execute(sql.TERMINATE_BACKEND, (backend,))
    ctx.note(f"pg_terminate_backend({backend}): the recovery worker's connection is cut before commit")
    cycle = ctx.procs.wait_startup_cycle(faulty)
    ctx.check("the qcluster survived the lost connection", faulty.alive())
    ctx.equal("the cycle counted one workflow failure", cycle.errors, 1)
    ctx.equal(f"workflow {first.workflow_id} unchanged (the cut transaction rolled back)",
              ctx.state([first.workflow_id]), before_first)
    st2 = ctx.state([second.workflow_id])
    ctx.equal(f"the same cycle went on: workflow {second.workflow_id} advanced after reconnecting",
              [s["status"] for s in st2["steps"]], ["COMPLETED", "DISPATCHED"])
    ctx.start_qcluster()
    st1 = ctx.state([first.workflow_id])
    ctx.equal(f"the next cycle paused workflow {first.workflow_id} with {JOB_MISSING}",
              (st1["workflows"][0]["status"], st1["workflows"][0]["pause_reason"]),
              ("PAUSED_RECOVERY", JOB_MISSING))
    ctx.equal("exactly one PAUSE decision in all", [d["action"] for d in _decisions(first.workflow_id)],
              [NO_JOB.action.value])
    ctx.equal("locks retained", st1["space_locks"], before_first["space_locks"])
    ctx.observe("a database failure mid-cycle was not evidence: rolled back, counted, decided next cycle")


def _ensure_schedule(ctx: ScenarioContext) -> None:
    """The recovery schedule row (a migration declares it; a flushed test database may lack it)."""
    if not Schedule.objects.filter(name=SCHEDULE_NAME).exists():
        ensure_recovery_schedule()
        ctx.journal.record(kind="service", why="the recovery schedule row was missing; the scheduled cycles need it",
                           call="recovery.runtime.schedule.ensure_recovery_schedule()")


def workflow_locked_longer_than_a_cycle(ctx: ScenarioContext) -> None:
    ctx.ensure_wms()
    created = ctx.create_workflow(steps=2)
    _stop_wms(ctx)
    ctx.complete_move_in_wms(created, 0, why="a workflow recovery wants to advance")
    before = ctx.state([created.workflow_id])
    holder = connect_direct("tidy-replay-lock-holder")
    holder.autocommit = False
    try:
        holder.execute(sql.HOLD_WORKFLOW_ROW, (created.workflow_id,))
        held_at = time.monotonic()
        ctx.journal.record(kind="row-lock", why="another session holds the workflow row longer than a cycle",
                           call=f"SELECT ... FROM alg.tidy_workflow WHERE workflow_id = {created.workflow_id} "
                                "FOR UPDATE (held, then rolled back)")
        ctx.note(f"another session holds workflow {created.workflow_id}'s row lock", actor="lock holder")
        startup = ctx.restart_wms()
        ctx.check("the start-up cycle skipped the locked workflow", startup.skipped >= 1, {"skipped": startup.skipped})
        result = ctx.procs.recover_once()
        ctx.equal("a second cycle (recover --once) ran while the row stayed locked", result.returncode, 0)
        later = RecoveryCycle.objects.filter(started_at__gt=startup.started_at, finished_at__isnull=False)
        ctx.check("the later cycle skipped it too", any(c.skipped >= 1 for c in later),
                  [(c.pk, c.trigger, c.skipped) for c in later])
        if ctx.run.profile == "full":
            _ensure_schedule(ctx)
            ctx.wait_until("two scheduled cycles (every RECOVERY_INTERVAL_SECONDS) skipped the locked workflow",
                           lambda: RecoveryCycle.objects.filter(trigger="SCHEDULE", started_at__gt=startup.started_at,
                                                                skipped__gte=1).count() >= 2, timeout=120, every=0.5)
            status, body = ctx.finish(created.job(0), note="a callback while the row is held")
            ctx.equal("a callback while the row is held is answered 503 busy, nothing changed",
                      (status, body.get("outcome") if isinstance(body, dict) else body), (503, "UNAVAILABLE"))
        ctx.equal("nothing changed while the row was held", ctx.state([created.workflow_id])["steps"],
                  before["steps"])
        ctx.equal("no decision while the row was held", _decisions(created.workflow_id), [])
        # The scenario's premise, whatever the machine's speed: keep the row past one interval.
        time.sleep(max(0.0, held_at + CHILD_RECOVERY_INTERVAL_SECONDS + 0.25 - time.monotonic()))
        held = time.monotonic() - held_at
        ctx.check(f"the row was held longer than a cycle interval ({CHILD_RECOVERY_INTERVAL_SECONDS} s)",
                  held > CHILD_RECOVERY_INTERVAL_SECONDS, f"{held:.1f} s")
    finally:
        holder.rollback()
        holder.close()
        ctx.note("the lock holder released the row", actor="lock holder")
    if ctx.run.profile == "full":
        ctx.wait_until("the next scheduled cycle decided the workflow",
                       lambda: _decisions(created.workflow_id), timeout=60, every=0.5)
    else:
        ctx.equal("the next cycle after release succeeds", ctx.procs.recover_once().returncode, 0)
    st = ctx.state([created.workflow_id])
    ctx.equal("decided once after the release: ADVANCE", [d["action"] for d in _decisions(created.workflow_id)],
              ["ADVANCE"])
    ctx.equal("step 1: one RECOVERY_FINISHED event", [e["stage"] for e in _events(st, created.step_ids[0])],
              ["RECOVERY_FINISHED"])
    ctx.equal("inventory not moved by recovery", st["stock"], before["stock"])
    ctx.observe("recovery skipped the held workflow for as long as it was held, then decided it once")


# --- operator repair racing recovery and a callback -------------------------------------------------


def _repair_unavailable() -> str | None:
    with connection.cursor() as cursor:
        cursor.execute(APPEND_ONLY_TABLE_EXISTS, {"table": "console_repairaudit"})
        if not cursor.fetchone()[0]:
            return "the repair audit table is not migrated"
    return None


def repair_races_recovery_and_callback(ctx: ScenarioContext) -> None:
    ctx.ensure_wms()
    created = ctx.create_workflow(steps=2)
    _stop_wms(ctx)
    ctx.journal.execute(sql.DELETE_ACTIVE_JOB, {"job_id": created.job(0)},
                        why="a job lost at restart, so the workflow pauses and an operator re-issues it")
    ctx.restart_wms()
    ctx.equal(f"paused with {JOB_MISSING}", ctx.workflow_status(created.workflow_id),
              ("PAUSED_RECOVERY", JOB_MISSING))
    ctx.stop_qcluster()
    username = f"replay-{ctx.run.run_id}-operator"
    user = User.objects.create_user(username=username)
    group, group_created = Group.objects.get_or_create(name=OPERATOR)  # a migration creates it; tests may flush it
    user.groups.add(group)
    ctx.journal.record(kind="service", why="a run-scoped operator who repairs",
                       call=f"User {username} in group {OPERATOR!r}" + (" (group created)" if group_created else ""),
                       result=user.pk)
    fingerprint = evidence_for_workflow(created.workflow_id).fingerprint
    before = ctx.state([created.workflow_id])
    step = evidence_for_workflow(created.workflow_id).step  # the operator finds the tray at the source
    request = repair.RepairRequest(action=repair.RepairAction.REISSUE, workflow_id=created.workflow_id,
                                   reason_code="JOB_LOST_AT_RESTART",
                                   reason_text="Replay: the move job was lost when the WMS restarted.",
                                   tray_code=step.tray_code, space_code=step.cargo_space_id)
    # Hold the row so all three contenders queue on it, then let them go at once.
    holder = connect_direct("tidy-replay-lock-holder")
    holder.autocommit = False
    holder.execute(sql.HOLD_WORKFLOW_ROW, (created.workflow_id,))
    ctx.note("the row is held while the operator, a recovery worker and WCS start", actor="lock holder")
    key = f"replay{ctx.run.run_id}reissue"
    contenders = {
        "operator re-issue": ctx.in_thread(repair.repair_apply, user=user, request=request,
                                           previewed_fingerprint=fingerprint, idempotency_key=key),
        "operator double submit": ctx.in_thread(repair.repair_apply, user=user, request=request,
                                                previewed_fingerprint=fingerprint, idempotency_key=key),
        "WCS finish": ctx.in_thread(ctx.finish, created.job(0), note="a late report racing the repair"),
        "recovery cycle": ctx.in_thread(ctx.procs.recover_once, "recover-once-race"),
    }
    time.sleep(0.5)
    holder.rollback()
    holder.close()
    ctx.note("row released: the contenders race for it", actor="lock holder")
    for name, (thread, box) in contenders.items():
        thread.join(60)
        if "error" in box:
            ctx.note(f"{name}: raised {type(box['error']).__name__}: {box['error']}", actor=name)
        else:
            ctx.note(f"{name}: returned", actor=name, result=str(box.get("result"))[:300])
    audits = list(RepairAudit.objects.filter(workflow_id=created.workflow_id).values("id", "action", "outcome"))
    ctx.equal("the repair applied exactly once (one APPLIED audit row; the double submit got the first result)",
              [a["outcome"] for a in audits if a["outcome"] == "APPLIED"], ["APPLIED"])
    st = ctx.state([created.workflow_id])
    jobs = [j["job_id"] for j in st["active_jobs"]] + [f["job_id"] for f in st["finished_jobs"]]
    ctx.equal("the re-issued job exists exactly once (active or archived)", jobs.count(created.job(0)), 1)
    ctx.equal("the workflow ended ACTIVE, not paused again by the race", st["workflows"][0]["status"], "ACTIVE")
    archived = [f for f in st["finished_jobs"] if f["job_id"] == created.job(0)]
    if archived:
        check_moved_once(ctx, created, 0, st)
    else:
        check_not_moved(ctx, created, 0, st)
    ctx.equal("locks retained throughout", len(st["space_locks"]), len(before["space_locks"]))
    receipts = _receipts(st, created.job(0))
    ctx.check("the callback was either refused while paused or applied once after the repair",
              receipts in (["REFUSED_PAUSED"], ["ACCEPTED"], ["UNAVAILABLE"]), receipts)
    ctx.observe(f"repair applied once; callback {receipts}; audit {[(a['action'], a['outcome']) for a in audits]}")


SCENARIOS: tuple[Scenario, ...] = (
    Scenario("normal_automatic", "Normal automatic tidy", "normal lifecycle", (
        "lifecycle creates an AUTOMATIC workflow: step 1 DISPATCHED, job TDY-<w>-<s> status 1, spaces locked",
        "the WCS simulator reports job status 2 and 3, then MOVE_FINISHED, through the HTTP callbacks",
        "each finish runs alg.usp_complete_move_job once, completes the step and creates the next job",
        "the last finish completes the workflow and releases its locks; recovery journals no decision"),
        normal_automatic),
    Scenario("normal_manual", "Normal manual tidy (vehicle snapshot consulted)", "normal lifecycle", (
        "creation asks the WCS vehicle snapshot for a free vehicle (journaled outbound request)",
        "the workflow then runs exactly like an automatic one, to COMPLETED"), normal_manual),
    Scenario("repairable_completion", "Repairable completion after restart", "restart case 1", (
        "WMS stops after the tidy move job is created",
        "fixture: alg.usp_complete_move_job completes the move without advancing the step",
        "restart: the start-up recovery cycle proves the finish and advances with RECOVERY_FINISHED",
        "the next job is created, inventory is not moved again; the rest completes normally"),
        repairable_completion),
    Scenario("missing_local_job", "Missing local job after restart", "restart case 2", (
        "WMS stops; fixture: the active move job is removed, workflow, step and locks stay",
        f"restart: recovery pauses workflow and step with {JOB_MISSING} and keeps every lock",
        "later cycles and a late callback change nothing"), missing_local_job),
    Scenario("wcs_report_mismatch", "WCS reports another tray than the step's", "load identity", (
        "the WCS simulator drives a job and finishes it naming another tray than the step's",
        "the callback answers 409 REPORT_MISMATCH and moves nothing",
        f"the next recovery cycle pauses the workflow with {WCS_MISMATCH.reason.value}, locks kept",
        "a repeat of the report gets the same answer; inventory untouched"), wcs_report_mismatch),
    Scenario("observe_mode", "Observe mode changes nothing, then apply does what it observed", "observe mode", (
        "WMS stops; fixture: one move completed without advancing its step, one active job removed",
        f"a qcluster with RECOVERY_MODE=observe runs its start-up cycle and at least {OBSERVING_CYCLES} more",
        "every WMS table's checksum is unchanged (mismatches=[]); one observed ADVANCE and one observed PAUSE "
        "are journaled, each once, with their evidence",
        "restarted in apply mode, recovery advances and pauses exactly those; the observe page says both agree"),
        observe_mode),
    Scenario("after_persistence_before_send", "After persistence, before send", "integration window 1", (
        "the tidy and its job are persisted; the processes crash before WCS receives the job",
        "restart: recovery finds the pending intent consistent and leaves it (no new task)",
        "WCS then executes it: one job, one finish, history preserved"), after_persistence_before_send),
    Scenario("after_execution_before_ack", "After execution, before acknowledgement", "integration window 2", (
        "WCS executes the job (status 3); recovery cycles pass without a finish and do nothing",
        "the finish is applied but its acknowledgement is lost (client timeout)",
        "WCS re-sends: answered DUPLICATE, no second movement"), after_execution_before_ack),
    Scenario("after_completion_before_notification", "After completion, before WMS notification",
             "integration window 3", (
                 "WCS completes and crashes before notifying; after restart it replays the event with the same "
                 "identity, several times and concurrently: one ACCEPTED, the rest DUPLICATE, one move",
                 "the WMS archived a move but lost the advance; the replayed callback races a recovery cycle: "
                 "the step advances once and inventory is not moved again"),
             after_completion_before_notification),
    Scenario("lost_authority", "Lost authority (stale recovery worker)", "integration window 4", (
        "a worker holds the runner lease, reads evidence and decides ADVANCE",
        "its connection is terminated: the lease is lost and free for a new authority",
        "another worker (qcluster start-up cycle) advances the step",
        "the stale worker resumes: apply_decision raises StaleEvidence and changes nothing"), lost_authority),
    Scenario("killed_in_callback", "Web worker killed inside a callback transaction", "process killed", (
        "a finish callback runs usp_complete_move_job and completes the step, then the worker is SIGKILLed "
        "before commit", "PostgreSQL rolls the transaction back: nothing changed",
        "recovery leaves the consistent workflow; WCS retries and the tray moves once"), killed_in_callback),
    Scenario("killed_in_recovery", "qcluster killed inside a recovery transaction", "process killed", (
        "recovery advances a proven finish; the qcluster is SIGKILLed inside the transaction",
        "nothing changed; the cycle record stays unfinished",
        "restart: the start-up cycle advances the step once, inventory untouched"), killed_in_recovery),
    Scenario("connection_terminated_mid_cycle", "Database connection terminated mid-cycle",
             "database failure is never evidence", (
        "a cycle decides two workflows; the first one's connection is terminated before commit",
        "the first workflow is unchanged and counted as an error; the cycle reconnects and decides the second",
        "the next cycle pauses the first one; locks retained"), connection_terminated_mid_cycle),
    Scenario("workflow_locked_longer_than_a_cycle", "Workflow row locked longer than a cycle", "workflow row lock", (
        "another session holds the workflow row lock across several cycles",
        "every cycle skips it (SKIP LOCKED) and changes nothing",
        "after release the next cycle decides it once"), workflow_locked_longer_than_a_cycle),
    Scenario("repair_races_recovery_and_callback", "Operator repair racing recovery and a callback",
             "workflow row lock, apply once", (
        "a paused workflow (job missing); an operator re-issue (plus a double submit), a recovery cycle and a "
        "WCS finish start together on the same workflow",
        "the workflow row serializes them: the repair applies once, recovery skips or leaves, the callback is "
        "refused while paused or applied once after", "no double move, no double job, locks kept"),
        repair_races_recovery_and_callback, _repair_unavailable),
)

BY_NAME = {s.name: s for s in SCENARIOS}
PROFILES = {"short": [s.name for s in SCENARIOS], "full": [s.name for s in SCENARIOS]}


def raise_if_missing(names: list[str]) -> None:
    unknown = [n for n in names if n not in BY_NAME]
    if unknown:
        raise ScenarioFailed(f"unknown scenario(s): {', '.join(unknown)}; known: {', '.join(BY_NAME)}")
