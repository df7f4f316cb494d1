"""The shipped Prometheus alert rules are valid and use only metrics /metrics exposes."""

import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml
from prometheus_client.parser import text_string_to_metric_families

from recovery.models import CallbackReceipt

# Other connections (threads, processes, a live server) must see these tests' rows.
pytestmark = pytest.mark.usefixtures("committed_db")

RULES = Path(__file__).resolve().parents[2] / "deploy" / "prometheus" / "alerts.yml"
RULE_TESTS = RULES.with_name("alerts.test.yml")
PROMTOOL = shutil.which("promtool")


def test_promtool_accepts_the_rules():
    if PROMTOOL is None:
        pytest.fail("promtool is missing: `apt-get install -y prometheus` (scripts/test installs it)")
    result = subprocess.run([PROMTOOL, "check", "rules", str(RULES)], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "SUCCESS" in result.stdout


def test_every_metric_the_rules_use_is_exposed(transactional_db, client):
    used = set(re.findall(r"\btidy_[a-z_]+\b", RULES.read_text()))
    assert {"tidy_recovery_last_success_age_seconds", "tidy_stalled_workflows", "tidy_callbacks_total"} <= used
    body = client.get("/metrics").content.decode()
    exposed = {sample.name for family in text_string_to_metric_families(body) for sample in family.samples}
    assert used - exposed == set()


def promtool_metric_findings(body: bytes) -> list[str]:
    """Every finding of promtool's metrics linter (stricter than the client's parser: names, units,
    HELP, which types may carry `quantile`); none is accepted."""
    if PROMTOOL is None:
        pytest.fail("promtool is missing: `apt-get install -y prometheus` (scripts/test installs it)")
    result = subprocess.run([PROMTOOL, "check", "metrics"], input=body, capture_output=True, timeout=60)
    findings = (result.stdout + result.stderr).decode().splitlines()
    assert findings or result.returncode == 0
    return findings


def test_promtool_lints_the_exposition_of_an_empty_console(transactional_db, client):
    response = client.get("/metrics")
    assert response.status_code == 200
    assert promtool_metric_findings(response.content) == []


def populate_every_metric(wms, client) -> None:
    """A console with something in every metric /metrics exposes: workflows active, stalled and
    paused with their locks, jobs taken by the WCS, a recovery cycle and its decisions, callbacks
    (one with a field the contract does not name), open notifications and delivery attempts,
    outbound requests, a shard backlog and dropped log lines."""
    from datetime import timedelta

    from django.db import connection
    from django.utils import timezone

    from console.models import Notification, NotificationDelivery, NotificationDeliveryAttempt
    from recovery.engine.cycle import run_cycle
    from recovery.models import LogDrops, OutboundHttpRequest, RecoveryCycle
    from tests.wcs_helpers import finish, post

    healthy = wms.build("healthy", job_status=2)
    stalled = wms.build("healthy", job_status=3)
    wms.build("paused", reason="RECOVERY_JOB_MISSING")
    wms.build("job_missing")
    with connection.cursor() as cursor:
        cursor.execute("UPDATE mydo_job SET updated_at = now() - interval '1 hour', "
                       "created_at = now() - interval '2 hours' WHERE job_id LIKE %s", [f"TDY-{stalled.workflow_id}-%"])
    run_cycle()
    assert post(client, "job-status", {"job_id": f"TDY-{healthy.workflow_id}-{healthy.step_ids[0]}", "status": 2,
                                       "crane": 4}).status_code in (200, 409)
    assert finish(client, "TDY-999999-1").status_code == 404
    now = timezone.now()
    n = Notification.objects.create(event="paused", dedup_key="paused:1", subject="s", url_path="/",
                                    opened_at=now, last_seen_at=now, workflow_id=1)
    delivery = NotificationDelivery.objects.create(notification=n, channel="email", severity="warning",
                                                   next_attempt_at=now)
    NotificationDeliveryAttempt.objects.create(delivery=delivery, at=now, ok=True, duration_ms=1)
    OutboundHttpRequest.objects.create(started_at=now - timedelta(seconds=5), purpose="vehicle-snapshot",
                                       method="GET", url="http://x", status=200, duration_ms=1)
    RecoveryCycle.objects.filter(pk=RecoveryCycle.objects.latest("pk").pk).update(backlog=3)
    LogDrops.objects.create(process="host:1:0", dropped=2, updated_at=now)


def test_promtool_lints_a_live_scrape_with_data_in_every_metric(wms, client):
    from prometheus_client.parser import text_string_to_metric_families

    populate_every_metric(wms, client)
    response = client.get("/metrics")
    assert response.status_code == 200
    families = list(text_string_to_metric_families(response.content.decode()))
    empty = [f.name for f in families if not any(s.value for s in f.samples)]
    assert empty == [], f"no data in {empty}"
    assert promtool_metric_findings(response.content) == []


# --- the rules fire and resolve (promtool test rules) -----------------------------------------


def test_promtool_shows_every_rule_firing_and_resolving():
    if PROMTOOL is None:
        pytest.fail("promtool is missing: `apt-get install -y prometheus` (scripts/test installs it)")
    result = subprocess.run([PROMTOOL, "test", "rules", str(RULE_TESTS)], capture_output=True, text=True,
                            timeout=120, cwd=RULE_TESTS.parent)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "SUCCESS" in result.stdout


def rule_names(rules: dict) -> list[str]:
    return [rule["alert"] for group in rules["groups"] for rule in group["rules"] if "alert" in rule]


def _seconds(duration: str) -> float:
    units = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400}
    return sum(float(n) * units[u] for n, u in re.findall(r"(\d+(?:\.\d+)?)(ms|s|m|h|d)", duration))


