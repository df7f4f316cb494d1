"""The replay: baseline, restore and comparison on the test database, its refusals, the outbound
journal check, and the short profile end to end with the real processes."""

import json

import pytest
from django.conf import settings
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection
from django.utils import timezone

from console.replay import database as db
from console.replay.runner import ReplayOptions, ReplayResult, _classify_outbound, run_replay
from console.replay.scenarios import SCENARIOS
from recovery.models import OutboundHttpRequest
from recovery.runtime.lease import connect_direct

# Other connections (threads, processes, a live server) must see these tests' rows.
pytestmark = pytest.mark.usefixtures("committed_db")

# The test database is a throw-away one; on a configured server (DATABASE_URL, e.g. PostgreSQL
# 15) the replay must be told that writing to it is intended.
WRITES = [] if settings.EMBEDDED_DATABASE else ["--i-understand-this-writes"]


def _execute(sql: str, params: dict | None = None) -> None:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)


def _backup_schemas() -> list[str]:
    return db.leftover_backups()


@pytest.fixture
def baseline(wms, audit_truncate_allowed):
    built = wms.build("healthy")
    base = db.take_baseline("t" + timezone.now().strftime("%H%M%S%f"))
    yield base, built
    if base.backup_schema in _backup_schemas():
        db.drop_backup(base.backup_schema)


def test_it_verifies_the_backup_copy_against_the_live_tables(baseline):
    base, _ = baseline
    assert base.verified and base.verify_mismatches == []
    labels = {t.label for t in base.tables}
    assert {"alg.tidy_workflow", "mydo_job", "bas_stock", "console_repairaudit", "django_migrations",
            "recovery_recoverycycle", "django_q_schedule"} <= labels
    assert len(base.checksums.rows["alg.tidy_step"]) == 2
    assert any(seq.startswith("alg.tidy_workflow") for seq in base.checksums.sequences)


def test_it_lists_every_differing_row_and_restores_them_all(baseline):
    base, built = baseline
    job = f"TDY-{built.workflow_id}-{built.step_ids[0]}"
    _execute("UPDATE mydo_job SET status = 3 WHERE job_id = %(j)s", {"j": job})
    _execute("DELETE FROM alg.tidy_space_lock WHERE workflow_id = %(w)s", {"w": built.workflow_id})
    _execute("INSERT INTO bas_cargo_space (cargo_space_id) VALUES ('EXTRA-1')")
    _execute("INSERT INTO console_repairaudit (at, username, action, stage, pause_reason, reason_code, reason_text, "
             "inputs, fingerprint_previewed, fingerprint_before, fingerprint_after, changes, outcome, message, "
             "decision_after, consistent_after) VALUES (now(), 'x', 'RECHECK', 'APPLY', '', '', '', '{}', '', '', "
             "'', '[]', 'APPLIED', '', '', false)")

    mismatches = db.compare(base.checksums, db.live_checksums(base.tables))
    kinds = {(m["table"], m["kind"]) for m in mismatches}
    assert ("mydo_job", "row differs") in kinds
    assert ("alg.tidy_space_lock", "row missing in live") in kinds
    assert ("bas_cargo_space", "row not in baseline") in kinds
    assert ("console_repairaudit", "row not in baseline") in kinds
    assert [m["key"] for m in mismatches if m["table"] == "mydo_job"] == [job]
    assert len([m for m in mismatches if m["table"] == "alg.tidy_space_lock"]) == 4
    assert any(m["kind"] == "sequence differs" for m in mismatches)  # bas_cargo_space has none; the audit id has

    db.describe_rows(mismatches, base.tables, base.backup_schema)
    changed = next(m for m in mismatches if m["table"] == "mydo_job")
    assert ",2," in changed["baseline_row"] and ",3," in changed["live_row"]

    db.restore(base.tables, base.backup_schema)  # the audit row goes too: its trigger does not fire
    assert db.compare(base.checksums, db.live_checksums(base.tables)) == []


def test_it_refuses_a_configured_database_without_the_flag(wms, settings):
    settings.EMBEDDED_DATABASE = False
    with pytest.raises(CommandError, match="--i-understand-this-writes"):
        call_command("replay", "--profile", "short")
    assert _backup_schemas() == []


