"""The operations pages: recovery's recent cycles and health, and the tidy job flow. Thin views
over console.readers (console.pages renders them)."""

from console.charts import bar_chart, line_chart
from console.pages import console_page, render_page
from console.readers.flow import flow_health, oldest_tidy_job
from console.readers.recovery import callback_refusals, recent_cycles, recovery_health


@console_page
def recovery_page(request):
    cycles = recent_cycles(limit=120)
    chronological = list(reversed(cycles))
    finished = [c for c in chronological if c.finished_at]
    return render_page(request, "console/recovery.html", "recovery-live", {
        "health": recovery_health(),
        "cycles": cycles[:50],
        "refusals": callback_refusals(),
        "duration_chart": line_chart([(c.started_at, c.duration_ms) for c in finished]),
        "paused_chart": line_chart([(c.started_at, c.paused_total) for c in finished]),
    })


@console_page
def flow_page(request):
    flow = flow_health()
    return render_page(request, "console/flow.html", "flow-live", {
        "flow": flow,
        "oldest_job": oldest_tidy_job(),
        "arrivals_chart": bar_chart([(m, a) for m, a, _ in flow.per_minute]),
        "completions_chart": bar_chart([(m, c) for m, _, c in flow.per_minute]),
    })

