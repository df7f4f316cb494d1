"""The workflow pages: the dashboard, the paused list, one workflow, the retained locks and the
reason-code runbook. Thin views that call selectors and render a page, or its fragment for an
htmx request (console.pages)."""

from django.http import Http404
from django.utils.functional import SimpleLazyObject
from django.utils.translation import gettext as _

from console.notes.views import notes_context
from console.pages import console_page, render_page, wants_fragment
from console.rack_map.drawing import workflow_map
from console.readers.flow import flow_health
from console.readers.paused import paused_workflows_page
from console.readers.recovery import recovery_health
from console.readers.stalled import active_counts, stalled_after
from console.repair.registry import FAMILIES
from console.repair.selectors import repair_panel
from console.runbook import CATALOG
from console.workflows import selectors
from console.workflows.evidence_card import build_evidence_card
from console.workflows.forms import LocksForm, PausedListForm
from recovery.engine.decisions import PAUSE_REASONS


@console_page
def dashboard(request):
    return render_page(request, "workflows/dashboard.html", "dashboard-live", {
        "counts": selectors.dashboard_counts(),
        "health": recovery_health(),
        "flow": flow_health(),
        "catalog": CATALOG,
        "active_counts": active_counts(),
        "stalled_after": stalled_after(),
    })


@console_page
def paused_workflows(request):
    form = PausedListForm(request.GET)
    form.is_valid()
    filters = form.filters()
    page = paused_workflows_page(filters=filters)
    return render_page(request, "workflows/paused_list.html", "paused-results", {
        "form": form, "filters": filters, "page": page, "health": recovery_health(),
    }, status=400 if form.refused else 200)


@console_page
def workflow_detail(request, workflow_id: int):
    detail = selectors.workflow_detail(workflow_id=workflow_id)
    if detail is None:
        raise Http404(_("Workflow %(id)s does not exist.") % {"id": workflow_id})
    card_then = build_evidence_card(detail.evidence_then) if detail.evidence_then else None
    card_now = build_evidence_card(detail.evidence_now, baseline=card_then) if detail.evidence_now else None
    reason = CATALOG.get(detail.workflow.pause_reason) if detail.workflow.pause_reason else None
    return render_page(request, "workflows/workflow.html", ("workflow-live", "workflow-history"), {
        "detail": detail, "workflow": detail.workflow, "card_now": card_now, "card_then": card_then,
        "reason": reason,
        # The repair panel sits outside the refreshed fragments: built for the whole page only.
        "repair_panel": None if wants_fragment(request) else repair_panel(user=request.user, workflow_id=workflow_id),
        # The notes section sits outside the refreshed fragments too (console/notes).
        **notes_context(workflow_id),
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
    return render_page(request, "workflows/locks.html", "locks-results", {"form": form, "page": page},
                       status=400 if form.refused else 200)


@console_page
def reason_codes(request):
    counts = selectors.dashboard_counts().paused_by_reason
    entries = [(CATALOG[r], counts.get(r.value, 0)) for r in PAUSE_REASONS]
    return render_page(request, "workflows/reason_codes.html", "reason-catalog", {
        # The runbook names its corrections by value; the repair actions' registry words them.
        "entries": entries, "families": FAMILIES,
    })
