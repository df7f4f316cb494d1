"""The replay's child processes: the web server (gunicorn, as run_console starts it), qcluster
and the WCS simulator, each in its own process group with its own log file.

Children reach the replay's database through DATABASE_URL built from Django's connection
settings (so under pytest they use the test database), with an application_name per process
so the replay can find a process's sessions in pg_stat_activity (e.g. "inside a transaction").
"""

import contextlib
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote, urlencode

from django.conf import settings
from django.db import connection
from django.utils import timezone

from console.replay import database as sql
from console.replay.journal import Timeline
from recovery.errors import TidyError
from recovery.models import RecoveryCycle

BASE_DIR = Path(settings.BASE_DIR)

# The recovery cadence of the replay's child processes, so scenarios wait seconds, not minutes.
CHILD_RECOVERY_INTERVAL_SECONDS = 1


class ReplayTimeout(TidyError):
    """Something the scenario waits for did not happen in time."""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def database_url(application_name: str) -> str:
    """A DATABASE_URL for Django's current database (the test database under pytest)."""
    s = connection.settings_dict
    auth = quote(s["USER"] or "", safe="")
    if s["PASSWORD"]:
        auth += ":" + quote(s["PASSWORD"], safe="")
    options = {k: str(v) for k, v in (s.get("OPTIONS") or {}).items() if isinstance(v, str | int)}
    options.pop("application_name", None)
    # Through libpq's `options`, not application_name=: recovery.runtime.lease passes its own
    # application_name keyword and would clash with one in the URL.
    options["options"] = (options.get("options", "") + f" -c application_name={application_name}").strip()
    host = s["HOST"] or ""
    if host.startswith("/"):
        options["host"] = host
        netloc = f"{auth}@" if auth else ""
    else:
        netloc = (f"{auth}@" if auth else "") + f"{host or 'localhost'}:{s['PORT'] or 5432}"
    return f"postgresql://{netloc}/{quote(s['NAME'])}?{urlencode(options, quote_via=quote)}"


@dataclass
class Child:
    name: str
    role: str  # web | qcluster | simulator | recover
    application_name: str
    popen: subprocess.Popen
    log_path: Path
    started_at: object
    faults: str = ""
    port: int | None = None

    @property
    def pid(self) -> int:
        return self.popen.pid

    def alive(self) -> bool:
        return self.popen.poll() is None

    def log_tail(self, lines: int = 30) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""


def _children_of(pid: int) -> list[int]:
    out = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        # pid (comm) state ppid ...: comm may contain spaces, so split after the last ')'.
        fields = stat.rsplit(")", 1)[1].split()
        if int(fields[1]) == pid:
            out.append(int(entry.name))
    return sorted(out)


