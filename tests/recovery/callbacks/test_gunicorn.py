"""The WCS boundary through the production server (gunicorn, two workers, JSON logs): the tolerant
reader, the load-identity mismatch and the communication metrics, over real HTTP. Every worker
answers the same numbers, because they are read from the database at scrape time."""

import json
import time

import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.ops.test_production_config import CALLBACK_TOKEN, METRICS_TOKEN, production  # noqa: F401  (fixture)
from tests.wcs_helpers import create, stock_locations

# Other connections (threads, processes, a live server) must see these tests' rows.
pytestmark = pytest.mark.usefixtures("committed_db")

HEADERS = {"Authorization": f"Bearer {CALLBACK_TOKEN}", "Content-Type": "application/json"}


def _post(server, endpoint: str, body: dict | bytes):
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    return server.get(f"/api/wcs/{endpoint}", data=data, **HEADERS)


def _samples(server) -> dict:
    scraped = server.get("/metrics", Authorization=f"Bearer {METRICS_TOKEN}")
    assert scraped.status == 200, scraped.body
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(scraped.body.decode()) for s in family.samples}


def test_a_finish_with_an_added_field_is_accepted_and_counted_the_same_by_every_worker(production, wms):  # noqa: F811  (the production fixture, imported)
    created, moves = create(wms, 2)
    added = _post(production, "job-finish", {"job_id": created.first_job_id, "stage": "MOVE_FINISHED",
                                             "vendor_extension": {"crane": 4}})
    assert added.status == 200, added.body
    assert added.json()["outcome"] == "ACCEPTED"
    assert stock_locations(moves[0].tray_code) == {moves[0].target}
    next_job = f"TDY-{created.workflow_id}-{created.step_ids[1]}"
    for n in range(5):  # 2, 3 applied; then a backwards 2 (409), a repeated 3, another 2
        status = _post(production, "job-status", {"job_id": next_job, "status": 2 + n % 2, "vendor_extension": n})
        assert status.status in (200, 409), status.body
    hostile = _post(production, "job-status", b'{"job_id": "TDY-1-1", "status": 2, "x\\u0000": 1}')
    assert hostile.status == 400 and "field name" in hostile.json()["message"], hostile.body

    scrapes = [_samples(production) for _ in range(8)]  # two workers: both answer some of them
    key_finish = ("tidy_callback_unknown_fields_total", (("endpoint", "job-finish"), ("field", "vendor_extension")))
    key_status = ("tidy_callback_unknown_fields_total", (("endpoint", "job-status"), ("field", "vendor_extension")))
    key_count = ("tidy_callback_duration_seconds_count", (("endpoint", "job-status"),))
    assert {(s[key_finish], s[key_status], s[key_count]) for s in scrapes} == {(1, 5, 6)}

    def warned_lines() -> list[dict]:
        lines = [json.loads(line) for line in production.log_lines()]
        return [e for e in lines
                if e["logger"] == "console.api.unknown_fields" and e.get("field") == "vendor_extension"]

    # A worker's lines reach the output on its log thread, a moment after the request: on a busy
    # machine longer than any fixed pause.
    deadline = time.monotonic() + 15
    while not warned_lines() and time.monotonic() < deadline:
        time.sleep(0.1)
    time.sleep(0.5)  # a second worker's line, if it logged one, is on its way too
    warned = warned_lines()
    # Logged once per name per process, whichever endpoint brought it: once per worker that saw it
    # (one or both of the two, as the kernel hands them the connections), not once per report.
    assert 1 <= len(warned) <= 2


def test_a_finish_naming_another_tray_is_refused_with_both_sides_every_time(production, wms):  # noqa: F811  (the production fixture, imported)
    created, moves = create(wms, 1)
    body = {"job_id": created.first_job_id, "stage": "MOVE_FINISHED", "tray_code": "T-NOT-THIS-ONE",
            "location": moves[0].target, "sequence": 3}
    answers = [_post(production, "job-finish", body) for _ in range(2)]
    for answer in answers:
        assert answer.status == 409, answer.body
        data = answer.json()
        assert (data["outcome"], data["expected"], data["reported"]) == (
            "REPORT_MISMATCH", {"tray_code": moves[0].tray_code, "location": moves[0].target},
            {"tray_code": "T-NOT-THIS-ONE", "location": moves[0].target})
    assert stock_locations(moves[0].tray_code) == {moves[0].source}
    time.sleep(0.5)
    lines = [json.loads(line) for line in production.log_lines()]
    mismatch = [e for e in lines if e["logger"] == "recovery.callbacks" and e.get("outcome") == "REPORT_MISMATCH"]
    assert mismatch and all((e["tray_code"], e["source"], e["target"]) == (
        moves[0].tray_code, moves[0].source, moves[0].target) for e in mismatch)