def rules_without_fire_and_resolve(rules: dict, cases: dict) -> list[str]:
    """The alert rules that no promtool case shows firing and then, in the same case, resolved
    (no alert at a later evaluation)."""
    shown = set()
    for case in cases.get("tests", []):
        checks = case.get("alert_rule_test", [])
        for fired in checks:
            if not fired.get("exp_alerts"):
                continue
            after = _seconds(fired["eval_time"])
            if any(c["alertname"] == fired["alertname"] and not c.get("exp_alerts")
                   and _seconds(c["eval_time"]) > after for c in checks):
                shown.add(fired["alertname"])
    return [name for name in rule_names(rules) if name not in shown]


def test_every_rule_has_a_case_that_fires_and_resolves_it():
    rules, cases = yaml.safe_load(RULES.read_text()), yaml.safe_load(RULE_TESTS.read_text())
    assert cases["rule_files"] == [RULES.name]
    assert len(rule_names(rules)) >= 9
    assert rules_without_fire_and_resolve(rules, cases) == []


def test_a_new_rule_without_cases_is_reported():
    rules, cases = yaml.safe_load(RULES.read_text()), yaml.safe_load(RULE_TESTS.read_text())
    rules["groups"][0]["rules"].append({"alert": "TidySomethingNew", "expr": "vector(1)"})
    assert rules_without_fire_and_resolve(rules, cases) == ["TidySomethingNew"]
    # A case that only fires, or resolves before it fires, is not enough.
    fired = {"eval_time": "5m", "alertname": "TidySomethingNew", "exp_alerts": [{"exp_labels": {}}]}
    early = {"eval_time": "1m", "alertname": "TidySomethingNew", "exp_alerts": []}
    cases["tests"].append({"alert_rule_test": [early, fired]})
    assert rules_without_fire_and_resolve(rules, cases) == ["TidySomethingNew"]
    cases["tests"][-1]["alert_rule_test"].append({**early, "eval_time": "6m"})
    assert rules_without_fire_and_resolve(rules, cases) == []


# Callback outcomes that change nothing because the report is late, repeated or the console's own
# failure: never a refusal (a disagreement between WCS and WMS, or a misconfigured client).
NOT_REFUSALS = {"ACCEPTED", "DUPLICATE", "STALE_REPORT", "UNAVAILABLE"}


def _refusal_pattern() -> re.Pattern:
    rules = yaml.safe_load(RULES.read_text())
    (rule,) = [r for g in rules["groups"] for r in g["rules"] if r.get("alert") == "TidyCallbackRefusalsRising"]
    (pattern,) = re.findall(r'tidy_callbacks_total\{outcome=~"([^"]+)"\}', rule["expr"])
    return re.compile(pattern)  # PromQL anchors its regular expressions: fullmatch below


def test_the_refusal_rule_counts_every_refusal_outcome_and_never_a_late_or_repeated_report():
    pattern = _refusal_pattern()
    outcomes = set(CallbackReceipt.Outcome.values) | {"STALE_REPORT", "REPORT_MISMATCH"}
    counted = {o for o in outcomes if pattern.fullmatch(o)}
    assert counted == outcomes - NOT_REFUSALS
    assert {"REFUSED_PAUSED", "REFUSED_CONFLICT", "UNKNOWN_JOB", "BAD_REQUEST", "UNAUTHORIZED",
            "REPORT_MISMATCH"} <= counted


def test_the_promtool_cases_feed_late_and_repeated_reports_to_the_refusal_rule_without_an_alert():
    cases = yaml.safe_load(RULE_TESTS.read_text())
    quiet = [case for case in cases["tests"]
             if {"STALE_REPORT", "DUPLICATE"} <= set(re.findall(r'outcome="([A-Z_]+)"',
                                                               " ".join(s["series"] for s in case["input_series"])))
             and all(c["alertname"] == "TidyCallbackRefusalsRising" and c["exp_alerts"] == []
                     for c in case["alert_rule_test"])]
    assert quiet, "no promtool case shows STALE_REPORT and DUPLICATE callbacks leaving the refusal rule quiet"
