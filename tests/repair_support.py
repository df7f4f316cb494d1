"""Fixtures and helpers shared by the repair and audit tests (import them into a test module).

The audit table refuses TRUNCATE while it holds rows (migration console 0002). The test
database is emptied with TRUNCATE after every committed test; the autouse fixture
`audit_rows_flushable` (tests/conftest.py) sets the one session switch the trigger honours right
before that flush, for every such test.
"""

import uuid

import pytest
from django.contrib.auth.models import Group, User
from django.db import connection

from console.roles import OPERATOR, SHIFT_LEAD, SUPERVISOR
from recovery.engine.cycle import run_cycle
from recovery.engine.evidence import evidence_for_workflow

# The one session switch the audit's TRUNCATE trigger honours (migration console 0002).
ALLOW_AUDIT_TRUNCATE = "SET tidy.audit_truncate_allowed = 'on'"

# The whole audit table as stored, in insertion order.
AUDIT_ROWS = "SELECT * FROM console_repairaudit ORDER BY id"


@pytest.fixture
def audit_truncate_allowed(db):
    """A database whose audit rows may be written: a rolled-back test's go with its transaction,
    and `audit_rows_flushable` lets a committed test's be flushed."""


@pytest.fixture
def repair_db(wms, audit_truncate_allowed):
    """The `wms` builder on a database whose audit rows may be flushed after the test."""
    return wms


def make_user(username: str, role: str | None) -> User:
    user = User.objects.create_user(username=username, password=f"{username}-pw")
    if role:
        user.groups.add(Group.objects.get_or_create(name=role)[0])
    return user


@pytest.fixture
def operator(repair_db):
    return make_user("olga", OPERATOR)


@pytest.fixture
def supervisor(repair_db):
    return make_user("sven", SUPERVISOR)


@pytest.fixture
def shiftlead(repair_db):
    return make_user("lena", SHIFT_LEAD)


@pytest.fixture
def shiftlead2(repair_db):
    return make_user("lars", SHIFT_LEAD)


def covers(*actions: str):
    """Marks a test as the applied path of these repair actions: tests/console/repair/test_repair_registry.py
    fails for an action of the registry that no test of test_actions.py or
    test_four_eyes.py covers."""

    def mark(test):
        test.repair_actions = frozenset(getattr(test, "repair_actions", ())) | frozenset(actions)
        return test

    return mark


def paused(wms, kind: str, **kw):
    """Build a workflow of `kind` and let a real recovery cycle pause it."""
    built = wms.build(kind, **kw)
    run_cycle()
    ev = evidence_for_workflow(built.workflow_id)
    assert ev.workflow_status == "PAUSED_RECOVERY", (kind, ev.workflow_status)
    return built


def key() -> str:
    return uuid.uuid4().hex


def fingerprint(workflow_id: int) -> str:
    return evidence_for_workflow(workflow_id).fingerprint


def at_source(workflow_id: int) -> dict:
    """The floor scans a re-issue needs: the tray of the workflow's first incomplete step and its
    source space (where the tray stands when the move has not happened)."""
    step = evidence_for_workflow(workflow_id).step
    return {"tray_code": step.tray_code, "space_code": step.cargo_space_id}


def audit_table_rows() -> list[dict]:
    with connection.cursor() as cursor:
        cursor.execute(AUDIT_ROWS)
        cols = [c.name for c in cursor.description]
        return [dict(zip(cols, r, strict=True)) for r in cursor.fetchall()]


def run_queued_tasks() -> int:
    """Run what the console enqueued for the qcluster, in queue order, as a worker would (the
    task functions themselves: sync mode is fixed at import); returns how many ran."""
    from django.utils.module_loading import import_string
    from django_q.models import OrmQ

    ran = 0
    for queued in OrmQ.objects.order_by("id"):
        task = queued.task
        func = task["func"] if callable(task["func"]) else import_string(task["func"])
        func(*task["args"], **task["kwargs"])
        queued.delete()
        ran += 1
    return ran
