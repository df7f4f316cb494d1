"""The demo shows the floor pages with content: one stalled workflow (which the simulator
leaves alone, as a faulted vehicle would) and a shift lead's note in the current handover."""

import time
from datetime import timedelta

from django.core.management import call_command
from django.db import connection
from django.utils import timezone

from console.floor import selectors as floor
from console.management.demo import DEMO_NOTE, ensure_demo_note, ensure_demo_users
from console.models import WorkflowNote
from console.readers.shifts import shift_at
from console.readers.stalled import stalled_workflows
from console.simulator.wcs import WcsSimulator
from recovery.engine.cordons import cordons_in_force
from recovery.management.commands.wms_demo import DEMO_CORDON_REASON, STALLED_DEMO_MINUTES
from recovery.models import Cordon


def test_the_demo_has_one_stalled_workflow_and_a_note_about_it(wms, audit_truncate_allowed, personas,
                                                                settings):
    settings.EMBEDDED_DATABASE = True  # the demo's accounts exist on the embedded database only
    call_command("wms_demo")
    (stalled,) = stalled_workflows()
    assert timezone.now() - stalled.job_updated_at >= timedelta(minutes=STALLED_DEMO_MINUTES)
    ensure_demo_users()
    note = ensure_demo_note()
    assert (note.workflow_id, note.username, note.text) == (stalled.workflow_id, "shiftlead", DEMO_NOTE)
    assert ensure_demo_note() is None and WorkflowNote.objects.count() == 1  # a restart adds nothing
    report = floor.handover(shift=shift_at(timezone.now()))
    assert [n.text for n in report.notes] == [DEMO_NOTE]
    assert [s.workflow_id for s in report.stalled] == [stalled.workflow_id]


def test_the_demo_shows_one_cordon_and_a_reset_adds_no_second(wms, audit_truncate_allowed):
    call_command("wms_demo")
    (cordon,) = Cordon.objects.all()
    assert (cordon.scope, cordon.reason, cordon.created_by) == ("SPACE", DEMO_CORDON_REASON, "shiftlead")
    assert list(cordons_in_force(spaces=[cordon.place])) == [cordon.place]
    call_command("wms_demo", "--reset")
    assert Cordon.objects.count() == 1


def test_the_simulator_leaves_a_stalled_workflow_alone_when_told(wms):
    built = wms.build("healthy", job_status=2)
    sim = WcsSimulator(console_url="http://127.0.0.1:9", token="unused")
    assert sim._next_job(time.monotonic())[2] == built.workflow_id
    assert sim.leave_stalled(before=timezone.now() - timedelta(minutes=15)) == []  # it just moved
    with connection.cursor() as cursor:
        cursor.execute("UPDATE mydo_job SET updated_at = now() - interval '20 minutes'")
    assert sim.leave_stalled(before=timezone.now() - timedelta(minutes=15)) == [built.workflow_id]
    assert sim._next_job(time.monotonic()) is None
