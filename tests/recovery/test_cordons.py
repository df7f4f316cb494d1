"""Cordons (recovery/engine/cordons.py): a cordoned aisle or space refuses new tidy work in every creation
path (the service, MANUAL with its vehicle snapshot, tidy_create, the simulator), naming the
cordon; an ended or lifted cordon no longer refuses; running workflows go on; the record is
append-only in the database."""

from datetime import timedelta

import pytest
from django.core.management import CommandError, call_command
from django.db import DatabaseError, connection, transaction
from django.utils import timezone

from console.simulator.wcs import WcsSimulator
from recovery.engine.cordons import CordonRefused, cordon_create, cordon_lift, cordons_in_force
from recovery.engine.creation import SpaceCordoned, TidyMove, create_tidy_workflow
from recovery.engine.cycle import run_cycle
from recovery.engine.places import aisle_of
from recovery.engine.wcs import WcsVehicleSnapshotClient
from recovery.models import Cordon, CordonLift, OutboundHttpRequest
from tests.wcs_helpers import TOKEN, answer, local_http_server, rows
from tests.wms_state import diff, snapshot


def tidy(mv) -> TidyMove:
    return TidyMove(mv.tray_code, mv.source, mv.target)


def cordon(scope: str, place: str, *, reason: str = "rack inspection", **kw) -> Cordon:
    return cordon_create(scope=scope, place=place, reason=reason, ends_at=kw.pop("ends_at", None),
                         username=kw.pop("username", "lena"), **kw)


def test_it_refuses_a_source_in_a_cordoned_space_naming_the_cordon_and_creates_nothing(wms):
    mv = wms.move()
    c = cordon("SPACE", mv.source, reason="sprinkler repair")
    before = snapshot()
    with pytest.raises(SpaceCordoned) as refused:
        create_tidy_workflow(origin="AUTOMATIC", moves=[tidy(mv)])
    assert str(refused.value) == (f"space {mv.source} is cordoned: cordon #{c.pk} on space {mv.source} "
                                  "(sprinkler repair) — nothing was created")
    assert [x.cordon_id for x in refused.value.cordons] == [c.pk]
    assert diff(before, snapshot()) == {}


def test_it_refuses_a_target_in_a_cordoned_aisle(wms):
    mv = wms.move()
    aisle = aisle_of(mv.target)
    ends = timezone.now() + timedelta(hours=2)
    c = cordon("AISLE", aisle, ends_at=ends)
    with pytest.raises(SpaceCordoned, match=f"cordon #{c.pk} on aisle {aisle} until"):
        create_tidy_workflow(origin="AUTOMATIC", moves=[tidy(mv)])
    assert rows("SELECT count(*) FROM alg.tidy_workflow") == [(0,)]


def test_a_cordon_elsewhere_does_not_refuse(wms):
    mv = wms.move()
    far = wms.add_space(None)
    cordon("SPACE", far)
    created = create_tidy_workflow(origin="AUTOMATIC", moves=[tidy(mv)])
    assert rows("SELECT status FROM alg.tidy_workflow WHERE workflow_id = %s", [created.workflow_id]) == [("ACTIVE",)]


def test_a_manual_tidy_in_a_cordoned_place_is_refused_before_the_vehicle_snapshot(wms):
    mv = wms.move()
    cordon("AISLE", aisle_of(mv.source))
    body = {"vehicles": [{"id": "V1", "available": True}]}
    before = snapshot()
    with local_http_server({"/snap": answer(200, body)}) as base, pytest.raises(SpaceCordoned):
        create_tidy_workflow(origin="MANUAL", moves=[tidy(mv)],
                             snapshot_client=WcsVehicleSnapshotClient(f"{base}/snap", 1000))
    assert diff(before, snapshot()) == {}
    assert OutboundHttpRequest.objects.count() == 0  # WCS was not asked


def test_tidy_create_explains_the_cordon_and_fails(wms):
    mv = wms.move()
    c = cordon("SPACE", mv.target)
    with pytest.raises(CommandError, match=f"space {mv.target} is cordoned: cordon #{c.pk}"):
        call_command("tidy_create", "--move", mv.tray_code, mv.source, mv.target)
    assert rows("SELECT count(*) FROM alg.tidy_workflow") == [(0,)]


def test_tidy_create_refuses_a_manual_tidy_in_a_cordoned_aisle_without_asking_wcs(wms, settings):
    settings.WCS_SNAPSHOT_URL = "http://127.0.0.1:9/never-asked"
    mv = wms.move()
    c = cordon("AISLE", aisle_of(mv.target))
    with pytest.raises(CommandError, match=f"cordon #{c.pk} on aisle {aisle_of(mv.target)}"):
        call_command("tidy_create", "--origin", "MANUAL", "--move", mv.tray_code, mv.source, mv.target)
    assert rows("SELECT count(*) FROM alg.tidy_workflow") == [(0,)]
    assert OutboundHttpRequest.objects.count() == 0


def test_the_simulator_creates_nothing_in_a_cordoned_aisle(wms):
    mv = wms.move()
    cordon("AISLE", aisle_of(mv.source))
    sim = WcsSimulator(console_url="http://127.0.0.1:9", token=TOKEN, max_active=5, max_steps=1, seed=1)
    before = snapshot()
    assert sim.create_one() is None
    assert sim.stats["creation refused"] == 1
    assert diff(before, snapshot()) == {}


