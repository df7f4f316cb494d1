"""Each role is offered only the links and buttons it may use: a crawler signs in as a
supervisor, an operator and a shift lead, follows every console link, htmx request and form on
every page it reaches, and no offer answers 403 (nor 404 or 500).

GET forms and links are fetched; POST forms are submitted empty, which is bad input: the
console refuses it with a 4xx naming a field (or an empty form page), never with 403 for a
role that was offered the button, and never changes anything."""

from collections import deque
from html.parser import HTMLParser
from urllib.parse import urldefrag, urlsplit

import pytest
from django.contrib.auth.models import Group
from django.urls import reverse

from console.models import CancelProposal, RepairBatch, WorkflowNote
from console.notifications.evaluate import evaluate_notifications
from console.roles import ALL_ROLES, OPERATOR, SHIFT_LEAD, SUPERVISOR
from tests.notification_support import recovery_is_fresh
from tests.repair_support import key, make_user, paused

REASON = "Checked on the floor by the night shift"
# Never followed: leaving the console (admin, the machine API), signing out, static files.
SKIP_PREFIXES = ("/admin/", "/api/", "/accounts/", "/static/", "/health")
MAX_PAGES = 400


class Offers(HTMLParser):
    """Every link, htmx request and form a page offers: (method, url)."""

    def __init__(self):
        super().__init__()
        self.offers: list[tuple[str, str]] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "a" and a.get("href"):
            self.offers.append(("GET", a["href"]))
        if a.get("hx-get"):
            self.offers.append(("GET", a["hx-get"]))
        if a.get("hx-post"):
            self.offers.append(("POST", a["hx-post"]))
        if tag == "form":
            method = (a.get("method") or "get").upper()
            self.offers.append((method, a.get("action") or ""))


def offers_of(html: str, page_url: str) -> list[tuple[str, str]]:
    parser = Offers()
    parser.feed(html)
    out = []
    for method, url in parser.offers:
        url = urldefrag(url).url
        if not url:
            url = page_url  # a form without an action submits to its own page
        parts = urlsplit(url)
        if parts.scheme or parts.netloc or not parts.path.startswith("/"):
            continue  # outside the console (or a data: URL)
        if parts.path.startswith(SKIP_PREFIXES):
            continue
        out.append((method, url))
    return out


@pytest.fixture
def floor(repair_db, no_channels, client):
    for role in ALL_ROLES:
        Group.objects.get_or_create(name=role)
    users = {"supervisor": make_user("sven", SUPERVISOR), "operator": make_user("olga", OPERATOR),
             "shift lead": make_user("lena", SHIFT_LEAD)}
    other_lead = make_user("lars", SHIFT_LEAD)

    fixed = paused(repair_db, "job_missing")
    repair_db.job(fixed, 0, status=1)  # restored in the WMS: a re-check resumes it
    unfixed = paused(repair_db, "job_missing")
    by_lars = paused(repair_db, "job_missing")
    by_lena = paused(repair_db, "active_mismatch")
    repair_db.build("healthy", job_status=3)
    repair_db.build("completed")

    # A pending cancel proposal by another shift lead, and one by the crawling shift lead.
    for user, built in ((other_lead, by_lars), (users["shift lead"], by_lena)):
        client.force_login(user)
        wid = built.workflow_id
        # The floor confirmation (the tray stands at its source), needed while a job is status 2 or 3.
        floor = {"tray_code": built.moves[0].tray_code, "space_code": built.moves[0].source}
        preview = client.post(reverse("repair-preview", args=[wid, "cancel"]),
                              {"reason_code": "TIDY_NO_LONGER_NEEDED", "reason_text": REASON, **floor})
        assert preview.status_code == 200
        client.post(reverse("repair-apply", args=[wid, "cancel"]), {
            "reason_code": "TIDY_NO_LONGER_NEEDED", "reason_text": REASON, **floor,
            "fingerprint": preview.context["preview"].fingerprint, "idempotency_key": preview.context["key"]})
    assert CancelProposal.objects.filter(status="PENDING").count() == 2

    # A batch re-check by the operator: one resumed, one refused.
    client.force_login(users["operator"])
    preview = client.post(reverse("repair-batch-preview"), {"workflow": [fixed.workflow_id, unfixed.workflow_id]})
    client.post(reverse("repair-batch-apply"), {
        "workflow": [f"{r.workflow_id}:{r.fingerprint}" for r in preview.context["rows"]],
        "reason_code": "WMS_RECORDS_FIXED", "reason_text": REASON, "idempotency_key": key()})
    assert RepairBatch.objects.count() == 1

    client.post(reverse("workflow-note-add", args=[unfixed.workflow_id]), {"text": "Vehicle 3 fault, called."})
    assert WorkflowNote.objects.count() == 1
    recovery_is_fresh()
    evaluate_notifications()
    client.logout()
    return {"users": users, "workflows": [fixed, unfixed, by_lars, by_lena]}


