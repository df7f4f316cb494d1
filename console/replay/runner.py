"""One replay run: preflight, verified baseline, scenarios with real processes, the outbound
HTTP journal, restore, row-by-row comparison, report."""

import secrets
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from django.conf import settings
from django.core.management import call_command
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone

from console.models import RepairAudit
from console.replay import database as db
from console.replay.context import RunState, ScenarioContext, ScenarioResult
from console.replay.journal import MutationJournal, Timeline
from console.replay.processes import Processes, free_port
from console.replay.scenarios import BY_NAME, PROFILES, raise_if_missing
from recovery.engine.schema import missing_tables
from recovery.models import CallbackReceipt, OutboundHttpRequest, RecoveryCycle, RecoveryDecision

TASK_STATE_MARKERS = ("task-state", "taskstate", "tidytaskstate", "unknown-task", "/sim/")
CALLBACK_PATHS = ("/api/wcs/job-finish", "/api/wcs/job-status")


@dataclass
class ReplayOptions:
    scenarios: list[str] | None = None
    profile: str = "full"
    report_dir: Path | None = None
    web_port: int | None = None
    snapshot_port: int | None = None
    allow_configured_database: bool = False
    allow_other_sessions: bool = False


@dataclass
class ReplayResult:
    run_id: str
    profile: str
    database: str
    started_at: object
    report_dir: Path
    setup: list[str] = field(default_factory=list)
    scenarios: list[ScenarioResult] = field(default_factory=list)
    baseline_tables: list[dict] = field(default_factory=list)
    baseline_sequences: dict = field(default_factory=dict)
    baseline_verified: bool = False
    backup_schema: str = ""
    backup_dropped: bool = False
    restore_counts: dict = field(default_factory=dict)
    mismatches: list[dict] | None = None
    outbound: list[dict] = field(default_factory=list)
    task_state_requests: list[dict] = field(default_factory=list)
    unexpected_requests: list[dict] = field(default_factory=list)
    outbound_statement: str = ""
    journal: list[dict] = field(default_factory=list)
    run_timeline: Timeline = field(default_factory=Timeline)
    finished_at: object = None
    duration_s: float = 0.0
    error: str = ""

    @property
    def failed_scenarios(self) -> list[str]:
        return [s.name for s in self.scenarios if s.status == "failed"]

    @property
    def passed(self) -> bool:
        return (not self.error and not self.failed_scenarios and self.mismatches == []
                and not self.task_state_requests and not self.unexpected_requests)


def describe_database() -> str:
    s = connection.settings_dict
    where = s["HOST"] if s["HOST"] else "localhost"
    kind = "embedded" if settings.EMBEDDED_DATABASE else "DATABASE_URL"
    return f"{s['NAME']} on {where}{':' + str(s['PORT']) if s['PORT'] else ''} ({kind})"


def _unapplied_migrations() -> list[str]:
    executor = MigrationExecutor(connection)
    plan = executor.migration_plan(executor.loader.graph.leaf_nodes())
    return [f"{m.app_label}.{m.name}" for m, _ in plan]


def preflight(options: ReplayOptions, result: ReplayResult) -> None:
    """Refuse before writing anything when the replay must not run here; prepare an embedded
    database (migrations, WMS schema) that lacks them."""
    embedded = settings.EMBEDDED_DATABASE
    if not embedded and not options.allow_configured_database:
        raise db.ReplayRefused(
            "DATABASE_URL is configured: the replay writes fixtures and runs processes against that database "
            "before restoring it. Run it on the embedded database, or pass --i-understand-this-writes to run it "
            "on this one. Nothing was written.")
    db.check_superuser()
    if leftovers := db.leftover_backups():
        raise db.ReplayRefused(
            f"an earlier replay left its backup schema ({', '.join(leftovers)}): that run did not restore cleanly. "
            f"Restore it first with `manage.py replay --restore-backup {leftovers[0]}`. Nothing was written.")
    if others := db.other_sessions():
        if not options.allow_other_sessions:
            listed = "; ".join(f"pid {s['pid']} {s['application_name']} ({s['client']}, {s['state']})"
                               for s in others)
            raise db.ReplayRefused(
                f"{len(others)} other session(s) are connected to this database ({listed}). Their writes would be "
                "undone by the restore; stop the console first (or pass --allow-other-sessions). Nothing was written.")
        result.setup.append(f"{len(others)} other session(s) connected; allowed by --allow-other-sessions")
    if unapplied := _unapplied_migrations():
        if not embedded:
            raise db.ReplayRefused(f"unapplied migrations on DATABASE_URL: {', '.join(unapplied)}; run "
                                   "`manage.py migrate` first. Nothing was written.")
        call_command("migrate", interactive=False, verbosity=0)
        result.setup.append(f"embedded database: applied {len(unapplied)} migration(s) before the baseline")
    if missing := missing_tables():
        if not embedded:
            raise db.ReplayRefused(f"WMS tables missing in DATABASE_URL: {', '.join(missing)}. They belong to the "
                                   "WMS; the replay applies the shipped schema only on the embedded database.")
        call_command("wms_schema", verbosity=0)
        result.setup.append(f"embedded database: created the WMS tables ({', '.join(missing)}) before the baseline")


