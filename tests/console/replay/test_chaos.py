"""Chaos in the suite (docs/architecture.md §7, "Chaos"): thirty seconds of simulator
traffic with dropped acknowledgements, duplicates and late reports, while web workers and
qcluster workers are SIGKILLed, every database connection is terminated and the embedded
database is crash-restarted; then no tray is booked in two places or stands in two spaces,
every completed step is archived exactly once with one finish event, no lock is left on a
completed workflow and no cycle failed. It prints the longest gap between successful cycles.

Marked `chaos`: it runs by default (CI included); `-m "not chaos"` leaves it out of a quick run.
A longer run on a staging install: `manage.py chaos --minutes N` (docs/operations.md, "Reliability").
"""

import os
import time

import pytest
from django.conf import settings

from console import devdb
from console.replay.chaos import FAULTS, ChaosOptions, run_chaos

pytestmark = [pytest.mark.chaos, pytest.mark.serial, pytest.mark.usefixtures("committed_db")]

# TIDY_CHAOS_MINUTES runs it longer (2.5 before a release, say). Faults come at least every five
# seconds in a short run, so each of the four kinds happens in the thirty seconds of the default.
MINUTES = float(os.environ.get("TIDY_CHAOS_MINUTES", "0.5"))
FAULT_EVERY = min(10.0, MINUTES * 60 / 6)


def _crash_restart() -> None:
    devdb.crash_stop(settings.EMBEDDED_DB_DIR)
    time.sleep(0.5)
    devdb.restart_after_crash(settings.EMBEDDED_DB_DIR)


def test_it_keeps_every_invariant_through_chaos(wms, tmp_path):
    options = ChaosOptions(minutes=MINUTES, log_dir=tmp_path / "logs", seed=7, fault_every=FAULT_EVERY,
                           restart_database=_crash_restart if settings.EMBEDDED_DATABASE else None)
    result = run_chaos(options)
    print(result.summary())
    assert len(result.faults) >= max(len(FAULTS), MINUTES * 4), result.summary()  # every kind, in turn
    assert result.workflows.get("COMPLETED", 0) >= 5, result.summary()
    assert result.cycles_succeeded > 0
    assert result.passed, result.summary()
