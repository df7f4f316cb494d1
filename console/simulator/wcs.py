"""A WCS simulator for the demo, the replay and manual try-outs.

It plays the WCS side of the integration:
- serves the vehicle snapshot (the contract in `recovery.engine.wcs`) on the host and port of
  WCS_SNAPSHOT_URL;
- drives every active tidy job of an ACTIVE workflow 1 -> 2 (dispatched) -> 3 (executing) ->
  finished by calling the console's real endpoints (`/api/wcs/job-status`, `/api/wcs/job-finish`)
  at a configurable rate, through the journaled `recovery.engine.wcs.http_request`;
- optionally injects the faults a real WCS link shows (docs/architecture.md §13): an
  acknowledgement dropped (the finish is re-sent later: a duplicate), a callback delivered twice, a status report
  delivered late (after a newer one: an old event the console refuses while its job is active, a
  STALE_REPORT once the job finished or, with sequences, always), a stop between steps, a finish
  naming another tray than the job's;
- optionally reports load identity and order as a WCS may (`identity`): the tray and the space
  it delivered to on each finish, and a sequence per job on every report;
- optionally keeps creating AUTOMATIC tidy workflows from free trays and empty spaces (not
  locked, no active job), through the same creation service as everything else.

It reads the WMS job tables the way a WCS would receive its orders, and never writes them:
every change goes through the console. One `tick()` is a plain method a test can call; the
command's loop only handles signals and sleeping.
"""

import json
import logging
import random
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

from django.db import DatabaseError, connection

from console.simulator import sql as simulator_sql
from recovery.engine.creation import CreationRefused, TidyMove, create_tidy_workflow
from recovery.engine.wcs import HttpFailure, http_request

log = logging.getLogger("wcs_simulator")

PURPOSE = "simulator-callback"
BACKOFF_SECONDS = 20.0  # after a refusal, leave the job alone this long (recovery may pause it)


@dataclass
class Faults:
    drop_ack: float = 0.0
    duplicate: float = 0.0
    late: float = 0.0
    late_seconds: float = 3.0
    stop_between_steps: float = 0.0
    stall_seconds: float = 10.0
    wrong_tray: float = 0.0  # a finish names another tray than the job's (REPORT_MISMATCH)


@dataclass(order=True)
class _Delayed:
    due: float
    kind: str = field(compare=False)  # "status" | "finish"
    job_id: str = field(compare=False)
    value: object = field(compare=False)
    why: str = field(compare=False)
    sequence: int | None = field(default=None, compare=False)  # taken when the report was made
    extra: dict | None = field(default=None, compare=False)  # a finish's tray_code and location


# --- the vehicle snapshot server -----------------------------------------------------------------


class SnapshotServer:
    """Serves {"vehicles": [...], "generated_at": ...} on GET <path> (any other path: 404)."""

    def __init__(self, url: str, *, vehicles: int, busy: int):
        parts = urlsplit(url)
        self.host = parts.hostname or "127.0.0.1"
        self.port = parts.port or 80
        self.path = parts.path or "/"
        self.vehicles = vehicles
        self.busy = busy
        self._server: ThreadingHTTPServer | None = None

    def body(self) -> dict:
        return {
            "vehicles": [{"id": f"V{i + 1:02d}", "available": i >= self.busy} for i in range(self.vehicles)],
            "generated_at": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        }

    def start(self) -> str:
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802
                if urlsplit(self.path).path != owner.path:
                    self.send_error(404, "unknown path")
                    return
                data = json.dumps(owner.body()).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        self._server = ThreadingHTTPServer((self.host, self.port), Handler)
        self._server.daemon_threads = True
        self.port = self._server.server_address[1]
        threading.Thread(target=self._server.serve_forever, name="wcs-snapshot", daemon=True).start()
        return f"http://{self.host}:{self.port}{self.path}"

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None


# --- the simulator ---------------------------------------------------------------------------------