def _classify_outbound(result: ReplayResult, run: RunState, since_id: int) -> None:
    rows = list(OutboundHttpRequest.objects.filter(id__gt=since_id).order_by("id")
                .values("id", "started_at", "purpose", "method", "url", "status", "duration_ms", "error"))
    snapshot = run.snapshot_url
    counts = {"vehicle snapshot": 0, "WCS callback to the console": 0}
    for row in rows:
        url = row["url"]
        row["started_at"] = row["started_at"].isoformat()
        lowered = url.lower().replace("_", "").replace(" ", "")
        if any(marker in lowered for marker in TASK_STATE_MARKERS):
            row["kind"] = "TASK-STATE REQUEST"
            result.task_state_requests.append(row)
        elif url == snapshot and row["method"] == "GET":
            row["kind"] = "vehicle snapshot"
        elif urlsplit(url).hostname == "127.0.0.1" and urlsplit(url).path in CALLBACK_PATHS and row["method"] == "POST":
            row["kind"] = "WCS callback to the console"
        else:
            row["kind"] = "UNEXPECTED"
            result.unexpected_requests.append(row)
        if row["kind"] in counts:
            counts[row["kind"]] += 1
    result.outbound = rows
    if result.task_state_requests:
        result.outbound_statement = (f"{len(result.task_state_requests)} task-state request(s) were made: "
                                     "see the outbound journal.")
    else:
        result.outbound_statement = (
            f"No task-state request was made: every one of the {len(rows)} journaled outbound requests was checked; "
            f"{counts['vehicle snapshot']} vehicle snapshot(s), {counts['WCS callback to the console']} WCS "
            "callback(s) to the console"
            + (f", {len(result.unexpected_requests)} unexpected (listed)." if result.unexpected_requests else "."))


def _database_timeline(sc: ScenarioResult) -> None:
    """Add what the database recorded during the scenario to its timeline."""
    start, end = sc.started_at, sc.finished_at
    wids = sc.workflows
    tl = sc.timeline
    for c in RecoveryCycle.objects.filter(started_at__gte=start, started_at__lte=end).order_by("started_at"):
        tl.add(f"recovery cycle {c.pk} ({c.trigger}) started", actor=c.worker or "recovery", at=c.started_at)
        if c.finished_at:
            tl.add(f"recovery cycle {c.pk} {c.outcome}: examined {c.examined}, applied {c.decision_counts or 'none'}, "
                   f"skipped {c.skipped}, errors {c.errors}", actor=c.worker or "recovery", at=c.finished_at)
    for d in RecoveryDecision.objects.filter(workflow_id__in=wids, decided_at__gte=start, decided_at__lte=end):
        tl.add(f"decision {d.action} {d.reason or ''} ({d.rule}) on workflow {d.workflow_id} by {d.source}",
               actor="recovery" if d.source == "RECOVERY" else d.source.lower(), at=d.decided_at)
    for r in CallbackReceipt.objects.filter(workflow_id__in=wids, received_at__gte=start, received_at__lte=end):
        what = f"{r.endpoint} {r.job_id}" + (f" {r.stage}" if r.stage else "") + \
            (f" status {r.job_status}" if r.job_status else "")
        tl.add(f"console received {what}: {r.http_status} {r.outcome}", actor="web", at=r.received_at,
               message=r.message[:200])
    for a in RepairAudit.objects.filter(workflow_id__in=wids, at__gte=start, at__lte=end).order_by("id"):
        tl.add(f"operator {a.username}: {a.action} {a.outcome} on workflow {a.workflow_id}", actor="operator",
               at=a.at, message=a.message[:200])
    with connection.cursor() as cursor:
        cursor.execute(db.EVENTS_IN_WINDOW, {"w": wids, "s": start, "e": end})
        for at, w, s, j, stage in cursor.fetchall():
            tl.add(f"event {stage} recorded for workflow {w} step {s} ({j})", actor="wms", at=at)
    tl.events.sort(key=lambda e: e["at"])


