"""Behind PgBouncer in transaction mode (design §16), with a single server connection shared by
every client: each transaction finds the console's tables through the role's search_path, the
page statement timeout (SET LOCAL) never reaches the next client, the application_name arrives,
and a scrape through Django answers. Debian's pgbouncer (scripts/test installs it) in front of a
throw-away Debian PostgreSQL 15 cluster."""

import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psycopg
import pytest

from console.database import sql
from tests.ops.test_console_schema import _environment, _manage, _postgresql_15
from tests.ops.test_production_config import free_port

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def postgresql_15():
    yield from _postgresql_15()


@pytest.fixture
def bouncer(postgresql_15):
    """PgBouncer (transaction mode, one server connection) in front of the cluster's `tidy`
    database; it refuses to run as root, so it runs as the postgres system user."""
    if not shutil.which("pgbouncer") and not Path("/usr/sbin/pgbouncer").exists():
        pytest.skip("Debian's pgbouncer is not installed")
    port = int(postgresql_15.rsplit(":", 1)[1].split("/")[0])
    folder = Path(tempfile.mkdtemp(prefix="tidy-pgbouncer-"))
    listen = free_port()
    (folder / "userlist.txt").write_text('"postgres" ""\n')
    (folder / "pgbouncer.ini").write_text(f"""[databases]
tidy = host=127.0.0.1 port={port} dbname=tidy

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = {listen}
unix_socket_dir =
auth_type = trust
auth_file = {folder}/userlist.txt
pool_mode = transaction
default_pool_size = 1
max_client_conn = 50
logfile = {folder}/pgbouncer.log
pidfile = {folder}/pgbouncer.pid
""")
    folder.chmod(0o755)
    subprocess.run(["chown", "-R", "postgres", str(folder)], check=True)
    proc = subprocess.Popen(["runuser", "-u", "postgres", "--", shutil.which("pgbouncer") or "/usr/sbin/pgbouncer",
                             str(folder / "pgbouncer.ini")], stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 15
    while True:
        try:
            socket.create_connection(("127.0.0.1", listen), timeout=1).close()
            break
        except OSError:
            assert proc.poll() is None and time.monotonic() < deadline, (folder / "pgbouncer.log").read_text()
            time.sleep(0.1)
    yield postgresql_15, f"postgresql://postgres@127.0.0.1:{listen}/tidy"
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    shutil.rmtree(folder, ignore_errors=True)


@pytest.mark.slow
@pytest.mark.serial  # a cluster of its own and a server-wide process
def test_the_console_works_through_pgbouncer_in_transaction_mode(bouncer):
    direct, pooled = bouncer
    _manage(ROOT, direct, "migrate", "--verbosity", "0")
    _manage(ROOT, direct, "wms_schema", "--verbosity", "0")

    with psycopg.connect(pooled, autocommit=True) as a, psycopg.connect(pooled, autocommit=True) as b:
        for conn in (a, b, a, b):  # every transaction, on the one server connection
            assert conn.execute("SELECT current_schema()").fetchone() == ("tidy_console",)
            assert conn.execute("SELECT count(*) FROM django_migrations").fetchone()[0] > 0
        with a.transaction():
            a.execute(sql.SET_LOCAL_STATEMENT_TIMEOUT, {"milliseconds": "300"})
            assert a.execute("SHOW statement_timeout").fetchone() == ("300ms",)
            backend = a.execute("SELECT pg_backend_pid()").fetchone()
        assert b.execute("SELECT pg_backend_pid()").fetchone() == backend  # the same server connection ...
        assert b.execute("SHOW statement_timeout").fetchone() == ("0",)  # ... without a's limit
    with psycopg.connect(pooled, autocommit=True, application_name="tidy-web") as named:
        assert named.execute("SELECT current_setting('application_name')").fetchone() == ("tidy-web",)

    # Django through the pool: a scrape runs its reads in one transaction under the timeout.
    env = {**_environment(pooled), "ALLOWED_HOSTS": "testserver", "SECURE_SSL_REDIRECT": "false"}
    scrape = ("from django.test import Client; "
              "r = Client().get('/metrics', HTTP_AUTHORIZATION='Bearer ' + 'm' * 24); "
              "print(r.status_code, b'tidy_active_workflows' in r.content)")
    result = subprocess.run([sys.executable, "manage.py", "shell", "-c", scrape], cwd=ROOT, env=env,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.strip().splitlines()[-1] == "200 True", result.stdout + result.stderr
