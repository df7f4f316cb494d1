"""One page frame: every console page draws the same header (the person's name and role badge, the
navigation, the Security link a shift lead sees) as the dashboard does for that person, however its
view renders it (console.frame.frame, docs/architecture.md §11)."""

import re

import pytest
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver, reverse

from console.models import CancelProposal, RepairAudit, RepairBatch
from recovery.engine.cycle import run_cycle

ROLES = ("supervisor", "operator", "shiftlead")

# Every URL of the console, by name: how a person opens it as a page (its arguments, from the
# objects the test makes), or why it is not a page with the frame. A new URL must be added here.
PAGES = {
    "dashboard": {}, "paused-workflows": {}, "workflow-detail": {"workflow_id": "workflow"}, "locks": {},
    "reason-codes": {}, "recovery-health": {}, "recovery-observe": {}, "recovery-preview": {},
    "recovery-processes": {}, "flow-health": {}, "active-workflows": {}, "search": {}, "handover": {},
    "rack-map": {}, "cordons": {}, "security": {}, "analytics": {},
    "repair-workflow": {"workflow_id": "workflow"}, "repair-form": {"workflow_id": "workflow", "slug": "recheck"},
    "repair-proposals": {}, "repair-proposal": {"pk": "proposal"}, "repair-audit": {},
    "repair-audit-entry": {"pk": "audit"}, "repair-batch": {}, "repair-batch-result": {"pk": "batch"},
    "help": {}, "help-guide": {"name": "architecture"},
    "notifications": {}, "notification-thresholds": {}, "notification-silences": {}, "notification-channels": {},
}
NOT_PAGES = {
    "health-live": "plain text for the load balancer", "health-ready": "plain text for the load balancer",
    "metrics": "Prometheus text", "case-file-json": "JSON", "case-file-html": "a self-contained printable file",
    "repair-audit-csv": "CSV", "wcs-job-finish": "the WCS API", "wcs-job-status": "the WCS API",
    "wcs-openapi": "the WCS API's contract", "workflow-note-add": "POST only", "cordon-add": "POST only",
    "cordon-lift": "POST only",
    "login": "the sign-in form", "logout": "POST only", "oidc-start": "a redirect to the OpenID provider",
    "oidc-callback": "the OpenID provider's redirect back",
    "repair-preview": "POST only", "repair-apply": "POST only", "repair-proposal-approve": "POST only",
    "repair-proposal-reject": "POST only", "repair-batch-preview": "POST only", "repair-batch-apply": "POST only",
    "notification-acknowledge": "POST only", "notification-silence-end": "POST only",
    "help-image": "a guide's image",
    "notification-channel-test": "POST only",
}
HEADER = re.compile(r'<header class="topbar">.*?</header>', re.DOTALL)


def console_url_names() -> set[str]:
    def walk(patterns):
        for p in patterns:
            if isinstance(p, URLResolver):
                yield from walk(p.url_patterns)
            elif isinstance(p, URLPattern) and p.callback.__module__.startswith("console."):
                yield p.name

    return set(walk(get_resolver().url_patterns))


def frame(html: str) -> str:
    """The page's header, less what rightly differs between pages: which link is the current page,
    the search box's own query, the page the language form returns to, and the CSRF token."""
    match = HEADER.search(html)
    assert match, "no header"
    text = match.group(0).replace(' aria-current="page"', "")
    text = re.sub(r'(id="nav-q"[^>]*?) value="[^"]*"', r"\1", text)
    text = re.sub(r'(name="next") value="[^"]*"', r'\1 value=""', text)
    return re.sub(r'(name="csrfmiddlewaretoken") value="[^"]*"', r'\1 value=""', text)


@pytest.fixture
def objects(wms, personas, audit_truncate_allowed):
    built = wms.build("job_missing")
    run_cycle()
    lead = personas["shiftlead"]
    proposal = CancelProposal.objects.create(workflow_id=built.workflow_id, proposed_by=lead,
                                             reason_code="TIDY_NO_LONGER_NEEDED", reason_text="No longer needed here",
                                             fingerprint="f", evidence={}, idempotency_key="k-proposal")
    audit = RepairAudit.objects.create(user=lead, username=lead.username, action="RECHECK",
                                       workflow_id=built.workflow_id, outcome="REFUSED:PRECONDITION")
    batch = RepairBatch.objects.create(created_by=lead, reason_code="WMS_RECORDS_FIXED",
                                       reason_text="Records fixed in the WMS", idempotency_key="k-batch",
                                       selection={"ids": [built.workflow_id]})
    return {"workflow": built.workflow_id, "proposal": proposal.pk, "audit": audit.pk, "batch": batch.pk}


def test_every_console_url_is_either_a_page_here_or_named_as_not_one():
    assert set(PAGES).isdisjoint(NOT_PAGES)
    assert console_url_names() == set(PAGES) | set(NOT_PAGES)


@pytest.mark.parametrize("role", ROLES)
def test_every_page_draws_the_dashboards_frame_for_each_role(objects, personas, role):
    client = Client()
    client.force_login(personas[role])
    dashboard = frame(client.get(reverse("dashboard")).content.decode())
    assert '<span class="role">' in dashboard
    assert ('href="/security/"' in dashboard) == (role == "shiftlead")
    differing = {}
    for name, arguments in PAGES.items():
        # A page this role may not open (403) is drawn in the same frame, saying why.
        response = client.get(reverse(name, kwargs={k: objects.get(v, v) for k, v in arguments.items()}))
        assert response.status_code in (200, 403), (name, response.status_code)
        if frame(response.content.decode()) != dashboard:
            differing[name] = response.status_code
    assert differing == {}