def run_scenarios(run: RunState, names: list[str], result: ReplayResult, out) -> None:
    for name in names:
        scenario = BY_NAME[name]
        sc = ScenarioResult(name, scenario.title, scenario.window, list(scenario.expected))
        result.scenarios.append(sc)
        why_not = scenario.available() if scenario.available else None
        if why_not:
            sc.status, sc.error = "not available", why_not
            out(f"  {name}: not available ({why_not})")
            continue
        run.journal.scenario = name
        run.procs.timeline = sc.timeline
        ctx = ScenarioContext(run, sc)
        sc.started_at = timezone.now()
        t0 = time.monotonic()
        try:
            scenario.run(ctx)
        except Exception as exc:  # noqa: BLE001 - any failure is recorded, the run goes on
            sc.error = f"{type(exc).__name__}: {exc}\n{traceback.format_exc()}"
            sc.timeline.add(f"scenario stopped by {type(exc).__name__}: {exc}")
        finally:
            for child in list(run.procs.children):
                if child.alive() and child not in (run.web, run.qcluster):
                    run.procs.stop(child)
            connection.close()  # a scenario may leave a broken connection; the next query reconnects
            sc.finished_at = timezone.now()
            sc.duration_s = round(time.monotonic() - t0, 1)
        try:
            sc.final_state = ctx.state()
            _database_timeline(sc)
        except Exception as exc:  # noqa: BLE001
            sc.error = (sc.error + "\n" if sc.error else "") + f"could not read the final state: {exc}"
        failed = [c for c in sc.checks if not c.passed]
        sc.status = "passed" if sc.checks and not failed and not sc.error else "failed"
        out(f"  {name}: {sc.status.upper()} ({len(sc.checks) - len(failed)}/{len(sc.checks)} checks, "
            f"{sc.duration_s} s)" + (f" -- {sc.error.splitlines()[0]}" if sc.error else ""))
        for c in failed:
            out(f"      failed: {c.name}: {c.detail[:300]}")


