"""wms_schema, wms_demo and recover --once from the shell side."""

from collections import Counter

import pytest
from django.core.management import CommandError, call_command
from django.db import connection

from recovery.engine.schema import CONTRACT, missing_tables, procedure_exists
from recovery.engine.wms_sql import qualified
from recovery.models import RecoveryDecision

# Other connections (threads, processes, a live server) must see these tests' rows.
pytestmark = pytest.mark.usefixtures("committed_db")


def _sql(statement):
    with connection.cursor() as cursor:
        cursor.execute(statement)


def test_wms_schema_is_idempotent(transactional_db, capsys):
    call_command("wms_schema")
    call_command("wms_schema")
    assert missing_tables() == []
    assert procedure_exists()
    assert "already in place" in capsys.readouterr().out


def test_wms_schema_refuses_a_table_of_another_shape_and_names_the_difference(transactional_db):
    _sql("ALTER TABLE bas_cargo_space RENAME COLUMN tray_code TO tray")
    _sql("ALTER TABLE alg.tidy_step ALTER COLUMN step_no TYPE text")
    try:
        with pytest.raises(CommandError) as info:
            call_command("wms_schema")
        message = str(info.value)
        assert "bas_cargo_space: column tray_code is missing" in message
        assert "alg.tidy_step: column step_no is text" in message
        assert "nothing was changed" in message
    finally:
        _sql("ALTER TABLE bas_cargo_space RENAME COLUMN tray TO tray_code")
        _sql("ALTER TABLE alg.tidy_step ALTER COLUMN step_no TYPE integer USING step_no::integer")


def test_recover_once_names_a_missing_table(transactional_db):
    _sql("ALTER TABLE mydo_job_finish RENAME TO mydo_job_finish_elsewhere")
    try:
        with pytest.raises(CommandError, match="WMS table missing: mydo_job_finish"):
            call_command("recover", "--once")
    finally:
        _sql("ALTER TABLE mydo_job_finish_elsewhere RENAME TO mydo_job_finish")


def test_recover_once_fails_when_the_cycle_fails(wms):
    wms.build("job_missing")
    _sql("ALTER TABLE mydo_job RENAME COLUMN status TO job_status")
    try:
        with pytest.raises(CommandError, match="recovery cycle failed"):
            call_command("recover", "--once")
    finally:
        _sql("ALTER TABLE mydo_job RENAME COLUMN job_status TO status")


def test_recover_once_on_the_demo_decides_exactly_what_the_table_says(wms, capsys):
    from recovery.demo.warehouse import EXPECTED
    from recovery.management.commands.wms_demo import DEMO_MIX

    call_command("wms_demo")
    capsys.readouterr()
    call_command("recover", "--once")
    out = capsys.readouterr().out
    expected = Counter()
    for kind, n in DEMO_MIX.items():
        action, reason = EXPECTED[kind]
        if action != "LEAVE":
            expected[(action, reason or "")] += n
    assert Counter(RecoveryDecision.objects.values_list("action", "reason")) == expected
    assert "succeeded" in out


def test_wms_demo_refuses_to_load_over_existing_workflows(wms):
    wms.build("healthy")
    with pytest.raises(CommandError, match="already exist"):
        call_command("wms_demo")
    call_command("wms_demo", "--if-empty")  # leaves them alone
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM alg.tidy_workflow")
        assert cursor.fetchone()[0] == 1


def test_the_demo_is_a_realistic_warehouse(wms):
    call_command("wms_demo")
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM bas_cargo_space")
        assert cursor.fetchone()[0] >= 300
        cursor.execute("SELECT min(n) FROM (SELECT count(*) AS n FROM bas_stock GROUP BY tray_code) s")
        assert cursor.fetchone()[0] >= 2
        cursor.execute("SELECT cargo_space_id, count(*) FROM bas_cargo_space WHERE tray_code IS NOT NULL "
                       "GROUP BY tray_code, cargo_space_id HAVING count(*) > 1")
        assert cursor.fetchall() == []


def test_the_contract_names_every_table_the_models_map():
    from django.apps import apps

    mapped = {m._meta.db_table.replace('"', "") for m in apps.get_app_config("recovery").get_models()
              if not m._meta.managed}
    # Every one named with its schema (design §16): the console's own schema comes first in the search_path.
    assert mapped == {qualified(table) for table in CONTRACT}