def crawl(client, starts: list[str]) -> tuple[dict[tuple[str, str], int], list[str]]:
    """Breadth-first over every offer; returns the status of each, and the refusals found."""
    seen: dict[tuple[str, str], int] = {}
    refusals: list[str] = []
    queue = deque(("GET", url, "(start)") for url in starts)
    while queue and len(seen) < MAX_PAGES:
        method, url, found_on = queue.popleft()
        if (method, url) in seen:
            continue
        response = client.get(url) if method == "GET" else client.post(url, {})
        seen[(method, url)] = response.status_code
        bad = response.status_code in (403, 404) or response.status_code >= 500
        if method == "GET" and response.status_code >= 400:
            bad = True
        if bad:
            refusals.append(f"{method} {url} -> {response.status_code} (offered on {found_on})")
            continue
        if response.status_code in (301, 302, 303) and method == "GET":
            queue.append(("GET", response["Location"], url))
            continue
        if method == "GET" and response.get("Content-Type", "").startswith("text/html"):
            for offer in offers_of(response.content.decode(), url):
                if offer not in seen:
                    queue.append((*offer, url))
    return seen, refusals


@pytest.mark.parametrize("role", ["supervisor", "operator", "shift lead"])
@pytest.mark.slow
def test_every_link_and_button_a_role_is_offered_is_one_it_may_use(floor, client, role):
    client.force_login(floor["users"][role])
    starts = ["/", "/paused/", "/active/", "/locks/", "/repair/audit/", "/repair/proposals/", "/handover/",
              "/notifications/", "/search/?q=T", *(f"/workflows/{b.workflow_id}/" for b in floor["workflows"])]
    if role != "supervisor":
        starts.append("/repair/batch/")
    seen, refusals = crawl(client, starts)
    assert refusals == [], "\n".join(refusals)
    # The crawl went everywhere it should: each kind of page was reached.
    paths = {urlsplit(url).path for _, url in seen}
    for expected in ("/repair/audit/", "/repair/proposals/", "/handover/", "/notifications/", "/active/"):
        assert expected in paths
    assert any(p.startswith("/repair/audit/") and p != "/repair/audit/" for p in paths)
    assert any(p.startswith("/repair/proposals/") and p != "/repair/proposals/" for p in paths)
    offered_batch = bool(paths & {"/repair/batch/", "/repair/batch/preview", "/repair/batch/apply"})
    offered_repair = any(p.startswith("/repair/workflow/") for p in paths)
    offered_approval = any(m == "POST" and u.endswith("/approve") for m, u in seen)
    assert offered_batch == offered_repair == (role != "supervisor")
    assert offered_approval == (role == "shift lead")


def test_the_crawler_reports_an_offer_that_answers_403(floor, client):
    """The crawler can fail: started on repair pages a supervisor may not use, it reports both."""
    client.force_login(floor["users"]["supervisor"])
    wid = floor["workflows"][1].workflow_id
    _, refusals = crawl(client, ["/repair/batch/", f"/repair/workflow/{wid}/reissue/"])
    assert [r.split(" (")[0] for r in refusals] == [
        "GET /repair/batch/ -> 403", f"GET /repair/workflow/{wid}/reissue/ -> 403"]
