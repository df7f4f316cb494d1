"""WcsVehicleSnapshotClient against a real local HTTP server, and the outbound HTTP journal."""

import re
import socket
import time
from pathlib import Path

import pytest
from django.conf import settings

from recovery.engine.wcs import (
    HttpFailure,
    WcsSnapshotMalformed,
    WcsSnapshotTimeout,
    WcsSnapshotUnavailable,
    WcsVehicleSnapshotClient,
    http_request,
)
from recovery.models import OutboundHttpRequest
from tests.wcs_helpers import answer, local_http_server

pytestmark = pytest.mark.django_db


def fetch(base: str, path: str, timeout_ms: int = 1000):
    return WcsVehicleSnapshotClient(f"{base}{path}", timeout_ms).fetch()


def test_it_reads_the_vehicles_and_which_are_available():
    body = {"vehicles": [{"id": "V1", "available": True, "battery": 80}, {"id": "V2", "available": False}],
            "generated_at": "2026-12-01T03:00:00Z"}
    with local_http_server({"/s": answer(200, body)}) as base:
        snap = fetch(base, "/s")
    assert [(v.id, v.available) for v in snap.vehicles] == [("V1", True), ("V2", False)]
    assert [v.id for v in snap.available] == ["V1"]


def test_it_accepts_an_empty_fleet_as_no_vehicle_free():
    with local_http_server({"/s": answer(200, {"vehicles": []})}) as base:
        assert fetch(base, "/s").available == ()


def test_it_times_out_and_journals_the_attempt():
    def slow(h):
        time.sleep(0.8)
        answer(200, {"vehicles": []})(h)

    with local_http_server({"/s": slow}) as base:
        started = time.perf_counter()
        with pytest.raises(WcsSnapshotTimeout, match="within 150 ms"):
            fetch(base, "/s", timeout_ms=150)
        assert time.perf_counter() - started < 0.7  # it did not wait for the slow answer
    journal = OutboundHttpRequest.objects.get()
    assert (journal.method, journal.status, journal.purpose) == ("GET", None, "vehicle-snapshot")
    assert "within 150 ms" in journal.error


def test_it_refuses_when_nothing_listens():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again before the request
    with pytest.raises(WcsSnapshotUnavailable, match="unavailable"):
        WcsVehicleSnapshotClient(f"http://127.0.0.1:{port}/s", 500).fetch()
    assert OutboundHttpRequest.objects.get().error.startswith("unreachable")


@pytest.mark.parametrize(("status", "body", "text"), [
    (500, {"vehicles": []}, "HTTP 500"),
    (404, b"not here", "HTTP 404"),
])
def test_it_refuses_an_error_status(status, body, text):
    with local_http_server({"/s": answer(status, body)}) as base, pytest.raises(WcsSnapshotUnavailable, match=text):
        fetch(base, "/s")
    assert OutboundHttpRequest.objects.get().status == status


@pytest.mark.parametrize(("body", "text"), [
    (b"<html>busy</html>", "not JSON"),
    (b"", "not JSON"),
    (b"\xff\xfe", "not JSON"),
    ([{"id": "V1", "available": True}], "expected an object"),
    ({"fleet": []}, "no 'vehicles' list"),
    ({"vehicles": {"V1": True}}, "expected a list"),
    ({"vehicles": ["V1"]}, r"vehicles\[0\] is not an object"),
    ({"vehicles": [{"available": True}]}, r"vehicles\[0\].id"),
    ({"vehicles": [{"id": "", "available": True}]}, r"vehicles\[0\].id"),
    ({"vehicles": [{"id": "V1", "available": "yes"}]}, r"vehicles\[0\].available"),
    ({"vehicles": [{"id": "V1", "available": True}, {"id": "V2"}]}, r"vehicles\[1\].available"),
])
def test_it_refuses_a_malformed_answer(body, text):
    with local_http_server({"/s": answer(200, body)}) as base, pytest.raises(WcsSnapshotMalformed, match=text):
        fetch(base, "/s")


def test_it_journals_every_request_whatever_the_answer():
    with local_http_server({"/a": answer(200, {"ok": True}), "/b": answer(503, b"")}) as base:
        http_request("GET", f"{base}/a", purpose="test", timeout_ms=500)
        assert http_request("GET", f"{base}/b", purpose="test", timeout_ms=500).status == 503
        with pytest.raises(HttpFailure):
            http_request("GET", "http://", purpose="test", timeout_ms=500)
    assert list(OutboundHttpRequest.objects.order_by("id").values_list("url", "status")) == [
        (f"{base}/a", 200), (f"{base}/b", 503), ("http://", None)]


# --- no task-state client anywhere (docs/architecture.md §4) -------------------------------------------------

ROOT = Path(__file__).resolve().parents[2]
HTTP_CLIENT_IMPORT = re.compile(
    r"^\s*(import|from)\s+(urllib\.request|http\.client|requests|httpx|aiohttp|urllib3)\b", re.MULTILINE)


# Test harnesses that drive the product from outside (load generators, the replay's readiness
# probes) are not the product's own outbound traffic.
HARNESS = {ROOT / "console" / "replay"}


def test_it_makes_outbound_http_only_through_the_journaled_function():
    offenders = [
        str(p.relative_to(ROOT)) for d in ("console", "recovery") for p in (ROOT / d).rglob("*.py")
        if HTTP_CLIENT_IMPORT.search(p.read_text(encoding="utf-8")) and p != ROOT / "recovery" / "engine" / "wcs.py"
        and not HARNESS & set(p.parents)
    ]
    assert offenders == []


def test_it_has_no_task_state_setting_or_client():
    assert not [name for name in dir(settings) if "TASK_STATE" in name.upper()]
    import recovery.engine.wcs as wcs

    assert not [name for name in dir(wcs) if "task" in name.lower()]
