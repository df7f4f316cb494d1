"""The floor pages: active and stalled workflows, search, shift handover. Thin views over
console.floor.selectors."""

from django.http import HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.utils import timezone

from console.csv_safe import streaming_csv
from console.floor import selectors as floor
from console.floor.forms import ActiveListForm, HandoverForm, SearchForm
from console.input_checks import field_errors
from console.pages import console_page, render_page
from console.readers.recovery import recovery_health
from console.readers.shifts import shift_after, shift_at, shift_before


@console_page
def active_workflows(request):
    form = ActiveListForm(request.GET)
    form.is_valid()
    filters = form.filters()
    page = floor.active_workflows_page(filters=filters)
    return render_page(request, "floor/active.html", "active-results", {
        "form": form, "filters": filters, "page": page, "health": recovery_health(),
    })


@console_page
def search(request):
    form = SearchForm(request.GET)
    if not form.is_valid():
        return render(request, "floor/search.html", {"form": form, "q": "", "result": None,
                                                       "field_errors": field_errors(form)}, status=400)
    q = form.cleaned_data["q"]
    result = floor.search_workflows(q=q, before=form.cleaned_data["before"]) if q else None
    if result is not None and result.single is not None:
        # A scanned code that names exactly one workflow opens it.
        return HttpResponseRedirect(reverse("workflow-detail", args=[result.single.workflow_id]))
    return render_page(request, "floor/search.html", "search-results", {"form": form, "q": q, "result": result})


@console_page
def handover(request):
    form = HandoverForm(request.GET)
    if not form.is_valid():
        return render(request, "floor/handover.html", {"form": form, "field_errors": field_errors(form),
                                                         "report": None}, status=400)
    shift = form.cleaned_data["shift"] or shift_at(timezone.now())
    if form.cleaned_data.get("format") == "csv":
        return handover_csv(shift)
    report = floor.handover(shift=shift, section=form.cleaned_data["section"] or None,
                            page=form.cleaned_data["page"])
    return render(request, "floor/handover.html", {
        "form": form, "report": report, "shift": shift,
        "previous": shift_before(shift), "next": shift_after(shift),
    })


# --- CSV -------------------------------------------------------------------------------------

HANDOVER_CSV_HEADER = ("section", "time", "workflow", "who", "what", "detail")


def _csv_row(name: str, row, now) -> tuple:
    from console.templatetags.console_tags import format_duration

    if name == "paused":
        return ("paused", row.decided_at.isoformat(), row.workflow_id, row.source.lower(), row.reason, row.rule)
    if name == "repairs":
        return ("repair", row.at.isoformat(), row.workflow_id, row.username, row.action,
                f"{row.outcome} {row.reason_code}: {row.reason_text}".strip())
    if name == "still_open":
        return ("still paused", row.paused_since.isoformat(), row.workflow_id, "", row.pause_reason or "",
                f"paused for {format_duration(now - row.paused_since)}")
    if name == "stalled":
        return ("stalled", row.job_updated_at.isoformat(), row.workflow_id, "", row.job_id,
                f"status {row.job_status}, unchanged for {format_duration(now - row.job_updated_at)}")
    if name == "proposals":
        return ("cancel proposal", row.proposed_at.isoformat(), row.workflow_id, row.proposed_by.get_username(),
                row.reason_code, row.reason_text)
    if name == "notes":
        return ("note", row.at.isoformat(), row.workflow_id, row.username, "note", row.text)
    if name == "notifications":
        members = row.details.get("workflow_ids") if isinstance(row.details, dict) else None
        group = f" (workflows {' '.join(str(i) for i in members)})" if isinstance(members, list) else ""
        return ("notification", row.opened_at.isoformat(), row.workflow_id or "", row.severity, row.event,
                f"{row.state}: {row.subject}{group}")
    if name == "silences":
        ended = getattr(row, "ending", None)
        until = f"ended by {ended.username} at {ended.at.isoformat()}" if ended else f"until {row.ends_at.isoformat()}"
        matchers = f"event={row.event or '*'} reason={row.reason or '*'} aisle={row.aisle or '*'}"
        return ("silence", row.starts_at.isoformat(), "", row.username, matchers, f"{until}: {row.comment}")
    return ("acknowledged", row.at.isoformat(), row.notification.workflow_id or "", row.username,
            row.notification.event, row.notification.subject)


def handover_rows(shift, now):
    """The whole shift, every section complete (the page shows the first rows of each): read in
    chunks while the answer streams."""
    yield HANDOVER_CSV_HEADER
    for name, row in floor.handover_export(shift=shift, now=now):
        yield _csv_row(name, row, now)


def handover_csv(shift):
    return streaming_csv(handover_rows(shift, timezone.now()),
                         filename=shift.start.strftime("handover-%Y-%m-%d-%H%M.csv"))
