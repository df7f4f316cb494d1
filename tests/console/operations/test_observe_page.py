"""/recovery/observe/ (what recovery observed, what happened afterwards, the agreement rates),
/recovery/preview/ (what a cycle would decide now) and the observe-mode banner."""

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from console.models import RepairAudit
from console.operations.observe import AGREES, DISAGREES, PENDING, agreement, observed_page
from console.operations.preview import next_cycle_preview
from recovery.demo.warehouse import EXPECTED
from recovery.engine.cycle import run_cycle
from recovery.models import RecoveryDecision
from tests.wcs_helpers import finish
from tests.wms_state import diff, snapshot


def observed(workflow_id: int) -> RecoveryDecision:
    return RecoveryDecision.objects.get(workflow_id=workflow_id, observed=True)


def page_rows(**filters) -> dict[int, tuple[str, str]]:
    page = observed_page(now=timezone.now(), **filters)
    return {r.workflow_id: (r.outcome, r.agreement) for r in page.rows}


# --- what happened afterwards, and whether it agrees --------------------------------------------


@pytest.mark.parametrize("action,outcome,expected", [
    ("PAUSE", "unchanged", PENDING), ("PAUSE", "repaired", AGREES), ("PAUSE", "cancelled", AGREES),
    ("PAUSE", "advanced_by_callback", DISAGREES), ("PAUSE", "completed_by_callback", DISAGREES),
    ("ADVANCE", "advanced_by_callback", AGREES), ("ADVANCE", "completed_by_callback", AGREES),
    ("ADVANCE", "cancelled", DISAGREES), ("ADVANCE", "repaired", DISAGREES), ("COMPLETE", "unchanged", PENDING),
    ("COMPLETE", "cancelled", DISAGREES),
])
def test_agreement_is_one_rule_of_the_action_and_what_happened(action, outcome, expected):
    assert agreement(action=action, reason="", outcome=outcome) == expected


def test_a_later_recovery_decision_agrees_only_when_it_is_the_same():
    same = agreement(action="PAUSE", reason="RECOVERY_JOB_MISSING", outcome="recovery", later_action="PAUSE",
                     later_reason="RECOVERY_JOB_MISSING")
    other = agreement(action="PAUSE", reason="RECOVERY_JOB_MISSING", outcome="recovery", later_action="ADVANCE")
    assert (same, other) == (AGREES, DISAGREES)


@pytest.mark.usefixtures("committed_db")
def test_the_page_says_what_happened_after_each_observation(wms, client, audit_truncate_allowed):
    unchanged = wms.build("job_missing")
    overtaken = wms.build("active_bad_status")  # would pause; the floor then finishes it without recovery
    confirmed = wms.build("finish_terminal")  # would advance; the late callback then does
    repaired = wms.build("active_mismatch")
    cancelled = wms.build("finish_not_terminal")
    decided = wms.build("finish_mismatch")
    run_cycle(mode="observe")

    overtaken_job = f"TDY-{overtaken.workflow_id}-{overtaken.step_ids[0]}"
    with connection.cursor() as cursor:  # someone puts the job's status right in the WMS, and the WCS finishes it
        cursor.execute("UPDATE mydo_job SET status = 2 WHERE job_id = %s", [overtaken_job])
    assert finish(client, overtaken_job).status_code == 200
    assert finish(client, f"TDY-{confirmed.workflow_id}-{confirmed.step_ids[0]}").status_code == 200
    RepairAudit.objects.create(username="op", action="RECONCILE_TARGET", workflow_id=repaired.workflow_id,
                               outcome="APPLIED")
    with connection.cursor() as cursor:
        cursor.execute("UPDATE alg.tidy_workflow SET status = 'CANCELLED' WHERE workflow_id = %s",
                       [cancelled.workflow_id])
    run_cycle(mode="apply")  # after the switch: recovery decides the rest itself

    rows = page_rows()
    assert rows[unchanged.workflow_id] == ("recovery", AGREES)  # the switch to apply paused it the same way
    assert rows[overtaken.workflow_id] == ("advanced_by_callback", DISAGREES)
    assert rows[confirmed.workflow_id] == ("advanced_by_callback", AGREES)
    assert rows[repaired.workflow_id] == ("repaired", AGREES)
    assert rows[cancelled.workflow_id] == ("cancelled", AGREES)
    assert rows[decided.workflow_id] == ("recovery", AGREES)