@dataclass
class Processes:
    log_dir: Path
    timeline: Timeline
    token: str
    snapshot_url: str
    secret_key: str = field(default_factory=lambda: secrets.token_urlsafe(32))
    metrics_token: str = field(default_factory=lambda: secrets.token_urlsafe(32))
    children: list[Child] = field(default_factory=list)
    _counter: int = 0

    # --- starting -----------------------------------------------------------------------------

    def _env(self, application_name: str, faults: str | None, extra: dict | None) -> dict:
        env = dict(os.environ)
        for name in ("EMBEDDED_DATABASE_URL", "TIDY_FAULTS", "TIDY_TEST_OWNS_EMBEDDED_DB"):
            env.pop(name, None)
        env.update({
            "DJANGO_SETTINGS_MODULE": "console.settings",
            "DATABASE_URL": database_url(application_name),
            "SECRET_KEY": self.secret_key,
            "DEBUG": "0",
            "WCS_CALLBACK_TOKEN": self.token,
            # Start-up asks for one on a configured database; the replay never scrapes /metrics.
            "METRICS_TOKEN": self.metrics_token,
            # The replay's own web server speaks plain http on 127.0.0.1: no redirect to https.
            "SECURE_SSL_REDIRECT": "0",
            "WCS_SNAPSHOT_URL": self.snapshot_url,
            "RECOVERY_INTERVAL_SECONDS": str(CHILD_RECOVERY_INTERVAL_SECONDS),
            "Q_WORKERS": "1",
            "Q_SYNC": "0",
            "LOG_LEVEL": "INFO",
            "PYTHONUNBUFFERED": "1",
        })
        if faults:
            env["TIDY_FAULTS"] = faults
        env.update(extra or {})
        return env

    def _start(self, name: str, role: str, cmd: list[str], *, faults: str | None = None, port: int | None = None,
               extra_env: dict | None = None) -> Child:
        self._counter += 1
        application_name = f"tidy-replay-{name}"
        log_path = self.log_dir / f"{self._counter:02d}-{name}.log"
        log_path.parent.mkdir(parents=True, exist_ok=True)
        with open(log_path, "ab") as log:
            popen = subprocess.Popen(cmd, cwd=BASE_DIR, env=self._env(application_name, faults, extra_env),
                                     stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                     start_new_session=True)
        child = Child(name, role, application_name, popen, log_path, timezone.now(), faults or "", port)
        self.children.append(child)
        self.timeline.add(f"started {name} (pid {popen.pid})" + (f" with TIDY_FAULTS={faults}" if faults else ""),
                          actor="replay", command=" ".join(cmd[1:]), log=log_path.name)
        return child

    def start_web(self, name: str = "web", *, port: int | None = None, faults: str | None = None,
                  workers: int = 1, timeout: float = 30.0, wait: bool = True) -> Child:
        port = port or free_port()
        cmd = [sys.executable, "-m", "gunicorn", "-c", str(BASE_DIR / "deploy" / "gunicorn.conf.py"),
               "--bind", f"127.0.0.1:{port}", "--workers", str(workers), "--graceful-timeout", "3",
               "--max-requests", "0"]
        child = self._start(name, "web", cmd, faults=faults, port=port)
        if wait:
            self.wait_http(child, timeout=timeout)
        return child

    def start_qcluster(self, name: str = "qcluster", *, faults: str | None = None,
                       extra_env: dict | None = None) -> Child:
        return self._start(name, "qcluster", [sys.executable, "manage.py", "qcluster"], faults=faults,
                           extra_env=extra_env)

    def start_simulator(self, console: Child, name: str = "wcs-simulator", *, rate: float = 25.0,
                        extra_args: list[str] | None = None) -> Child:
        cmd = [sys.executable, "manage.py", "wcs_simulator", "--console-url", f"http://127.0.0.1:{console.port}",
               "--snapshot-url", self.snapshot_url, "--rate", str(rate), *(extra_args or [])]
        child = self._start(name, "simulator", cmd)
        self.wait_http_url(self.snapshot_url, timeout=30.0, child=child)
        return child

    def recover_once(self, name: str = "recover-once", *, timeout: float = 60.0) -> subprocess.CompletedProcess:
        """`manage.py recover --once` as its own process: one more recovery worker, one cycle."""
        child = self._start(name, "recover", [sys.executable, "manage.py", "recover", "--once"])
        try:
            code = child.popen.wait(timeout=timeout)
        except subprocess.TimeoutExpired as exc:
            self.kill(child)
            raise ReplayTimeout(f"recover --once did not finish within {timeout} s") from exc
        self.timeline.add(f"{name} exited with {code}", actor=name, output=child.log_tail(5))
        return subprocess.CompletedProcess(child.popen.args, code)

    # --- waiting ------------------------------------------------------------------------------

    def wait_http(self, child: Child, *, timeout: float) -> None:
        self.wait_http_url(f"http://127.0.0.1:{child.port}/api/wcs/job-finish", timeout=timeout, child=child)

    def wait_http_url(self, url: str, *, timeout: float, child: Child | None = None) -> None:
        deadline = time.monotonic() + timeout
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        while time.monotonic() < deadline:
            if child is not None and not child.alive():
                raise ReplayTimeout(f"{child.name} exited with {child.popen.returncode}:\n{child.log_tail()}")
            try:
                opener.open(url, timeout=2).close()
                return
            except urllib.error.HTTPError:
                return  # any HTTP answer means the server is up
            except OSError:
                time.sleep(0.1)
        raise ReplayTimeout(f"{url} did not answer within {timeout} s" + (f":\n{child.log_tail()}" if child else ""))

    def wait_startup_cycle(self, child: Child, *, timeout: float = 60.0) -> RecoveryCycle:
        """The STARTUP cycle a qcluster runs when it starts (recovery.runtime.signals), finished."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            cycle = (RecoveryCycle.objects.filter(trigger=RecoveryCycle.Trigger.STARTUP,
                                                  started_at__gte=child.started_at, finished_at__isnull=False)
                     .order_by("started_at").first())
            if cycle is not None:
                self.timeline.add(f"{child.name}: start-up recovery cycle {cycle.pk} finished", actor=child.name,
                                  outcome=cycle.outcome, examined=cycle.examined, decisions=cycle.decision_counts,
                                  skipped=cycle.skipped, errors=cycle.errors)
                return cycle
            if not child.alive():
                raise ReplayTimeout(f"{child.name} exited with {child.popen.returncode}:\n{child.log_tail()}")
            time.sleep(0.1)
        raise ReplayTimeout(f"{child.name}: no start-up recovery cycle within {timeout} s:\n{child.log_tail()}")

    def wait_in_transaction(self, child: Child, *, statement: str = "", timeout: float = 30.0) -> tuple[int, str]:
        """Wait until one of `child`'s database sessions waits inside a transaction that has
        written (backend_xid set), its last statement containing `statement`; return that
        backend's pid and last statement."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with connection.cursor() as cursor:
                cursor.execute(sql.IN_TRANSACTION, {"application_name": child.application_name,
                                                "statement": f"%{statement}%"})
                row = cursor.fetchone()
            if row is not None:
                self.timeline.add(f"{child.name}: database session {row[0]} is inside a transaction",
                                  actor=child.name, last_statement=" ".join(row[1].split())[:200],
                                  in_transaction_for=str(row[2]))
                return row[0], row[1]
            if not child.alive():
                raise ReplayTimeout(f"{child.name} exited with {child.popen.returncode}:\n{child.log_tail()}")
            time.sleep(0.05)
        raise ReplayTimeout(f"{child.name}: no session inside a transaction within {timeout} s:\n{child.log_tail()}")

    def wait_sessions_gone(self, application_name: str, *, pids: list[int] | None = None,
                           timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with connection.cursor() as cursor:
                cursor.execute(sql.SESSIONS_OF, {"application_name": application_name})
                live = {r[0] for r in cursor.fetchall()}
            if not (live & set(pids) if pids is not None else live):
                return
            time.sleep(0.05)
        raise ReplayTimeout(f"sessions of {application_name} still open after {timeout} s")

    # --- stopping -----------------------------------------------------------------------------

    def kill(self, child: Child, *, why: str = "") -> None:
        """SIGKILL the child's whole process group (a crash: no clean-up code runs)."""
        if child.alive():
            with contextlib.suppress(ProcessLookupError):
                os.killpg(child.pid, signal.SIGKILL)
            child.popen.wait(timeout=10)
            self.timeline.add(f"SIGKILL {child.name} (process group {child.pid})" + (f": {why}" if why else ""))
        self.wait_sessions_gone(child.application_name)

    def kill_worker(self, child: Child) -> int:
        """SIGKILL a gunicorn worker of `child` (the master stays and starts a new worker)."""
        workers = _children_of(child.pid)
        if not workers:
            raise ReplayTimeout(f"{child.name}: no worker process found under pid {child.pid}")
        os.kill(workers[0], signal.SIGKILL)
        self.timeline.add(f"SIGKILL {child.name} worker pid {workers[0]} (master {child.pid} stays)")
        return workers[0]

    def stop(self, child: Child, *, grace: float = 8.0) -> None:
        """SIGTERM, then SIGKILL of the group if it has not exited after `grace` seconds."""
        if child.alive():
            # To the leader only: gunicorn's master and qcluster's sentinel stop their own workers.
            with contextlib.suppress(ProcessLookupError):
                os.kill(child.pid, signal.SIGTERM)
            try:
                child.popen.wait(timeout=grace)
                self.timeline.add(f"stopped {child.name} (SIGTERM, exit {child.popen.returncode})")
            except subprocess.TimeoutExpired:
                self.kill(child, why=f"still running {grace} s after SIGTERM")
        # Worker processes of the group may outlive the leader for a moment.
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(child.pid, signal.SIGKILL)
        self.wait_sessions_gone(child.application_name)

    def stop_all(self) -> None:
        for child in reversed(self.children):
            if child.alive():
                self.stop(child)

    def running(self, role: str) -> list[Child]:
        return [c for c in self.children if c.role == role and c.alive()]