class WcsSimulator:
    def __init__(self, *, console_url: str, token: str, faults: Faults | None = None, create_workflows: bool = False,
                 create_every: float = 6.0, max_active: int = 10, max_steps: int = 3, timeout_ms: int = 5000,
                 seed: int | None = None, clock=time.monotonic, identity: bool = False):
        self.base = console_url.rstrip("/")
        self.token = token
        self.faults = faults or Faults()
        self.create_workflows = create_workflows
        self.create_every = create_every
        self.max_active = max_active
        self.max_steps = max(1, max_steps)
        self.timeout_ms = timeout_ms
        self.random = random.Random(seed)
        self.clock = clock
        self.delayed: list[_Delayed] = []
        self.backoff: dict[str, float] = {}
        self.stalled: dict[int, float] = {}
        self.sent_late: set[str] = set()
        self.last_creation = float("-inf")
        self.stats: Counter = Counter()
        self.identity = identity
        self.sequences: Counter = Counter()  # per job: the last sequence sent
        self.wrong_tray_sent: set[str] = set()

    # --- one iteration ----------------------------------------------------------------------------

    def tick(self) -> bool:
        """Do one unit of work (a creation and/or one delivery); False when there was nothing to do."""
        now = self.clock()
        did = False
        if self.create_workflows and now - self.last_creation >= self.create_every:
            self.last_creation = now
            did = self.create_one() is not None or did
        self.delayed.sort()
        if self.delayed and self.delayed[0].due <= now:
            item = self.delayed.pop(0)
            self._send(item.kind, item.job_id, item.value, note=item.why, sequence=item.sequence,
                       extra=item.extra)
            if item.why == "late":
                self.backoff.pop(item.job_id, None)  # the refusal was expected; keep driving the job
            return True
        job = self._next_job(now)
        if job is None:
            return did
        job_id, status, workflow_id, tray_code, target = job
        if status == 1:
            if self._chance(self.faults.late) and job_id not in self.sent_late:
                # Report executing now and "dispatched" later: an old event arriving after a newer one
                # (made first: with sequences it carries the lower one).
                self.sent_late.add(job_id)
                self.delayed.append(_Delayed(now + self.faults.late_seconds, "status", job_id, 2, "late",
                                             self._next_sequence(job_id)))
                self._send("status", job_id, 3)
            else:
                self._send("status", job_id, 2)
        elif status == 2:
            self._send("status", job_id, 3)
        else:
            self._finish(job_id, workflow_id, now, tray_code=tray_code, target=target)
        return True

    def _next_sequence(self, job_id: str) -> int | None:
        if not self.identity:
            return None
        self.sequences[job_id] += 1
        return self.sequences[job_id]

    def _finish(self, job_id: str, workflow_id: int, now: float, *, tray_code: str | None = None,
                target: str | None = None) -> None:
        extra = {"tray_code": tray_code, "location": target} if self.identity and tray_code and target else None
        if extra and job_id not in self.wrong_tray_sent and self._chance(self.faults.wrong_tray):
            # The vehicle picked up another load: the console refuses it and recovery pauses the workflow.
            self.wrong_tray_sent.add(job_id)
            extra = {**extra, "tray_code": f"{tray_code}-OTHER"}
            self._send("finish", job_id, "MOVE_FINISHED", note="wrong tray", extra=extra)
            return
        answer = self._send("finish", job_id, "MOVE_FINISHED", extra=extra)
        if answer is not None and self._chance(self.faults.drop_ack):
            # The console applied it, but the acknowledgement never reached us: send it again.
            self.backoff[job_id] = now + BACKOFF_SECONDS
            self.delayed.append(_Delayed(now + 1.0, "finish", job_id, "MOVE_FINISHED", "ack dropped, re-sent",
                                         extra=extra))
        if answer is not None and self._chance(self.faults.duplicate):
            self._send("finish", job_id, "MOVE_FINISHED", note="duplicate", extra=extra)
        if answer == 200 and self._chance(self.faults.stop_between_steps):
            self.stalled[workflow_id] = now + self.faults.stall_seconds
            log.info("workflow %s: vehicle stopped between steps for %.0f s", workflow_id, self.faults.stall_seconds)

    def leave_stalled(self, *, before) -> list[int]:
        """Never drive the workflows whose job has not changed since `before` (a vehicle fault:
        the demo keeps its stalled workflow stalled). Returns their ids."""
        with connection.cursor() as cursor:
            cursor.execute(simulator_sql.SIMULATOR_STALLED_WORKFLOWS, {"before": before})
            ids = [row[0] for row in cursor.fetchall()]
        for workflow_id in ids:
            self.stalled[workflow_id] = float("inf")
        return ids

    def _chance(self, p: float) -> bool:
        return p > 0 and self.random.random() < p

    def _next_job(self, now: float):
        with connection.cursor() as cursor:
            cursor.execute(simulator_sql.SIMULATOR_ACTIVE_JOBS, {"limit": 500})
            jobs = cursor.fetchall()
        for job in jobs:
            job_id, workflow_id = job[0], job[2]
            if self.backoff.get(job_id, 0) > now or self.stalled.get(workflow_id, 0) > now:
                continue
            return job  # job_id, status, workflow_id, tray_code, target
        return None

    def _send(self, kind: str, job_id: str, value, *, note: str = "", sequence: int | None = None,
              extra: dict | None = None) -> int | None:
        if kind == "status":
            url, body = f"{self.base}/api/wcs/job-status", {"job_id": job_id, "status": value}
        else:
            url, body = f"{self.base}/api/wcs/job-finish", {"job_id": job_id, "stage": value, **(extra or {})}
        body["event_id"] = f"sim-{job_id}-{kind}-{value}"
        if sequence is None:
            sequence = self._next_sequence(job_id)
        if sequence is not None:
            body["sequence"] = sequence
        try:
            answer = http_request("POST", url, purpose=PURPOSE, timeout_ms=self.timeout_ms,
                                  body=json.dumps(body).encode(),
                                  headers={"Content-Type": "application/json",
                                           "Authorization": f"Bearer {self.token}"})
        except HttpFailure as exc:
            self.stats["no answer"] += 1
            self.backoff[job_id] = self.clock() + 2.0
            log.warning("%s %s=%s: %s", job_id, kind, value, exc)
            return None
        try:
            outcome = json.loads(answer.body).get("outcome") or json.loads(answer.body).get("error")
            message = json.loads(answer.body).get("message", "")
        except (ValueError, AttributeError):
            outcome, message = "?", answer.body[:200]
        self.stats[f"{answer.status} {outcome}"] += 1
        if answer.status != 200:
            self.backoff[job_id] = self.clock() + (1.0 if answer.status == 503 else BACKOFF_SECONDS)
        level = logging.INFO if answer.status == 200 else logging.WARNING
        log.log(level, "%s %s=%s%s -> %s %s: %s", job_id, kind, value, f" ({note})" if note else "",
                answer.status, outcome, message)
        return answer.status

    # --- automatic tidy creation ------------------------------------------------------------------

    def create_one(self):
        with connection.cursor() as cursor:
            cursor.execute(simulator_sql.COUNT_ACTIVE_WORKFLOWS)
            if cursor.fetchone()[0] >= self.max_active:
                return None
            steps = self.random.randint(1, self.max_steps)
            cursor.execute(simulator_sql.SIMULATOR_FREE_TRAYS, {"limit": steps})
            trays = cursor.fetchall()
            cursor.execute(simulator_sql.SIMULATOR_FREE_SPACES, {"limit": steps})
            targets = [row[0] for row in cursor.fetchall()]
        moves = [TidyMove(tray, source, target) for (source, tray), target in zip(trays, targets, strict=False)]
        if not moves:
            log.info("no free tray and empty space to tidy; nothing created")
            return None
        try:
            created = create_tidy_workflow(origin="AUTOMATIC", moves=moves)
        except CreationRefused as exc:
            self.stats["creation refused"] += 1
            log.info("automatic tidy not created: %s", exc)
            return None
        self.stats["workflows created"] += 1
        log.info("created AUTOMATIC workflow %s: %d step(s), job %s dispatched", created.workflow_id,
                 len(created.step_ids), created.first_job_id)
        return created


def run_forever(sim: WcsSimulator, *, rate: float, stop: threading.Event, report_every: float = 30.0) -> None:
    """Tick at most `rate` times a second until `stop` is set; survive database and network trouble."""
    interval = 1.0 / rate
    next_report = time.monotonic() + report_every
    while not stop.is_set():
        try:
            busy = sim.tick()
        except DatabaseError as exc:
            log.warning("database unavailable (%s); retrying", exc)
            connection.close()
            busy = False
        if time.monotonic() >= next_report:
            next_report = time.monotonic() + report_every
            log.info("so far: %s", ", ".join(f"{k}: {v}" for k, v in sorted(sim.stats.items())) or "nothing sent")
        stop.wait(interval if busy else max(interval, 0.5))