def run_replay(options: ReplayOptions, *, out=print) -> ReplayResult:
    run_id = secrets.token_hex(3)
    stamp = timezone.now().strftime("%Y%m%d-%H%M%S")
    report_dir = Path(options.report_dir or Path(settings.BASE_DIR) / "replay-reports" / stamp)
    result = ReplayResult(run_id=run_id, profile=options.profile, database=describe_database(),
                          started_at=timezone.now(), report_dir=report_dir)
    names = options.scenarios or PROFILES[options.profile]
    raise_if_missing(names)
    t0 = time.monotonic()
    tl = result.run_timeline

    preflight(options, result)
    for line in result.setup:
        out(line)
    baseline = db.take_baseline(run_id)
    result.backup_schema = baseline.backup_schema
    result.baseline_tables = baseline.checksums.summary()
    result.baseline_sequences = baseline.checksums.sequences
    result.baseline_verified = baseline.verified
    tl.add(f"baseline: {len(baseline.tables)} tables checksummed row by row, copied to {baseline.backup_schema}")
    out(f"baseline: {sum(t['rows'] for t in result.baseline_tables)} rows in {len(baseline.tables)} tables, "
        f"{len(result.baseline_sequences)} sequences -> {baseline.backup_schema}")
    if not baseline.verified:
        db.drop_backup(baseline.backup_schema)
        result.error = (f"the backup copy differs from the live tables in {len(baseline.verify_mismatches)} row(s); "
                        "no scenario was run and nothing was written")
        result.mismatches = baseline.verify_mismatches
        return _finish(result, t0)
    tl.add("backup verified: every row and sequence of the copy equals the live baseline")
    out("backup verified against the live tables")

    since_outbound = OutboundHttpRequest.objects.order_by("-id").values_list("id", flat=True).first() or 0
    snapshot_url = f"http://127.0.0.1:{options.snapshot_port or free_port()}/wcs/vehicle-snapshot"
    journal = MutationJournal()
    procs = Processes(log_dir=report_dir / "logs", timeline=tl, token=secrets.token_urlsafe(24),
                      snapshot_url=snapshot_url)
    run = RunState(run_id=run_id, profile=options.profile, journal=journal, procs=procs, snapshot_url=snapshot_url,
                   token=procs.token, web_port=options.web_port)
    try:
        out(f"scenarios ({options.profile} profile):")
        run_scenarios(run, names, result, out)
    except KeyboardInterrupt:
        # Still stop every process, restore, compare and write the report; the run fails.
        result.error = ("the run was interrupted (Ctrl-C or SIGTERM); the scenarios after the interrupted one "
                        "did not run")
        out("interrupted: stopping the processes and restoring the database")
    finally:
        procs.timeline = tl
        procs.stop_all()
        tl.add("every child process stopped")
        result.journal = journal.entries
        try:
            _classify_outbound(result, run, since_outbound)
        except Exception as exc:  # noqa: BLE001
            result.error = result.error or f"could not read the outbound journal: {exc}"
        _restore_and_compare(result, baseline.tables, baseline.backup_schema, baseline.checksums, out)
        _finish(result, t0)
    return result


def _restore_and_compare(result: ReplayResult, tables, backup_schema: str, expected: db.Checksums, out) -> None:
    connection.close()
    tl = result.run_timeline
    try:
        result.restore_counts = db.restore(tables, backup_schema)
        tl.add("restore: every table put back from the backup in one transaction (session_replication_role "
               "= replica), sequences reset")
        result.journal.append({"at": timezone.now().isoformat(), "scenario": "restore", "kind": "restore",
                               "why": "undo every fixture mutation and every process's write",
                               "sql": f"DELETE + INSERT ... SELECT FROM {backup_schema}.* ; setval(...)",
                               "params": {}, "rows": sum(c["inserted"] for c in result.restore_counts.values())})
        result.mismatches = db.compare(expected, db.live_checksums(tables))
    except Exception as exc:  # noqa: BLE001 - the backup is kept; the report says how to retry
        result.error = (result.error + "; " if result.error else "") + f"restore failed: {exc}"
        result.mismatches = None
        out(f"restore FAILED: {exc}; the backup schema {backup_schema} is kept")
        return
    if result.mismatches:
        db.describe_rows(result.mismatches, tables, backup_schema)
        out(f"mismatches={len(result.mismatches)} rows differ; the backup schema {backup_schema} is kept")
    else:
        db.drop_backup(backup_schema)
        result.backup_dropped = True
        tl.add(f"compared with the baseline: mismatches=[]; backup schema {backup_schema} dropped")
    out(f"mismatches={result.mismatches if not result.mismatches else f'[{len(result.mismatches)} rows]'}")


def _finish(result: ReplayResult, t0: float) -> ReplayResult:
    result.finished_at = timezone.now()
    result.duration_s = round(time.monotonic() - t0, 1)
    return result


def restore_backup(backup_schema: str, *, out=print) -> list[dict]:
    """Restore a backup schema an earlier run kept, compare, drop it when clean."""
    if backup_schema not in db.leftover_backups():
        raise db.ReplayRefused(f"no replay backup schema named {backup_schema!r}")
    db.check_superuser()
    tables = db.tables_of_backup(backup_schema)
    expected = db.backup_checksums(tables, backup_schema)
    db.restore(tables, backup_schema)
    mismatches = db.compare(expected, db.live_checksums(tables))
    if mismatches:
        db.describe_rows(mismatches, tables, backup_schema)
    else:
        db.drop_backup(backup_schema)
    out(f"restored {len(tables)} tables from {backup_schema}: mismatches="
        f"{mismatches if not mismatches else f'[{len(mismatches)} rows]'}")
    return mismatches
