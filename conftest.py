import os
import shutil

import pytest


@pytest.fixture(scope="session")
def django_db_setup(django_db_setup, django_db_blocker):
    """The test database gets the WMS tables and procedure, as `manage.py wms_schema` makes them."""
    from recovery.engine.schema import apply_wms_schema

    with django_db_blocker.unblock():
        apply_wms_schema()


def pytest_sessionfinish(session, exitstatus):
    # Stop and remove the embedded server only if this test run created it.
    data_dir = os.environ.get("TIDY_TEST_OWNS_EMBEDDED_DB")
    if data_dir and os.environ.get("EMBEDDED_DB_DIR") == data_dir:
        from console import devdb

        devdb.stop(data_dir)
        shutil.rmtree(data_dir, ignore_errors=True)
