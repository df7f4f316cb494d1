"""The production configuration, end to end: gunicorn started with deploy/gunicorn.conf.py, DEBUG
off, hashed static files from `manage.py release`, production environment values against the
test database. What a deploy relies on is checked over real HTTP."""

import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from console.replay.processes import database_url, free_port
from recovery.engine.cycle import run_cycle
from tests.console.operations.test_metrics import CONTRACT

# Other connections (threads, processes, a live server) must see these tests' rows.
pytestmark = pytest.mark.usefixtures("committed_db")

ROOT = Path(__file__).resolve().parents[2]
CALLBACK_TOKEN = "production-callback-token-0123456789"
METRICS_TOKEN = "production-metrics-token-0123456789"
LOG_FIELDS = {"ts", "level", "logger", "message", "request_id"}


@dataclass
class Answer:
    status: int
    headers: dict
    body: bytes

    def json(self):
        return json.loads(self.body)


@dataclass
class Production:
    base: str
    static_root: Path
    log_path: Path
    proc: subprocess.Popen

    def get(self, path: str, *, data: bytes | None = None, plain_http: bool = False, **headers) -> Answer:
        # Production sits behind a TLS proxy that says so (SECURE_PROXY_SSL_HEADER); plain_http
        # is a request that reached the server without it.
        if not plain_http:
            headers.setdefault("X-Forwarded-Proto", "https")
        request = urllib.request.Request(self.base + path, data=data, headers=headers)
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}), _NoRedirect())
        try:
            with opener.open(request, timeout=10) as response:
                return Answer(response.status, dict(response.headers), response.read())
        except urllib.error.HTTPError as exc:
            return Answer(exc.code, dict(exc.headers), exc.read())

    def log_lines(self) -> list[str]:
        return [line for line in self.log_path.read_text().splitlines() if line.strip()]


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


def start_gunicorn(cwd: Path, env: dict, *arguments: str) -> tuple[subprocess.Popen, int, Path]:
    """gunicorn with deploy/gunicorn.conf.py on a free port, in a session of its own (a terminal's
    process group, so a test can signal it as Ctrl-C would), its output in cwd/gunicorn.log."""
    port = free_port()
    log_path = cwd / "gunicorn.log"
    with open(log_path, "wb") as log:
        proc = subprocess.Popen([sys.executable, "-m", "gunicorn", "-c", str(ROOT / "deploy" / "gunicorn.conf.py"),
                                 "--bind", f"127.0.0.1:{port}", *arguments], cwd=cwd, env=env, stdout=log,
                                stderr=subprocess.STDOUT, start_new_session=True)
    return proc, port, log_path


def _environment(static_root: Path) -> dict:
    env = {k: v for k, v in os.environ.items()
           if k not in {"EMBEDDED_DATABASE_URL", "TIDY_TEST_OWNS_EMBEDDED_DB", "EMBEDDED_DB_DIR", "DEBUG",
                        "LOG_FORMAT", "STATIC_MANIFEST", "Q_SYNC"}}
    env.update({
        "DJANGO_SETTINGS_MODULE": "console.settings",
        "DATABASE_URL": database_url("tidy-production-test"),
        "SECRET_KEY": "production-test-secret-key-" + "k" * 40,
        "ALLOWED_HOSTS": "127.0.0.1,localhost",
        "WCS_CALLBACK_TOKEN": CALLBACK_TOKEN,
        "METRICS_TOKEN": METRICS_TOKEN,
        "SECURE_PROXY_SSL_HEADER": "X-Forwarded-Proto=https",
        "STATIC_ROOT": str(static_root),
        # A tiny stale window (2 x 2 s), so the test sees readiness fail without waiting minutes.
        "RECOVERY_INTERVAL_SECONDS": "2",
        "RECOVERY_STALE_AFTER_INTERVALS": "2",
        "WEB_CONCURRENCY": "2",
        "PYTHONUNBUFFERED": "1",
    })
    return env


