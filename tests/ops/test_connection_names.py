"""Every connection of the console says which process it is (design §16): with the web server
(gunicorn) and a qcluster running on the database, pg_stat_activity shows no connection of that
database without a tidy-* application_name, and both kinds by their names."""

import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from urllib.parse import quote

import pytest
from django.db import connection

from console.env import CLI, QCLUSTER, WEB, database_url_names_application, process_application_name
from tests.ops.test_production_config import METRICS_TOKEN, start_gunicorn

ROOT = Path(__file__).resolve().parents[2]

SESSIONS = """
SELECT pid, coalesce(application_name, ''), backend_type
FROM pg_stat_activity
WHERE datname = current_database()
  AND backend_type = 'client backend'
"""


@pytest.mark.parametrize("argv,name", [
    (["/srv/tidy/.venv/bin/gunicorn", "-c", "deploy/gunicorn.conf.py"], WEB),
    (["/srv/tidy/.venv/lib/python3.11/site-packages/gunicorn/__main__.py", "-c", "deploy/gunicorn.conf.py"], WEB),
    (["manage.py", "runserver"], WEB),
    (["manage.py", "qcluster"], QCLUSTER),
    (["/srv/tidy/manage.py", "qcluster"], QCLUSTER),
    (["manage.py", "migrate"], CLI),
    (["manage.py", "wcs_simulator"], CLI),
    (["/usr/bin/pytest"], CLI),
    ([], CLI),
])
def test_each_process_kind_has_its_name(argv, name):
    assert process_application_name(argv) == name


def test_a_name_in_database_url_is_kept():
    assert database_url_names_application({"application_name": "tidy-replay-web"})
    assert database_url_names_application({"options": "-c application_name=tidy-replay-web"})
    assert not database_url_names_application({"sslmode": "require"})


def _plain_url() -> str:
    """Django's current database without any application_name of its own: each process names itself."""
    s = connection.settings_dict
    auth = quote(s["USER"] or "postgres", safe="")
    host = s["HOST"] or ""
    if host.startswith("/"):
        return f"postgresql://{auth}@/{quote(s['NAME'])}?host={quote(host)}"
    return f"postgresql://{auth}@{host}:{s['PORT'] or 5432}/{quote(s['NAME'])}"


def _environment() -> dict:
    env = {k: v for k, v in os.environ.items()
           if k not in {"EMBEDDED_DATABASE_URL", "TIDY_TEST_OWNS_EMBEDDED_DB", "EMBEDDED_DB_DIR", "DEBUG", "Q_SYNC"}}
    env.update({"DJANGO_SETTINGS_MODULE": "console.settings", "DATABASE_URL": _plain_url(),
                "SECRET_KEY": "connection-names-test-secret-" + "k" * 40, "ALLOWED_HOSTS": "127.0.0.1,localhost",
                "WCS_CALLBACK_TOKEN": "t" * 24, "METRICS_TOKEN": METRICS_TOKEN, "STATIC_MANIFEST": "false",
                "SECURE_SSL_REDIRECT": "false", "WEB_CONCURRENCY": "2", "Q_WORKERS": "2", "PYTHONUNBUFFERED": "1"})
    return env


def _sessions() -> list[tuple[int, str, str]]:
    with connection.cursor() as cursor:
        cursor.execute(SESSIONS)
        return cursor.fetchall()


def _get(port: int, path: str, **headers) -> int:
    request = urllib.request.Request(f"http://127.0.0.1:{port}{path}", headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status
    except urllib.error.HTTPError as exc:
        return exc.code


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


@pytest.mark.slow
@pytest.mark.usefixtures("committed_db")
def test_every_connection_of_a_running_console_is_named(tmp_path):
    env = _environment()
    web, port, web_log = start_gunicorn(tmp_path, env)
    with open(tmp_path / "qcluster.log", "wb") as log:
        qcluster = subprocess.Popen([sys.executable, "manage.py", "qcluster"], cwd=ROOT, env=env, stdout=log,
                                    stderr=subprocess.STDOUT, start_new_session=True)
    try:
        seen: dict[str, int] = {}
        unnamed: list[tuple] = []
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not {WEB, QCLUSTER} <= set(seen):
            assert web.poll() is None, web_log.read_text()
            assert qcluster.poll() is None, (tmp_path / "qcluster.log").read_text()
            try:  # pages and the scrape open the web workers' connections
                _get(port, "/metrics", Authorization=f"Bearer {METRICS_TOKEN}")
                _get(port, "/accounts/login/")
            except OSError:
                pass  # gunicorn still starting
            for pid, name, _ in _sessions():
                seen[name] = pid
                if not name.startswith("tidy-"):
                    unnamed.append((pid, name))
            time.sleep(0.2)
        for _ in range(10):  # and a while longer, as the qcluster's workers and scheduler settle
            for pid, name, _ in _sessions():
                seen[name] = pid
                if not name.startswith("tidy-"):
                    unnamed.append((pid, name))
            time.sleep(0.3)
    finally:
        _stop(web)
        _stop(qcluster)
    assert {WEB, QCLUSTER, CLI} <= set(seen), (seen, web_log.read_text()[-2000:],
                                               (tmp_path / "qcluster.log").read_text()[-2000:])
    assert unnamed == [], f"connections without a tidy-* application_name: {unnamed}; all seen: {seen}"
