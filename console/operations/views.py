"""The operations pages: recovery's recent cycles and health, what recovery observed and what it
would decide now, and the tidy job flow. Thin views over console.readers and this package's
selectors (console.pages renders them)."""

from django.conf import settings
from django.shortcuts import render
from django.utils import timezone
from django.utils.translation import gettext_lazy

from console import roles
from console.charts import bar_chart, line_chart
from console.input_checks import field_errors
from console.operations.forms import ObservedForm
from console.operations.observe import AGREEMENT_LABELS, OUTCOMES, observed_page
from console.operations.preview import next_cycle_preview
from console.pages import console_page, render_page
from console.readers.flow import active_job_ages, completed_job_durations, flow_health, oldest_tidy_job
from console.readers.processes import cluster_status
from console.readers.recovery import callback_refusals, recent_cycles, recovery_health


@console_page
def recovery_page(request):
    cycles = recent_cycles(limit=120)
    chronological = list(reversed(cycles))
    finished = [c for c in chronological if c.finished_at]
    return render_page(request, "operations/recovery.html", "recovery-live", {
        "health": recovery_health(),
        "cycles": cycles[:50],
        "refusals": callback_refusals(),
        "duration_chart": line_chart([(c.started_at, c.duration_ms) for c in finished]),
        "paused_chart": line_chart([(c.started_at, c.paused_total) for c in finished]),
        "may_see_processes": roles.can_see_processes(request.user),
    })


@console_page
def flow_page(request):
    flow = flow_health()
    return render_page(request, "operations/flow.html", "flow-live", {
        "flow": flow,
        "oldest_job": oldest_tidy_job(),
        # The same percentiles /metrics exposes (tidy_active_job_age_seconds), from the same statement.
        "job_ages": active_job_ages(),
        "durations": completed_job_durations(window=flow.window, now=flow.now),
        "arrivals_chart": bar_chart([(m, a) for m, a, _ in flow.per_minute]),
        "completions_chart": bar_chart([(m, c) for m, _, c in flow.per_minute]),
    })



@console_page
def observe_page(request):
    """The observed decisions (observe mode), what happened afterwards and the agreement rates."""
    form = ObservedForm(request.GET)
    context = {"form": form, "observing": settings.RECOVERY_MODE == "observe", "outcomes": OUTCOMES,
               "agreements": AGREEMENT_LABELS}
    if not form.is_valid():
        return render(request, "operations/observe.html", {**context, "field_errors": field_errors(form), "page": None},
                      status=400)
    data = form.cleaned_data
    page = observed_page(now=timezone.now(), action=data["action"], reason=data["reason"], before=data["before"])
    return render_page(request, "operations/observe.html", "observe-results", {**context, "page": page})


@console_page
def preview_page(request):
    """What the next cycle would decide now: one classification read, nothing written."""
    return render_page(request, "operations/preview.html", "preview-results", {
        "preview": next_cycle_preview(), "observing": settings.RECOVERY_MODE == "observe",
    })


NOT_OPERATIONS = gettext_lazy("The processes page is for operators and shift leads.")


@console_page(allowed=roles.can_see_processes, refused=NOT_OPERATIONS)
def processes_page(request):
    """Who runs recovery: the qclusters seen in the last minutes, their shards and each shard's last
    cycle (what `manage.py cluster_status` prints). Read only."""
    return render_page(request, "operations/processes.html", "processes-live", {"status": cluster_status()})
