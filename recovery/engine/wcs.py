"""The project's only outbound HTTP: the journaled request function and the WCS vehicle snapshot.

Every outbound HTTP request goes through `http_request`, which writes one OutboundHttpRequest
row (method, URL, status, duration, time, error) whatever happens, so it can be shown that no
WCS task-state request is ever made (recovery decides from WMS-local evidence only,
docs/architecture.md §4). The only WCS client of the console is
`WcsVehicleSnapshotClient`, used for manual tidy capacity.

Vehicle snapshot contract (`GET WCS_SNAPSHOT_URL`, answered within `WCS_SNAPSHOT_TIMEOUT_MS`)::

    200, Content-Type: application/json
    {
      "vehicles": [
        {"id": "V01", "available": true},
        {"id": "V02", "available": false, "reason": "charging"}
      ],
      "generated_at": "2026-12-01T03:00:00Z"      (optional, informative)
    }

`vehicles` is required and is a list (possibly empty); each entry needs a non-empty string
`id` and a boolean `available`; other keys are ignored. Anything else (not JSON, not an
object, a missing or mistyped key, a status other than 200) is a malformed answer; no answer
within the timeout is a timeout. Both refuse manual tidy creation with a clear message.
"""

import http.client
import json
import logging
import time
import urllib.error
import urllib.request
from dataclasses import dataclass

from django.conf import settings
from django.db import DatabaseError
from django.utils import timezone

from recovery.errors import Unavailable
from recovery.models import OutboundHttpRequest

log = logging.getLogger("recovery.wcs")  # the logger's name as log readers know it

SNAPSHOT_PURPOSE = "vehicle-snapshot"
# Bodies beyond this are refused rather than read into memory.
MAX_BODY_BYTES = 1_000_000

# Loopback / plant-network calls never go through an environment proxy.
_opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))


class HttpFailure(Unavailable):
    """No HTTP answer: connection refused, timeout, bad URL... (journaled before raising)."""

    def __init__(self, message: str, *, timed_out: bool = False):
        super().__init__(message)
        self.timed_out = timed_out


@dataclass(frozen=True)
class HttpAnswer:
    status: int
    body: bytes
    content_type: str
    duration_ms: float

    def json(self):
        return json.loads(self.body)


def _journal(*, started_at, purpose: str, method: str, url: str, status: int | None, duration_ms: float,
             error: str) -> None:
    try:
        OutboundHttpRequest.objects.create(started_at=started_at, purpose=purpose[:64], method=method, url=url,
                                           status=status, duration_ms=round(duration_ms, 3), error=error[:2000])
    except DatabaseError:
        log.exception("could not journal outbound %s %s", method, url)


def http_request(method: str, url: str, *, purpose: str, timeout_ms: int, body: bytes | None = None,
                 headers: dict[str, str] | None = None, journal: bool = True,
                 shown_url: str | None = None) -> HttpAnswer:
    """Make one HTTP request and journal it. Any HTTP status is an answer; raises HttpFailure
    when there is none. `journal=False` exists only for load generators measuring the server.
    `shown_url`: what the journal and the errors say instead of a URL that carries a secret (a
    chat robot's token)."""
    method = method.upper()
    said = shown_url or url
    started_at = timezone.now()
    t0 = time.perf_counter()
    status: int | None = None
    error = ""
    try:
        req = urllib.request.Request(url, data=body, method=method, headers=headers or {})
        try:
            resp = _opener.open(req, timeout=timeout_ms / 1000)
        except urllib.error.HTTPError as exc:  # 4xx/5xx: still an answer
            resp = exc
        with resp:
            status = resp.status if hasattr(resp, "status") else resp.code
            data = resp.read(MAX_BODY_BYTES + 1)
            content_type = resp.headers.get("Content-Type", "") if resp.headers else ""
        if len(data) > MAX_BODY_BYTES:
            error = f"answer larger than {MAX_BODY_BYTES} bytes"
            raise HttpFailure(f"{method} {said}: {error}")
        return HttpAnswer(status, data, content_type, (time.perf_counter() - t0) * 1000)
    except HttpFailure:
        raise
    except TimeoutError as exc:
        error = f"no answer within {timeout_ms} ms"
        raise HttpFailure(f"{method} {said}: {error}", timed_out=True) from exc
    except urllib.error.URLError as exc:
        timed_out = isinstance(exc.reason, TimeoutError)
        error = f"no answer within {timeout_ms} ms" if timed_out else f"unreachable: {exc.reason}".replace(url, said)
        raise HttpFailure(f"{method} {said}: {error}", timed_out=timed_out) from exc
    except (OSError, ValueError, http.client.HTTPException) as exc:
        error = f"{type(exc).__name__}: {exc}".replace(url, said)
        raise HttpFailure(f"{method} {said}: {error}") from exc
    finally:
        if journal:
            _journal(started_at=started_at, purpose=purpose, method=method, url=said, status=status,
                     duration_ms=(time.perf_counter() - t0) * 1000, error=error)