@pytest.fixture(scope="module")
def production(django_db_setup, tmp_path_factory):
    """One release and one gunicorn for the module (they run as their own processes, outside the
    tests' transactions); each test that writes uses transactional_db."""
    tmp_path = tmp_path_factory.mktemp("production")
    static_root = tmp_path / "static"
    env = _environment(static_root)
    release = subprocess.run([sys.executable, "manage.py", "release"], cwd=ROOT, env=env, capture_output=True,
                             text=True, timeout=180)
    assert release.returncode == 0, release.stdout + release.stderr
    proc, port, log_path = start_gunicorn(tmp_path, env)
    server = Production(f"http://127.0.0.1:{port}", static_root, log_path, proc)
    deadline = time.monotonic() + 30
    while True:
        try:
            if server.get("/health/live").status == 200:
                break
        except OSError:
            pass
        assert proc.poll() is None, log_path.read_text()
        assert time.monotonic() < deadline, log_path.read_text()
        time.sleep(0.1)
    yield server
    if proc.poll() is None:
        os.kill(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def test_readiness_follows_the_recovery_cycles(production, transactional_db):
    run_cycle()
    ready = production.get("/health/ready")
    assert ready.status == 200, ready.body
    assert ready.json()["status"] == "ok"
    time.sleep(4.5)  # cycles stop: past the 4 s stale window
    stale = production.get("/health/ready")
    assert stale.status == 503
    assert stale.json()["status"] == "fail" and stale.json()["checks"]["recovery"]["status"] == "fail"
    assert production.get("/health/live").status == 200


def test_static_files_have_hashed_names_and_long_cache_lifetimes(production):
    manifest = json.loads((production.static_root / "staticfiles.json").read_text())
    hashed = manifest["paths"]["console/console.css"]
    assert hashed != "console/console.css"
    login = production.get("/accounts/login/")
    assert login.status == 200
    assert f"/static/{hashed}".encode() in login.body  # pages link the hashed name
    css = production.get(f"/static/{hashed}")
    assert css.status == 200
    assert "max-age=315360000" in css.headers["Cache-Control"] and "immutable" in css.headers["Cache-Control"]


def test_metrics_are_complete_and_guarded(production, transactional_db):
    run_cycle()
    assert production.get("/metrics").status == 401
    scraped = production.get("/metrics", Authorization=f"Bearer {METRICS_TOKEN}")
    assert scraped.status == 200
    families = {f.name: f for f in text_string_to_metric_families(scraped.body.decode())}
    exposed = {s.name for f in families.values() for s in f.samples}
    assert set(CONTRACT) <= exposed


def test_request_ids_are_echoed_and_every_log_line_is_json(production, wms):
    assert production.get("/health/live", **{"X-Request-ID": "probe-123"}).headers["X-Request-ID"] == "probe-123"
    made = production.get("/health/ready").headers["X-Request-ID"]
    assert len(made) == 32
    refused = production.get("/metrics", **{"X-Request-ID": "scrape-9"})
    assert refused.status == 401
    paused = wms.build("paused")
    job_id = f"TDY-{paused.workflow_id}-{paused.step_ids[0]}"
    callback = production.get("/api/wcs/job-finish", data=json.dumps({"job_id": job_id, "stage": "MOVE_FINISHED"})
                              .encode(), **{"Authorization": f"Bearer {CALLBACK_TOKEN}",
                                            "Content-Type": "application/json", "X-Request-ID": "wcs-77"})
    assert callback.status == 409
    time.sleep(0.5)  # the access line is written just after the response

    lines = production.log_lines()
    assert lines
    entries = []
    for line in lines:
        entry = json.loads(line)  # every line, gunicorn's own included, is one JSON object
        assert set(entry) >= LOG_FIELDS, line
        entries.append(entry)
    access = [e for e in entries if e["logger"] == "gunicorn.access"]
    assert {e["request_id"] for e in access} >= {"probe-123", made, "scrape-9"}
    assert any(e["logger"] == "django.request" and e["request_id"] == "scrape-9" for e in entries)
    (outcome,) = [e for e in entries if e["logger"] == "recovery.callbacks"]
    assert (outcome["request_id"], outcome["workflow_id"], outcome["step_id"], outcome["job_id"]) == (
        "wcs-77", paused.workflow_id, paused.step_ids[0], job_id)


def test_security_headers_and_cookies(production):
    """Secure by default on a configured database: the headers, the cookies, the HTTPS redirect
    (probes exempt) and a Content Security Policy without inline scripts."""
    page = production.get("/accounts/login/")
    assert page.status == 200
    assert page.headers["X-Content-Type-Options"] == "nosniff"
    assert page.headers["Referrer-Policy"] == "same-origin"
    assert page.headers["X-Frame-Options"] == "DENY"
    assert "Server Error" not in page.body.decode()
    hsts = page.headers["Strict-Transport-Security"]
    assert "max-age=" in hsts and int(hsts.split("max-age=")[1].split(";")[0]) >= 31536000
    csp = page.headers["Content-Security-Policy"]
    script_src = next(d for d in csp.split(";") if d.strip().startswith(("script-src", "default-src")))
    assert "'unsafe-inline'" not in script_src and "'unsafe-eval'" not in script_src
    cookie = page.headers["Set-Cookie"]
    assert "csrftoken=" in cookie and "Secure" in cookie
    redirected = production.get("/accounts/login/", plain_http=True)
    assert redirected.status == 301 and redirected.headers["Location"].startswith("https://")
    assert production.get("/health/live", plain_http=True).status == 200
