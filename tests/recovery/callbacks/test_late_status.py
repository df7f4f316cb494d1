"""A job-status report about a job that is already finished (archived in mydo_job_finish) is late,
not a disagreement: whatever its workflow's state it changes nothing and is answered 200
STALE_REPORT, recorded on its receipt, shown in the case file as stale and never counted as a
refusal (design §11, "Explicit order"). A status for a job the WMS never had stays 404, and a
finish report is answered as before. The simulator's late reports, delivered after their jobs
finished, end as STALE_REPORT, never REFUSED_CONFLICT."""

import re
import threading
import time
from pathlib import Path

import yaml

from console.roles import OPERATOR
from console.simulator.wcs import Faults, WcsSimulator, run_forever
from recovery.engine.cycle import run_cycle
from recovery.models import CallbackReceipt, tidy_job_id
from tests.console.operations.test_metrics import scrape
from tests.console_personas import make_user
from tests.wcs_helpers import TOKEN, create, finish, rows, status
from tests.wms_state import diff, snapshot

ROOT = Path(__file__).resolve().parents[3]


def refusal_outcomes() -> re.Pattern:
    """The outcomes TidyCallbackRefusalsRising counts, read from the alert rule itself."""
    rules = yaml.safe_load((ROOT / "deploy" / "prometheus" / "alerts.yml").read_text())
    (expr,) = [r["expr"] for g in rules["groups"] for r in g["rules"] if r.get("alert") == "TidyCallbackRefusalsRising"]
    return re.compile(re.search(r'outcome=~"([^"]+)"', expr).group(1))


def refusals_on_metrics(client) -> dict:
    counted = refusal_outcomes()
    return {labels: total for (name, labels), total in scrape(client).items()
            if name == "tidy_callbacks_total" and counted.fullmatch(dict(labels)["outcome"]) and total}


def assert_stale(response):
    assert response.status_code == 200, response.content
    assert response.json()["outcome"] == "STALE_REPORT", response.json()


def test_a_status_for_a_finished_job_of_a_completed_workflow_is_stale(wms, client):
    created, _ = create(wms, 1)
    job = created.first_job_id
    assert finish(client, job).status_code == 200
    assert rows("SELECT status FROM alg.tidy_workflow") == [("COMPLETED",)]
    before = snapshot()
    for reported in (2, 3):
        assert_stale(status(client, job, reported))
    assert diff(before, snapshot()) == {}
    assert list(CallbackReceipt.objects.filter(endpoint="job-status").values_list("http_status", "outcome")) == [
        (200, "STALE_REPORT"), (200, "STALE_REPORT")]
    assert refusals_on_metrics(client) == {}


def test_a_status_for_a_finished_job_of_a_paused_workflow_is_stale_not_refused(wms, client):
    created, moves = create(wms, 2)
    wid, (s1, s2) = created.workflow_id, created.step_ids
    assert finish(client, tidy_job_id(wid, s1)).status_code == 200
    wms.put_tray_at_target(moves[1])  # the second move happened without its job: recovery pauses
    run_cycle()
    assert rows("SELECT status FROM alg.tidy_workflow") == [("PAUSED_RECOVERY",)]
    before = snapshot()
    assert_stale(status(client, tidy_job_id(wid, s1), 3))
    assert diff(before, snapshot()) == {}
    # The paused workflow's own, unfinished job is still refused as evidence for the operator.
    current = status(client, tidy_job_id(wid, s2), 3)
    assert (current.status_code, current.json()["outcome"]) == (409, "REFUSED_PAUSED")


def test_a_status_for_a_job_the_wms_never_had_stays_unknown_and_a_finish_is_answered_as_before(wms, client):
    created, _ = create(wms, 2)
    wid, (s1, s2) = created.workflow_id, created.step_ids
    never = status(client, tidy_job_id(wid, s2), 2)  # step 2's job is not created yet
    assert (never.status_code, never.json()["outcome"]) == (404, "UNKNOWN_JOB")
    assert finish(client, tidy_job_id(wid, s1)).json()["outcome"] == "ACCEPTED"
    again = finish(client, tidy_job_id(wid, s1))
    assert (again.status_code, again.json()["outcome"]) == (200, "DUPLICATE")


def test_the_case_file_shows_a_late_status_as_stale(wms, client):
    created, _ = create(wms, 2)
    job = created.first_job_id
    finish(client, job)
    status(client, job, 3)
    client.force_login(make_user("olga", OPERATOR))
    response = client.get(f"/workflows/{created.workflow_id}/case-file.json")
    assert response.status_code == 200
    (late,) = [e for e in response.json()["events"] if e["kind"] == "job_status"]
    assert (late["details"]["result"], late["details"]["outcome"]) == ("stale", "STALE_REPORT")
    assert "STALE_REPORT" in late["summary"]


def test_the_simulators_late_reports_after_the_finish_end_stale_never_refused(wms, live_server, client):
    """A short soak: the WCS simulator drives several workflows through the real endpoints with
    every "dispatched" report delivered late, against a live server. A late report that arrives
    after its job finished is STALE_REPORT; only one that arrives while its job is still active
    (a backwards report without a sequence) may be a refusal."""
    workflows = [create(wms, 3)[0] for _ in range(3)]
    sim = WcsSimulator(console_url=live_server.url, token=TOKEN, seed=11,
                       faults=Faults(late=1.0, late_seconds=0.5, duplicate=0.3))
    stop = threading.Event()
    runner = threading.Thread(target=run_forever, args=(sim,), kwargs={"rate": 40.0, "stop": stop})
    started = time.monotonic()
    runner.start()
    try:
        while time.monotonic() - started < 120:
            done = rows("SELECT count(*) FROM alg.tidy_workflow WHERE status = 'COMPLETED'")[0][0]
            if done == len(workflows) and not sim.delayed:
                break
            time.sleep(0.2)
    finally:
        stop.set()
        runner.join(30)
    print(f"soak: {time.monotonic() - started:.1f} s, {dict(sim.stats)}")
    assert rows("SELECT count(*) FROM alg.tidy_workflow WHERE status = 'COMPLETED'") == [(len(workflows),)]
    receipts = list(CallbackReceipt.objects.order_by("id").values_list("id", "endpoint", "job_id", "outcome"))
    finished_at = {job: rid for rid, endpoint, job, outcome in receipts
                   if endpoint == "job-finish" and outcome == "ACCEPTED"}
    late = [(rid, job, outcome) for rid, endpoint, job, outcome in receipts
            if endpoint == "job-status" and job in finished_at and rid > finished_at[job]]
    assert len(late) == len(sim.sent_late) == 9  # every job's "dispatched" arrived after its finish
    assert {outcome for _, _, outcome in late} == {"STALE_REPORT"}
    assert not [r for r in receipts if r[1] == "job-status" and r[3] == "REFUSED_CONFLICT"
                and r[2] in finished_at and r[0] > finished_at[r[2]]]
    assert refusals_on_metrics(client) == {}