# --- the vehicle snapshot --------------------------------------------------------------------


class WcsSnapshotError(Unavailable):
    """The snapshot could not be used; the message says why, for the person creating the tidy."""


class WcsSnapshotTimeout(WcsSnapshotError):
    pass


class WcsSnapshotUnavailable(WcsSnapshotError):
    pass


class WcsSnapshotMalformed(WcsSnapshotError):
    pass


@dataclass(frozen=True)
class Vehicle:
    id: str
    available: bool


@dataclass(frozen=True)
class VehicleSnapshot:
    vehicles: tuple[Vehicle, ...]
    duration_ms: float

    @property
    def available(self) -> tuple[Vehicle, ...]:
        return tuple(v for v in self.vehicles if v.available)


def parse_snapshot(data) -> tuple[Vehicle, ...]:
    """Validate a decoded snapshot body (the contract in the module docstring)."""
    if not isinstance(data, dict):
        raise WcsSnapshotMalformed(f"the snapshot is a JSON {type(data).__name__}, expected an object")
    if "vehicles" not in data:
        raise WcsSnapshotMalformed("the snapshot has no 'vehicles' list")
    items = data["vehicles"]
    if not isinstance(items, list):
        raise WcsSnapshotMalformed(f"'vehicles' is a {type(items).__name__}, expected a list")
    vehicles = []
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            raise WcsSnapshotMalformed(f"vehicles[{i}] is not an object")
        vid, available = item.get("id"), item.get("available")
        if not isinstance(vid, str) or not vid.strip():
            raise WcsSnapshotMalformed(f"vehicles[{i}].id is missing or not a non-empty string")
        if not isinstance(available, bool):
            raise WcsSnapshotMalformed(f"vehicles[{i}].available is missing or not true/false")
        vehicles.append(Vehicle(vid, available))
    return tuple(vehicles)


class WcsVehicleSnapshotClient:
    """GET the live vehicle snapshot from WCS (manual tidy capacity). Never task state."""

    def __init__(self, url: str, timeout_ms: int):
        self.url = url
        self.timeout_ms = timeout_ms

    @classmethod
    def from_settings(cls) -> "WcsVehicleSnapshotClient":
        return cls(settings.WCS_SNAPSHOT_URL, settings.WCS_SNAPSHOT_TIMEOUT_MS)

    def fetch(self) -> VehicleSnapshot:
        try:
            answer = http_request("GET", self.url, purpose=SNAPSHOT_PURPOSE, timeout_ms=self.timeout_ms,
                                  headers={"Accept": "application/json"})
        except HttpFailure as exc:
            if exc.timed_out:
                raise WcsSnapshotTimeout(
                    f"WCS did not answer the vehicle snapshot within {self.timeout_ms} ms ({self.url})") from exc
            raise WcsSnapshotUnavailable(f"WCS vehicle snapshot unavailable: {exc}") from exc
        if answer.status != 200:
            raise WcsSnapshotUnavailable(f"WCS vehicle snapshot answered HTTP {answer.status} ({self.url})")
        try:
            data = answer.json()
        except (ValueError, UnicodeDecodeError) as exc:
            raise WcsSnapshotMalformed(f"the WCS vehicle snapshot is not JSON ({self.url})") from exc
        try:
            vehicles = parse_snapshot(data)
        except WcsSnapshotMalformed as exc:
            raise WcsSnapshotMalformed(f"malformed WCS vehicle snapshot: {exc}") from exc
        return VehicleSnapshot(vehicles, answer.duration_ms)