def test_an_observation_nothing_followed_is_not_known_yet_and_the_rates_count_it_apart(wms):
    wms.build("job_missing")
    confirmed = wms.build("finish_terminal")
    run_cycle(mode="observe")
    with connection.cursor() as cursor:  # the step was advanced by the WCS's own finish afterwards
        cursor.execute("INSERT INTO alg.tidy_callback_event (workflow_id, step_id, job_id, stage, received_at) "
                       "VALUES (%s, %s, %s, 'MOVE_FINISHED', now() + interval '1 second')",
                       [confirmed.workflow_id, confirmed.step_ids[0],
                        f"TDY-{confirmed.workflow_id}-{confirmed.step_ids[0]}"])
    page = observed_page(now=timezone.now())
    rates = {r.action: (r.agrees, r.disagrees, r.pending, r.percent) for r in page.rates}
    assert rates == {"ADVANCE": (1, 0, 0, 100), "COMPLETE": (0, 0, 0, None), "PAUSE": (0, 0, 1, None)}
    # Older than 24 hours: listed, but not in the rates.
    RecoveryDecision.objects.update(decided_at=timezone.now() - timedelta(hours=25))
    page = observed_page(now=timezone.now())
    assert len(page.rows) == 2 and sum(r.total for r in page.rates) == 0


def test_the_list_filters_by_action_and_reason_and_pages_newest_first(wms):
    built = [wms.build(kind) for kind in ("job_missing", "finish_terminal", "active_mismatch", "job_missing")]
    run_cycle(mode="observe")
    ids = [b.workflow_id for b in built]
    assert set(page_rows(action="ADVANCE")) == {ids[1]}
    assert set(page_rows(reason="RECOVERY_JOB_MISSING")) == {ids[0], ids[3]}
    assert set(page_rows(action="PAUSE", reason="RECOVERY_JOB_MISMATCH")) == {ids[2]}
    first = observed_page(now=timezone.now(), page_size=3)
    second = observed_page(now=timezone.now(), page_size=3, before=first.next_cursor)
    newest_first = [r.id for r in first.rows + second.rows]
    assert newest_first == sorted(newest_first, reverse=True) and len(newest_first) == 4
    assert second.next_cursor is None


def test_the_page_reads_a_fixed_number_of_queries(wms, supervisor_client):
    wms.build("job_missing")
    run_cycle(mode="observe")
    with CaptureQueriesContext(connection) as few:
        assert supervisor_client.get("/recovery/observe/").status_code == 200
    for _ in range(30):
        wms.build("job_missing")
    run_cycle(mode="observe")
    with CaptureQueriesContext(connection) as many:
        response = supervisor_client.get("/recovery/observe/")
    assert response.status_code == 200 and response.content.decode().count('class="wf"') == 31
    assert len(many.captured_queries) == len(few.captured_queries)


@pytest.mark.parametrize("query,field", [
    ("action=LEAVE", "action"), ("reason=SOMETHING", "reason"), ("before=12%EF%BC%91-3", "before"),
    ("before=nonsense", "before"), ("action=%00", "action"),
])
def test_bad_input_is_a_400_naming_the_field_and_reads_nothing_more(supervisor_client, query, field):
    response = supervisor_client.get(f"/recovery/observe/?{query}")
    assert response.status_code == 400
    assert f"{field}: " in response.content.decode()


def test_anonymous_and_roleless_people_are_kept_out(client, personas):
    for path in ("/recovery/observe/", "/recovery/preview/"):
        assert client.get(path).status_code == 302
    client.force_login(personas["norole"])
    for path in ("/recovery/observe/", "/recovery/preview/"):
        assert client.get(path).status_code == 403
    assert client.post("/recovery/preview/").status_code in (403, 405)


# --- the preview ----------------------------------------------------------------------------------