def test_it_refuses_while_another_session_is_connected(wms):
    other = connect_direct("someone-else")
    try:
        with pytest.raises(CommandError, match="other session"):
            call_command("replay", "--scenario", "normal_automatic", *WRITES)
    finally:
        other.close()
    assert _backup_schemas() == []


def test_it_refuses_without_superuser_rights(wms):
    _execute("DROP ROLE IF EXISTS replay_plain")
    _execute("CREATE ROLE replay_plain")
    try:
        with connection.cursor() as cursor:
            cursor.execute("SET ROLE replay_plain")
            try:
                with pytest.raises(db.ReplayRefused, match="not a superuser"):
                    db.check_superuser()
            finally:
                cursor.execute("RESET ROLE")
    finally:
        _execute("DROP ROLE replay_plain")


def test_it_flags_a_task_state_request_in_the_outbound_journal(wms):
    start = OutboundHttpRequest.objects.order_by("-id").values_list("id", flat=True).first() or 0
    now = timezone.now()
    for url in ("http://127.0.0.1:9/wcs/vehicle-snapshot", "http://127.0.0.1:9/api/wcs/job-finish",
                "http://wcs.local/sim/task-state?job=TDY-1-1", "http://wcs.local/other"):
        OutboundHttpRequest.objects.create(started_at=now, purpose="x", method="POST" if "job" in url else "GET",
                                           url=url, status=200, duration_ms=1)

    class Run:
        snapshot_url = "http://127.0.0.1:9/wcs/vehicle-snapshot"

    result = ReplayResult(run_id="x", profile="short", database="", started_at=now, report_dir=None)
    _classify_outbound(result, Run, start)
    assert [r["url"] for r in result.task_state_requests] == ["http://wcs.local/sim/task-state?job=TDY-1-1"]
    assert [r["url"] for r in result.unexpected_requests] == ["http://wcs.local/other"]
    assert result.outbound_statement.startswith("1 task-state request(s) were made")
    assert not result.passed


def test_it_knows_every_scenario_by_a_stable_name():
    assert [s.name for s in SCENARIOS] == [
        "normal_automatic", "normal_manual", "repairable_completion", "missing_local_job", "wcs_report_mismatch",
        "observe_mode",
        "after_persistence_before_send", "after_execution_before_ack", "after_completion_before_notification",
        "lost_authority", "killed_in_callback", "killed_in_recovery", "connection_terminated_mid_cycle",
        "workflow_locked_longer_than_a_cycle", "repair_races_recovery_and_callback"]
    with pytest.raises(CommandError, match="unknown scenario"):
        call_command("replay", "--scenario", "no_such_thing")


@pytest.mark.slow
def test_it_runs_the_short_profile_end_to_end_and_restores_the_database_exactly(wms, audit_truncate_allowed,
                                                                                   tmp_path):
    wms.build("healthy")  # some data of someone else's that must come back untouched
    before = db.live_checksums(db.replay_tables())

    # Earlier tests of this pytest process may leave idle connections of their threads (live
    # server, races); they write nothing while the replay runs, so they are allowed here (the
    # refusal itself is tested above).
    assert all(s["state"] == "idle" for s in db.other_sessions())
    messages: list[str] = []
    result = run_replay(ReplayOptions(profile="short", report_dir=tmp_path, allow_other_sessions=True,
                                      allow_configured_database=bool(WRITES)),
                        out=messages.append)
    from console.replay.report import write_report

    html, json_path = write_report(result)

    outcome = {s.name: s.status for s in result.scenarios}
    failures = {s.name: (s.error.splitlines()[:1], [c.name for c in s.checks if not c.passed])
                for s in result.scenarios if s.status != "passed"}
    assert failures == {}, "\n".join(messages)
    assert outcome == {s.name: "passed" for s in SCENARIOS}
    assert result.mismatches == []
    assert result.baseline_verified and result.backup_dropped
    assert result.task_state_requests == [] and result.unexpected_requests == []
    assert result.outbound_statement.startswith("No task-state request was made")
    assert result.passed
    # The database is exactly as before the run (the comparison the run made, made again here).
    assert db.compare(before, db.live_checksums(db.replay_tables())) == []
    assert _backup_schemas() == []

    report = json.loads(json_path.read_text())
    assert report["mismatches"] == [] and report["passed"] is True
    assert {m["scenario"] for m in report["fixture_mutations"]} >= {"repairable_completion", "missing_local_job"}
    assert any("usp_complete_move_job" in m["sql"] for m in report["fixture_mutations"]
               if m["scenario"] == "repairable_completion")
    for scenario in report["scenarios"]:
        assert scenario["expected_sequence"] and scenario["timeline"] and scenario["final_state"]["workflows"]
    page = html.read_text()
    assert "mismatches=[]" in page and "No task-state request was made" in page
    assert (tmp_path / "logs").is_dir()


