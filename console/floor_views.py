"""The floor pages: active and stalled workflows, search, shift handover, workflow notes.
Thin views over console.floor (reads) and console.notes (the one write)."""

import csv

from django.http import Http404, HttpResponseRedirect, StreamingHttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext
from django.views.decorators.http import require_GET, require_POST

from console import floor, notes, selectors
from console.floor_forms import ActiveListForm, HandoverForm, NoteForm, SearchForm, errors_text, field_errors
from console.views import console_page, render_page
from recovery.models import TidyWorkflow


@require_GET
@console_page
def active_workflows(request):
    form = ActiveListForm(request.GET)
    form.is_valid()
    filters = form.filters()
    page = floor.active_workflows_page(filters=filters)
    return render_page(request, "console/active.html", "active-results", {
        "form": form, "filters": filters, "page": page, "health": selectors.recovery_health(),
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
    shift = form.cleaned_data["shift"] or floor.shift_at(timezone.now())
    report = floor.handover(shift=shift)
    if form.cleaned_data.get("format") == "csv":
        return handover_csv(report)
    return render(request, "console/handover.html", {
        "form": form, "report": report, "shift": shift,
        "previous": floor.shift_before(shift), "next": floor.shift_after(shift),
    })


# --- CSV -------------------------------------------------------------------------------------

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def csv_cell(value) -> str:
    """A cell a spreadsheet shows as text: one starting like a formula gets a leading quote."""
    text = "" if value is None else str(value)
    return "'" + text if text.startswith(FORMULA_STARTS) else text


class _Echo:
    def write(self, value):
        return value


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


def handover_csv(report: floor.Handover) -> StreamingHttpResponse:
    writer = csv.writer(_Echo())
    lines = (writer.writerow([csv_cell(c) for c in row]) for row in handover_rows(report))
    response = StreamingHttpResponse(lines, content_type="text/csv; charset=utf-8")
    name = report.shift.start.strftime("handover-%Y-%m-%d-%H%M.csv")
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    return response


# --- notes -----------------------------------------------------------------------------------


def notes_context(workflow_id: int, form: NoteForm | None = None) -> dict:
    return {"workflow_id": workflow_id, "notes": notes.notes_for_workflow(workflow_id=workflow_id),
            "note_form": form or NoteForm()}


@require_POST
@console_page
def note_add(request, workflow_id: int):
    if not TidyWorkflow.objects.filter(pk=workflow_id).exists():
        raise Http404(gettext("Workflow %(id)s does not exist.") % {"id": workflow_id})
    form = NoteForm(request.POST)
    if not form.is_valid():
        context = {**notes_context(workflow_id, form), "error": errors_text(form)}
        if request.htmx:
            # htmx does not swap a 4xx answer: the form comes back with its errors at 200.
            return render(request, "console/_notes.html", context)
        return render(request, "console/note_error.html", context, status=400)
    notes.note_create(workflow_id=workflow_id, text=form.cleaned_data["text"], user=request.user)
    if request.htmx:
        return render(request, "console/_notes.html", notes_context(workflow_id))
    response = HttpResponseRedirect(reverse("workflow-detail", args=[workflow_id]) + "#notes")
    response.status_code = 303
    return response