def test_the_preview_counts_what_the_next_cycle_would_decide_and_changes_nothing(wms, settings):
    kinds = {wms.build(kind).workflow_id: kind for kind in EXPECTED}
    before = snapshot()
    preview = next_cycle_preview()
    assert diff(before, snapshot()) == {}
    assert RecoveryDecision.objects.count() == 0
    expected = {}
    for kind in kinds.values():
        if kind in ("paused", "completed"):
            continue  # not ACTIVE: a cycle does not read them
        key = (EXPECTED[kind][0], EXPECTED[kind][1] or "")
        expected[key] = expected.get(key, 0) + 1
    assert {(g.action, g.reason): g.count for g in preview.groups} == expected
    report = run_cycle(mode="apply")  # and the cycle does what the preview said
    assert dict(report.decisions) == {a: sum(n for (act, _), n in expected.items() if act == a)
                                      for a in ("ADVANCE", "COMPLETE", "PAUSE")}


def test_the_preview_lists_the_first_fifty_of_a_group_linked_to_them(wms, supervisor_client):
    for _ in range(53):
        wms.build("job_missing")
    preview = next_cycle_preview()
    (group,) = preview.groups
    assert (group.action, group.reason, group.count, len(group.first)) == ("PAUSE", "RECOVERY_JOB_MISSING", 53, 50)
    assert [w.workflow_id for w in group.first] == sorted(w.workflow_id for w in group.first)
    body = supervisor_client.get("/recovery/preview/").content.decode()
    assert body.count('class="wf" href="/workflows/') == 50
    assert f'href="/workflows/{group.first[0].workflow_id}/"' in body


def test_the_preview_serves_every_role_in_either_mode(wms, client, personas, settings):
    wms.build("job_missing")
    for mode in ("apply", "observe"):
        settings.RECOVERY_MODE = mode
        for name in ("supervisor", "operator", "shiftlead"):
            client.force_login(personas[name])
            assert client.get("/recovery/preview/").status_code == 200


# --- the banner -------------------------------------------------------------------------------------


def test_every_page_shows_the_banner_while_recovery_observes(wms, supervisor_client, settings):
    built = wms.build("job_missing")
    pages = ["/", "/paused/", "/recovery/", "/recovery/observe/", "/recovery/preview/", "/flow/", "/active/",
             f"/workflows/{built.workflow_id}/", "/handover/", "/notifications/", "/map/", "/locks/"]
    settings.RECOVERY_MODE = "apply"
    for path in pages:
        assert 'class="observe-banner"' not in supervisor_client.get(path).content.decode(), path
    settings.RECOVERY_MODE = "observe"
    for path in pages:
        body = supervisor_client.get(path).content.decode()
        assert 'class="observe-banner"' in body and 'href="/recovery/observe/"' in body, path


def test_the_recovery_page_links_the_preview_and_the_observations(supervisor_client):
    body = supervisor_client.get("/recovery/").content.decode()
    assert 'href="/recovery/preview/"' in body and 'href="/recovery/observe/"' in body


def _new_resolving_action(monkeypatch) -> str:
    """A throw-away action declared the way any new one is: a spec in the registry that resolves a pause."""
    from dataclasses import replace

    from console.repair import registry

    spec = replace(registry.spec("REISSUE"), code="REBOOK_TRAY", slug="rebook-tray")
    monkeypatch.setattr(registry, "SPECS", (*registry.SPECS, spec))
    return spec.code


def test_a_new_action_that_resolves_a_pause_counts_as_a_repair_from_its_spec(wms, monkeypatch,
                                                                             audit_truncate_allowed):
    new_action = _new_resolving_action(monkeypatch)
    by_new, proposed = wms.build("active_mismatch"), wms.build("job_missing")
    run_cycle(mode="observe")
    RepairAudit.objects.create(username="op", action=new_action, workflow_id=by_new.workflow_id, outcome="APPLIED")
    # A proposal does not resolve the pause: its spec says so.
    RepairAudit.objects.create(username="lead", action="CANCEL_PROPOSE", workflow_id=proposed.workflow_id,
                               outcome="APPLIED")
    rows = page_rows()
    assert rows[by_new.workflow_id] == ("repaired", AGREES)
    assert rows[proposed.workflow_id] == ("unchanged", PENDING)
    rates = {r.action: (r.agrees, r.pending) for r in observed_page(now=timezone.now()).rates}
    assert rates["PAUSE"] == (1, 1)