def test_a_lifted_cordon_no_longer_refuses_and_the_lift_is_its_own_row(wms):
    mv = wms.move()
    c = cordon("SPACE", mv.source)
    lift = cordon_lift(cordon_id=c.pk, username="lars")
    again = cordon_lift(cordon_id=c.pk, username="lena")  # a double submit: the first lift stands
    assert (again.cordon_id, again.lifted_by, again.lifted_at) == (c.pk, "lars", lift.lifted_at)
    assert list(CordonLift.objects.values_list("cordon_id", "lifted_by")) == [(c.pk, "lars")]
    assert cordons_in_force(spaces=[mv.source]) == {}
    create_tidy_workflow(origin="AUTOMATIC", moves=[tidy(mv)])
    assert rows("SELECT count(*) FROM alg.tidy_workflow") == [(1,)]


def test_an_ended_cordon_no_longer_refuses(wms):
    mv = wms.move()
    now = timezone.now()
    Cordon.objects.create(scope="SPACE", place=mv.source, reason="night inspection", created_by="lena",
                          created_at=now - timedelta(hours=3), ends_at=now - timedelta(minutes=1))
    assert cordons_in_force(spaces=[mv.source]) == {}
    create_tidy_workflow(origin="AUTOMATIC", moves=[tidy(mv)])
    assert rows("SELECT count(*) FROM alg.tidy_workflow") == [(1,)]


def test_a_running_workflow_goes_on_in_a_cordoned_aisle(wms):
    mv = wms.move()
    created = create_tidy_workflow(origin="AUTOMATIC", moves=[tidy(mv)])
    cordon("AISLE", aisle_of(mv.source))
    run_cycle()
    assert rows("SELECT status FROM alg.tidy_workflow WHERE workflow_id = %s", [created.workflow_id]) == [("ACTIVE",)]
    assert rows("SELECT count(*) FROM alg.tidy_space_lock WHERE workflow_id = %s", [created.workflow_id]) == [(2,)]


def test_the_cordon_record_is_append_only_in_the_database(wms):
    mv = wms.move()
    c = cordon("SPACE", mv.source)
    cordon_lift(cordon_id=c.pk, username="lars")
    for statement in ("UPDATE recovery_cordon SET reason = 'edited'", "DELETE FROM recovery_cordon",
                      "UPDATE recovery_cordonlift SET lifted_by = 'someone'", "DELETE FROM recovery_cordonlift"):
        with pytest.raises(DatabaseError, match="is append-only"), transaction.atomic(), connection.cursor() as cur:
            cur.execute(statement)
    assert list(Cordon.objects.values_list("reason", flat=True)) == ["rack inspection"]
    assert list(CordonLift.objects.values_list("lifted_by", flat=True)) == ["lars"]


@pytest.mark.parametrize(("kw", "field"), [
    ({"scope": "ROW"}, "scope"),
    ({"place": ""}, "place"),
    ({"place": "Z99-01-01"}, "place"),
    ({"scope": "AISLE", "place": "Z99"}, "place"),
    ({"reason": "   "}, "reason"),
    ({"reason": "x" * 501}, "reason"),
    ({"ends_at": "past"}, "ends_at"),
    ({"ends_at": "far"}, "ends_at"),
])
def test_it_refuses_bad_input_naming_the_field_and_records_nothing(wms, kw, field):
    mv = wms.move()
    now = timezone.now()
    args = {"scope": "SPACE", "place": mv.source, "reason": "inspection", "ends_at": None, "username": "lena"}
    args.update(kw)
    args["ends_at"] = {"past": now - timedelta(minutes=1), "far": now + timedelta(days=91)}.get(args["ends_at"],
                                                                                               args["ends_at"])
    with pytest.raises(CordonRefused) as refused:
        cordon_create(**args)
    assert refused.value.field == field
    assert Cordon.objects.count() == 0


def test_lifting_an_unknown_or_ended_cordon_is_refused(wms):
    mv = wms.move()
    now = timezone.now()
    ended = Cordon.objects.create(scope="SPACE", place=mv.source, reason="r", created_by="lena",
                                  created_at=now - timedelta(hours=2), ends_at=now - timedelta(hours=1))
    for cordon_id in (ended.pk, ended.pk + 1000):
        with pytest.raises(CordonRefused) as refused:
            cordon_lift(cordon_id=cordon_id, username="lena")
        assert refused.value.field == "cordon"
    assert CordonLift.objects.count() == 0


@pytest.mark.parametrize(("table", "check_name", "error_id"), [
    ("recovery_cordon", "check_cordons_are_append_only", "console.E150"),
    ("recovery_cordonlift", "check_cordon_lifts_are_append_only", "console.E152"),
])
def test_the_system_check_reports_a_disabled_cordon_trigger(wms, table, check_name, error_id):
    from console.cordons import checks

    check = getattr(checks, check_name)
    assert check(databases=["default"]) == []
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute(f"ALTER TABLE {table} DISABLE TRIGGER {table}_no_update_delete")
        (error,) = check(databases=["default"])
        assert error.id == error_id and f"{table}_no_update_delete" in error.msg
        assert "Re-run migration recovery 0008_cordons" in error.hint
        transaction.set_rollback(True)
    assert check(databases=["default"]) == []