def test_it_restores_a_backup_an_interrupted_run_kept(baseline):
    base, built = baseline
    _execute("UPDATE alg.tidy_workflow SET status = 'CANCELLED' WHERE workflow_id = %(w)s", {"w": built.workflow_id})
    call_command("replay", "--restore-backup", base.backup_schema)
    assert db.compare(base.checksums, db.live_checksums(base.tables)) == []
    assert base.backup_schema not in _backup_schemas()
    with pytest.raises(CommandError, match="no replay backup schema"):
        call_command("replay", "--restore-backup", base.backup_schema)


def test_it_refuses_to_start_while_an_earlier_backup_is_kept(baseline):
    base, _ = baseline
    with pytest.raises(CommandError, match=f"--restore-backup {base.backup_schema}"):
        call_command("replay", "--scenario", "normal_automatic", *WRITES)



def test_it_exits_non_zero_and_reports_a_failed_scenario_and_still_restores(wms, tmp_path, monkeypatch):
    from console.replay import scenarios

    def broken(ctx):
        ctx.journal.execute("INSERT INTO bas_cargo_space (cargo_space_id) VALUES (%(s)s)", {"s": "BROKEN-1"},
                            why="a fixture the restore must remove")
        ctx.check("something that does not hold", False, "on purpose")

    monkeypatch.setitem(scenarios.BY_NAME, "lost_authority",
                        scenarios.Scenario("lost_authority", "Broken on purpose", "test", ("nothing",), broken))
    with pytest.raises(CommandError, match="failed scenarios: lost_authority"):
        # (idle connections earlier tests of this process leave are allowed, as in the end-to-end test)
        call_command("replay", "--scenario", "lost_authority", "--report", str(tmp_path),
                     "--allow-other-sessions", *WRITES)

    report = json.loads((tmp_path / "report.json").read_text())
    assert report["passed"] is False and report["mismatches"] == []
    assert [(s["name"], s["status"]) for s in report["scenarios"]] == [("lost_authority", "failed")]
    assert [m["params"] for m in report["fixture_mutations"] if m["scenario"] == "lost_authority"] == [
        {"s": "BROKEN-1"}]
    assert "The replay FAILED." in (tmp_path / "report.html").read_text()
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM bas_cargo_space WHERE cargo_space_id = 'BROKEN-1'")
        assert cursor.fetchone()[0] == 0


@pytest.mark.slow
def test_observe_mode_under_the_replay_changes_no_wms_row_and_apply_then_does_what_it_observed(
        wms, audit_truncate_allowed, tmp_path):
    """The observe_mode scenario alone, with the real processes: a qcluster observing over several
    cycles leaves every WMS table's checksum as it was, and the run restores the database exactly."""
    wms.build("job_missing")  # someone else's workflow the observing cycles see too
    before = db.live_checksums(db.replay_tables())
    messages: list[str] = []
    result = run_replay(ReplayOptions(scenarios=["observe_mode"], report_dir=tmp_path, allow_other_sessions=True,
                                      allow_configured_database=bool(WRITES)), out=messages.append)
    (scenario,) = result.scenarios
    assert scenario.status == "passed", (scenario.error, [c for c in scenario.checks if not c.passed], messages)
    assert any(c.name.endswith("(mismatches=[])") and c.passed for c in scenario.checks)
    assert result.mismatches == [] and result.passed
    assert db.compare(before, db.live_checksums(db.replay_tables())) == []
