import os
import shutil

import pytest

# The fixtures shared by many test modules (personas, the repair and notification databases, the
# local SMTP and webhook receivers, the slapd and the OpenID provider of the sign-in tests),
# registered once here instead of star-imported into each module.
pytest_plugins = ["tests.console_personas", "tests.repair_support", "tests.notification_support",
                  "tests.console.identity.ldap_support", "tests.console.identity.oidc_support"]


@pytest.fixture(scope="session")
def django_db_setup(django_db_setup, django_db_blocker):
    """The test database gets the WMS tables and procedure, as `manage.py wms_schema` makes them,
    and loses the rows its data migrations wrote (the roles' groups, the schedules, ...), as the
    flush after a committed test removes them: every test starts from the same tables, whether
    it is rolled back or committed and whichever test ran before it on its process."""
    from django.core.management import call_command

    from recovery.engine.schema import apply_wms_schema

    with django_db_blocker.unblock():
        apply_wms_schema()
        call_command("flush", interactive=False, verbosity=0)


def pytest_sessionfinish(session, exitstatus):
    # Stop and remove the embedded server only if this test run created it, and only from the
    # process that started it: pytest-xdist's workers share the controller's server (each with a
    # database of its own) and end before it.
    if hasattr(session.config, "workerinput"):
        return
    data_dir = os.environ.get("TIDY_TEST_OWNS_EMBEDDED_DB")
    if data_dir and os.environ.get("EMBEDDED_DB_DIR") == data_dir:
        from console import devdb

        devdb.stop(data_dir)
        shutil.rmtree(data_dir, ignore_errors=True)


def pytest_collection_modifyitems(config, items):
    """The `slow` tests first: pytest-xdist hands tests out in this order, so the long ones start
    at once on every process and the short ones fill in beside them, instead of one process
    running a minute-long test alone at the end."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)
