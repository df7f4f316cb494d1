"""The chaos run's checks (console/replay/chaos.py) find each broken invariant, and its command
refuses what it must not do; the run itself is tests/console/replay/test_chaos.py."""

import pytest
from django.core.management import CommandError, call_command
from django.test import override_settings
from django.utils import timezone

from console.replay.chaos import ChaosResult, _check
from recovery.models import RecoveryCycle
from tests.wcs_helpers import rows

# Other connections (threads, processes, a live server) must see these tests' rows.
pytestmark = pytest.mark.usefixtures("committed_db")


def _checked(since: int = 0, started=None) -> ChaosResult:
    result = ChaosResult(started_at=started or timezone.now(), traffic_ended_at=timezone.now())
    _check(result, since=since)
    return result


def test_a_consistent_completed_workflow_breaks_no_invariant(wms):
    wms.build("completed")
    result = _checked()
    assert result.violations and not any(result.violations.values()), result.violations
    assert result.passed


def test_each_broken_invariant_is_found(wms):
    built = wms.build("completed")
    wid, (first, second) = built.workflow_id, built.step_ids
    move = built.moves[0]
    # The first step's job archived twice; the second's finish event recorded twice under two stages.
    rows("INSERT INTO mydo_job_finish (job_id, in_or_out, status, tray_code, cargo_space_id, target_cargo_space_id) "
         "VALUES (%s, 28, 4, %s, %s, %s)", [f"TDY-{wid}-{first}", move.tray_code, move.source, move.target])
    rows("INSERT INTO alg.tidy_callback_event (workflow_id, step_id, job_id, stage) VALUES (%s, %s, %s, %s)",
         [wid, second, f"TDY-{wid}-{second}", "RECOVERY_FINISHED"])
    # A lock left on the completed workflow; the first tray's stock also booked at its source.
    rows("INSERT INTO alg.tidy_space_lock (workflow_id, cargo_space_id) VALUES (%s, %s)", [wid, "CHECK-LEFT"])
    rows("INSERT INTO bas_stock (tray_code, cargo_space_id, sku, qty) VALUES (%s, %s, 'SKU', 1)",
         [move.tray_code, move.source])
    rows("UPDATE bas_cargo_space SET tray_code = %s WHERE cargo_space_id = %s", [move.tray_code, move.source])
    result = _checked()
    assert [row[:2] for row in result.violations["every completed step archived once with one finish event"]] == [
        [wid, first], [wid, second]]
    assert result.violations["no lock left on a completed workflow"] == [[wid, "CHECK-LEFT"]]
    assert [row[0] for row in result.violations["no tray booked in two places"]] == [move.tray_code]
    assert [row[0] for row in result.violations["no tray standing in two spaces"]] == [move.tray_code]
    assert not result.passed
    # Workflows from before the run are not the run's.
    assert not any(_checked(since=wid).violations.values())


def test_a_cycle_that_failed_for_want_of_the_database_is_no_failed_cycle(transactional_db):
    started = timezone.now()
    for unreachable in (True, False):
        RecoveryCycle.objects.create(started_at=started, finished_at=started, outcome=RecoveryCycle.Outcome.FAILED,
                                     database_unreachable=unreachable, error_text="x")
    result = _checked(started=started)
    assert result.cycles_unreachable == 1 and len(result.failed_cycles) == 1
    assert not result.passed


@override_settings(EMBEDDED_DATABASE=False)
def test_the_command_refuses_a_configured_database_unless_told(transactional_db):
    with pytest.raises(CommandError, match="Nothing was written"):
        call_command("chaos", "--minutes", "1")


@pytest.mark.parametrize("option", ["--minutes", "--fault-every", "--interval"])
def test_the_command_refuses_a_non_positive_value(transactional_db, option):
    with pytest.raises(CommandError, match="must be positive"):
        call_command("chaos", option, "0")
