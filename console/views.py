"""The console's pages: thin views that call one selector each and render a page, or its
fragment for an htmx request (the full page for a history restore)."""

from functools import wraps
from urllib.parse import urlencode

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404
from django.shortcuts import render, resolve_url
from django.utils.functional import SimpleLazyObject
from django.utils.translation import gettext as _
from django_htmx.http import HttpResponseClientRedirect

from console import floor, roles, selectors
from console.charts import bar_chart, line_chart
from console.evidence_card import build_evidence_card
from console.forms import LocksForm, PausedListForm
from console.rack_map import workflow_map
from console.reason_codes import CATALOG, REASON_ORDER, Correction
from console.repair.selectors import repair_panel


def refresh_seconds() -> int:
    """Live pages poll every CONSOLE_REFRESH_SECONDS (settings.py reads it, 10 s by default)."""
    return settings.CONSOLE_REFRESH_SECONDS


def console_page(view):
    """Sign-in required; a signed-in user without a console role gets 403.

    A refresh whose session has expired must not swap the sign-in form into a fragment: htmx
    is told to load the sign-in page in the window instead (coming back to the page after)."""

    @wraps(view)
    def wrapped(request, *args, **kwargs):
        if not roles.can_view(request.user):
            raise PermissionDenied(_("Your account has no console role (supervisor, operator or shift lead)."))
        return view(request, *args, **kwargs)

    protected = login_required(wrapped)

    @wraps(view)
    def entry(request, *args, **kwargs):
        if request.htmx and not request.user.is_authenticated:
            back = request.htmx.current_url_abs_path or request.get_full_path()
            return HttpResponseClientRedirect(f"{resolve_url(settings.LOGIN_URL)}?{urlencode({'next': back})}")
        return protected(request, *args, **kwargs)

    return entry


def wants_fragment(request) -> bool:
    return bool(request.htmx) and not request.htmx.history_restore_request


def render_page(request, template: str, fragment: str | tuple[str, ...], context: dict, *, status: int = 200):
    """The fragment `template#name` for htmx requests, the whole page otherwise (and for a
    history restore). With several fragments, the one named by the request's HX-Target (the id
    of the element being replaced) is rendered, the first one by default."""
    context = {**context, "refresh_seconds": refresh_seconds(),
               "user_roles": sorted(roles.user_roles(request.user)) or (["admin"] if request.user.is_superuser else [])}
    if wants_fragment(request):
        names = (fragment,) if isinstance(fragment, str) else fragment
        name = request.htmx.target if request.htmx.target in names else names[0]
        return render(request, f"{template}#{name}", context, status=status)
    return render(request, template, context, status=status)


@console_page
def dashboard(request):
    return render_page(request, "console/dashboard.html", "dashboard-live", {
        "counts": selectors.dashboard_counts(),
        "health": selectors.recovery_health(),
        "flow": selectors.flow_health(),
        "catalog": CATALOG,
        "active_counts": floor.active_counts(),
        "stalled_after": floor.stalled_after(),
    })


@console_page
def paused_workflows(request):
    form = PausedListForm(request.GET)
    form.is_valid()
    filters = form.filters()
    page = selectors.paused_workflows_page(filters=filters)
    return render_page(request, "console/paused_list.html", "paused-results", {
        "form": form, "filters": filters, "page": page, "health": selectors.recovery_health(),
    }, status=400 if form.refused else 200)


@console_page
def workflow_detail(request, workflow_id: int):
    detail = selectors.workflow_detail(workflow_id=workflow_id)
    if detail is None:
        raise Http404(_("Workflow %(id)s does not exist.") % {"id": workflow_id})
    card_then = build_evidence_card(detail.evidence_then) if detail.evidence_then else None
    card_now = build_evidence_card(detail.evidence_now, baseline=card_then) if detail.evidence_now else None
    reason = CATALOG.get(detail.workflow.pause_reason) if detail.workflow.pause_reason else None
    return render_page(request, "console/workflow.html", ("workflow-live", "workflow-history"), {
        "detail": detail, "workflow": detail.workflow, "card_now": card_now, "card_then": card_then,
        "reason": reason,
        # The repair panel sits outside the refreshed fragments: built for the whole page only.
        "repair_panel": None if wants_fragment(request) else repair_panel(user=request.user, workflow_id=workflow_id),
        # Read only where the history fragment shows it (the live refresh does not).
        "rack_minis": SimpleLazyObject(lambda: workflow_map(workflow_id=workflow_id,
                                                            steps=[t.step for t in detail.timeline])),
    })


@console_page
def locks(request):
    form = LocksForm(request.GET)
    form.is_valid()
    data = getattr(form, "cleaned_data", {})
    page = selectors.paused_locks_page(q=data.get("q") or "", after=data.get("after"))
    return render_page(request, "console/locks.html", "locks-results", {"form": form, "page": page},
                       status=400 if form.refused else 200)


@console_page
def reason_codes(request):
    counts = selectors.dashboard_counts().paused_by_reason
    entries = [(CATALOG[r], counts.get(r.value, 0)) for r in REASON_ORDER]
    return render_page(request, "console/reason_codes.html", "reason-catalog", {
        "entries": entries, "corrections": list(Correction),
    })


@console_page
def recovery_health(request):
    cycles = selectors.recent_cycles(limit=120)
    chronological = list(reversed(cycles))
    finished = [c for c in chronological if c.finished_at]
    return render_page(request, "console/recovery.html", "recovery-live", {
        "health": selectors.recovery_health(),
        "cycles": cycles[:50],
        "refusals": selectors.callback_refusals(),
        "duration_chart": line_chart([(c.started_at, c.duration_ms) for c in finished]),
        "paused_chart": line_chart([(c.started_at, c.paused_total) for c in finished]),
    })


@console_page
def flow_health(request):
    flow = selectors.flow_health()
    return render_page(request, "console/flow.html", "flow-live", {
        "flow": flow,
        "oldest_job": floor.oldest_tidy_job(),
        "arrivals_chart": bar_chart([(m, a) for m, a, _ in flow.per_minute]),
        "completions_chart": bar_chart([(m, c) for m, _, c in flow.per_minute]),
    })

