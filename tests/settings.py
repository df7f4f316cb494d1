"""Test settings: the console's settings on a private embedded PostgreSQL per test run.

Each run gets its own throw-away data folder (removed at the end by conftest), so test runs
never share or disturb the development database, and two runs can go on side by side.
With DATABASE_URL set (for example a PostgreSQL 15 server) the tests use that server instead.
"""

import os
import tempfile

STARTS_ITS_SERVER = not os.environ.get("DATABASE_URL") and not os.environ.get("TIDY_TEST_OWNS_EMBEDDED_DB")
if STARTS_ITS_SERVER:
    os.environ.pop("EMBEDDED_DATABASE_URL", None)
    os.environ["EMBEDDED_DB_DIR"] = tempfile.mkdtemp(prefix="tidy-test-db-")
    os.environ["TIDY_TEST_OWNS_EMBEDDED_DB"] = os.environ["EMBEDDED_DB_DIR"]

# On a configured database start-up requires real-looking callback and metrics tokens; the tests
# then use their own fixed ones (below). DEBUG is off there too, which would ask for collected, hashed static
# files: the tests serve the plain names from the finders, as on the embedded database.
if os.environ.get("DATABASE_URL"):
    os.environ.setdefault("WCS_CALLBACK_TOKEN", "test-callback-token-not-for-production")
    os.environ.setdefault("METRICS_TOKEN", "test-metrics-token-not-for-production")
    os.environ.setdefault("STATIC_MANIFEST", "false")

from console.settings import *  # noqa: E402,F403

if STARTS_ITS_SERVER:
    # A throw-away server need not wait for the disk: without fsync a commit, a TRUNCATE or a
    # CREATE DATABASE costs no flush to disk, which on a busy machine took seconds. What a test
    # asserts holds all the same: a crash of the server (the chaos and database-loss tests) loses
    # nothing the kernel holds; only the machine's own crash would, and the folder goes anyway.
    import psycopg  # noqa: E402

    with psycopg.connect(os.environ["EMBEDDED_DATABASE_URL"], autocommit=True) as _server:
        _server.execute("ALTER SYSTEM SET fsync = off")
        _server.execute("ALTER SYSTEM SET full_page_writes = off")
        _server.execute("SELECT pg_reload_conf()")

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
DATABASES["default"]["CONN_MAX_AGE"] = 0  # noqa: F405
# The callback token the tests authenticate with, whatever database they run on.
WCS_CALLBACK_TOKEN = "dev-wcs-token"
# /metrics is scraped without a token, whatever database the tests run on (tests/console/operations/test_metrics.py
# sets one where it tests the token).
METRICS_TOKEN = ""
# The test client and the live test server speak plain http, on a configured database too (the
# production values are tested in subprocesses: tests/ops/test_security_settings.py).
SECURE_SSL_REDIRECT = False
SESSION_COOKIE_SECURE = False
CSRF_COOKIE_SECURE = False
LANGUAGE_COOKIE_SECURE = False
# Cycles are not cut short by time on a loaded test machine; the budget's own tests pass theirs.
RECOVERY_CYCLE_MAX_SECONDS = 60
# Nor are pages (the 20,000-space map took over 5 s on a busy machine); the statement timeout's own
# tests (tests/console/database) set theirs.
CONSOLE_STATEMENT_TIMEOUT_MS = 60_000
# First, so that its `flush` (tests/management/commands/flush.py) is the one Django's test cases
# run after a committed test.
INSTALLED_APPS = ["tests", *INSTALLED_APPS]  # noqa: F405
