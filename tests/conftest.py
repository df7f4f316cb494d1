import pytest

from recovery.demo.warehouse import WarehouseBuilder, truncate_wms_tables


@pytest.fixture
def wms(transactional_db):
    """Empty WMS tables (Django's flush does not know the unmanaged tables) and a builder."""
    truncate_wms_tables()
    yield WarehouseBuilder()
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
    marker = request.node.get_closest_marker("django_db")
    transactional = ("transactional_db" in request.fixturenames or "live_server" in request.fixturenames
                     or bool(marker and marker.kwargs.get("transaction")))
    if transactional:
        request.getfixturevalue("transactional_db")  # set up first, so its flush runs after this teardown
    yield
    if transactional:
        from django.db import connection

        connection.ensure_connection()
        with connection.cursor() as cursor:
            cursor.execute("SET tidy.audit_truncate_allowed = 'on'")
