import pytest
from django.db import connection

from recovery.demo.warehouse import WarehouseBuilder, truncate_wms_tables
from recovery.engine.wms_sql import WMS_TABLES, qualified

# Whether any WMS table holds a row: none does at a test's start, unless something committed rows
# outside the `wms` fixture (which empties them after a committed test).
WMS_ROWS_LEFT = " OR ".join(f"EXISTS (SELECT FROM {qualified(table)})" for table in WMS_TABLES)

# The sequences behind the WMS tables' identity and serial columns, started again at 1: a rolled
# back test's rows are gone, but the numbers it drew are not (nextval is never rolled back).
RESTART_WMS_SEQUENCES = """
SELECT setval(s.oid, 1, false)
FROM pg_depend AS d
JOIN pg_class AS s ON s.oid = d.objid AND s.relkind = 'S'
WHERE d.refobjid = ANY(%(tables)s::regclass[])
  AND d.deptype IN ('a', 'i')
"""


def committed(request) -> bool:
    """Whether this test's rows are committed (it asked for `committed_db` or `transactional_db`)
    rather than rolled back at its end."""
    marker = request.node.get_closest_marker("django_db")
    return ("transactional_db" in request.fixturenames or "live_server" in request.fixturenames
            or bool(marker and marker.kwargs.get("transaction")))


@pytest.fixture
def committed_db(transactional_db):
    """The opt-in for a test whose rows other connections must see: recovery's apply threads, a
    live server, gunicorn or qcluster processes, a second session racing this one. Its rows are
    committed and the tables emptied afterwards (slower); every other test runs in a transaction
    that is rolled back at its end."""


def fresh_wms_tables() -> None:
    """Empty WMS tables whose identities start at 1 (a TRUNCATE costs ten times more: only when
    rows were left)."""
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {WMS_ROWS_LEFT}")
        if cursor.fetchone()[0]:
            truncate_wms_tables()
        else:
            cursor.execute(RESTART_WMS_SEQUENCES, {"tables": [qualified(t) for t in WMS_TABLES]})


@pytest.fixture
def wms(db, request):
    """A builder of WMS rows, on empty WMS tables whose identities start at 1. A rolled-back
    test's rows go with its transaction; a committed test's are emptied afterwards, since Django's
    flush does not know the unmanaged tables."""
    fresh_wms_tables()
    yield WarehouseBuilder()
    if committed(request):
        truncate_wms_tables()


@pytest.fixture(autouse=True)
def default_language():
    """Each test starts and ends in the default language. A request through the test client
    activates its language in the test's thread and leaves it there (a server activates one per
    request), so a Chinese page would otherwise make the next test's gettext answer in Chinese."""
    from django.utils import translation

    translation.deactivate()
    yield
    translation.deactivate()


@pytest.fixture(autouse=True)
def audit_rows_flushable(request):
    """Fixtures give personas their roles, and every role change is an append-only audit row
    (migration console 0003), which refuses TRUNCATE while it holds rows. A transactional test's
    database is emptied with TRUNCATE afterwards: set the one session switch the trigger honours
    (for a superuser or a member of tidy_audit_test) right before that flush."""
    transactional = committed(request)
    if transactional:
        request.getfixturevalue("transactional_db")  # set up first, so its flush runs after this teardown
    yield
    if transactional:
        from tests.repair_support import ALLOW_AUDIT_TRUNCATE

        connection.ensure_connection()
        with connection.cursor() as cursor:
            cursor.execute(ALLOW_AUDIT_TRUNCATE)
