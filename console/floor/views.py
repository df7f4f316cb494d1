"""The floor pages: active and stalled workflows, search, shift handover. Thin views over
console.floor.selectors."""

from django.http import HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_GET

from console.csv_safe import streaming_csv
from console.floor import selectors as floor
from console.floor.forms import ActiveListForm, HandoverForm, SearchForm
from console.input_checks import field_errors
from console.pages import console_page, render_page
from console.readers.recovery import recovery_health
from console.readers.shifts import shift_after, shift_at, shift_before


@require_GET
@console_page
def active_workflows(request):
    form = ActiveListForm(request.GET)
    form.is_valid()
    filters = form.filters()
    page = floor.active_workflows_page(filters=filters)
    return render_page(request, "console/active.html", "active-results", {
        "form": form, "filters": filters, "page": page, "health": recovery_health(),
    })


@require_GET
@console_page
def search(request):
    form = SearchForm(request.GET)
    if not form.is_valid():
        return render(request, "console/search.html", {"form": form, "q": "", "result": None,
                                                       "field_errors": field_errors(form)}, status=400)
    q = form.cleaned_data["q"]
    result = floor.search_workflows(q=q) if q else None
    if result is not None and result.single is not None:
        # A scanned code that names exactly one workflow opens it.
        return HttpResponseRedirect(reverse("workflow-detail", args=[result.single.workflow_id]))
    return render_page(request, "console/search.html", "search-results", {"form": form, "q": q, "result": result})


@require_GET
@console_page
def handover(request):
    form = HandoverForm(request.GET)
    if not form.is_valid():
        return render(request, "console/handover.html", {"form": form, "field_errors": field_errors(form),
                                                         "report": None}, status=400)
    shift = form.cleaned_data["shift"] or shift_at(timezone.now())
    report = floor.handover(shift=shift)
    if form.cleaned_data.get("format") == "csv":
        return handover_csv(report)
    return render(request, "console/handover.html", {
        "form": form, "report": report, "shift": shift,
        "previous": shift_before(shift), "next": shift_after(shift),
    })


# --- CSV -------------------------------------------------------------------------------------

HANDOVER_CSV_HEADER = ("section", "time", "workflow", "who", "what", "detail")


def handover_rows(report: floor.Handover):
    from console.templatetags.console_tags import format_duration

    yield HANDOVER_CSV_HEADER
    for d in report.paused:
        yield ("paused", d.decided_at.isoformat(), d.workflow_id, d.source.lower(), d.reason, d.rule)
    for a in report.repairs:
        yield ("repair", a.at.isoformat(), a.workflow_id, a.username, a.action,
               f"{a.outcome} {a.reason_code}: {a.reason_text}".strip())
    for o in report.still_open:
        yield ("still paused", o.paused_since.isoformat(), o.workflow_id, "", o.pause_reason or "",
               f"paused for {format_duration(report.now - o.paused_since)}")
    for s in report.stalled:
        yield ("stalled", s.job_updated_at.isoformat(), s.workflow_id, "", s.job_id,
               f"status {s.job_status}, unchanged for {format_duration(report.now - s.job_updated_at)}")
    for p in report.proposals:
        yield ("cancel proposal", p.proposed_at.isoformat(), p.workflow_id, p.proposed_by.get_username(),
               p.reason_code, p.reason_text)
    for n in report.notes:
        yield ("note", n.at.isoformat(), n.workflow_id, n.username, "note", n.text)
    for n in report.notifications:
        yield ("notification", n.opened_at.isoformat(), n.workflow_id or "", n.severity, n.event,
               f"{n.state}: {n.subject}")
    for a in report.acknowledgements:
        yield ("acknowledged", a.at.isoformat(), a.notification.workflow_id or "", a.username,
               a.notification.event, a.notification.subject)


def handover_csv(report: floor.Handover):
    return streaming_csv(handover_rows(report), filename=report.shift.start.strftime("handover-%Y-%m-%d-%H%M.csv"))
